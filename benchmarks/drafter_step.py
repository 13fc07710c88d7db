"""Where a DFlash training step's time goes on a CPU with the real SmolLM2-135M-Instruct target, and what the
draft vocabulary and the feature cache buy.

    python benchmarks/drafter_step.py [--anchors 64] [--block 8] [--layers 1 2] [--repeat 3]
    python benchmarks/drafter_step.py --sweep 32 128 256 512 [--samples 5] [--layers 2]   # predictions per CPU-second

Builds (or reuses) the SmolLM2 model directory (`dflash-nb build-target`), takes real SmolLM2 completions from
data/smollm2, and times, one torch thread, best of `--repeat`:

* the target forward to the last selected layer (what every step pays without the feature cache, and what the
  cache pays once);
* the drafter forward + backward with the full 49,152-id LM head and with a draft vocabulary of the ids the
  completions use (`--draft-vocab data`), and the LM-head share of each (the head alone, forward + backward, on
  the same number of slots);

and prints them side by side with their ratios. It also prints the first-step loss for the three norm
initialisations (ones, the target's, 0.05 x the target's) against ln V.

`--sweep A1 A2 ...` instead measures a training step (forward + backward, draft vocabulary, cached features) at
each number of anchors per sample, for the dense-mask SDPA attention (`--attention sdpa`) against the block-local
one (`blocks`, the default), in float32 and under bfloat16 autocast: process CPU time per step (time.process_time,
one torch thread, so other processes on the machine do not count), predictions (labelled slots) per CPU-second,
and the loss difference of bf16 against float32.
"""
import argparse, json, math, sys, tempfile, time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]


