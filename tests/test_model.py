"Tests of the DFlash drafter (dflash_nb.model) with tiny targets built in code (CPU, no download)."
import json, math, warnings

import pytest
import torch

from dflash_nb.model import (DFlashConfig, DFlashDraftModel, DraftCache, TargetFeatures, block_attention_mask,
                             decoder_layers, flex_block_mask, select_target_layers, shared_embeddings)
from dflash_nb.toy import tiny_qwen3_target

torch.set_num_threads(1)


@pytest.fixture(scope='module')
def target():
    return tiny_qwen3_target(vocab_size=128)


@pytest.fixture(scope='module')
def drafter(target):
    torch.manual_seed(0)
    return DFlashDraftModel.from_target(target, num_draft_layers=2, block_size=4, mask_token_id=127).eval()


def _qwen35_text_kwargs(tie=False):
    return dict(vocab_size=160, hidden_size=64, intermediate_size=128, num_hidden_layers=8, num_attention_heads=4,
                num_key_value_heads=2, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
                linear_key_head_dim=16, linear_value_head_dim=16, tie_word_embeddings=tie)


def test_layer_selection_and_config_from_targets():
    from transformers import Qwen3Config, Qwen3_5Config
    assert select_target_layers(36, 5) == [1, 9, 17, 25, 33]
    c = DFlashConfig.from_target(Qwen3Config(hidden_size=4096, num_hidden_layers=36, num_attention_heads=32,
                                             num_key_value_heads=8,
                                             head_dim=128, intermediate_size=12288, vocab_size=151936),
                                 mask_token_id=151669)
    assert (c.target_layer_ids, c.num_hidden_layers, c.block_size, c.hidden_size) == ([1, 9, 17, 25, 33], 5, 16, 4096)
    c = DFlashConfig.from_target(Qwen3_5Config(text_config=dict(hidden_size=5120, num_hidden_layers=64,
                                                                num_attention_heads=24,
                                 num_key_value_heads=4, head_dim=256, intermediate_size=17408, vocab_size=248320)),
                                 num_draft_layers=3, target_layer_ids=[2, 30, 60], block_size=10)
    assert (c.target_layer_ids, c.mask_token_id, c.head_dim, c.num_key_value_heads,
            c.block_size) == ([2, 30, 60], 248070, 256, 4, 10)
    with pytest.raises(ValueError, match='outside the target vocabulary'):
        DFlashConfig.from_target(Qwen3Config(vocab_size=100), mask_token_id=100)
    with pytest.raises(ValueError, match='within 0..'):
        DFlashConfig.from_target(Qwen3Config(vocab_size=100, num_hidden_layers=8), target_layer_ids=[1, 8],
                                 mask_token_id=5)


def test_mask_matches_the_rule():
    anchors = torch.tensor([[3, 9, 0], [5, 5, 11]])
    C, bs = 14, 4
    m = block_attention_mask(anchors, C, bs)
    assert m.shape == (2, 12, C + 12)
    for b in range(2):
        for q in range(12):
            n = q // bs
            for k in range(C + 12):
                want = k < anchors[b, n] if k < C else (k - C) // bs == n
                assert bool(m[b, q, k]) == bool(want), (b, q, k)
    assert m.any(-1).all()  # no empty row: no NaN


def _setup(target, drafter, T=24, anchors=((4, 11, 18),)):
    torch.manual_seed(1)
    seq = torch.randint(0, 127, (len(anchors), T))
    anchors = torch.tensor(anchors)
    bs = drafter.config.block_size
    with TargetFeatures(target, drafter.config.target_layer_ids) as tf: feats = tf(seq)
    ids = torch.full((len(anchors), anchors.shape[1] * bs), 127)
    ids[:, ::bs] = seq.gather(1, anchors)
    pos = (anchors[:, :, None] + torch.arange(bs)).reshape(len(anchors), -1)
    ctx_pos = torch.arange(T).expand(len(anchors), -1)
    return seq, anchors, feats, ids, pos, ctx_pos


