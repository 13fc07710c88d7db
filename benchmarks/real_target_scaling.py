"""What limits the real-target drafter: held-out tau against the amount of training data, at a fixed step count.

Same pieces as `dflash-nb run real-target` (SmolLM2-135M-Instruct, the shipped on-policy completions in data/smollm2,
the job's recipe and its 12 held-out prompts x 128 new tokens, greedy), but the drafter is trained on nested random
subsets of the completions (by sample count) for the same number of steps, so the curve shows what more data buys.
Optional extra arms train on all the data with one recipe change (e.g. `draft_layers=1`, `block_size=4`).

Every point runs through the CLI (`dflash-nb tokenize`, `dflash-nb train --feature-cache`) and the package's
`evaluate` (checked token by token against one greedy run per prompt, so lossless is measured, not assumed).
Points resume: a finished point (OUT/points/NAME/point.json) is not run again. Writes OUT/scaling.json and
OUT/scaling.png after every point.

  python benchmarks/real_target_scaling.py --out-dir outputs/scaling --fractions 0.125,0.25,0.5,1 --steps 300 \
      --feature-cache $DFLASH_NB_CACHE/features/<fingerprint> --arm draft_layers=1
"""
import argparse, json, os, random, subprocess, sys, time
from pathlib import Path

RECIPE = dict(draft_layers=2, block_size=8, target_layer_ids='1,8,14,20,27', max_seq_len=1024, max_tokens=2048,
              max_anchors=32, lr=1.5e-3, draft_vocab='data', norm_init='target', seed=0)   # the job's recipe


def log(out: Path, msg: str):
    line = f"{time.strftime('%H:%M:%S', time.gmtime())} {msg}"
    print(line, flush=True)
    with open(out/'log.txt', 'a') as f: f.write(line + '\n')


def cli(*args):
    "Run `dflash-nb ARGS` (same interpreter, same environment); raise with its last output on failure."
    code = 'import sys; from dflash_nb.cli import main; sys.exit(main(sys.argv[1:]))'
    r = subprocess.run([sys.executable, '-c', code, *map(str, args)], capture_output=True, text=True)
    if r.returncode: raise RuntimeError(
        f"dflash-nb {args[0]} failed (rc {r.returncode}): {(r.stdout + r.stderr)[-2000:]}")
    return r.stdout


def subsets(target_dir, out: Path, fractions, seed: int) -> dict:
    """Nested random subsets of the shipped completions (first n of one seeded shuffle), each tokenized once:
    {fraction: dataset dir}."""
    import zstandard
    from dflash_nb.real_target import shipped_completions
    from dflash_nb.targets import target_fingerprint
    src, _ = shipped_completions(target_fingerprint(target_dir))
    lines = [l for l in zstandard.ZstdDecompressor().decompress(
        src.read_bytes(), max_output_size=1 << 31).decode().splitlines() if l.strip()]
    order = list(range(len(lines))); random.Random(seed).shuffle(order)
    ds = {}
    for f in fractions:
        d = out/'data'/f"f{f:g}"; ds[f] = d/'dataset'
        if (ds[f]/'stats.json').is_file(): continue
        d.mkdir(parents=True, exist_ok=True)
        (d/'completions.jsonl').write_text(''.join(lines[i] + '\n' for i in sorted(order[:max(1,
                                                                                              round(f * len(lines)))])))
        cli('tokenize', '--model-path', target_dir, '--completions', d/'completions.jsonl', '--output-dir', ds[f],
            '--max-seq-len', RECIPE['max_seq_len'], '--overwrite', '--quiet')
    return ds


def heldout_prompts(target_dir, n: int) -> list[dict]:
    "The job's held-out evaluation prompts: split 6% by id hash, interleaved over sources, first n, chat-rendered."
    from dflash_nb.prompts import packaged_prompts, split_prompts, interleave_sources
    from dflash_nb.real_target import prompt_token_ids
    return prompt_token_ids(target_dir, interleave_sources(split_prompts(packaged_prompts(), 0.06)[1]), n)


