"""What each CPU-second teaches the real-target drafter: recipe arms at a FIXED process-CPU budget, same data, same
held-out set.

SmolLM2-135M-Instruct, the shipped on-policy completions (data/smollm2; a seeded subset of `--samples`), features of the
job's tap layers (1, 8, 14, 20, 27) cached once in the job's feature cache ($DFLASH_NB_CACHE/features/<target>), so
`dflash-nb run real-target` reuses them. Each arm is the job's recipe with a few settings changed (ARMS below:
attention kernel, anchors per sample, final-norm parameterisation, bf16, block size, layers, lr); every arm trains
for `--cpu-minutes` of *process CPU time* (time.process_time, one torch thread: the other jobs on this shared
machine do not count), in slices of `--slice-s` CPU seconds taken in turn (alternating, so all arms see the same
machine), the LR schedule (linear warmup, cosine) running on the CPU-time fraction. Every `--eval-every` CPU
seconds (not counted) the arm is measured on the held-out prompts:

* held-out per-position acceptance and tau at EVERY anchor of the held-out greedy completions (the target's own
  greedy tokens after 12 held-out prompts): the drafted block at anchor a, given the target features before a, is
  accepted up to its first disagreement with the greedy tokens — exactly what speculative decoding accepts from that
  anchor; tau = 1 + accepted, averaged over all anchors (decoding visits a subset of them);
* against prompt lookup's tau (k = 10, n-grams 3..1) and greedy, decoded once on the same prompts (`baseline.json`);
* `--decode` also runs real lossless speculative decoding of each arm's final drafter on the prompts.

Prints predictions (labelled slots) per CPU-second, held-out acceptance and tau per arm and per CPU-minute.
Resumable: OUT/arms/NAME/state.pt after each slice, OUT/arms/NAME/result.json; OUT/recipe.json collects them.

  python benchmarks/drafter_recipe.py --out-dir .cache/recipe --cpu-minutes 1 --arms base,blocks,bf16
  python benchmarks/drafter_recipe.py --out-dir .cache/recipe --probe      # final-norm parameterisation on one batch
"""
import argparse, json, math, random, sys, time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BASE = dict(layers=2, block=8, anchors=32, max_tokens=2048, lr=1.5e-3, warmup=0.04, attention='sdpa', bf16=False,
            norm_init=0.05, norm_lr_mult=1.0, gamma=None, grad_clip=1.0)        # the job's recipe before this study
# bf16 where this CPU runs it natively: 1.8-2.8x the predictions per CPU-second of the dense mask in fp32 on an
# AVX512-BF16 CPU; on an AVX2-only CPU bf16 matmuls run ~60x slower than fp32 ('auto' picks fp32 there)
FAST = dict(attention='blocks', bf16='auto')
BF16 = dict(FAST, bf16=True)
ARMS = {
    'base': {},
    'blocks': dict(attention='blocks'),
    'fast': FAST,
    'bf16': BF16,
    'a128': dict(FAST, anchors=128),
    'a512': dict(FAST, anchors=512),
    'norm-lr10': dict(FAST, norm_lr_mult=10.0),
    'norm-lr30': dict(FAST, norm_lr_mult=30.0),
    'norm-init0.2': dict(FAST, norm_init=0.2),
    'block16': dict(FAST, block=16),
    'layers1': dict(FAST, layers=1),
    'layers5': dict(FAST, layers=5),
    'lr6e-4': dict(FAST, lr=6e-4),
    'lr3e-3': dict(FAST, lr=3e-3),
}
LAYER_IDS = [1, 8, 14, 20, 27]


def log(out: Path, msg: str):
    line = f"{time.strftime('%H:%M:%S', time.gmtime())} {msg}"
    print(line, flush=True)
    with open(out/'log.txt', 'a') as f: f.write(line + '\n')


