"""How much CPU the real-target drafter needs to reach prompt lookup: fit the fixed-recipe learning curve that
`drafter_recipe.py` records (held-out tau at every anchor, per CPU-minute) and extrapolate it.

Reads OUT/arms/ARM/result.json (or state.pt of a run still going) of a `drafter_recipe.py` run and its baseline
(prompt lookup's decoded tau on the same held-out prompts). Fits tau - 1 = c * minutes^b (a straight line in log-log)
on the points past the unigram plateau, once on all of them and once on the later half (a curve that bends down
makes the later fit the honest one), converts prompt lookup's decoded tau to the all-anchor scale with the arm's own
decoded/all-anchor ratio (from `--decode`) when it has one, and prints the CPU-minutes each fit needs, plus a plot.

`--job-dir` adds a finished `dflash-nb run real-target` (outputs/real-target-<UTC>): its drafter is measured with the
same held-out harness, so its decoded tau (the report's) and its all-anchor tau give the conversion between the two
scales, and it is one more point on the plot at its training time (one thread: wall = CPU seconds on a quiet machine).

  python benchmarks/drafter_projection.py --out-dir /work/bench/long --arm norm-lr30 --plot curve.png \
      --job-dir outputs/real-target-20261203T190934Z
"""
import argparse, json, math
from pathlib import Path

import numpy as np


def load_arm(out: Path, arm: str) -> dict:
    "The arm's finished result, or the state of a run still going (its curve so far)."
    d = out/'arms'/arm
    if (d/'result.json').is_file(): return json.loads((d/'result.json').read_text())
    if not (d/'state.pt').is_file(): raise SystemExit(f"{d}: no result.json or state.pt: run drafter_recipe.py first")
    import torch
    st = torch.load(d/'state.pt', weights_only=False, map_location='cpu')
    return {'arm': arm, 'steps': st['step'], 'cpu_s': st['cpu'], 'curve': st['curve'], 'losses': st['losses']}


def job_point(out: Path, job: Path) -> dict:
    "The job's drafter on the recipe run's held-out set: training minutes, steps, decoded and all-anchor tau (cached)."
    p = out/f"job-{job.name}.json"
    if p.is_file(): return json.loads(p.read_text())
    import sys, torch
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from drafter_recipe import heldout, prepare
    from dflash_nb.model import DFlashDraftModel
    torch.set_num_threads(1)
    tgt, *_, held, base = prepare(out, 916, 12, 128, fill='cached')
    dr = DFlashDraftModel.from_pretrained(job/'drafter', dtype=torch.float32)
    dr.bind_target(tgt)
    ev = heldout(dr, held, {'block': dr.config.block_size})
    summ = json.loads((job/'train_summary.json').read_text())
    trained = next(r for r in json.loads((job/'eval.json').read_text())['rows'] if r['method'].startswith('trained'))
    res = {'job': str(job), 'minutes': summ['seconds'] / 60, 'steps': summ['steps'], 'decoded_tau': trained['mean_tau'],
           'lossless': trained['lossless'], **ev}
    p.write_text(json.dumps(res, indent=1))
    return res


def fit(minutes: np.ndarray, tau: np.ndarray) -> tuple[float, float]:
    "(c, b) of tau - 1 = c * minutes ** b, least squares in log-log."
    b, logc = np.polyfit(np.log(minutes), np.log(tau - 1), 1)
    return math.exp(logc), b


