"""Tests of DFlash speculative decoding, evaluation and on-policy generation (dflash_nb.eval, dflash_nb.generate), CPU,
tiny targets."""
import argparse, json, warnings

import numpy as np
import pytest
import torch

from dflash_nb.testing import FakeChatServer
from dflash_nb.eval import (TargetSession, add_eval_args, crop_kv_cache, eval_main, evaluate, greedy_generate,
                            speculative_generate)
from dflash_nb.generate import (add_generate_args, dataset_prompts, generate_main, generate_records,
                                generate_records_api,
                                generate_token_dataset, generate_tokens, random_prompts, read_prompts)
import dflash_nb.eval as ev
from dflash_nb.model import DFlashDraftModel
from dflash_nb.toy import tiny_qwen3_target
from dflash_nb.train import TokenDataset, load_target, train, train_args

torch.set_num_threads(1)
warnings.filterwarnings('ignore', message='.*past_key_values.*')
V = 128
MASK = V - 1


@pytest.fixture(scope='module')
def work(tmp_path_factory):
    "A tiny untied Qwen3 target saved as a model directory, its on-policy dataset, and a drafter trained on it (~15 s)."
    from transformers.utils import logging as hf_logging
    hf_logging.disable_progress_bar()
    d = tmp_path_factory.mktemp('eval')
    tiny_qwen3_target(vocab_size=V, num_layers=4, tie_word_embeddings=False).save_pretrained(d/'target')
    tgt = load_target(str(d/'target'), torch.device('cpu'))
    generate_token_dataset(tgt, random_prompts(256, V, 4, 24, seed=0, exclude_ids=[MASK]), d/'ds', 48, batch_size=64,
                           suppress_ids=[MASK])
    train(train_args(dataset=str(d/'ds'), target=str(d/'target'), output_dir=str(d/'train'), draft_layers=1,
                     mask_token_id=MASK,
                     max_seq_len=128, max_tokens=1024, max_anchors=16, epochs=20, max_steps=150, lr=3e-3, quiet=True,
                     save_every=0, resume='never'))
    trained = DFlashDraftModel.from_pretrained(d/'train'/'drafter', target=tgt).eval()
    untrained = DFlashDraftModel.from_target(tgt, 1, mask_token_id=MASK, seed=0).eval()
    return {'dir': d, 'target': tgt, 'trained': trained, 'untrained': untrained}


class Oracle(DFlashDraftModel):
    "Drafts the known greedy sequence `seq` (absolute positions), wrong wherever `wrong(position)` is true."
    def __init__(self, cfg, seq, wrong=lambda pos: False):
        super().__init__(cfg); self.seq, self.wrong = seq, wrong
    def draft(self, last_token, anchor_pos, ctx_hidden=None, ctx_pos=None, cache=None):
        bs, out = self.config.block_size, []
        for k in range(1, bs):
            p = anchor_pos + k
            t = self.seq[p] if p < len(self.seq) else 0
            out.append((t + 1) % (V - 1) if self.wrong(p) else t)
        return torch.nn.functional.one_hot(torch.tensor(out), self.config.vocab_size).float()[None]


def check_bookkeeping(g, prompt_len, bs=16):
    "The invariants every speculative run satisfies."
    assert g.target_forwards == g.steps + 1                          # one verify forward per step, plus the prefill
    assert g.draft_forwards == g.steps
    assert 1 + sum(a + 1 for a in g.accepted) == len(g.tokens)        # tau bookkeeping
    assert g.target_tokens == prompt_len + sum(d + 1 for d in g.drafted)
    assert all(0 <= a <= m <= d <= bs - 1 for a, m, d in zip(g.accepted, g.matched, g.drafted))
    if g.steps: assert g.tau == pytest.approx(np.mean([a + 1 for a in g.accepted]))


PROMPTS = [[7], [1, 2], [5, 9, 3, 3, 8, 100, 2], list(range(16)), [(i * 37) % 126 for i in range(33)]]
LENGTHS = [1, 2, 15, 16, 17, 31, 50]


