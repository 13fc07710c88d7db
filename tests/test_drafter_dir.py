"""Drafter directories: the published DFlash layout (own heads, a sliding-window layer) warm-starts training and comes
back in the same layout; a freshly trained drafter is bfloat16 on disk and loads through transformers' AutoModel (in a
process where dflash_nb cannot be imported) with the project's logits."""
import json, os, re, subprocess, sys
from pathlib import Path

import pytest
import torch

from conftest import cli

from dflash_nb.model import DFlashDraftModel, TargetFeatures, drafter_readme
from dflash_nb.toy import synthetic_dataset, tiny_qwen3_target
from dflash_nb.train import train, train_args

torch.set_num_threads(1)
EXTRA = {'bos_token_id': 1, 'initializer_range': 0.02, 'attention_dropout': 0.0}


@pytest.fixture(scope='module')
def syn(tmp_path_factory):
    return synthetic_dataset(tmp_path_factory.mktemp('syn')/'ds', n_samples=48, vocab_size=64, min_len=30, max_len=70,
                             seed=3)


def _args(ds, out, **kw):
    base = dict(dataset=str(ds), target='tiny', output_dir=str(out), draft_layers=2, block_size=8, max_seq_len=70,
                max_tokens=280, max_anchors=8, epochs=1, max_steps=3, quiet=True, save_every=0)
    return train_args(**{**base, **kw})


def _published(path, target, **kw):
    "A drafter directory in the published layout: own heads/head size/KV heads/MLP, one sliding layer, extra HF fields."
    torch.manual_seed(0)
    shape = dict(num_attention_heads=2, num_key_value_heads=1, head_dim=24, intermediate_size=96,
                 layer_types=['sliding_attention', 'full_attention'], sliding_window=12)
    d = DFlashDraftModel.from_target(target, 2, block_size=8, mask_token_id=63, **{**shape, **kw})
    d.save_pretrained(path, dtype=torch.bfloat16)
    cfg = json.loads((path/'config.json').read_text())
    (path/'config.json').write_text(json.dumps({**cfg, **EXTRA}))
    return d


def _logits(d, target, T=40, a=30):
    torch.manual_seed(5)
    seq = torch.randint(0, 63, (1, T))
    with TargetFeatures(target, d.config.target_layer_ids) as tf: f = tf(seq)
    return d.draft(seq[:, a], a, f[:, :a], torch.arange(a)[None])


def test_published_layout_fine_tunes_and_saves_back(syn, tmp_path):
    tgt = tiny_qwen3_target(vocab_size=64)
    src = _published(tmp_path/'pub', tgt)
    start = DFlashDraftModel.from_pretrained(tmp_path/'pub', target=tgt)
    assert start.config.layer_types == ['sliding_attention', 'full_attention'] and start.config.head_dim == 24
    assert start.layers[0].self_attn.q_proj.weight.shape == (2 * 24, 64)                   # not the target's 4 x 16
    s = train(_args(syn, tmp_path/'run', init_drafter=str(tmp_path/'pub')))
    assert s['steps'] == 3 and s['init_drafter'] == str(tmp_path/'pub') and s['final_loss'] is not None
    out = tmp_path/'run'/'drafter'
    before, after = json.loads((tmp_path/'pub'/'config.json').read_text()), json.loads((out/'config.json').read_text())
    assert set(after) == set(before) and {k: after[k] for k in EXTRA} == EXTRA            # the same layout, fields kept
    for k in ('layer_types', 'sliding_window', 'num_attention_heads', 'head_dim', 'num_key_value_heads',
              'intermediate_size',
              'dflash_config', 'auto_map', 'torch_dtype'):
        assert after[k] == before[k], k
    back = DFlashDraftModel.from_pretrained(out, target=tgt)
    again = DFlashDraftModel.from_pretrained(out, target=tgt)
    moved = [k for k, v in back.state_dict().items() if not torch.equal(v, src.state_dict()[k].to(v.dtype))]
    assert len(moved) > 10                                                                  # it trained
    assert all(torch.equal(v, again.state_dict()[k]) for k, v in back.state_dict().items())
    assert torch.equal(_logits(back, tgt), _logits(again, tgt))
    resaved = tmp_path/'resaved'
    # reload -> save: equal again
    back.save_pretrained(resaved)
    assert torch.equal(_logits(DFlashDraftModel.from_pretrained(resaved, target=tgt), tgt), _logits(back, tgt))


