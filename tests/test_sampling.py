"""Speculative sampling (T > 0) is distributed exactly as the target's own sampling: a statistical test on a tiny
target, with a fixed seed budget, that passes for the real verifier and fails for a verifier with the wrong residual."""
import math
from functools import partial

import pytest
import torch

from dflash_nb.eval import draft_tokens, evaluate, sample_verify, speculative_generate, tempered_probs
from dflash_nb.model import DFlashDraftModel, TargetFeatures
from dflash_nb.toy import tiny_qwen3_target

torch.set_num_threads(1)
V, MASK, PROMPT = 8, 7, [1, 2, 3]          # 7 usable ids: 343 sequences of 3 tokens
P = len(PROMPT)


@pytest.fixture(scope='module')
def pair():
    "A 2-layer target whose next-token distributions are spread out (small embedding), and a random 1-layer drafter."
    tgt = tiny_qwen3_target(vocab_size=V, num_layers=2, hidden_size=32, num_heads=2, num_kv_heads=1, head_dim=16,
                            intermediate_size=64, embed_std=0.1)
    dr = DFlashDraftModel.from_target(tgt, 1, target_layer_ids=[0], block_size=3, mask_token_id=MASK, seed=1).eval()
    return tgt, dr


def target_probs(tgt, seqs, T=1.0):
    with torch.no_grad(): lg = tgt(input_ids=torch.as_tensor(seqs)).logits.float()
    lg[..., MASK] = -math.inf                                          # the mask token is suppressed, as in eval
    return tempered_probs(lg, T)


def exact_distribution(tgt):
    "P(t1, t2, t3) after PROMPT under the target's own sampling at T = 1, from one batched forward."
    pr = target_probs(tgt, [PROMPT + [a, b] for a in range(V) for b in range(V)]).view(V, V, P + 2, V)
    return pr[0, 0, P - 1][:, None, None] * pr[:, 0, P][:, :, None] * pr[:, :, P + 1]


@torch.no_grad()
def speculative_samples(tgt, dr, n, verify, seed=0, draft_sampling='sample'):
    """`n` 3-token continuations of PROMPT by the steps `speculative_generate` takes with a block of 3, batched over the
    samples: t1 from the prefill, then one drafted block [t1, d1, d2] verified by `verify`, then (if it committed only
    one token) a block of one, which samples from p."""
    g = torch.Generator().manual_seed(seed)
    t1 = torch.multinomial(target_probs(tgt, [PROMPT])[0, -1], n, replacement=True, generator=g)
    with TargetFeatures(tgt, dr.config.target_layer_ids) as tf: ctx = tf(torch.tensor([PROMPT]))
    lg = dr.draft(t1, P, ctx.expand(n, -1, -1), torch.arange(P)[None].expand(n, -1))
    lg[..., MASK] = -math.inf
    d, q = draft_tokens(lg, 1.0, 1.0, draft_sampling, g)              # (n, 2), (n, 2, V): the drafter's slots 1, 2
    # after t1, d1, d2
    p = target_probs(tgt, torch.cat([torch.tensor(PROMPT).expand(n, -1), t1[:, None], d], 1))[:, P:]
    out = [[int(t1[i])] + verify(d[i].tolist(), q[i], p[i], g)[0] for i in range(n)]
    short = [i for i, o in enumerate(out) if len(o) < 3]
    if short:
        p2 = target_probs(tgt, [PROMPT + out[i] for i in short])[:, -1]
        for j, i in enumerate(short): out[i] += verify([], p2[j:j + 1][:0], p2[j:j + 1], g)[0]
    return torch.tensor([o[:3] for o in out])


