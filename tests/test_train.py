"Tests of online DFlash training (dflash_nb.train) with a tiny Qwen3 target built in code (CPU, gloo)."
import argparse, json, os, shutil, subprocess, sys
from pathlib import Path

import numpy as np
import pytest
import torch

from dflash_nb import train as train_mod
from dflash_nb.model import DFlashDraftModel, TargetFeatures
from dflash_nb.toy import synthetic_dataset, tiny_qwen3_target, toy_dataset_from_samples
from dflash_nb.train import (TokenDataset, add_train_args, collate, dflash_forward, latest_checkpoint, loss_weights,
                             padding_share, train, train_args, train_main, write_token_dataset)

torch.set_num_threads(1)


@pytest.fixture(scope='module')
def syn(tmp_path_factory):
    "Learnable synthetic data (permutation chains) for a 64-id tiny target."
    return synthetic_dataset(tmp_path_factory.mktemp('syn')/'ds', n_samples=96, vocab_size=64, min_len=40, max_len=80,
                             seed=1)


@pytest.fixture(scope='module')
def small(tmp_path_factory):
    return synthetic_dataset(tmp_path_factory.mktemp('small')/'ds', n_samples=48, vocab_size=64, min_len=30, max_len=70,
                             seed=3)


def tiny_args(ds, out, **kw):
    "Options of a few-second CPU run."
    base = dict(dataset=str(ds), target='tiny', output_dir=str(out), draft_layers=2, block_size=8, max_seq_len=70,
                max_tokens=280, max_anchors=8, epochs=1, max_steps=4, quiet=True, save_every=0)
    return train_args(**{**base, **kw})


def metrics(out):
    return [json.loads(l) for l in (Path(out)/'metrics.jsonl').read_text().splitlines()]


def test_dataset_reader(tmp_path, syn):
    ds = TokenDataset(syn, max_seq_len=50)
    assert len(ds) == 96 and ds.lengths.max() == 50 and ds.vocab_size == 64
    for i in range(len(ds)):
        ids, m = ds[i]
        assert len(ids) == len(m) == ds.lengths[i] <= 50
        assert ds.row_anchors[ds.rows[i]] == int((m[:-1] & m[1:]).sum())
    # samples without any anchor are left out and counted
    d = write_token_dataset(tmp_path/'few', [([1, 2, 3], [0, 0, 1], 'a', ''), ([1, 2, 3, 4], [0, 1, 1, 1], 'b', ''),
                                              ([5, 6], [1, 0], 'c', '')], vocab_size=8)
    t = TokenDataset(d)
    assert (len(t), t.skipped_no_anchor, t.n_rows, t[0][0].tolist()) == (1, 2, 3, [1, 2, 3, 4])
    with pytest.raises(FileNotFoundError, match='no such dataset'):
        TokenDataset(tmp_path/'missing')


def test_toy_dataset_from_the_sample_data(tmp_path, qwen_dir):
    "The embedded sample completions, tokenized with Qwen3.6 and remapped by frequency into a small vocabulary."
    import datasets
    out = toy_dataset_from_samples(tmp_path/'toy', vocab_size=256, model_path=qwen_dir)
    d = datasets.load_from_disk(str(out))
    assert len(d) == 280 and max(max(r) for r in d['input_ids']) <= 254     # 255 is left for the mask token
    man = json.loads((out/'manifest.json').read_text())
    assert man['remap']['mask_token_id'] == 255 and 0.5 < man['remap']['coverage'] < 1
    ids0 = np.asarray(d[0]['input_ids'])
    again = toy_dataset_from_samples(tmp_path/'toy2', vocab_size=256, model_path=qwen_dir)
    import datasets as _d
    assert np.array_equal(np.asarray(_d.load_from_disk(str(again))[0]['input_ids']), ids0)  # deterministic
    assert len(TokenDataset(out)) > 250


def test_only_drafter_parameters_get_gradients(small):
    ds = TokenDataset(small)
    tgt = tiny_qwen3_target(vocab_size=64)
    dr = DFlashDraftModel.from_target(tgt, num_draft_layers=2, block_size=8, mask_token_id=63, seed=0)
    with TargetFeatures(tgt, dr.config.target_layer_ids, stop_early=True) as tf:
        loss, st = dflash_forward(dr, tf, collate(ds, [0, 1, 2], 0, 0, 8), loss_weights(8))
    loss.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in dr.parameters())
    assert all(p.grad is None for p in tgt.parameters())
    assert st['count'][0] == 0 and st['count'][1] > 0