def baseline(tgt, prompts, max_new: int, out: Path) -> dict:
    "Greedy tokens per prompt (the lossless reference) and prompt lookup's tau (the job's k=10, n-grams 3..1), once."
    p = out/'baseline.json'
    if p.is_file(): return json.loads(p.read_text())
    from dflash_nb.eval import compare_methods, comparison_rows, PROMPT_LOOKUP
    t0 = time.time()
    res = compare_methods(tgt, {PROMPT_LOOKUP: PROMPT_LOOKUP}, prompts, max_new)
    rows = {r['method']: r for r in comparison_rows(res)}
    b = {'prompts': [x['id'] for x in prompts], 'greedy_tokens': [r['tokens'] for r in res['greedy'].rows],
         'greedy_seconds_per_token': rows['greedy']['seconds_per_token'], 'prompt_lookup': rows[PROMPT_LOOKUP],
         'prompt_lookup_tau_per_prompt': [r['tau'] for r in res[PROMPT_LOOKUP].rows], 'seconds': time.time() - t0}
    p.write_text(json.dumps(b, indent=1))
    return b


def train_point(dataset: Path, target_dir, run_dir: Path, steps: int, feature_cache, recipe: dict) -> dict:
    "`dflash-nb train` for exactly `steps` steps (the LR schedule spans them); its summary.json."
    args = ['train', '--dataset', dataset, '--target', target_dir, '--output-dir', run_dir, '--max-steps', steps,
            '--epochs', 10_000, '--mask-token-id', 7, '--save-every', 0, '--keep-checkpoints', 1, '--resume', 'never',
            '--quiet']
    for k, v in recipe.items(): args += [f"--{k.replace('_', '-')}", v]
    if feature_cache: args += ['--feature-cache', feature_cache]
    cli(*args)
    return json.loads((run_dir/'summary.json').read_text())


def tail_metrics(metrics: Path, share: float = 0.1) -> dict:
    "Mean loss and per-position accuracy (train batches) over the last `share` of the steps."
    m = [json.loads(l) for l in metrics.read_text().splitlines() if l.strip()]
    m = m[-max(1, int(len(m) * share)):]
    acc = [sum(r['acc'][k] for r in m) / len(m) for k in range(len(m[0]['acc']))]
    return {'loss': sum(r['loss'] for r in m) / len(m), 'acc': acc, 'steps_averaged': len(m)}


def eval_point(tgt, drafter_dir: Path, prompts, max_new: int, base: dict) -> dict:
    "Held-out tau of a trained drafter (greedy), its outputs compared with the baseline's greedy tokens."
    import torch
    from dflash_nb.eval import evaluate
    from dflash_nb.model import DFlashDraftModel
    d = DFlashDraftModel.from_pretrained(drafter_dir, target=tgt, dtype=torch.float32)
    r = evaluate(tgt, d, prompts, max_new, reference=False)
    mism = [row['id'] for row, g in zip(r.rows, base['greedy_tokens']) if row['tokens'] != g]
    s = r.summary()
    return {'mean_tau': s['mean_tau'], 'pooled_tau': s['pooled_tau'], 'lossless': not mism, 'mismatched_prompts': mism,
            'tau_per_prompt': [row['tau'] for row in r.rows],
            'position_acceptance': [float(x) for x in r.position_acceptance],
            'seconds_per_token': r._sum('spec_seconds') / max(1, r._sum('new_tokens'))}