def fit(samples, Pex):
    """(total variation distance of the empirical distribution from Pex, its bound at this sample size, chi-square z).
    Bound: E[TV] <= 1/2 sum_x sqrt(P(x)/n), and TV moves by at most 1/n per sample, so by McDiarmid it exceeds
    E[TV] + sqrt(ln(1/delta) / 2n) with probability < delta = 1e-4. z: Wilson-Hilferty normal score of Pearson's
    chi-square over the cells with >= 5 expected samples (the rest pooled into one cell)."""
    n = len(samples)
    cnt = torch.zeros_like(Pex).index_put_(tuple(samples.T), torch.ones(n, dtype=Pex.dtype), accumulate=True)
    tv = 0.5 * float((cnt / n - Pex).abs().sum())
    bound = 0.5 * float(Pex.sqrt().sum()) / math.sqrt(n) + math.sqrt(math.log(1e4) / (2 * n))
    E = Pex * n; ok = E >= 5
    chi = float(((cnt - E) ** 2 / E)[ok].sum()) + float((cnt[~ok].sum() - E[~ok].sum()) ** 2
                                                        / E[~ok].sum().clamp_min(1e-9))
    k = int(ok.sum())
    z = ((chi / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return tv, bound, z


def test_tempered_probs_and_top_p():
    lg = torch.tensor([[0.5, 0.3, 0.2, 0.0]]).log()
    torch.testing.assert_close(tempered_probs(lg, 0.5), torch.tensor([[25, 9, 4, 0]]) / 38.)
    torch.testing.assert_close(tempered_probs(lg, 1.0, 0.7), torch.tensor([[0.625, 0.375, 0, 0]]))
    torch.testing.assert_close(tempered_probs(lg, 1.0, 0.5), torch.tensor([[1.0, 0, 0, 0]]))


def test_speculative_sampling_matches_the_target_and_a_wrong_residual_is_caught(pair):
    tgt, dr = pair
    Pex = exact_distribution(tgt)
    assert float(Pex.sum()) == pytest.approx(1, abs=1e-5) and int((Pex > 1e-3).sum()) > 20   # a spread-out target
    tv, bound, z = fit(speculative_samples(tgt, dr, 10000, sample_verify), Pex)
    assert tv < bound and z < 4, (tv, bound, z)
    # the same statistic with the residual replaced by p (a classic bug) is rejected by both criteria
    tv_w, bound_w, z_w = fit(speculative_samples(tgt, dr, 10000, partial(sample_verify, residual=False)), Pex)
    assert tv_w > bound_w and z_w > 10, (tv_w, bound_w, z_w)


def test_the_decoding_loop_samples_the_target_reproducibly(pair):
    "The real loop (`speculative_generate`, one sample per call): seeded runs repeat; 400 samples fit the target."
    tgt, dr = pair
    run = lambda seed: speculative_generate(tgt, dr, PROMPT, 3, suppress_ids=[MASK], temperature=1.0,
                                            generator=torch.Generator().manual_seed(seed))
    assert [run(5).tokens for _ in range(2)] == [run(5).tokens] * 2
    s = [run(1000 + i) for i in range(400)]
    assert all(len(x.tokens) == 3 and 0 <= sum(x.accepted) <= 2 for x in s) and any(x.accepted[0] for x in s)
    tv, bound, _ = fit(torch.tensor([x.tokens for x in s]), exact_distribution(tgt))
    assert tv < bound, (tv, bound)


def test_evaluate_at_temperature_1(pair):
    tgt, dr = pair
    r = evaluate(tgt, dr, [PROMPT, [4, 5]], 12, suppress_ids=[MASK], temperature=1.0, seed=3)
    s = r.summary()
    assert s['temperature'] == 1.0 and s['lossless'] is None and s['new_tokens'] == 24 and s['mean_tau'] >= 1
    assert r.rows[0]['tokens'] == evaluate(tgt, dr, [PROMPT], 12, suppress_ids=[MASK], temperature=1.0,
                                           seed=3).rows[0]['tokens']
    assert all(MASK not in row['tokens'] for row in r.rows)


def test_greedy_drafts_at_t1_keep_the_target_distribution(pair):
    """Drafting the argmax (vLLM's default, z-lab's loop) and verifying it as a point mass samples the target exactly
    too."""
    tgt, dr = pair
    lg = torch.randn(2, V)
    d, q = draft_tokens(lg, 1.0, 0.9, 'greedy')
    assert torch.equal(d, lg.argmax(-1)) and torch.equal(q, torch.nn.functional.one_hot(d, V).float())
    tv, bound, z = fit(speculative_samples(tgt, dr, 10000, sample_verify, draft_sampling='greedy'),
                       exact_distribution(tgt))
    assert tv < bound and z < 4, (tv, bound, z)


def test_draft_sampling_is_reported_and_greedy_by_default(pair, tmp_path):
    "eval.json and the table say how the T > 0 drafts were chosen; the default is the servers' (greedy)."
    import json, argparse
    from dflash_nb.eval import add_eval_args, eval_main
    tgt, dr = pair
    g, s = (evaluate(tgt, dr, [PROMPT, [4, 5]], 12, suppress_ids=[MASK], temperature=1.0, seed=3, **kw) for kw
            in ({}, {'draft_sampling': 'sample'}))
    assert (g.summary()['draft_sampling'], s.summary()['draft_sampling']) == ('greedy', 'sample')
    assert 'at T=1 (drafts greedy)' in g.table() and 'at T=1 (drafts sample)' in s.table()
    argv = ['--target', 'tiny:num_layers=2', '--drafter', 'untrained', '--draft-layers', '1', '--random-prompts', '2',
            '--vocab-size', '32',
            '--max-new-tokens', '6', '--temperature', '0,1', '--output-dir', str(tmp_path/'ev'), '--quiet']
    assert eval_main(add_eval_args(argparse.ArgumentParser()).parse_args(argv)) == 0
    ev = json.loads((tmp_path/'ev'/'eval.json').read_text())
    assert ev['by_temperature']['1']['draft_sampling'] == 'greedy'