def prepare(out: Path, n_samples: int, n_eval: int, max_new: int, seed: int = 0, heldout_set: bool = True,
            fill: str = 'all'):
    """(target, target dir, training dataset, usable rows, in-memory features {key: tensor}, held-out set, baseline),
    each built once. `fill`: 'all' computes the features of every sample not cached yet; 'cached' trains on the cached
    ones only; an integer string: the first that many samples only."""
    import torch, zstandard
    from dflash_nb.model import TargetFeatures
    from dflash_nb.real_target import shipped_completions
    from dflash_nb.storage import cache_root
    from dflash_nb.targets import default_target_dir, target_fingerprint
    from dflash_nb.train import (CachedTargetFeatures, FeatureCache, TokenDataset, collate, fill_feature_cache,
                                 load_target, sample_key)
    from real_target_scaling import baseline, cli, heldout_prompts
    tdir = default_target_dir('smollm2-135m-instruct'); fp = target_fingerprint(tdir)
    d = out/'data'/f"n{n_samples}-s{seed}"
    if not (d/'dataset'/'stats.json').is_file():
        src, _ = shipped_completions(fp)
        lines = [l for l in zstandard.ZstdDecompressor().decompress(
            src.read_bytes(), max_output_size=1 << 31).decode().splitlines() if l.strip()]
        order = list(range(len(lines))); random.Random(seed).shuffle(order)
        d.mkdir(parents=True, exist_ok=True)
        (d/'completions.jsonl').write_text(''.join(lines[i] + '\n' for i in sorted(order[:n_samples])))
        cli('tokenize', '--model-path', tdir, '--completions', d/'completions.jsonl', '--output-dir', d/'dataset',
            '--max-seq-len', 1024, '--overwrite', '--quiet')
    ds = TokenDataset(d/'dataset', 1024)
    tgt = load_target(str(tdir), torch.device('cpu'))
    cache = FeatureCache(cache_root()/'features'/fp.replace(':', '-'), LAYER_IDS, 576, fp)   # the job's cache
    t0 = time.time()
    if fill == 'all':
        with TargetFeatures(tgt, LAYER_IDS, stop_early=True) as tf: fill_feature_cache(ds, tf, cache)
    elif fill != 'cached':
        with TargetFeatures(tgt, LAYER_IDS, stop_early=True) as tf:
            cf = CachedTargetFeatures(tf, cache)
            for i in range(int(fill)): cf.for_batch(collate(ds, [i], 0, 0, 1))
    keys = {i: sample_key(ds[i][0]) for i in range(len(ds))}
    rows = np.array([i for i in range(len(ds)) if keys[i] in cache], np.int64)
    feats = {keys[i]: cache.get(keys[i]) for i in rows}
    log(out, f"features: {len(rows)} of {len(ds)} samples, {int(ds.lengths[rows].sum()):,} tokens "
             f"({time.time() - t0:.0f} s)")
    if not heldout_set: return tgt, tdir, ds, rows, feats, None, None
    prompts = heldout_prompts(tdir, n_eval)
    hdir = out/f"heldout-{n_eval}x{max_new}"; hdir.mkdir(exist_ok=True)
    log(out,
        f"held-out: greedy and prompt lookup on {n_eval} prompts x {max_new} new tokens (once: {hdir}/baseline.json)")
    base = baseline(tgt, prompts, max_new, hdir)
    held = []
    with TargetFeatures(tgt, LAYER_IDS, stop_early=True) as tf:
        for p, g in zip(prompts, base['greedy_tokens']):
            ids = torch.tensor([list(p['input_ids']) + list(g)])
            held.append({'ids': ids, 'prompt_len': len(p['input_ids']), 'feats': tf(ids).float()})
    return tgt, tdir, ds, rows, feats, held, base


class MemFeatures:
    "Features of a collated batch from the in-memory cache (what CachedTargetFeatures reads from disk)."
    def __init__(self, feats): self.feats = feats
    def for_batch(self, batch):
        import torch
        from dflash_nb.train import sample_key
        lens, ids = batch['lengths'].tolist(), batch['input_ids']
        out = torch.zeros(*ids.shape, 5 * 576)
        for b, n in enumerate(lens): out[b, :n] = self.feats[sample_key(ids[b, :n].numpy())]
        return out