@pytest.mark.parametrize('kw, error', [
    (dict(target='tiny:hidden_size=32,num_heads=2,num_kv_heads=1'), "hidden size 64, the target's is 32"),
    (dict(target='tiny:num_layers=4'), "tap layers [5] are beyond the target's 4 layers"),
    (dict(mask_token_id=62), "--mask-token-id 62, the drafter's mask_token_id is 63"),
    (dict(target_layer_ids='1,3'), "--target-layer-ids [1, 3], the drafter's target_layer_ids is [1, 5]"),
    (dict(block_size=16), "--block-size 16, the drafter's block_size is 8"),          # was silently ignored
    (dict(draft_layers=3), "--draft-layers 3, the drafter's num_hidden_layers is 2"),  # was silently ignored
    (dict(draft_heads=4), "--draft-heads 4, the drafter's num_attention_heads is 2"),
    (dict(draft_layer_types='full,full'),
     "--draft-layer-types ['full_attention', 'full_attention'], the drafter's layer_types is"),
    (dict(drafter_preset='qwen3.6-27b'), "--drafter-preset qwen3.6-27b 32, the drafter's num_attention_heads is 2"),
    (dict(norm_init='target'), "overwrite the drafter's trained final norm")])
def test_mismatched_drafter_is_one_clear_line(syn, tmp_path, kw, error):
    _published(tmp_path/'pub', tiny_qwen3_target(vocab_size=64))
    with pytest.raises(ValueError) as e: train(_args(syn, tmp_path/'run', init_drafter=str(tmp_path/'pub'), **kw))
    assert error in str(e.value) and '\n' not in str(e.value)


def test_warm_start_accepts_the_drafters_own_values_and_records_the_current_target(syn, tmp_path):
    """--block-size/--draft-layers equal to the drafter's are fine; the saved config names the target trained against
    now."""
    _published(tmp_path/'pub', tiny_qwen3_target(vocab_size=64))
    cfg = json.loads((tmp_path/'pub'/'config.json').read_text())
    # stale: made for another target
    cfg['dflash_config'].update(target_model_type='llama', target_tie_word_embeddings=False)
    (tmp_path/'pub'/'config.json').write_text(json.dumps(cfg))
    train(_args(syn, tmp_path/'run', init_drafter=str(tmp_path/'pub'), block_size=8, draft_layers=2, max_steps=1))
    dc = json.loads((tmp_path/'run'/'drafter'/'config.json').read_text())['dflash_config']
    # the tiny Qwen3 target, tied
    assert (dc['target_model_type'], dc['target_tie_word_embeddings']) == ('qwen3', True)


def test_cli_names_a_missing_drafter_dir(syn, tmp_path):
    r = cli('train', '--dataset', syn, '--output-dir', tmp_path/'run', '--target', 'tiny', '--init-drafter',
            tmp_path/'nothing',
            '--quiet', check=False)
    assert r.returncode != 0 and 'Traceback' not in r.stderr and 'needs a drafter directory' in r.stderr


_AUTOMODEL = """
import sys; sys.modules['dflash_nb'] = None            # this package cannot be imported here
import torch
from transformers import AutoModel
d, io = sys.argv[1], torch.load(sys.argv[2])
m = AutoModel.from_pretrained(d, trust_remote_code=True)
with torch.no_grad(): h = m(position_ids=io['pos'], noise_embedding=io['emb'], target_hidden=io['feats'])
torch.save({'type': type(m).__name__, 'dtype': str(next(m.parameters()).dtype), 'logits': h.float() @ io['head'].T},
           sys.argv[3])
"""


