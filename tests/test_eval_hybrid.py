"""Hybrid (Qwen3.5/3.6-style: Gated DeltaNet linear attention + full attention) targets: exact speculative verification
by state snapshot/restore, training a drafter on one, and `dflash-nb eval` on one (CPU, a tiny hybrid built in code)."""
import argparse, functools, json, warnings

import pytest
import torch

from dflash_nb.eval import (TargetSession, add_eval_args, eval_main, greedy_generate, prompt_lookup_generate,
                            speculative_generate)
from dflash_nb.generate import generate_token_dataset, random_prompts
from dflash_nb.model import DFlashDraftModel, TargetFeatures
from dflash_nb.toy import tiny_hybrid_target
from dflash_nb.train import load_target, train, train_args

torch.set_num_threads(1)
warnings.filterwarnings('ignore', message='.*falling back.*')
V = 64
MASK = V - 1


@pytest.fixture(scope='module')
def work(tmp_path_factory):
    """A tiny hybrid target saved as a model directory, its on-policy dataset and a drafter trained on it for a few
    steps."""
    from transformers.utils import logging as hf_logging
    hf_logging.disable_progress_bar(); hf_logging.set_verbosity_error()
    d = tmp_path_factory.mktemp('hybrid')
    tiny_hybrid_target(vocab_size=V, num_layers=4, full_attention_interval=2,
                       tie_word_embeddings=False).save_pretrained(d/'target')
    tgt = load_target(str(d/'target'), torch.device('cpu'))
    generate_token_dataset(tgt, random_prompts(96, V, 4, 16, seed=0, exclude_ids=[MASK]), d/'ds', 32, batch_size=48,
                           suppress_ids=[MASK])
    s = train(train_args(dataset=str(d/'ds'), target=str(d/'target'), output_dir=str(d/'train'), draft_layers=1,
                         mask_token_id=MASK, block_size=8, max_seq_len=64, max_tokens=768, max_anchors=16, epochs=40,
                         max_steps=60, lr=3e-3, quiet=True, save_every=0, resume='never'))
    metrics = [json.loads(l) for l in (d/'train'/'metrics.jsonl').read_text().splitlines()]
    trained = DFlashDraftModel.from_pretrained(d/'train'/'drafter', target=tgt).eval()
    untrained = DFlashDraftModel.from_target(tgt, 1, block_size=8, mask_token_id=MASK, seed=0).eval()
    # references shared by the tests
    greedy = functools.cache(lambda p, n: greedy_generate(tgt, list(p), n, suppress_ids=[MASK]))
    return {'dir': d, 'target': tgt, 'trained': trained, 'untrained': untrained, 'metrics': metrics, 'summary': s,
            'greedy': greedy}


def test_the_target_is_hybrid(work):
    tgt = work['target']
    assert type(tgt).__name__ == 'Qwen3_5ForCausalLM'
    assert tgt.config.layer_types == ['linear_attention', 'full_attention'] * 2
    assert len(TargetSession(tgt).linear) == 2                   # linear-attention cache layers: restored, not cropped


def test_restore_equals_a_fresh_forward(work):
    "After any crop back into the last verify forward, the next logits equal those of one forward over the kept tokens."
    tgt, seq = work['target'], list(range(1, 30))
    ref = TargetSession(tgt).logits(seq)[0]
    for keep in (10, 11, 14, 16, 17):                          # nothing / some / all of the block [10..16] kept
        s = TargetSession(tgt)
        s(seq[:10]); s(seq[10:17]); s.crop(keep)
        # a fully kept block needs no restore
        assert s.length == keep and s.extra_tokens == (keep - 10 if keep < 17 else 0)
        lg, _ = s.logits(seq[keep:keep + 5])
        torch.testing.assert_close(lg, ref[keep:keep + 5], atol=1e-4, rtol=1e-4)
        # only the linear layers re-ran the kept tokens: no target forward
        assert s.extra_forwards == 0 and s.forwards == 3