def plot(res: dict, path: Path):
    "tau vs training (answer) tokens, prompt lookup and the goal as lines; train loss / acc@1 beside it."
    import matplotlib; matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    pts = sorted((p for p in res['points'] if p['arm'] == 'data'), key=lambda p: p['loss_tokens'])
    arms = [p for p in res['points'] if p['arm'] != 'data']
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
    x = [p['loss_tokens'] for p in pts]
    a1.plot(x, [p['mean_tau'] for p in pts], 'o-', color='#4c72b0',
            label=f"trained drafter, {res['steps']} steps (mean tau)")
    a1.plot(x, [p['pooled_tau'] for p in pts], 's--', color='#4c72b0', alpha=0.5, ms=4,
            label='trained drafter (pooled tau)')
    for p, c in zip(arms, ('#dd8452', '#55a868', '#c44e52', '#8172b2')):
        a1.plot([p['loss_tokens']], [p['mean_tau']], 'D', color=c, ms=8, label=f"{p['name']} ({res['steps']} steps)")
    for e, mk in zip(res.get('extra_points', []), '*PXh'):
        a1.plot([e['loss_tokens']], [e['mean_tau']], mk, color='k', ms=11, label=e['label'])
    if res.get('fit'):
        import numpy as np
        f, xs = res['fit'], np.geomspace(min(x), max(x), 20)
        a1.plot(xs, f['intercept_log2'] + f['tau_per_doubling'] * np.log2(xs), '-', color='#4c72b0', alpha=0.25, lw=6,
                label='fit a + b log2(tokens)')
    a1.axhline(res['prompt_lookup_tau'], color='#999999', ls=':', lw=2,
               label=f"prompt lookup ({res['prompt_lookup_tau']:.2f})")
    a1.axhline(3.0, color='#c44e52', ls='-.', lw=1, label='goal 3.0')
    if res.get('fit'): a1.set_title(f"held-out tau vs data: {res['fit']['tau_per_doubling']:+.3f} per doubling")
    a1.set(xscale='log', xlabel='training answer tokens (loss tokens)', ylabel='held-out tau (T=0, 128 new tokens)')
    a1.legend(fontsize=7)
    a2.plot(x, [p['train_tail']['loss'] for p in pts], 'o-', color='#4c72b0', label='train loss (last 10% of steps)')
    a2.set(xscale='log', xlabel='training answer tokens', ylabel='loss')
    a3 = a2.twinx()
    for k, c in ((0, '#55a868'), (2, '#8172b2'), (6, '#937860')):
        a3.plot(x, [p['train_tail']['acc'][k] for p in pts], 's--', color=c, label=f"train acc k={k + 1}")
        a3.plot(x, [p['position_acceptance'][k] if k < len(p['position_acceptance']) else float('nan') for p in pts],
                '^:', color=c, alpha=0.6, label=f"held-out acceptance k={k + 1}")
    a3.set(ylabel='accuracy / acceptance', ylim=(0, 1))
    h1, l1 = a2.get_legend_handles_labels(); h2, l2 = a3.get_legend_handles_labels()
    a2.legend(h1 + h2, l1 + l2, fontsize=7); a2.set_title('train loss / accuracy, held-out per-position acceptance')
    fig.tight_layout(); fig.savefig(path, dpi=110); plt.close(fig)