def _automodel_logits(d, tgt, ids, feats, a, tmp_path) -> dict:
    "Logits of the block `ids` (anchor at position a) from AutoModel.from_pretrained(d) in a process without dflash_nb."
    torch.save({'pos': torch.arange(a + ids.shape[1])[None], 'emb': tgt.model.embed_tokens(ids), 'feats': feats,
                'head': tgt.lm_head.weight}, tmp_path/'io.pt')
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    env.update(HF_MODULES_CACHE=str(tmp_path/'hf_modules'), HF_HUB_OFFLINE='1')
    r = subprocess.run([sys.executable, '-c', _AUTOMODEL, str(d), str(tmp_path/'io.pt'), str(tmp_path/'out.pt')],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    return torch.load(tmp_path/'out.pt')


def test_published_layout_with_yarn_loads_through_automodel(tmp_path):
    "Own heads, a sliding layer and a YaRN RoPE: AutoModel (no dflash_nb) gives the project's logits from the same dir."
    tgt = tiny_qwen3_target(vocab_size=64)
    _published(tmp_path/'pub', tgt, max_position_embeddings=512,
               rope_scaling={'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 128})
    mine = DFlashDraftModel.from_pretrained(tmp_path/'pub', target=tgt)
    assert mine.config.rope_scaling['rope_type'] == 'yarn' and mine.config.hf_extra['bos_token_id'] == 1
    torch.manual_seed(4)
    seq, a = torch.randint(0, 63, (1, 60)), 50
    with TargetFeatures(tgt, mine.config.target_layer_ids) as tf: feats = tf(seq)
    ids = torch.full((1, 8), 63); ids[0, 0] = seq[0, a]
    got = _automodel_logits(tmp_path/'pub', tgt, ids, feats[:, :a], a, tmp_path)
    assert torch.equal(got['logits'][:, 1:], mine.draft(seq[:, a], a, feats[:, :a], torch.arange(a)[None]).float())


def test_trained_drafter_is_bf16_and_loads_through_automodel(syn, tmp_path):
    from safetensors import safe_open
    train(_args(syn, tmp_path/'run'))
    d = tmp_path/'run'/'drafter'
    with safe_open(str(d/'model.safetensors'), 'pt') as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.bfloat16}
    cfg = json.loads((d/'config.json').read_text())
    assert cfg['auto_map'] == {'AutoModel': 'dflash.DFlashDraftModel'} and cfg['torch_dtype'] == 'bfloat16'
    readme = (d/'README.md').read_text()
    assert '"method": "dflash"' in readme and '--speculative-algorithm DFLASH' in readme and str(syn) in readme
    assert f"tap layers (target_layer_ids): {cfg['dflash_config']['target_layer_ids']}" in readme
    tgt = tiny_qwen3_target(vocab_size=64)
    mine = DFlashDraftModel.from_pretrained(d, target=tgt)
    torch.manual_seed(2)
    seq, a = torch.randint(0, 63, (1, 40)), 25
    with TargetFeatures(tgt, mine.config.target_layer_ids) as tf: feats = tf(seq)
    ids = torch.full((1, 8), 63); ids[0, 0] = seq[0, a]
    want = mine.draft(seq[:, a], a, feats[:, :a], torch.arange(a)[None])
    got = _automodel_logits(d, tgt, ids, feats[:, :a], a, tmp_path)
    assert (got['type'], got['dtype']) == ('DFlashDraftModel', 'torch.bfloat16')
    assert torch.equal(got['logits'][:, 1:], want.float())
    fp32 = tmp_path/'fp32'
    train(_args(syn, fp32, save_dtype='float32'))
    assert json.loads((fp32/'drafter'/'config.json').read_text())['torch_dtype'] == 'float32'


@pytest.mark.parametrize('causal', [None, False])
def test_sliding_layers_flex_equals_dense_training_forward(syn, causal):
    "Window and causality of sliding layers are the same in the flex BlockMasks and in the dense mask (training loss)."
    import warnings
    from dflash_nb.train import TokenDataset, collate, dflash_forward, loss_weights
    tgt = tiny_qwen3_target(vocab_size=64)
    torch.manual_seed(0)
    d = DFlashDraftModel.from_target(tgt, 2, block_size=8, mask_token_id=63, num_attention_heads=2,
                                     num_key_value_heads=1,
                                     head_dim=24, layer_types=['sliding_attention', 'full_attention'],
                                     sliding_window=12,
                                     causal=causal)
    batch = collate(TokenDataset(syn, 70), [0, 1, 2], 0, 0, 8)
    with TargetFeatures(tgt, d.config.target_layer_ids) as tf, torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        flex, dense = (dflash_forward(d, tf, batch, loss_weights(8), att)[0] for att in ('flex', 'sdpa'))
        bi = DFlashDraftModel(type(d.config)(**{**d.config.__dict__,
                                                'causal': not causal if causal is not None else False}))
        bi.load_state_dict(d.state_dict()); bi.bind_target(tgt)
        other = dflash_forward(bi, tf, batch, loss_weights(8), 'sdpa')[0]
    assert abs(flex - dense) < 1e-5 * abs(dense) and abs(other - dense) > 100 * abs(flex - dense)   # causality matters


# vLLM's per-layer window and causality, restated from vllm 0.34.0 (the PyPI wheel, commit id g62d4bc3c7;
# vllm-project/vllm@036a00d1 has the same rule), vllm/model_executor/models/qwen3_dflash.py lines 86-97
# (_dflash_layer_causal) and 137-186 (_resolve_layer_attention): `dflash_config.use_swa` slides every layer unless
# `layer_types` already names sliding ones; the window is `dflash_config.swa_window_size`, else `sliding_window`;
# causality is `is_causal`, else `dflash_config.causal`, else "the layer_types entry is sliding_attention".
# SGLang 0.5.23 (sglang/srt/speculative/dflash_utils.py lines 388-417) reads only `layer_types` + `sliding_window`.
def _vllm_layer_attention(cfg: dict, i: int) -> tuple:
    dc, lt = cfg.get('dflash_config') or {}, cfg.get('layer_types')
    use_swa = dc.get('use_swa', False)
    sliding = use_swa if lt is None or (use_swa and 'sliding_attention' not in lt) else lt[i] == 'sliding_attention'
    window = dc.get('swa_window_size', cfg.get('sliding_window')) if sliding else None
    causal = next((v for v in (cfg.get('is_causal'), dc.get('causal')) if v is not None),
                  bool(lt) and lt[i] == 'sliding_attention')
    return window, bool(causal)


@pytest.mark.parametrize('layer_types', [None, ['full_attention'] * 2])
def test_vllm_use_swa_form_trains_and_serves_with_its_window(tmp_path, layer_types):
    """A config in vLLM's `use_swa` / `swa_window_size` form is read as the window vLLM serves, and written back
    canonically."""
    from dflash_nb.model import layer_causal
    tgt = tiny_qwen3_target(vocab_size=64)
    d = _published(tmp_path/'pub', tgt, layer_types=['full_attention'] * 2, sliding_window=None)
    raw = json.loads((tmp_path/'pub'/'config.json').read_text())
    raw.update(layer_types=layer_types, sliding_window=None, use_sliding_window=False)
    raw['dflash_config'].update(use_swa=True, swa_window_size=12)          # the MiMo / ModelOpt export form
    (tmp_path/'pub'/'config.json').write_text(json.dumps(raw))
    mine = DFlashDraftModel.from_pretrained(tmp_path/'pub', target=tgt)
    c = mine.config
    want = [_vllm_layer_attention(raw, i) for i in range(2)]
    got = [(c.sliding_window if t == 'sliding_attention' else None, layer_causal(c, t)) for t in c.layer_types]
    assert got == want == [(12, False)] * 2
    mine.save_pretrained(tmp_path/'back')
    back = json.loads((tmp_path/'back'/'config.json').read_text())
    # one canonical form
    assert 'use_swa' not in back['dflash_config'] and 'swa_window_size' not in back['dflash_config']
    # vLLM serves it the same
    assert [_vllm_layer_attention(back, i) for i in range(2)] == want
    # what SGLang reads
    assert (back['layer_types'], back['sliding_window']) == (['sliding_attention'] * 2, 12)
    full = DFlashDraftModel(type(c)(**{**c.__dict__, 'layer_types': ['full_attention'] * 2, 'causal': None})).to(
        torch.bfloat16)
    full.load_state_dict(mine.state_dict()); full.bind_target(tgt)
    window = DFlashDraftModel(type(c)(**{**c.__dict__, 'causal': False})).to(torch.bfloat16)   # as saved
    window.load_state_dict(mine.state_dict()); window.bind_target(tgt)
    assert torch.equal(_logits(mine, tgt), _logits(window, tgt)) and not torch.allclose(_logits(mine, tgt),
                                                                                        _logits(full, tgt))


# SpecForge sgl-project/SpecForge@a6b6b0230009d15ec2a97a57384e6f53f0f96946 configs/qwen3.6-27b-dflash.json: the fields
# of
# lines 10 (block_size), 13-20 (dflash_config mask_token_id, target_layer_ids), 24 (head_dim), 26 (hidden_size),
# 28 (intermediate_size), 29-35 (layer_types), 36 (max_position_embeddings), 37 (max_window_layers), 38 (model_type),
# 39-42 (heads, layers, KV heads, num_target_layers), 45 (sliding_window), 47 (tie_word_embeddings), 49
# (use_sliding_window),
# 50 (vocab_size), 51 (rope_theta); hidden size, vocabulary, RoPE and context length are the target's (Qwen3.6-27B).
SPECFORGE_QWEN36_27B = {
    'architectures': ['DFlashDraftModel'], 'model_type': 'qwen3', 'block_size': 16, 'head_dim': 128,
                        'hidden_size': 5120,
    'intermediate_size': 17408, 'layer_types': ['sliding_attention'] * 4 + ['full_attention'],
                        'max_position_embeddings': 262144,
    'max_window_layers': 5, 'num_attention_heads': 32, 'num_hidden_layers': 5, 'num_key_value_heads': 8,
                        'num_target_layers': 64,
    'sliding_window': 2048, 'tie_word_embeddings': False, 'use_sliding_window': True, 'vocab_size': 248320,
                        'rope_theta': 10000000,
    'hidden_act': 'silu', 'attention_bias': False, 'rms_norm_eps': 1e-06}
SPECFORGE_QWEN36_27B_DFLASH = {'mask_token_id': 248070, 'target_layer_ids': [1, 16, 31, 46, 61]}
QWEN36_27B_TARGET = {'model_type': 'qwen3_5', 'tie_word_embeddings': False, 'text_config': {
    'hidden_size': 5120, 'num_hidden_layers': 64, 'num_attention_heads': 24, 'num_key_value_heads': 4, 'head_dim': 256,
    'intermediate_size': 17408, 'vocab_size': 248320, 'rope_theta': 10000000, 'max_position_embeddings': 262144,
                                                                                            'rms_norm_eps': 1e-06}}


def test_drafter_preset_is_specforges_qwen36_27b_config():
    "--drafter-preset qwen3.6-27b on a Qwen3.6-27B target gives SpecForge's published drafter config, field by field."
    from dflash_nb.train import add_train_args, fresh_drafter_config
    import argparse
    a = add_train_args(argparse.ArgumentParser()).parse_args(
        ['--dataset', 'd', '--target', 't', '--output-dir', 'o', '--drafter-preset', 'qwen3.6-27b'])
    got = fresh_drafter_config(a, QWEN36_27B_TARGET, None).to_hf_dict()
    assert {k: got[k] for k in SPECFORGE_QWEN36_27B} == SPECFORGE_QWEN36_27B
    assert {k: got['dflash_config'][k] for k in SPECFORGE_QWEN36_27B_DFLASH} == SPECFORGE_QWEN36_27B_DFLASH


def test_drafter_shape_from_the_command_line(syn, tmp_path):
    "Heads, KV heads, head size, MLP width, sliding layers and window of a fresh drafter, from the options alone."
    from dflash_nb.train import add_train_args
    import argparse
    argv = ['--dataset', str(syn), '--target', 'tiny', '--output-dir', str(tmp_path/'run'), '--draft-layers', '2',
            '--block-size', '8',
            '--draft-heads', '2', '--draft-kv-heads', '1', '--draft-head-dim', '24', '--draft-intermediate-size', '96',
            '--draft-layer-types', 'sliding,full', '--sliding-window', '12', '--max-seq-len', '70', '--max-tokens',
            '280',
            '--max-anchors', '8', '--epochs', '1', '--max-steps', '1', '--quiet', '--save-every', '0']
    train(add_train_args(argparse.ArgumentParser()).parse_args(argv))
    cfg = json.loads((tmp_path/'run'/'drafter'/'config.json').read_text())
    assert {k: cfg[k] for k in ('num_attention_heads', 'num_key_value_heads', 'head_dim', 'intermediate_size',
                                'layer_types', 'sliding_window')} == \
        {'num_attention_heads': 2, 'num_key_value_heads': 1, 'head_dim': 24, 'intermediate_size': 96,
         'layer_types': ['sliding_attention', 'full_attention'], 'sliding_window': 12}
    with pytest.raises(ValueError, match='neither full nor sliding'):
        train(_args(syn, tmp_path/'bad', draft_layer_types='sliding,window'))


# The draft-vocabulary contract of the loaders, as their sources state it:
# vLLM 0.34.0 (PyPI wheel, commit id g62d4bc3c7), vllm/model_executor/models/qwen3_dflash.py
#   874-875   `draft_vocab_size` is a top-level config field (absent: vocab_size, i.e. no draft vocabulary)
# 884-904   lm_head = ParallelLMHead(draft_vocab_size, hidden_size); draft_id_to_target_id = zeros(draft_vocab_size,
# int64)
#   930-944   compute_logits: the draft logits go to target ids arange(draft_vocab_size) + d2t, every other id gets -inf
#   981-1018  load_weights: a name with "t2d" is skipped, "d2t" becomes draft_id_to_target_id, "lm_head..." is kept,
#             every other name becomes "model." + name, and vllm/model_executor/models/utils.py 453-459 raises on a
#             name that is no parameter of DFlashQwen3Model (e.g. this project's former `vocab_ids`)
#   utils.py 1351-1352 + v1/worker/gpu/spec_decode/dflash/utils.py 62-73: a shipped lm_head is kept; without one the
#             target's head (all vocab_size rows) replaces it, which compute_logits cannot map
# SGLang 0.5.23 (PyPI wheel): sglang/srt/models/dflash.py 886-960 load_weights maps q/k/v -> qkv_proj and gate/up ->
#   gate_up_proj and ignores every other unknown name; sglang/srt/speculative/dflash_worker_v2.py 135-146: DFLASH drafts
#   with the target's lm_head over the whole vocabulary (it reads no d2t)
# SpecForge a6b6b0230009d15ec2a97a57384e6f53f0f96946 specforge/data/preprocessing.py 763-766: d2t[i] = used[i] - i
#   (int64), t2d[j] = j in used (bool); specforge/export/to_sglang.py 38: an SGLang EAGLE-3 export carries
#   lm_head.weight, t2d, d2t
_DRAFTER_WEIGHT = re.compile(
    r'(layers\.\d+\.(self_attn\.([qkvo]_proj|[qk]_norm)|mlp\.(gate|up|down)_proj|input_layernorm|'
    r'post_attention_layernorm)|fc|hidden_norm|norm)\.weight')
VOCAB_IDS = [0, 2, 3, 5, 8, 9, 13, 17, 21, 22, 30, 34, 40, 41, 47, 50, 55, 58, 61, 62]


def _vllm_logits(files: dict, cfg: dict, hidden):
    "The logits vLLM's DFlash drafter computes from a saved directory's tensors (compute_logits, restated)."
    Vd = cfg.get('draft_vocab_size') or cfg['vocab_size']
    logits = torch.nn.functional.linear(hidden.to(files['lm_head.weight'].dtype), files['lm_head.weight'])
    full = logits.new_full((*logits.shape[:-1], cfg['vocab_size']), float('-inf'))
    full[..., torch.arange(Vd) + files['d2t']] = logits
    return full


_AUTOMODEL_VOCAB = """
import sys; sys.modules['dflash_nb'] = None
import json, torch
from transformers import AutoModel
m, info = AutoModel.from_pretrained(sys.argv[1], trust_remote_code=True, output_loading_info=True)
print(json.dumps({'missing': sorted(info['missing_keys']), 'unexpected': sorted(info['unexpected_keys']),
                  'ids': (torch.arange(len(m.d2t)) + m.d2t).tolist(), 'head': list(m.lm_head.weight.shape)}))
"""


def test_draft_vocabulary_is_saved_as_vllm_and_sglang_read_it(tmp_path):
    from safetensors.torch import load_file, save_file
    tgt = tiny_qwen3_target(vocab_size=64)
    torch.manual_seed(0)
    d = DFlashDraftModel.from_target(tgt, 2, block_size=8, mask_token_id=63,
                                     draft_vocab_size=20).set_draft_vocab(VOCAB_IDS)
    d.save_pretrained(tmp_path/'dv')
    cfg, files = json.loads((tmp_path/'dv'/'config.json').read_text()), load_file(
        str(tmp_path/'dv'/'model.safetensors'))
    assert (cfg['draft_vocab_size'], cfg['vocab_size'], cfg['has_own_lm_head']) == (20, 64, True)
    assert 'draft_vocab_size' not in cfg['dflash_config']
    assert files['d2t'].dtype == torch.int64 and files['d2t'].tolist() == [v - i for i, v in enumerate(VOCAB_IDS)]
    assert files['t2d'].dtype == torch.bool and files['t2d'].nonzero().squeeze(1).tolist() == VOCAB_IDS
    # (draft_vocab_size, hidden)
    assert torch.equal(files['lm_head.weight'], tgt.lm_head.weight[VOCAB_IDS])
    own = {k for k in files if _DRAFTER_WEIGHT.fullmatch(k)}
    assert set(files) - own == {'d2t', 't2d', 'lm_head.weight'}          # nothing vLLM's loader would refuse
    mine = DFlashDraftModel.from_pretrained(tmp_path/'dv', target=tgt)
    assert mine.vocab_ids.tolist() == VOCAB_IDS
    torch.manual_seed(5)
    seq, a = torch.randint(0, 63, (1, 40)), 30
    with TargetFeatures(tgt, mine.config.target_layer_ids) as tf: f = tf(seq)
    ids = torch.full((1, 8), 63); ids[0, 0] = seq[0, a]
    h = mine(ids, a + torch.arange(8)[None], f[:, :a], torch.arange(a)[None], return_hidden=True)
    # vLLM drafts what we trained
    assert torch.equal(_vllm_logits(files, cfg, h), mine.logits(h))
    readme = drafter_readme(mine.config, {'target': 'T', 'drafter_dir': 'D'})
    assert 'draft_vocab_size' in readme and 'SGLang' in readme and 'whole vocabulary' in readme
    # read back in the other forms: an EAGLE-3 checkpoint (d2t without t2d), this project's former absolute `vocab_ids`
    eagle = {k: v for k, v in files.items() if k != 't2d'}
    old = {**{k: v for k, v in files.items() if k not in ('d2t', 't2d', 'lm_head.weight')},
           'vocab_ids': torch.tensor(VOCAB_IDS)}
    old_cfg = {k: v for k, v in cfg.items() if k not in ('draft_vocab_size', 'has_own_lm_head')}
    old_cfg['dflash_config'] = {**cfg['dflash_config'], 'draft_vocab_size': 20}
    for name, sd, c in (('eagle', eagle, cfg), ('old', old, old_cfg)):
        (tmp_path/name).mkdir(); save_file(sd, str(tmp_path/name/'model.safetensors'))
        (tmp_path/name/'config.json').write_text(json.dumps(c))
        assert DFlashDraftModel.from_pretrained(tmp_path/name, target=tgt).vocab_ids.tolist() == VOCAB_IDS, name
    fresh = DFlashDraftModel(mine.config)
    fresh.load_state_dict(files)                                                                # a checkpoint resumes
    assert fresh.vocab_ids.tolist() == VOCAB_IDS
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    env.update(HF_MODULES_CACHE=str(tmp_path/'hf_modules'), HF_HUB_OFFLINE='1')
    r = subprocess.run([sys.executable, '-c', _AUTOMODEL_VOCAB, str(tmp_path/'dv')], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {'missing': [], 'unexpected': [], 'ids': VOCAB_IDS,
                                                             'head': [20, 64]}


# z-lab's generation loop, restated from z-lab/dflash@44947fbf71114e241c96de194f4b382b5dd330d0 dflash/model.py lines
# 62-169 (dflash_generate, reached through DFlashDraftModel.spec_generate, lines 349-366): a DynamicCache per model,
# `model(target_hidden=, noise_embedding=, position_ids=position_ids[:, draft_cache_length:start + block_size],
# past_key_values=, use_cache=True, is_causal=False)`, `target.lm_head` on the last block_size - 1 outputs, crop(start).
# z-lab's package is not installed here and is not vendored: this restates its calling convention. One deviation:
# transformers 5.24 refuses z-lab's `cache.crop(start)` (a positive size: "not supported"), so `_crop` asks for the same
# size in the form both transformers 4 and 5 read (a negative number of tokens to remove).
_ZLAB_LOOP = """
import sys; sys.modules['dflash_nb'] = None
import json, torch
from transformers import AutoModel, AutoModelForCausalLM, DynamicCache
torch.set_num_threads(1)
model = AutoModel.from_pretrained(sys.argv[1], trust_remote_code=True, dtype=torch.float32).eval()
target = AutoModelForCausalLM.from_pretrained(sys.argv[2], dtype=torch.float32).eval()
prompt, n = json.loads(sys.argv[3]), int(sys.argv[4])
def _crop(cache, size): cache.crop(size - cache.get_seq_length()) if size < cache.get_seq_length() else None
def feats(o, k=None): return torch.cat([o.hidden_states[i + 1] for i in model.target_layer_ids], -1)[:, :k]
with torch.no_grad():
    bs, mask, P = model.block_size, model.mask_token_id, len(prompt)
    input_ids, L = torch.tensor([prompt]), P + n
    out = torch.full((1, L + bs), mask); pos = torch.arange(L + bs)[None]
    tc, dc = DynamicCache(), DynamicCache()
    o = target(input_ids, position_ids=pos[:, :P], past_key_values=tc, use_cache=True, logits_to_keep=1,
               output_hidden_states=True)
    out[:, :P] = input_ids; out[:, P] = o.logits[:, -1].argmax(-1); hid = feats(o)
    start, blocks = P, []
    while start < L:
        b = out[:, start:start + bs].clone()
        h = model(target_hidden=hid, noise_embedding=target.model.embed_tokens(b),
                  position_ids=pos[:, dc.get_seq_length():start + bs],
                  past_key_values=dc, use_cache=True, is_causal=False)
        _crop(dc, start)
        b[:, 1:] = target.lm_head(h[:, 1 - bs:, :]).argmax(-1)
        blocks.append([start, b[0, 1:].tolist()])
        o = target(b, position_ids=pos[:, start:start + bs], past_key_values=tc, use_cache=True,
                   output_hidden_states=True)
        post = o.logits.argmax(-1)
        acc = int((b[:, 1:] == post[:, :-1]).cumprod(1).sum())
        out[:, start:start + acc + 1] = b[:, :acc + 1]; out[:, start + acc + 1] = post[:, acc]
        start += acc + 1; _crop(tc, start); hid = feats(o, acc + 1)
    spec = model.spec_generate(target, input_ids, n, None, 0.0)
print(json.dumps({'loop': out[0, :min(start + 1, L)].tolist(), 'blocks': blocks, 'spec_generate': spec[0].tolist()}))
"""


def test_automodel_drafter_runs_zlabs_generation_loop(tmp_path):
    """The saved directory in z-lab's HF loop (DynamicCache, spec_generate), without dflash_nb: greedy output, our
    drafts."""
    from dflash_nb.eval import greedy_generate
    tgt = tiny_qwen3_target(vocab_size=64)
    # own heads and a sliding layer (window 12 < the context)
    _published(tmp_path/'pub', tgt)
    tgt.save_pretrained(tmp_path/'target')
    prompt, n = [5, 9, 1, 33, 20, 7, 41, 2, 18, 30], 40
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    env.update(HF_MODULES_CACHE=str(tmp_path/'hf_modules'), HF_HUB_OFFLINE='1')
    r = subprocess.run([sys.executable, '-c', _ZLAB_LOOP, str(tmp_path/'pub'), str(tmp_path/'target'),
                        json.dumps(prompt), str(n)],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    greedy = prompt + greedy_generate(tgt, prompt, n).tokens
    assert got['loop'] == greedy and got['spec_generate'] == greedy                           # lossless
    mine = DFlashDraftModel.from_pretrained(tmp_path/'pub', target=tgt, dtype=torch.float32)
    seq = torch.tensor([greedy])
    with TargetFeatures(tgt, mine.config.target_layer_ids) as tf: f = tf(seq)
    assert len(got['blocks']) > 3
    # each step drafted what the project's drafter drafts there
    for a, drafts in got['blocks']:
        want = mine.draft(seq[:, a], a, f[:, :a], torch.arange(a)[None])[0].argmax(-1).tolist()
        assert drafts[:len(want)] == want[:len(drafts)], a


def test_eval_takes_the_target_and_vocabulary_the_drafter_was_trained_for(syn, tmp_path):
    """Issue 24.8: `run train` then `run eval -p drafter RUN/drafter` failed with the defaults (the eval job's tiny
    target of 512 ids against a drafter of a 1,024-id one): eval and the eval job take the drafter's target (its train
    run's train_args.json) and vocabulary unless told otherwise."""
    from dflash_nb.eval import EvalConfig, prepare_eval
    # as the train job: RUN/drafter beside RUN/train_args.json
    train(_args(syn, tmp_path/'run', target='tiny:num_layers=6'))
    drafter = tmp_path/'run'/'drafter'
    e = prepare_eval(EvalConfig(drafter=str(drafter), random_prompts=2))
    assert (e['target_spec'], e['target'].config.vocab_size,
            e['target'].config.num_hidden_layers) == ('tiny:num_layers=6', 64, 6)
    # told otherwise: the user's target, checked
    with pytest.raises(ValueError, match='vocabulary of 64 ids, the target'):
        prepare_eval(EvalConfig(target='tiny:num_layers=6', drafter=str(drafter), random_prompts=2, vocab_size=512))
    r = cli('run', 'eval', '-p', 'drafter', drafter, '-p', 'random_prompts', '2', '-p', 'max_new_tokens', '6', '-p',
            'sampled_temperature', '0',
            '--quiet', '--outputs', tmp_path/'runs')
    assert r.stdout.startswith('ok     eval: '), r.stdout + r.stderr
    [run] = (tmp_path/'runs').iterdir()
    assert json.loads((run/'eval.json').read_text())['trained']['prompts'] == 2
    assert 'tiny:num_layers=6</code> (qwen3, 6 layers)' in (run/'report.html').read_text()