def test_features_are_those_of_the_kept_sequence(work):
    "Hidden-state capture through the session: after a restore, the features of new positions are unchanged."
    tgt, seq = work['target'], list(range(3, 25))
    with TargetFeatures(tgt, [1, 2]) as tf:
        full = tf(torch.tensor([seq]))[0]
        s = TargetSession(tgt, tf)
        s(seq[:8]); s(seq[8:14] + [0, 0]); s.crop(14)
        _, h = s(seq[14:])
    torch.testing.assert_close(h, full[14:], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize('which', ['untrained', 'trained'])
def test_lossless_on_the_hybrid_target(work, which):
    tgt, d = work['target'], work[which]
    for p in ([7], [5, 9, 3, 3, 8, 40, 2], list(range(20))):
        g = work['greedy'](tuple(p), 40)       # no end id: greedy's first n of 40 tokens are its n-token decoding
        for n in (1, 9, 40):
            s = speculative_generate(tgt, d, p, n, suppress_ids=[MASK])
            assert s.tokens == g.tokens[:n], (which, p, n)
            assert s.extra_target_forwards == 0 and s.target_forwards == s.steps + 1     # one target forward per step
            assert s.target_tokens == len(p) + sum(x + 1 for x in s.drafted) + s.extra_target_tokens


def test_prompt_lookup_is_lossless_on_the_hybrid_target(work):
    tgt = work['target']
    for p in ([3, 4, 5, 3, 4, 5, 3, 4], [9, 9, 9, 9, 9, 9]):
        g, s = greedy_generate(tgt, p, 30, suppress_ids=[MASK]), prompt_lookup_generate(tgt, p, 30, suppress_ids=[MASK],
                                                                                        k=4)
        assert s.tokens == g.tokens and s.target_tokens == len(p) + sum(d + 1 for d
                                                                        in s.drafted) + s.extra_target_tokens


def test_training_on_the_hybrid_target_lowers_the_loss(work):
    m, s = work['metrics'], work['summary']
    first, last = m[:5], m[-5:]
    assert s['steps'] == len(m) == 60
    assert sum(r['loss'] for r in last) / 5 < sum(r['loss'] for r in first) / 5 - 0.5
    assert work['trained'].config.target_layer_ids == [2] and work['trained'].config.target_model_type == 'qwen3_5_text'


def test_eval_cli_on_the_hybrid_target(work, tmp_path, capsys):
    d, e = work['dir'], add_eval_args(argparse.ArgumentParser())
    taus = {}
    for which, drafter in (('untrained', 'untrained'), ('trained', str(d/'train'/'drafter'))):
        rc = eval_main(e.parse_args(['--target', str(d/'target'), '--drafter', drafter, '--draft-layers', '1',
                                     '--dataset',
                                     str(d/'ds'), '--limit', '4', '--max-new-tokens', '24', '--mask-token-id',
                                     str(MASK),
                                     '--suppress-token-ids', str(MASK), '--temperature', '0,1', '--output-dir',
                                     str(tmp_path/which),
                                     '--quiet']))
        out = capsys.readouterr().out
        assert rc == 0 and 'lossless vs plain greedy: yes, every prompt' in out and 'at T=1' in out
        j = json.loads((tmp_path/which/'eval.json').read_text())
        assert j['lossless'] and j['prompts'] == 4 and j['temperature'] == 0 and set(j['by_temperature']) == {'0', '1'}
        assert j['extra_target_tokens'] == sum(r['extra_target_tokens'] for r in j['per_prompt'])
        assert j['extra_target_tokens_per_step'] == pytest.approx(j['extra_target_tokens'] / j['steps'])
        assert j['by_temperature']['1']['lossless'] is None and j['by_temperature']['1']['mean_tau'] >= 1
        taus[which] = j['mean_tau']
    assert taus['trained'] > taus['untrained'] + 0.2
    # the tiny spec builds a hybrid too
    assert eval_main(e.parse_args(['--target', 'tiny:hybrid=1,num_layers=4', '--vocab-size', '32', '--drafter',
                                   'untrained',
                                   '--draft-layers', '1', '--random-prompts', '2', '--max-new-tokens', '6',
                                   '--quiet'])) == 0
    assert 'hybrid target:' in capsys.readouterr().out