def test_block_logits_follow_the_attention_rule(target, drafter):
    seq, anchors, feats, ids, pos, ctx_pos = _setup(target, drafter, anchors=((4, 11, 18), (2, 7, 20)))
    bs, T = drafter.config.block_size, seq.shape[1]
    run = torch.no_grad()(lambda f, i: drafter(i, pos, f, ctx_pos, block_attention_mask(anchors, T, bs)))
    base = run(feats, ids)
    blk = lambda x, b, n: x[b, n * bs:(n + 1) * bs]
    for b in range(2):
        for n in range(3):
            a = int(anchors[b, n])
            f = feats.clone(); f[b, a:] += 0.5                 # context at and after the anchor
            out = run(f, ids)
            assert torch.allclose(blk(out, b, n), blk(base, b, n), atol=1e-5)
            f = feats.clone(); f[b, a - 1] += 0.5              # the context position just before it
            assert not torch.allclose(blk(run(f, ids), b, n), blk(base, b, n), atol=1e-5)
            i2 = ids.clone(); i2[b, n * bs + bs - 1] = 5        # the last slot of its own block
            out = run(feats, i2)
            assert not torch.allclose(blk(out, b, n)[0], blk(base, b, n)[0], atol=1e-5)  # seen by slot 0: both ways
            for other in range(3):                             # ... and by no other block
                if other != n: assert torch.allclose(blk(out, b, other), blk(base, b, other), atol=1e-5)
            other_b = 1 - b                                    # nor by the other sequence of the batch
            assert torch.allclose(out[other_b], base[other_b], atol=1e-5)


def test_flex_block_mask_gives_the_same_logits(target, drafter):
    seq, anchors, feats, ids, pos, ctx_pos = _setup(target, drafter)
    T, bs = seq.shape[1], drafter.config.block_size
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        dense = drafter(ids, pos, feats, ctx_pos, block_attention_mask(anchors, T, bs))
        flex = drafter(ids, pos, feats, ctx_pos, flex_block_mask(anchors, T, bs))
    assert torch.allclose(dense, flex, atol=1e-4)


def test_captured_features_equal_output_hidden_states(target):
    ids = torch.randint(0, 127, (3, 17))
    with torch.no_grad(): hs = target(ids, output_hidden_states=True).hidden_states
    for layers in ([1, 3, 5], [0, 6], [2]):
        for stop in (False, True):
            with TargetFeatures(target, layers, stop_early=stop) as tf:
                assert torch.equal(tf(ids), torch.cat([hs[i + 1] for i in layers], -1))


@pytest.mark.parametrize('multimodal', [False, True])
def test_qwen35_targets(multimodal):
    "Qwen3.5-style hybrid targets: text-only and multimodal classes, layers under model.language_model."
    from transformers import Qwen3_5Config, Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration, Qwen3_5TextConfig
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        if multimodal:
            t = Qwen3_5ForConditionalGeneration(Qwen3_5Config(text_config=_qwen35_text_kwargs(), vision_config=dict(
                depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64))).eval()
        else: t = Qwen3_5ForCausalLM(Qwen3_5TextConfig(**_qwen35_text_kwargs())).eval()
        ids = torch.randint(0, 150, (2, 9))
        with torch.no_grad(): hs = t(input_ids=ids, output_hidden_states=True).hidden_states
        d = DFlashDraftModel.from_target(t, num_draft_layers=2, mask_token_id=159, block_size=4)
        with TargetFeatures(t, d.config.target_layer_ids, stop_early=True) as tf: f = tf(ids)
    assert len(decoder_layers(t)) == 8 and d.config.target_layer_ids == [1, 5]
    assert torch.equal(f, torch.cat([hs[2], hs[6]], -1))
    assert shared_embeddings(t)[1] is t.get_output_embeddings().weight       # untied: the real head
    out = d.draft(ids[:, -1], 9, f, torch.arange(9).expand(2, -1))
    assert out.shape == (2, 3, 160) and torch.isfinite(out).all()


def test_tied_embeddings_head_is_the_embedding(tmp_path):
    "A tied checkpoint has no lm_head.weight in its file; the drafter's head must still be the embedding matrix."
    from safetensors import safe_open
    from dflash_nb.train import load_target
    t = tiny_qwen3_target(vocab_size=96)
    t.save_pretrained(tmp_path/'tied')
    with safe_open(str(tmp_path/'tied'/'model.safetensors'),
                   'pt') as f: assert not any('lm_head' in k for k in f.keys())
    loaded = load_target(str(tmp_path/'tied'), torch.device('cpu'))
    emb, head = shared_embeddings(loaded)
    assert head is emb and torch.equal(emb, t.model.embed_tokens.weight)
    d = DFlashDraftModel.from_target(loaded, 2, mask_token_id=95)
    assert d.head_weight.data_ptr() == d.embed_weight.data_ptr() and d.config.target_tie_word_embeddings
    untied = tiny_qwen3_target(96, tie_word_embeddings=False)
    assert shared_embeddings(untied)[1] is untied.lm_head.weight and not torch.equal(untied.lm_head.weight,
                                                                                     untied.model.embed_tokens.weight)