def make_drafter(tgt, tdir, cfg: dict, vocab):
    import torch
    from dflash_nb.model import DFlashDraftModel, final_norm, norm_gain
    from dflash_nb.targets import default_mask_token_id
    torch.manual_seed(0)
    dr = DFlashDraftModel.from_target(tgt, cfg['layers'], LAYER_IDS, cfg['block'], default_mask_token_id(tdir),
                                      draft_vocab_size=len(vocab))
    dr.set_draft_vocab(vocab)
    with torch.no_grad(): dr.norm.weight.copy_(norm_gain(final_norm(tgt)) * cfg['norm_init'])
    return dr


def make_optimizer(dr, cfg: dict):
    "AdamW, the final norm's scale in its own group at `norm_lr_mult` x the learning rate."
    import torch
    norm = [p for n, p in dr.named_parameters() if n == 'norm.weight']
    rest = [p for n, p in dr.named_parameters() if n != 'norm.weight']
    return torch.optim.AdamW([{'params': rest, 'lr_mult': 1.0}, {'params': norm, 'lr_mult': cfg['norm_lr_mult']}],
                             lr=cfg['lr'], weight_decay=0.0)


def lr_at(frac: float, cfg: dict) -> float:
    "Linear warmup over the first `warmup` share of the CPU budget, then cosine to 0 at its end."
    w = cfg['warmup']
    return cfg['lr'] * (min(1.0, max(frac, 0.002) / w) if w else 1.0) * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))


def heldout(dr, held, cfg: dict) -> dict:
    "Per-position acceptance and tau at every anchor of the held-out greedy completions (see the module docstring)."
    import torch
    from dflash_nb.model import block_layout
    from dflash_nb.train import make_blocks
    bs, acc, n = cfg['block'], torch.zeros(cfg['block'] - 1), 0
    dr.eval()
    with torch.no_grad():
        for h in held:
            ids, P = h['ids'], h['prompt_len']
            T = ids.shape[1]
            anchors = torch.arange(P, T - 1)[None]
            lm = torch.zeros_like(ids, dtype=torch.bool); lm[:, P:] = True
            batch = {'input_ids': ids, 'loss_mask': lm, 'lengths': torch.tensor([T]), 'anchors': anchors,
                     'anchor_valid': torch.ones_like(anchors, dtype=torch.bool)}
            block_ids, block_pos, labels, ok = make_blocks(batch, bs, dr.config.mask_token_id)
            hid = dr(block_ids, block_pos, h['feats'], torch.arange(T)[None], block_layout(anchors, T, bs),
                     return_hidden=True)
            pred = dr.vocab_ids[(hid @ dr.draft_head.T).argmax(-1)].view(labels.shape)
            hit = ((pred == labels) & ok)[0, :, 1:].long().cumprod(-1)       # (anchors, bs-1): accepted through slot k
            acc += hit.sum(0).float(); n += hit.shape[0]
    dr.train()
    pos = (acc / max(n, 1)).tolist()
    return {'position_acceptance': pos, 'tau_all_anchors': 1 + sum(pos), 'anchors': n}