def minutes_to(target: float, c: float, b: float) -> float:
    return math.inf if b <= 0 else ((target - 1) / c) ** (1 / b)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--out-dir', required=True, type=Path, help="a drafter_recipe.py --out-dir")
    p.add_argument('--arm', default='norm-lr30')
    p.add_argument('--plateau', type=float, default=1.1, help="fit only points with all-anchor tau above this")
    p.add_argument('--job-dir', type=Path, help="a finished real-target job's output folder (see above)")
    p.add_argument('--plot', type=Path, help="write the curve and both fits as a PNG")
    a = p.parse_args(argv)
    r = load_arm(a.out_dir, a.arm)
    base = json.loads(next(a.out_dir.glob('heldout-*/baseline.json')).read_text())
    pl = base['prompt_lookup']['mean_tau']
    cv = r['curve']
    print(f"{a.arm}: {r['steps']} steps, {r['cpu_s'] / 60:.1f} CPU-minutes; prompt lookup decoded tau {pl:.3f}")
    print(f"{'CPU-min':>8}{'step':>7}{'loss':>8}{'acc@1':>7}{'acc@2':>7}{'acc@3':>7}{'tau (all anchors)':>19}")
    for c in cv:
        pa = c['position_acceptance']
        print(f"{c['cpu_s'] / 60:>8.1f}{c['step']:>7}{c['loss']:>8.3f}{pa[0]:>7.3f}{pa[1]:>7.3f}{pa[2]:>7.3f}"
              f"{c['tau_all_anchors']:>19.3f}")
    job = job_point(a.out_dir, a.job_dir) if a.job_dir else None
    if job:
        print(f"job {a.job_dir.name}: {job['steps']} steps in {job['minutes']:.1f} min, decoded tau "
              f"{job['decoded_tau']:.3f} (lossless {job['lossless']}), all-anchor tau {job['tau_all_anchors']:.3f}, "
              f"acc@1..3 {' '.join(f'{x:.3f}' for x in job['position_acceptance'][:3])}")
    m = np.array([c['cpu_s'] / 60 for c in cv])
    t = np.array([c['tau_all_anchors'] for c in cv])
    keep = (t > a.plateau) & (m > 0)
    if keep.sum() < 3: raise SystemExit(f"only {keep.sum()} points past tau {a.plateau}: train longer first")
    # decoded tau visits a subset of the anchors: put prompt lookup on the all-anchor scale with a measured ratio
    decoded, anchors = ((r['decode']['mean_tau'], t[-1]) if r.get('decode') else
                        (job['decoded_tau'], job['tau_all_anchors']) if job else (None, None))
    ratio = (decoded - 1) / (anchors - 1) if decoded else 1.0
    target = 1 + (pl - 1) / ratio
    if decoded:
        print(f"decoded tau {decoded:.3f} vs all-anchor {anchors:.3f} (x{ratio:.2f} above 1): prompt lookup's "
              f"{pl:.3f} is all-anchor tau {target:.3f}")
    mk, tk = m[keep], t[keep]
    half = len(mk) // 2
    fits = {'all points past the plateau': fit(mk, tk), 'later half': fit(mk[half:], tk[half:])}
    for name, (c, b) in fits.items():
        need = minutes_to(target, c, b)
        print(f"fit on {name} ({len(mk) if name.startswith('all') else len(mk) - half} points): tau - 1 = "
              f"{c:.4f} * min^{b:.3f}; tau {target:.3f} at {need:,.0f} CPU-minutes ({need / 60:,.1f} CPU-hours, "
              f"{need / m[-1]:,.0f}x this run)")
    if a.plot:
        import matplotlib; matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot(m, t, 'o-', label=f'{a.arm}: held-out tau, all anchors')
        xs = np.geomspace(max(mk[0], 1), max(minutes_to(target, *fits['later half']), m[-1]) * 1.2, 100)
        for name, (c, b) in fits.items(): ax.plot(xs, 1 + c * xs ** b, '--', label=f'fit, {name}')
        if job:
            ax.plot([job['minutes']], [job['tau_all_anchors']], 's', label=f"real-target job ({job['steps']} steps)")
        ax.axhline(target, color='k', lw=0.8, label=f'prompt lookup ({pl:.2f} decoded)')
        ax.set(xscale='log', xlabel='CPU-minutes of training (one thread)', ylabel='tau', title='Fixed-recipe curve')
        ax.legend(fontsize=8); fig.tight_layout(); fig.savefig(a.plot, dpi=110)
        print(f"plot: {a.plot}")


if __name__ == '__main__':
    main()