@pytest.mark.parametrize('layers', ['full', 'sliding_causal'])
def test_block_local_attention_gives_the_dense_masks_loss_and_gradients(small, layers, monkeypatch):
    """attention='blocks' (no dense mask over all blocks) = the dense SDPA mask: loss and every gradient; samples of
    unequal length, padded anchors."""
    ds = TokenDataset(small)
    tgt = tiny_qwen3_target(vocab_size=64)
    kw = dict(layer_types=['sliding_attention', 'full_attention'], sliding_window=9,
              causal=True) if layers != 'full' else {}
    dr = DFlashDraftModel.from_target(tgt, num_draft_layers=2, block_size=8, mask_token_id=63, seed=0,
                                      norm_from_target=True, **kw)
    batch = collate(ds, [0, 5, 9], 0, 0, 40)
    # padding of both kinds is exercised
    assert not batch['anchor_valid'].all() and len(set(batch['lengths'].tolist())) > 1
    out = {}
    with TargetFeatures(tgt, dr.config.target_layer_ids, stop_early=True) as tf:
        for attention in ('sdpa', 'blocks'):
            if attention == 'blocks':   # the block-local path never builds the dense (B, N*bs, T + N*bs) mask
                monkeypatch.setattr(train_mod, 'block_attention_mask', lambda *a: pytest.fail('dense mask built'))
            dr.zero_grad()
            loss, st = dflash_forward(dr, tf, batch, loss_weights(8), attention=attention)
            loss.backward()
            out[attention] = (loss.detach(), st['correct'], {n: p.grad.clone() for n, p in dr.named_parameters()})
    (l0, c0, g0), (l1, c1, g1) = out['sdpa'], out['blocks']
    torch.testing.assert_close(l1, l0, rtol=1e-5, atol=1e-6)
    assert torch.equal(c0, c1)
    for n in g0: torch.testing.assert_close(g1[n], g0[n], rtol=1e-4, atol=1e-7, msg=n)


def test_bf16_precision_on_cpu(tmp_path, small):
    """--precision bf16 runs the drafter under CPU bf16 autocast: the first loss within 1% of fp32's, yet not bit-equal
    (autocast is on)."""
    first = {p: train(tiny_args(small, tmp_path/p, precision=p, max_steps=2)) and metrics(tmp_path/p)[0]['loss'] for p
             in ('fp32', 'bf16')}
    assert first['bf16'] != first['fp32'] and abs(first['bf16'] - first['fp32']) < 0.01 * first['fp32']


def test_norm_lr_mult_moves_only_the_final_norm_faster(tmp_path, small):
    """--norm-lr-mult 30: the final norm's scale moves ~30x as far in 2 steps as at x1 (Adam: ~lr per step), the other
    weights' lr unchanged."""
    from safetensors.torch import load_file
    moved, lrs = {}, {}
    for m in (1.0, 30.0):
        out = tmp_path/f"m{m:g}"
        train(tiny_args(small, out, norm_lr_mult=m, max_steps=2, save_dtype='float32'))
        moved[m] = float((load_file(str(out/'drafter'/'model.safetensors'))['norm.weight'] - 1).abs().mean())
        lrs[m] = [r['lr'] for r in metrics(out)]
    assert moved[30.0] > 10 * moved[1.0] > 0 and lrs[30.0] == lrs[1.0]