def train_slice(st: dict, ds, rows, feats, held, cfg: dict, budget_s: float, slice_s: float, eval_every: float,
                out: Path, name: str):
    """Train arm state `st` for `slice_s` more process-CPU seconds (or to the budget); held-out points every
    `eval_every`."""
    import torch
    from dflash_nb.train import collate, dflash_forward, loss_weights, token_budget_batches
    dr, opt = st['model'], st['opt']
    w, mf = loss_weights(cfg['block'], cfg['gamma']), MemFeatures(feats)
    end = min(budget_s, st['cpu'] + slice_s)
    while st['cpu'] < end:
        batches = token_budget_batches(ds.lengths[rows], cfg['max_tokens'], 0, st['epoch'])
        if st['i'] >= len(batches): st['epoch'] += 1; st['i'] = 0; continue
        batch = collate(ds, rows[batches[st['i']]], st['epoch'], 0, cfg['anchors']); st['i'] += 1
        t0 = time.process_time()
        lr = lr_at(st['cpu'] / budget_s, cfg)
        for g in opt.param_groups: g['lr'] = lr * g['lr_mult']
        from dflash_nb.train import cpu_bf16_pays
        bf16 = cfg['bf16'] if cfg['bf16'] != 'auto' else cpu_bf16_pays()
        ctx = torch.autocast('cpu', dtype=torch.bfloat16) if bf16 else torch.autocast('cpu', enabled=False)
        with ctx: loss, s = dflash_forward(dr, mf, batch, w, attention=cfg['attention'])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(dr.parameters(), cfg['grad_clip'])
        opt.step(); opt.zero_grad(set_to_none=True)
        dt = time.process_time() - t0
        st['cpu'] += dt; st['step'] += 1; st['predictions'] += int(s['count'].sum())
        st['losses'].append((st['step'], round(st['cpu'], 2), round(loss.item(), 4)))
        if st['cpu'] >= st['next_eval'] or st['cpu'] >= budget_s:
            ev = heldout(dr, held, cfg)
            st['curve'].append({'cpu_s': round(st['cpu'], 1), 'step': st['step'], 'predictions': st['predictions'],
                                'loss': round(loss.item(), 4), 'norm_scale': float(dr.norm.weight.abs().mean()), **ev})
            st['next_eval'] += eval_every
            log(out, f"{name}: {st['cpu']:.0f} CPU-s, step {st['step']}, loss {loss.item():.3f}, "
                     f"{st['predictions'] / st['cpu']:.0f} pred/CPU-s, held-out tau {ev['tau_all_anchors']:.3f} "
                     f"acc@1 {ev['position_acceptance'][0]:.3f}")
    return st


def save_state(p: Path, st: dict):
    import torch
    tmp = p.with_suffix('.tmp')
    torch.save({**{k: v for k, v in st.items() if k not in ('model', 'opt')},
                'model': st['model'].state_dict(), 'opt': st['opt'].state_dict()}, tmp)
    tmp.replace(p)


def run_arms(a, out: Path):
    import torch
    from dflash_nb.train import default_eos_ids
    tgt, tdir, ds, rows, feats, held, base = prepare(out, a.samples, a.eval_prompts, a.max_new_tokens, fill=a.fill)
    vocab = np.unique(np.concatenate([ids[m] for ids, m in (ds[i] for i in range(len(ds)))]
                                     + [np.array(default_eos_ids(tgt), np.int64)]))
    budget = a.cpu_minutes * 60
    names = a.arms.split(',')
    cfgs = {n: {**BASE, **ARMS[n]} for n in names}
    states = {}
    for n in names:
        d = out/'arms'/n; d.mkdir(parents=True, exist_ok=True)
        if (d/'result.json').is_file() and json.loads((d/'result.json').read_text()).get('budget_s') == budget: continue
        dr = make_drafter(tgt, tdir, cfgs[n], vocab); opt = make_optimizer(dr, cfgs[n])
        st = {'cpu': 0.0, 'step': 0, 'epoch': 0, 'i': 0, 'predictions': 0, 'losses': [], 'curve': [], 'next_eval': 0.0}
        if (d/'state.pt').is_file():
            saved = torch.load(d/'state.pt', weights_only=False)
            dr.load_state_dict(saved.pop('model')); opt.load_state_dict(saved.pop('opt')); st.update(saved)
        st['model'], st['opt'] = dr, opt
        states[n] = st
    while states:
        for n in list(states):
            st = train_slice(states[n], ds, rows, feats, held, cfgs[n], budget, a.slice_s, a.eval_every, out, n)
            if st['cpu'] >= budget:
                res = {'arm': n, 'config': cfgs[n], 'budget_s': budget, 'steps': st['step'], 'cpu_s': st['cpu'],
                       'predictions': st['predictions'], 'predictions_per_cpu_s': st['predictions'] / st['cpu'],
                       'final': st['curve'][-1], 'curve': st['curve'], 'losses': st['losses']}
                if a.decode: res['decode'] = decode(tgt, st['model'], held, base, a.max_new_tokens)
                (out/'arms'/n/'result.json').write_text(json.dumps(res, indent=1))
                (out/'arms'/n/'state.pt').unlink(missing_ok=True)
                del states[n]
            else: save_state(out/'arms'/n/'state.pt', st)
    summary(out, names, base, budget)