@pytest.mark.parametrize('which', ['untrained', 'trained'])
def test_lossless_for_every_prompt_and_length(work, which):
    """Speculative output == plain greedy decoding, token for token: prompt lengths 1..33, max_new_tokens not multiples
    of 16."""
    tgt, d = work['target'], work[which]
    accepted = 0
    for p in PROMPTS:
        ref = greedy_generate(tgt, p, max(LENGTHS), suppress_ids=[MASK]).tokens
        for n in LENGTHS:
            g = speculative_generate(tgt, d, p, n, suppress_ids=[MASK])
            assert g.tokens == ref[:n], (which, p, n)
            assert g.stop == 'length' and len(g.tokens) == n
            check_bookkeeping(g, len(p))
            accepted += sum(g.accepted)
    if which == 'trained': assert accepted > 200            # the trained drafter gets many tokens accepted


def test_greedy_reference_is_hf_generate(work):
    tgt = work['target']
    for p in PROMPTS[1:4]:
        # an explicit attention mask: without one, generate takes the prompt's 0s for padding (pad id 0)
        x = torch.tensor([p])
        hf = tgt.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=30, do_sample=False, pad_token_id=0,
                          suppress_tokens=[MASK])[0, len(p):]
        assert greedy_generate(tgt, p, 30, suppress_ids=[MASK]).tokens == hf.tolist()