def fit(pts: list[dict]) -> dict | None:
    "Least-squares tau = a + b log2(tokens) over the data points, and the tokens it needs for tau 3.0."
    import numpy as np
    if len(pts) < 2: return None
    x, y = np.log2([p['loss_tokens'] for p in pts]), np.array([p['mean_tau'] for p in pts])
    b, a = np.polyfit(x, y, 1)
    return {'tau_per_doubling': float(b), 'intercept_log2': float(a),
            'tokens_for_tau_3': float(2 ** ((3.0 - a) / b)) if b > 0 else None}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--out-dir', type=Path, required=True)
    p.add_argument('--fractions', default='0.125,0.25,0.5,1',
                   help='shares of the shipped completions, run in this order')
    p.add_argument('--steps', type=int, default=300, help='optimizer steps of every point')
    p.add_argument('--arm', action='append', default=[],
                   help="extra point on all the data with KEY=VALUE changed in the recipe, e.g. draft_layers=1")
    p.add_argument('--feature-cache', default=None,
                   help='feature cache directory (the job fills $DFLASH_NB_CACHE/features/<target fingerprint>)')
    p.add_argument('--eval-prompts', type=int, default=12)
    p.add_argument('--max-new-tokens', type=int, default=128)
    p.add_argument('--subset-seed', type=int, default=0)
    p.add_argument('--extra-point', action='append', default=[],
                   help="LABEL:LOSS_TOKENS:TAU, e.g. a longer earlier run, drawn as a star")
    p.add_argument('--plot-only', action='store_true', help='redraw OUT/scaling.png from OUT/scaling.json')
    a = p.parse_args(argv)
    out = a.out_dir; out.mkdir(parents=True, exist_ok=True)
    if a.plot_only: return plot(json.loads((out/'scaling.json').read_text()), out/'scaling.png')
    import torch
    torch.set_num_threads(1)
    from dflash_nb.targets import default_target_dir
    from dflash_nb.train import load_target
    target_dir = default_target_dir('smollm2-135m-instruct')
    fr = [float(f) for f in a.fractions.split(',')]
    ds = subsets(target_dir, out, sorted(set(fr) | {1.0}), a.subset_seed)
    tgt = load_target(str(target_dir), torch.device('cpu'))
    prompts = heldout_prompts(target_dir, a.eval_prompts)
    log(out, f"baseline: greedy + prompt lookup on {len(prompts)} held-out prompts")
    base = baseline(tgt, prompts, a.max_new_tokens, out)
    log(out,
        f"prompt lookup mean tau {base['prompt_lookup']['mean_tau']:.3f} (pooled "
        f"{base['prompt_lookup']['pooled_tau']:.3f})")
    extra = [dict(zip(('label', 'loss_tokens', 'mean_tau'), (l, float(t), float(v)))) for l, t, v
             in (e.split(':') for e in a.extra_point)]
    plan = [(f"f{f:g}", 'data', f, {}) for f in fr]
    for arm in a.arm:
        k, v = arm.split('='); plan.append((f"all-{k}-{v}", arm, 1.0, {k: type(RECIPE[k])(v)}))
    res = {'steps': a.steps, 'recipe': RECIPE, 'prompts': base['prompts'], 'max_new_tokens': a.max_new_tokens,
           'prompt_lookup_tau': base['prompt_lookup']['mean_tau'],
           'prompt_lookup_pooled_tau': base['prompt_lookup']['pooled_tau'],
           'prompt_lookup_lossless': base['prompt_lookup']['lossless'], 'extra_points': extra, 'points': []}
    for name, arm, f, change in plan:
        pdir = out/'points'/name
        if (pdir/'point.json').is_file(): pt = json.loads((pdir/'point.json').read_text())
        else:
            st = json.loads((ds[f]/'stats.json').read_text())
            log(out,
                f"{name}: {st['samples']} samples, {st['loss_tokens']:,} answer tokens, {a.steps} steps {change or ''}")
            t0 = time.time()
            s = train_point(ds[f], target_dir, pdir/'train', a.steps, a.feature_cache, {**RECIPE, **change})
            t_train = time.time() - t0
            ev = eval_point(tgt, Path(s['drafter_dir']), prompts, a.max_new_tokens, base)
            pt = {'name': name, 'arm': arm, 'fraction': f, 'samples': st['samples'], 'loss_tokens': st['loss_tokens'],
                  'total_tokens': st['total_tokens'], 'steps': s['steps'],
                  'epochs_seen': s['steps'] / max(1, s['steps_per_epoch'][0]),
                  'train_seconds': s['seconds'], 'train_wall_s': t_train, 'eval_wall_s': time.time() - t0 - t_train,
                  'draft_vocab_size': s['draft_vocab_size'], 'recipe_change': change, 'final_loss': s['final_loss'],
                  'train_tail': tail_metrics(pdir/'train'/'metrics.jsonl'), 'feature_cache': s.get('feature_cache'),
                  **ev}
            pdir.mkdir(parents=True, exist_ok=True); (pdir/'point.json').write_text(json.dumps(pt, indent=1))
            log(out, f"{name}: tau {pt['mean_tau']:.3f} (pooled {pt['pooled_tau']:.3f}), lossless {pt['lossless']}, "
                     f"train {t_train:.0f} s, eval {pt['eval_wall_s']:.0f} s")
        res['points'].append(pt)
        res['fit'] = fit([q for q in res['points'] if q['arm'] == 'data'])
        (out/'scaling.json').write_text(json.dumps(res, indent=1))
        plot(res, out/'scaling.png')
    log(out, f"done; fit {res['fit']}")


if __name__ == '__main__':
    main()