def test_training_lowers_the_loss_and_raises_position_1_accuracy(tmp_path, syn):
    s = train(tiny_args(syn, tmp_path/'run', max_seq_len=80, max_tokens=640, max_anchors=16, epochs=12, max_steps=None,
                        lr=3e-3))
    m = metrics(tmp_path/'run')
    avg = lambda rows, f: sum(map(f, rows)) / len(rows)
    first, last = m[:5], m[-5:]
    assert len(m) == s['steps'] == s['total_steps'] > 100
    assert avg(last, lambda r: r['loss']) < avg(first, lambda r: r['loss']) - 2
    assert avg(last, lambda r: r['acc'][0]) > avg(first, lambda r: r['acc'][0]) + 0.2
    assert len(m[-1]['acc']) == 7 and 0 <= m[-1]['padding_share'] < 0.5 and m[-1]['tokens_per_s'] > 0
    assert m[0]['lr'] < m[len(m) // 5]['lr'] and m[-1]['lr'] < 0.05 * 3e-3              # warmup, then cosine decay
    back = DFlashDraftModel.from_pretrained(tmp_path/'run'/'drafter')
    assert back.config.target_layer_ids == [1, 5] and back.config.mask_token_id == 63
    summary = json.loads((tmp_path/'run'/'summary.json').read_text())
    assert summary['drafter_parameters'] == back.num_parameters()


def test_resume_reproduces_the_uninterrupted_run(tmp_path, small):
    full = tmp_path/'full'
    train(tiny_args(small, full, max_steps=6, save_every=3, keep_checkpoints=3))
    assert [p.name for p in sorted((full/'checkpoints').iterdir())] == ['step-00000003', 'step-00000006']
    part = tmp_path/'part'
    (part/'checkpoints').mkdir(parents=True)
    shutil.copytree(full/'checkpoints'/'step-00000003', part/'checkpoints'/'step-00000003')   # "crashed" after step 3
    (part/'metrics.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in metrics(full)[:4]))  # incl. a lost step 4
    train(tiny_args(small, part, max_steps=6, save_every=3))
    a, b = metrics(full), metrics(part)
    assert [r['step'] for r in b] == [1, 2, 3, 4, 5, 6]
    assert [r['loss'] for r in a] == [r['loss'] for r in b] and [r['lr'] for r in a] == [r['lr'] for r in b]
    sa, sb = (DFlashDraftModel.from_pretrained(d/'drafter').state_dict() for d in (full, part))
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert latest_checkpoint(part).name == 'step-00000006'
    with pytest.raises(ValueError, match='data plan differs'):
        train(tiny_args(small, part, max_steps=8, max_tokens=300))


def _torchrun(args: list[str], nproc: int = 2):
    from dflash_nb.testing import free_port
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', str(nproc), '--master-port',
           str(free_port()),
           '-m', 'dflash_nb.train', *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    assert r.returncode == 0, f"torchrun failed:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
    return r


@pytest.mark.parametrize('shard', ['replicate', 'fsdp'])
def test_two_process_run_matches_one_process_on_the_same_global_batch(tmp_path, small, shard):
    "2 ranks x 1 micro-batch (gloo, DDP; target replicated or FSDP-sharded) = 1 rank x 2 accumulated micro-batches."
    one = tmp_path/'one'
    train(tiny_args(small, one, grad_accum=2))
    two = tmp_path/'two'
    p = add_train_args(argparse.ArgumentParser())
    a = vars(tiny_args(small, two))
    cli = [f"--{k.replace('_', '-')}={v}" for k, v in a.items() if v is not None and not isinstance(v, bool)] + [
        '--quiet']
    _torchrun(cli + [f'--target-shard={shard}'])
    m1, m2 = metrics(one), metrics(two)
    assert len(m1) == len(m2) == 4
    for r1, r2 in zip(m1, m2):
        assert r1['tokens'] == r2['tokens'] and r1['anchors'] == r2['anchors']
        assert abs(r1['loss'] - r2['loss']) < 1e-4 * abs(r1['loss']) and r1['acc'] == r2['acc']
    s1, s2 = (DFlashDraftModel.from_pretrained(d/'drafter').state_dict() for d in (one, two))
    assert all(torch.allclose(s1[k], s2[k], atol=1e-5, rtol=1e-4) for k in s1)
    assert json.loads((two/'summary.json').read_text())['world_size'] == 2


def test_train_main_from_the_command_line_and_its_errors(tmp_path, small):
    p = add_train_args(argparse.ArgumentParser('dflash-nb train'))
    a = p.parse_args(['--dataset', str(small), '--target', 'tiny:hidden_size=32,num_layers=6', '--output-dir',
                      str(tmp_path/'o'),
                      '--draft-layers', '1', '--block-size', '4', '--max-tokens', '280', '--max-seq-len', '70',
                      '--max-anchors', '4', '--max-steps', '2', '--quiet'])
    assert train_main(a) == 0
    cfg = json.loads((tmp_path/'o'/'drafter'/'config.json').read_text())
    assert (cfg['hidden_size'], cfg['num_hidden_layers'], cfg['dflash_config']['target_layer_ids']) == (32, 1, [3])
    with pytest.raises(ValueError, match='exceeds --max-tokens'):
        train(tiny_args(small, tmp_path/'x', max_seq_len=500))
    big = write_token_dataset(tmp_path/'big', [([1, 2, 63, 3], [0, 1, 1, 1], 'a', '')], vocab_size=80)
    with pytest.raises(ValueError, match="tiny target's mask token"):
        train(tiny_args(big, tmp_path/'y', target='tiny:vocab_size=64'))
    with pytest.raises(ValueError, match='outside the target'):
        train(tiny_args(big, tmp_path/'z', target='tiny:vocab_size=32'))
    with pytest.raises(FileNotFoundError, match='--target'):
        train(tiny_args(small, tmp_path/'w', target=str(tmp_path/'no-model')))
    with pytest.raises(TypeError, match='unknown training options'):
        train_args(learning_rate=1.0)


MICRO = [[0], [1, 2, 3, 4, 5], [6], [7, 8, 9, 10]]   # micro-batches of very different loss weight (1 vs 4-5 samples)


def _drafter_grads(ds_path, groups, world: int = 1):
    "Gradients of a seeded tiny drafter after accumulate_gradients over the micro-batches `groups` of this rank."
    from dflash_nb.train import accumulate_gradients
    tgt = tiny_qwen3_target(vocab_size=64)
    dr = DFlashDraftModel.from_target(tgt, num_draft_layers=2, block_size=8, mask_token_id=63, seed=0)
    model = dr
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(dr)
    ds = TokenDataset(ds_path, 70)
    with TargetFeatures(tgt, dr.config.target_layer_ids, stop_early=True) as tf:
        accumulate_gradients(model, tf, [collate(ds, g, 0, 0, 8) for g in groups], loss_weights(8), world)
    return {n: p.grad.clone() for n, p in dr.named_parameters()}


def _rank_grads(rank, world, tmp, ds_path, groups):
    "One gloo rank (a real process): its share of the micro-batches; rank 0 saves the synchronised gradients."
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group('gloo', init_method=f"file://{tmp}/pg", rank=rank, world_size=world)
    try:
        grads = _drafter_grads(ds_path, groups[rank], world)
        if rank == 0: torch.save(grads, f"{tmp}/grads.pt")
    finally: dist.destroy_process_group()


def test_loss_is_normalised_over_the_whole_step_on_every_rank(small, tmp_path):
    """1 rank x 4 micro-batches and 2 gloo ranks x 2 micro-batches give the gradient of one big batch (SpecForge's
    global normalisation)."""
    import torch.multiprocessing as mp
    tgt = tiny_qwen3_target(vocab_size=64)
    dr = DFlashDraftModel.from_target(tgt, num_draft_layers=2, block_size=8, mask_token_id=63, seed=0)
    ds = TokenDataset(small, 70)
    with TargetFeatures(tgt, dr.config.target_layer_ids, stop_early=True) as tf:
        dflash_forward(dr, tf, collate(ds, sum(MICRO, []), 0, 0, 8), loss_weights(8))[0].backward()
        big = {n: p.grad.clone() for n, p in dr.named_parameters()}
        dr.zero_grad()
        for g in MICRO: (dflash_forward(dr, tf, collate(ds, g, 0, 0, 8), loss_weights(8))[0] / len(MICRO)).backward()
        # the old rule: each micro-batch over its own weights
        per_micro = {n: p.grad.clone() for n, p in dr.named_parameters()}
    close = lambda a, b: all(torch.allclose(a[n], b[n], rtol=1e-4, atol=1e-7) for n in a)
    assert not close(per_micro, big)                                             # the defect: a different gradient
    assert close(_drafter_grads(small, MICRO), big)                              # 1 rank x 4 micro-batches
    mp.spawn(_rank_grads, args=(2, str(tmp_path), str(small), [MICRO[:2], MICRO[2:]]), nprocs=2, join=True)
    assert close(torch.load(tmp_path/'grads.pt'), big)                           # 2 ranks x 2 micro-batches