def best(fn, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter(); out = fn(); ts.append(time.perf_counter() - t0)
    return min(ts), out


def cpu_best(fn, repeat):
    "Least process CPU time of `repeat` calls of `fn` (one torch thread: the machine's other load does not count)."
    ts = []
    for _ in range(repeat):
        t0 = time.process_time(); out = fn(); ts.append(time.process_time() - t0)
    return min(ts), out


def sweep(a, tgt, ds, vocab, layer_ids, mask_id):
    "Predictions per CPU-second of a training step by anchors per sample, attention and dtype."
    from dflash_nb.train import collate, dflash_forward, loss_weights
    from dflash_nb.model import DFlashDraftModel, TargetFeatures
    idx = list(range(a.samples))
    full = collate(ds, idx, 0, 0, 10 ** 6)
    with TargetFeatures(tgt, layer_ids, stop_early=True) as tf:
        feats = tf(full['input_ids'])
    class Cached:
        def __call__(self, ids): return feats
    w = loss_weights(a.block)
    torch.manual_seed(0)
    dr = DFlashDraftModel.from_target(tgt, a.layers[0], layer_ids, a.block, mask_id, norm_from_target=True,
                                      draft_vocab_size=len(vocab))
    dr.set_draft_vocab(vocab)
    print(
        f"{a.samples} samples, {int(full['lengths'].sum()):,} tokens (longest {full['input_ids'].shape[1]}), "
        f"{a.layers[0]} draft layers, block {a.block}, draft vocabulary {len(vocab):,}; process CPU seconds per step, "
        f"best of {a.repeat}")
    print(
        f"{'anchors/sample':>14}{'anchors':>9}{'predictions':>12}  "
        f"{'attention':<9}{'dtype':<6}{'step CPU s':>11}{'pred/CPU-s':>11}{'loss':>9}{'vs fp32':>9}")
    rows = []
    for n in a.sweep:
        batch = collate(ds, idx, 0, 0, n)
        for att in ('sdpa', 'blocks'):
            ref = None
            for dt in ('fp32', 'bf16'):
                ctx = torch.autocast('cpu', dtype=torch.bfloat16) if dt == 'bf16' else torch.autocast('cpu',
                                                                                                      enabled=False)
                def step():
                    with ctx: loss, st = dflash_forward(dr, Cached(), batch, w, attention=att)
                    loss.backward(); dr.zero_grad(); return loss.item(), int(st['count'].sum())
                t, (loss, preds) = cpu_best(step, a.repeat)
                ref = loss if dt == 'fp32' else ref
                rows.append(dict(anchors_per_sample=n, anchors=int(batch['anchor_valid'].sum()), predictions=preds,
                                 attention=att,
                                 dtype=dt, step_cpu_s=t, predictions_per_cpu_s=preds / t, loss=loss,
                                 loss_vs_fp32=loss - ref))
                r = rows[-1]
                print(
                    f"{n:>14}{r['anchors']:>9}{preds:>12}  "
                    f"{att:<9}{dt:<6}{t:>11.2f}{preds / t:>11.0f}{loss:>9.4f}{loss - ref:>+9.4f}", flush=True)
    if a.json: Path(a.json).write_text(json.dumps(rows, indent=1))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--anchors', type=int, default=64); ap.add_argument('--block', type=int, default=8)
    ap.add_argument('--layers', type=int, nargs='+', default=[1, 2]); ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--samples', type=int, default=4)
    ap.add_argument('--sweep', type=int, nargs='*', default=None,
                    help='anchors per sample to sweep (predictions per CPU-second)')
    ap.add_argument('--json', default=None, help='write the sweep rows here')
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    import zstandard
    from dflash_nb.targets import default_target_dir, default_mask_token_id
    from dflash_nb.tokenize import tokenize_dataset
    from dflash_nb.train import TokenDataset, collate, dflash_forward, loss_weights, load_target
    from dflash_nb.model import DFlashDraftModel, TargetFeatures, select_target_layers
    smol = default_target_dir()
    tgt = load_target(str(smol), torch.device('cpu'))
    raw = zstandard.ZstdDecompressor().decompress((ROOT/'data'/'smollm2'/'completions-train.jsonl.zst').read_bytes(),
                                                  max_output_size=1 << 30).decode().splitlines()
    with tempfile.TemporaryDirectory() as d:
        (Path(d)/'c.jsonl').write_text('\n'.join(raw) + '\n')
        tokenize_dataset(smol, Path(d)/'c.jsonl', Path(d)/'ds', max_seq_len=1024, progress=False)
        ds = TokenDataset(Path(d)/'ds', 1024)
        vocab = np.unique(np.concatenate([ids[m] for ids, m in (ds[i] for i in range(len(ds)))]))
        layer_ids = select_target_layers(30, 5)
        if a.sweep: return sweep(a, tgt, ds, vocab, layer_ids, default_mask_token_id(smol)) and 0
        batch = collate(ds, list(range(a.samples)), 0, 0, a.anchors // a.samples)
        n_tok, n_anc = int(batch['lengths'].sum()), int(batch['anchor_valid'].sum())
        with TargetFeatures(tgt, layer_ids, stop_early=True) as tf:
            t_target, feats = best(lambda: tf(batch['input_ids']), a.repeat)
        class Cached:
            def __call__(self, ids): return feats
        print(
            f"batch: {a.samples} samples, {n_tok:,} tokens, {n_anc} anchors, block {a.block}; draft vocabulary "
            f"{len(vocab):,} of 49,152 ids")
        print(
            f"target forward to layer {max(layer_ids)}: {t_target:.2f} s ({n_tok / t_target:,.0f} tokens/s)  <- paid "
            "every step online, once with the cache")
        w = loss_weights(a.block)
        rows = []
        for L in a.layers:
            for name, dv in (('full head', None), ('draft vocab', vocab)):
                torch.manual_seed(0)
                dr = DFlashDraftModel.from_target(tgt, L, layer_ids, a.block, default_mask_token_id(smol),
                                                  norm_from_target=True,
                                                  draft_vocab_size=0 if dv is None else len(dv))
                if dv is not None: dr.set_draft_vocab(dv)
                def step():
                    loss, _ = dflash_forward(dr, Cached(), batch, w); loss.backward(); dr.zero_grad();
                    return loss.item()
                t_step, _ = best(step, a.repeat)
                slots = n_anc * (a.block - 1)
                h = torch.randn(slots, 576, requires_grad=True)
                W = dr.draft_head
                def head():
                    F.cross_entropy(F.linear(h, W).float(), torch.randint(0, W.shape[0], (slots,))).backward()
                t_head, _ = best(head, a.repeat)
                rows.append((L, name, t_step, t_head))
        print(
            f"\n{'draft layers':>12}  "
            f"{'LM head':<12}{'step s':>8}{'head s':>8}{'head share':>11}{'step vs full':>14}{'online step':>13}"
            f"{'cached vs online':>18}")
        full = {L: s for L, n, s, _ in rows if n == 'full head'}
        for L, n, s, hd in rows:
            print(f"{L:>12}  {n:<12}{s:>8.2f}{hd:>8.2f}{hd / s:>10.0%}{full[L] / s:>13.2f}x{s + t_target:>12.2f}s"
                  f"{(s + t_target) / s:>17.2f}x")
        print(f"\nfirst-step loss by norm init (ln V = {math.log(49152):.1f}):")
        for init in ('ones', 'target x1', 'target x0.05'):
            torch.manual_seed(0)
            dr = DFlashDraftModel.from_target(tgt, 1, layer_ids, a.block, default_mask_token_id(smol))
            if init != 'ones': dr.init_from_target(tgt, scale=float(init.split('x')[1]))
            with torch.no_grad(): loss, _ = dflash_forward(dr, Cached(), batch, w)
            print(f"  {init:<14}{loss.item():8.2f}")


if __name__ == '__main__':
    sys.exit(main())