def decode(tgt, dr, held, base, max_new):
    """Real lossless speculative decoding of the held-out prompts with drafter `dr` (greedy): tau and whether every
    output is greedy's."""
    from dflash_nb.eval import evaluate
    prompts = [{'id': i, 'input_ids': h['ids'][0, :h['prompt_len']].tolist()} for i, h in enumerate(held)]
    r = evaluate(tgt, dr.eval(), prompts, max_new, reference=False)
    s = r.summary()
    return {'mean_tau': s['mean_tau'], 'pooled_tau': s['pooled_tau'],
            'lossless': all(row['tokens'] == g for row, g in zip(r.rows, base['greedy_tokens']))}


def summary(out: Path, names, base, budget):
    rows = [json.loads((out/'arms'/n/'result.json').read_text()) for n in names
            if (out/'arms'/n/'result.json').is_file()]
    pl = base['prompt_lookup']
    print(
        f"\nfixed budget {budget / 60:g} CPU-min per arm; prompt lookup tau {pl['mean_tau']:.3f} (decoded), greedy 1.0")
    print(f"{'arm':<14}{'steps':>7}{'pred/CPU-s':>11}{'loss':>8}{'tau(all anchors)':>18}"
          f"{'acc@1':>7}{'acc@2':>7}{'acc@3':>7}  tau per CPU-minute")
    for r in rows:
        f = r['final']
        per_min = ' '.join(f"{c['tau_all_anchors']:.2f}" for c in r['curve'])
        print(
            f"{r['arm']:<14}{r['steps']:>7}{r['predictions_per_cpu_s']:>11.0f}{f['loss']:>8.3f}"
            f"{f['tau_all_anchors']:>18.3f}{f['position_acceptance'][0]:>7.3f}{f['position_acceptance'][1]:>7.3f}"
            f"{f['position_acceptance'][2]:>7.3f}  {per_min}"
            + (f"  decoded tau {r['decode']['mean_tau']:.3f} lossless {r['decode']['lossless']}" if r.get('decode')
               else ''))
    (out/'recipe.json').write_text(json.dumps({'budget_s': budget, 'prompt_lookup': pl, 'arms': rows}, indent=1))