def test_shared_weights_are_not_drafter_parameters(target, drafter):
    names = set(dict(drafter.named_parameters()))
    assert not any('embed' in n or 'lm_head' in n for n in names)
    assert {'fc.weight', 'hidden_norm.weight', 'norm.weight', 'layers.1.mlp.down_proj.weight',
            'layers.0.self_attn.k_norm.weight'} <= names
    assert drafter.fc.in_features == 2 * 64
    assert all(not p.requires_grad for p in target.parameters())


def test_draft_with_cache_equals_full_context_and_training_layout(target, drafter):
    seq, anchors, feats, ids, pos, ctx_pos = _setup(target, drafter)
    T, bs = seq.shape[1], drafter.config.block_size
    with torch.no_grad(): train_layout = drafter(ids, pos, feats, ctx_pos, block_attention_mask(anchors, T, bs))
    for n, a in enumerate(anchors[0].tolist()):
        full = drafter.draft(seq[:, a], a, feats[:, :a], torch.arange(a)[None])
        assert torch.allclose(full, train_layout[:, n * bs + 1:(n + 1) * bs], atol=1e-5)
    cache, start = DraftCache(), 0
    for a in anchors[0].tolist():                              # context fed step by step, as a decoding loop does
        inc = drafter.draft(seq[:, a], a, feats[:, start:a], torch.arange(start, a)[None], cache=cache)
        full = drafter.draft(seq[:, a], a, feats[:, :a], torch.arange(a)[None])
        assert torch.allclose(inc, full, atol=1e-5) and cache.seq_len == a
        start = a
    cache.crop(5)
    assert cache.seq_len == 5


def test_dtypes_bf16_target_and_autocast(target, drafter):
    seq, anchors, feats, ids, pos, ctx_pos = _setup(target, drafter)
    T, bs = seq.shape[1], drafter.config.block_size
    mask = block_attention_mask(anchors, T, bs)
    with torch.no_grad():
        ref = drafter(ids, pos, feats, ctx_pos, mask)
        with torch.autocast('cpu', dtype=torch.bfloat16):       # the GPU training path, on CPU
            ac = drafter(ids, pos, feats.bfloat16(), ctx_pos, mask)
    assert ac.dtype == torch.bfloat16 and (ac.float() - ref).abs().max() < 0.3 * ref.abs().max()
    t16 = tiny_qwen3_target(vocab_size=128, dtype=torch.bfloat16)
    d = DFlashDraftModel(drafter.config).bind_target(t16)        # fp32 drafter, bf16 target, no autocast
    d.load_state_dict(drafter.state_dict())
    out = d.draft(seq[:, 11], 11, feats[:, :11].bfloat16(), torch.arange(11)[None])
    assert out.dtype == torch.bfloat16 and torch.isfinite(out.float()).all()


def test_save_load_round_trip(tmp_path, target, drafter):
    seq, anchors, feats, ids, pos, ctx_pos = _setup(target, drafter)
    drafter.save_pretrained(tmp_path/'d')
    cfg = json.loads((tmp_path/'d'/'config.json').read_text())
    assert cfg['architectures'] == ['DFlashDraftModel'] and cfg['num_hidden_layers'] == 2 and cfg['block_size'] == 4
    assert cfg['dflash_config'] == {**cfg['dflash_config'], 'target_layer_ids': [1, 5], 'mask_token_id': 127,
                                    'block_size': 4, 'num_target_layers': 8}
    back = DFlashDraftModel.from_pretrained(tmp_path/'d', target=target).eval()
    assert back.config == drafter.config
    for (k, v), (k2, v2) in zip(drafter.state_dict().items(), back.state_dict().items()):
        assert k == k2 and torch.equal(v, v2)
    a = 11
    assert torch.equal(back.draft(seq[:, a], a, feats[:, :a], torch.arange(a)[None]),
                       drafter.draft(seq[:, a], a, feats[:, :a], torch.arange(a)[None]))
    drafter.save_pretrained(tmp_path/'bf16', dtype=torch.bfloat16)        # for serving
    assert json.loads((tmp_path/'bf16'/'config.json').read_text())['torch_dtype'] == 'bfloat16'
    b16 = DFlashDraftModel.from_pretrained(tmp_path/'bf16', target=target)
    assert b16.fc.weight.dtype == torch.bfloat16
    with pytest.raises(FileNotFoundError, match='config.json'):
        DFlashDraftModel.from_pretrained(tmp_path)
    cfg['num_hidden_layers'] = 3; cfg['layer_types'] = ['full_attention'] * 3
    (tmp_path/'d'/'config.json').write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match='weights do not match'):
        DFlashDraftModel.from_pretrained(tmp_path/'d')


def test_unbound_drafter_says_what_to_do(drafter):
    d = DFlashDraftModel(drafter.config)
    with pytest.raises(RuntimeError, match='bind_target'):
        d.draft(torch.tensor([1]), 3)