def test_partial_acceptance_at_every_position(work):
    "A drafter wrong at known positions: the loop accepts exactly the right prefix of each block and stays lossless."
    tgt, cfg = work['target'], work['untrained'].config
    p = PROMPTS[2]
    ref = greedy_generate(tgt, p, 120, suppress_ids=[MASK]).tokens
    seq = p + ref
    for period in (3, 7, 11, 17, 40):
        wrong = lambda pos, period=period: pos % period == 0
        g = speculative_generate(tgt, Oracle(cfg, seq, wrong), p, 120, suppress_ids=[MASK])
        assert g.tokens == ref
        check_bookkeeping(g, len(p))
        pos = len(p)                                   # position of the first new token = the first anchor
        for a, m, dr in zip(g.accepted, g.matched, g.drafted):
            expect = next((k - 1 for k in range(1, dr + 1) if wrong(pos + k)), dr)
            assert m == expect, (period, pos)
            pos += a + 1
    # always right: every step commits a whole block
    g = speculative_generate(tgt, Oracle(cfg, seq), p, 120, suppress_ids=[MASK])
    assert g.tokens == ref and g.accepted[:-1] == [15] * (len(g.accepted) - 1) and g.target_forwards == 1 + -(-119
                                                                                                              // 16)


def test_eos_inside_a_block(work):
    "Generation stops at an end token in the middle of an accepted block; the commit is cut there."
    tgt, cfg = work['target'], work['untrained'].config
    # a prompt and an end token whose first occurrence lies inside a block after the first (new tokens 17..), not at its
    # end
    def first_new(ref): return next((i for i in range(17, 60) if ref[i] not in ref[:i] and (i - 1) % 16 != 15), None)
    p, ref, i = next((p, r, first_new(r)) for p in random_prompts(100, V, 2, 30, seed=7, exclude_ids=[MASK])
                     for r in [greedy_generate(tgt, p, 100, suppress_ids=[MASK]).tokens] if first_new(r) is not None)
    eos = ref[i]
    want = greedy_generate(tgt, p, 100, eos_token_id=eos, suppress_ids=[MASK])
    assert want.tokens == ref[:i + 1] and want.stop == 'eos'
    for d in (Oracle(cfg, p + ref), work['trained'], work['untrained']):
        g = speculative_generate(tgt, d, p, 100, eos_token_id=[eos, 10_000], suppress_ids=[MASK])
        assert g.tokens == want.tokens and g.stop == 'eos'
        check_bookkeeping(g, len(p))
    g = speculative_generate(tgt, Oracle(cfg, p + ref), p, 100, eos_token_id=eos, suppress_ids=[MASK])
    assert g.matched[-1] > g.accepted[-1]               # the oracle's block went on past the end token


def test_kv_cache_is_reused_never_recomputed(work):
    "Count what the target is fed: the prompt once, then only verify blocks, each after exactly the committed prefix."
    tgt, d = work['target'], work['trained']
    calls = []
    def hook(module, args, kwargs):
        ids = kwargs.get('input_ids', args[0] if args else None)
        cache = kwargs.get('cache', kwargs.get('past_key_values'))
        calls.append((ids.shape[1], cache.get_seq_length()))
    h = tgt.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        p = PROMPTS[4]
        g = speculative_generate(tgt, d, p, 77, suppress_ids=[MASK])
    finally: h.remove()
    assert len(calls) == g.target_forwards == g.steps + 1
    assert sum(n for n, _ in calls) == g.target_tokens == len(p) + sum(x + 1 for x in g.drafted)
    assert calls[0] == (len(p), 0)                                        # the prefill
    committed = 1
    for (n, cached), a, dr in zip(calls[1:], g.accepted, g.drafted):
        # a block: the anchor + its drafts, never the prefix
        assert n == dr + 1 <= 16
        # the cache holds exactly the tokens before the anchor
        assert cached == len(p) + committed - 1
        committed += a + 1
    assert committed == len(g.tokens)
    assert sum(g.accepted) > 10


def test_session_crop_matches_a_fresh_forward(work):
    "After cropping, continuing from the cache gives what a forward over the whole sequence gives."
    tgt = work['target']
    s = TargetSession(tgt)
    s(list(range(30)))
    s.crop(12)
    nxt, _ = s([40, 41, 42])
    full = tgt(torch.tensor([list(range(12)) + [40, 41, 42]])).logits[0, -3:].argmax(-1)
    assert nxt.tolist() == full.tolist() and s.length == 15 and s.forwards == 2 and s.tokens_in == 33


def test_crop_speaks_both_transformers_conventions():
    class New:      # transformers 5: crop(tokens_to_remove), negative
        def __init__(self): self.n, self.calls = 10, []
        def get_seq_length(self): return self.n
        def crop(self, tokens_to_remove): self.calls.append(tokens_to_remove); self.n += tokens_to_remove
    class Old:      # transformers 4: crop(max_length), crop(0) would empty the cache
        def __init__(self): self.n, self.calls = 10, []
        def get_seq_length(self): return self.n
        def crop(self, max_length): self.calls.append(max_length); self.n = max_length
    n, o = New(), Old()
    crop_kv_cache(n, 7); crop_kv_cache(n, 7); crop_kv_cache(o, 7); crop_kv_cache(o, 7)
    assert (n.calls, n.n, o.calls, o.n) == ([-3, 0], 7, [7], 7)
    with pytest.raises(ValueError, match='cannot crop'): crop_kv_cache(o, 8)


def test_uncroppable_cache_is_refused(work, monkeypatch):
    from transformers import DynamicCache
    class Linear(DynamicCache):
        is_croppable = False
    monkeypatch.setattr(ev, 'new_kv_cache', lambda target: Linear())
    with pytest.raises(ValueError, match='cannot be rolled back'):
        speculative_generate(work['target'], work['untrained'], [1, 2, 3], 10)


def test_draft_cache_reuse_equals_recompute(work):
    tgt, d = work['target'], work['trained']
    for p in PROMPTS[2:]:
        a = speculative_generate(tgt, d, p, 60, suppress_ids=[MASK], draft_cache=True)
        b = speculative_generate(tgt, d, p, 60, suppress_ids=[MASK], draft_cache=False)
        assert a.tokens == b.tokens and a.accepted == b.accepted and a.matched == b.matched


def test_evaluate_statistics(work):
    tgt = work['target']
    prompts = random_prompts(6, V, 1, 30, seed=3, exclude_ids=[MASK])
    res = {k: evaluate(tgt, work[k], prompts, 45, suppress_ids=[MASK], label=k) for k in ('untrained', 'trained')}
    u, t = res['untrained'], res['trained']
    for r in (u, t):
        s = r.summary()
        assert r.lossless is True and r.prompts == 6 and s['new_tokens'] == 6 * 45
        assert r.accept_hist.sum() == s['steps'] and (np.arange(1, 17) * r.accept_hist).sum() == s['new_tokens'] - 6
        assert s['target_forwards'] == s['steps'] + 6 and r.forwards_saved == s['new_tokens'] - s['target_forwards']
        assert r.speedup == pytest.approx(s['new_tokens'] / s['target_forwards'])
        assert r.mean_tau == pytest.approx(np.mean([x['tau'] for x in r.rows]))
        m = np.array([x for row in r.rows for x in row['matched']]);
        dr = np.array([x for row in r.rows for x in row['drafted']])
        assert r.position_acceptance[0] == pytest.approx((m >= 1).sum() / (dr >= 1).sum())
        json.dumps(r.to_dict())
    assert t.mean_tau > u.mean_tau + 1 and t.speedup > 1.5
    assert 'lossless vs plain greedy: yes' in t.table()
    no_ref = evaluate(tgt, work['trained'], prompts[:2], 20, suppress_ids=[MASK], reference=False)
    assert no_ref.lossless is None and no_ref.rows[0]['greedy_seconds'] is None


def test_generate_tokens_batched_and_sampled(work):
    tgt = work['target']
    prompts = [[3], [4, 5, 6, 7, 8], list(range(20)), [9, 9]]
    greedy = generate_tokens(tgt, prompts, 12, batch_size=3, suppress_ids=[MASK])
    assert greedy == [greedy_generate(tgt, p, 12, suppress_ids=[MASK]).tokens for p in prompts]
    eos = greedy[2][5]
    cut = generate_tokens(tgt, prompts, 12, batch_size=4, eos_token_id=eos, suppress_ids=[MASK])
    assert cut == [greedy_generate(tgt, p, 12, eos, [MASK]).tokens for p in prompts]
    s1 = generate_tokens(tgt, prompts, 12, do_sample=True, temperature=1.5, seed=1)
    assert s1 == generate_tokens(tgt, prompts, 12, do_sample=True, temperature=1.5, seed=1) and s1 != greedy


def test_token_dataset_layout(work):
    ds = TokenDataset(work['dir']/'ds')
    ids, mask = ds.sample(0)
    man = json.loads((work['dir']/'ds'/'manifest.json').read_text())
    assert ds.n_rows == 256 and mask.sum() == 48 and not mask[:4].any() and mask[-1]
    assert man['generation']['suppress_ids'] == [MASK] and ds.max_token_id < MASK
    dp = dataset_prompts(work['dir']/'ds', limit=3)
    assert [len(p['input_ids']) for p in dp] == [int((~TokenDataset(work['dir']/'ds').sample(i)[1]).sum()) for i
                                                 in range(3)]
    import datasets
    assert datasets.load_from_disk(str(work['dir']/'ds')).num_rows == 256


def chat_answer(body):
    "Canned answers derived from the request; a prompt asking for 'fail' gets HTTP 400."
    q = body['messages'][-1]['content']
    if 'fail' in q: raise ValueError('bad request')
    return {'role': 'assistant', 'content': f"Answer to: {q}", 'reasoning_content': f"Thinking about {q}."}


def write_prompts(path, n=5, fail=()):
    recs = [{'id': f"q{i}", 'messages': [{'role': 'user', 'content': ('fail ' if i in fail else '') + f"question {i}"}],
             'source': 'unit'} for i in range(n)]
    path.write_text(''.join(json.dumps(r) + '\n' for r in recs))
    return path


def test_openai_compatible_server(tmp_path, qwen_dir, monkeypatch):
    """Chat completions from a local server: reasoning kept, retries, failures listed, resume, and tokenize reads the
    records."""
    from dflash_nb.records import read_records
    from dflash_nb.tokenize import tokenize_dataset, ChatTokenizer
    monkeypatch.setenv('OPENAI_API_KEY', 'sk-test')
    prompts = write_prompts(tmp_path/'prompts.jsonl', 5, fail={3})
    with FakeChatServer(chat_answer, fail_first=2) as srv:
        s = generate_records_api(prompts, tmp_path/'out.jsonl', srv.url, concurrency=2, retries=3, max_tokens=64,
                                 temperature=0.0,
                                 extra_body={'top_k': 20})
        assert s['model'] == 'fake-model' and s['written'] == 4 and s['errors'] == 1 and s['completion_tokens'] == 12
        body = srv.requests[-1]['body']
        assert body['model'] == 'fake-model' and body['max_tokens'] == 64 and body[
            'top_k'] == 20 and 'top_p' not in body
        assert all(r['auth'] == 'Bearer sk-test' for r in srv.requests)
        with pytest.raises(FileExistsError): generate_records_api(prompts, tmp_path/'out.jsonl', srv.url)
    recs = [json.loads(l) for l in (tmp_path/'out.jsonl').read_text().splitlines()]
    r0 = next(r for r in recs if r['id'] == 'q0')
    assert r0['completion'] == {'role': 'assistant', 'content': 'Answer to: question 0',
                                'reasoning_content': 'Thinking about question 0.'}
    assert r0['finish_reason'] == 'stop' and r0['source'] == 'unit' and r0['generator']['backend'] == 'openai-api'
    errs = [json.loads(l) for l in (tmp_path/'out.errors.jsonl').read_text().splitlines()]
    assert [e['id'] for e in errs] == ['q3'] and 'HTTP 400' in errs[0]['error']
    # the errors file is a prompt file
    assert [p['id'] for p in read_prompts(tmp_path/'out.errors.jsonl')[0]] == ['q3']
    assert sorted(r.sample_id for r in read_records(tmp_path/'out.jsonl')) == ['q0', 'q1', 'q2', 'q4']
    st = tokenize_dataset(qwen_dir, tmp_path/'out.jsonl', tmp_path/'ds', progress=False)
    assert st['samples'] == 4 and not st['skipped']
    ct, ds = ChatTokenizer(qwen_dir), TokenDataset(tmp_path/'ds')
    ids, mask = ds.sample(0)
    text = ct.tokenizer.decode(ids[mask].tolist(), skip_special_tokens=False)
    assert 'Thinking about question' in text and 'Answer to: question' in text and text.endswith('<|im_end|>')
    # resume: an interrupted run left a partial file with one record (and a cut line); only the others are requested
    (tmp_path/'r.jsonl.partial').write_text(json.dumps(r0) + '\n{"id": "q1", "mess')
    with FakeChatServer(chat_answer) as srv:
        s = generate_records_api(write_prompts(tmp_path/'p2.jsonl', 3), tmp_path/'r.jsonl', srv.url, model='m')
        assert s['resumed'] == 1 and s['written'] == 3 and len(srv.requests) == 2
    assert sorted(json.loads(l)['id'] for l in (tmp_path/'r.jsonl').read_text().splitlines()) == ['q0', 'q1', 'q2']
    assert not (tmp_path/'r.jsonl.partial').exists()


def test_generate_cli_against_server(tmp_path, capsys):
    p = add_generate_args(argparse.ArgumentParser())
    prompts = write_prompts(tmp_path/'prompts.jsonl', 3)
    with FakeChatServer(chat_answer) as srv:
        rc = generate_main(p.parse_args(['--api-base', srv.url, '--prompts', str(prompts), '--output',
                                         str(tmp_path/'o.jsonl'),
                                         '--max-new-tokens', '32', '--concurrency', '3', '--quiet', '--source', 'cli']))
    assert rc == 0 and '3 of 3 prompts' in capsys.readouterr().out
    assert {json.loads(l)['source'] for l in (tmp_path/'o.jsonl').read_text().splitlines()} == {'cli'}
    with pytest.raises(ValueError, match='exactly one'):
        generate_main(p.parse_args(['--output', str(tmp_path/'x'), '--prompts', str(prompts)]))


def test_generate_records_with_hf_generate(tmp_path, qwen_dir):
    """The local chat path: prompts rendered with the chat template, completions by a (tiny, Qwen-vocabulary) target,
    shape-3 records."""
    from dflash_nb.records import read_records
    from dflash_nb.tokenize import ChatTokenizer, tokenize_dataset
    ct = ChatTokenizer(qwen_dir)
    tgt = tiny_qwen3_target(vocab_size=ct.vocab_size, num_layers=2, hidden_size=16, num_heads=2, num_kv_heads=1,
                            head_dim=8,
                            intermediate_size=32, tie_word_embeddings=True)
    im_end = ct.tokenizer.token_to_id('<|im_end|>')
    specials = [ct.tokenizer.token_to_id(t) for t in ct.special_tokens if ct.tokenizer.token_to_id(t)
                not in (None, im_end)]
    prompts = write_prompts(tmp_path/'prompts.jsonl', 4)
    s = generate_records(tgt, qwen_dir, prompts, tmp_path/'c.jsonl', max_new_tokens=10, batch_size=3,
                         eos_token_id=im_end,
                         suppress_ids=specials)
    assert s['written'] == 4 and sum(s['finish_reasons'].values()) == 4 and s['completion_tokens'] <= 40
    recs = [json.loads(l) for l in (tmp_path/'c.jsonl').read_text().splitlines()]
    assert [r['id'] for r in recs] == ['q0', 'q1', 'q2', 'q3']
    assert recs[0]['messages'] == [{'role': 'user', 'content': 'question 0'}] and recs[0]['completion'][
        'role'] == 'assistant'
    assert recs[0]['generator']['backend'] == 'hf-generate'
    # the completion is the target's greedy continuation of the rendered prompt
    ids = ct.encode(ct.template.render(recs[0]['messages'], None, add_generation_prompt=True))
    assert recs[0]['generator']['completion_tokens'] == len(greedy_generate(tgt, ids, 10, im_end, specials).tokens)
    assert all(type(r).__name__ == 'Record' for r in read_records(tmp_path/'c.jsonl'))
    st = tokenize_dataset(qwen_dir, tmp_path/'c.jsonl', tmp_path/'ds', progress=False)
    assert st['samples'] + sum(st['skipped'].values()) == 4 and st['samples'] >= 3


def test_eval_and_generate_cli_token_level(work, tmp_path, capsys):
    d = work['dir']
    g = add_generate_args(argparse.ArgumentParser())
    assert generate_main(g.parse_args(['--target', str(d/'target'), '--random-prompts', '5', '--prompt-len', '3,9',
                                       '--output',
                                       str(tmp_path/'held'), '--max-new-tokens', '20', '--suppress-token-ids',
                                       str(MASK),
                                       '--seed', '99', '--quiet'])) == 0
    held = TokenDataset(tmp_path/'held')
    assert held.n_rows == 5 and held.max_token_id < MASK
    e = add_eval_args(argparse.ArgumentParser())
    rc = eval_main(e.parse_args(['--target', str(d/'target'), '--drafter', str(d/'train'/'drafter'), '--dataset',
                                 str(tmp_path/'held'),
                                 '--max-new-tokens', '33', '--suppress-token-ids', str(MASK), '--output-dir',
                                 str(tmp_path/'ev'), '--quiet']))
    out = capsys.readouterr().out
    assert rc == 0 and 'lossless vs plain greedy: yes' in out
    s = json.loads((tmp_path/'ev'/'eval.json').read_text())
    assert s['prompts'] == 5 and s['lossless'] and s['mean_tau'] > 1.3 and len(s['per_prompt']) == 5
    assert eval_main(e.parse_args(['--target', 'tiny:num_layers=4', '--vocab-size', '64', '--drafter', 'untrained',
                                   '--draft-layers', '1',
                                   '--random-prompts', '3', '--max-new-tokens', '9', '--no-reference', '--quiet'])) == 0
    with pytest.raises(FileNotFoundError, match='config.json'):
        eval_main(e.parse_args(['--target', 'tiny', '--drafter', str(tmp_path), '--random-prompts', '2']))
    with pytest.raises(ValueError, match='exactly one'):
        eval_main(e.parse_args(['--target', 'tiny', '--drafter', 'untrained']))