def probe(a, out: Path):
    """Final-norm parameterisation on ONE fixed batch (the issue's probe): steps to loss 3.2 and 0.3, per
    parameterisation."""
    import torch
    from dflash_nb.train import default_eos_ids
    from dflash_nb.train import collate, dflash_forward, loss_weights
    tgt, tdir, ds, rows, feats, held, base = prepare(out, a.samples, a.eval_prompts, a.max_new_tokens,
                                                     heldout_set=False,
                                                     fill=str(a.probe_samples))
    vocab = np.unique(np.concatenate([ids[m] for ids, m in (ds[i] for i in range(len(ds)))]
                                     + [np.array(default_eos_ids(tgt), np.int64)]))
    batch = collate(ds, list(range(a.probe_samples)), 0, 0, a.probe_anchors)
    arms = {'default (x0.05, lr x1)': {}, 'norm lr x10': dict(norm_lr_mult=10.0),
            'norm lr x30': dict(norm_lr_mult=30.0),
            'norm lr x100': dict(norm_lr_mult=100.0), 'init x0.2': dict(norm_init=0.2),
            'init x0.5': dict(norm_init=0.5),
            'init x0.2, norm lr x30': dict(norm_init=0.2, norm_lr_mult=30.0)}
    arms = {k: v for i, (k, v) in enumerate(arms.items()) if not a.probe_arms or str(i) in a.probe_arms.split(',')}
    res = json.loads((out/'probe.json').read_text()) if (out/'probe.json').is_file() else {}
    mf = MemFeatures(feats)
    for name, ch in arms.items():
        if name in res: continue
        cfg = {**BASE, 'attention': 'blocks', **ch}
        dr = make_drafter(tgt, tdir, cfg, vocab); opt = make_optimizer(dr, cfg)
        w, curve = loss_weights(cfg['block']), []
        for s in range(a.probe_steps):
            for g in opt.param_groups: g['lr'] = cfg['lr'] * g['lr_mult'] * min(1.0, (s + 1) / 4)
            with torch.autocast('cpu', dtype=torch.bfloat16,
                                enabled=a.probe_bf16): loss, _ = dflash_forward(dr, mf, batch, w, attention='blocks')
            loss.backward()
            torch.nn.utils.clip_grad_norm_(dr.parameters(), 1.0); opt.step(); opt.zero_grad(set_to_none=True)
            curve.append((round(loss.item(), 4), round(float(dr.norm.weight.abs().mean()), 4)))
        first = lambda th: next((i + 1 for i, (l, _) in enumerate(curve) if l <= th), None)
        res[name] = {'change': ch, 'steps_to_3.2': first(3.2), 'steps_to_1.0': first(1.0), 'steps_to_0.3': first(0.3),
                     'loss_first': curve[0][0], 'loss_last': curve[-1][0], 'norm_scale_last': curve[-1][1],
                     'curve': curve}
        log(out,
            f"probe {name}: first {curve[0][0]:.2f}, to 3.2 in {res[name]['steps_to_3.2']}, to 1.0 in "
                 f"{res[name]['steps_to_1.0']}, to 0.3 in {res[name]['steps_to_0.3']}, last {curve[-1][0]:.3f}, norm "
                 f"scale {curve[0][1]:.3f} -> {curve[-1][1]:.3f}")
        (out/'probe.json').write_text(json.dumps(res, indent=1))
    plot_probe(res, out/'probe.png')


def plot_probe(res: dict, path: Path):
    import matplotlib; matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for name, r in res.items():
        a1.plot([l for l, _ in r['curve']], label=name); a2.plot([s for _, s in r['curve']], label=name)
    a1.set(yscale='log', xlabel='step (one fixed batch)', ylabel='loss'); a1.axhline(3.2, ls=':', c='k');
    a1.axhline(0.3, ls=':', c='k')
    a2.set(xlabel='step', ylabel="mean |final norm scale|"); a1.legend(fontsize=7)
    fig.tight_layout(); fig.savefig(path, dpi=100); plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--out-dir', type=Path, required=True)
    p.add_argument('--arms', default='base,fast,a128,a512,norm-lr30,block16,layers1,layers5,lr6e-4,lr3e-3',
                   help=f"comma-separated, of: {', '.join(ARMS)}")
    p.add_argument('--cpu-minutes', type=float, default=5.0, help='process CPU minutes of training per arm')
    p.add_argument('--slice-s', type=float, default=30.0,
                   help='CPU seconds an arm trains before the next takes its turn')
    p.add_argument('--eval-every', type=float, default=60.0, help='CPU seconds between held-out measurements')
    p.add_argument('--samples', type=int, default=916,
                   help='training samples (a seeded subset of the 916 shipped completions)')
    p.add_argument('--fill', default='all',
                   help="'all' (features of every sample, computed once), 'cached' (train on those cached already), or "
                        "N (the first N)")
    p.add_argument('--eval-prompts', type=int, default=12)
    p.add_argument('--max-new-tokens', type=int, default=128)
    p.add_argument('--decode', action='store_true',
                   help="also decode the held-out prompts with each arm's final drafter")
    p.add_argument('--probe', action='store_true', help='the final-norm probe on one batch instead of the arms')
    p.add_argument('--probe-samples', type=int, default=5)
    p.add_argument('--probe-anchors', type=int, default=128)
    p.add_argument('--probe-steps', type=int, default=80)
    p.add_argument('--probe-arms', default='', help='indices of the probe arms to run (default all)')
    p.add_argument('--probe-bf16', action='store_true', help='bf16 autocast in the probe (half the CPU time)')
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    return probe(a, a.out_dir) if a.probe else run_arms(a, a.out_dir)


if __name__ == '__main__':
    main()
