"""benchmarks/gpu_check.sh --dry-run: the GPU check script itself, on the CPU with a tiny target (about a minute: four
real train/eval processes). It must run every row, agree between flex and SDPA masks and between the replicated and
the FSDP-sharded target, stay lossless, and say DRY RUN."""
import json, os, subprocess, sys
from pathlib import Path

from conftest import ROOT


def test_gpu_check_dry_run(tmp_path):
    env = {**os.environ, 'PYTHON': sys.executable, 'OMP_NUM_THREADS': '1'}
    r = subprocess.run(['bash', str(ROOT/'benchmarks'/'gpu_check.sh'), '--dry-run', '--out', str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert 'DRY RUN' in r.stdout
    rep = json.loads((tmp_path/'gpu_check.json').read_text())
    runs = {x['run']: x for x in rep['rows']}
    assert rep['dry_run'] and len(runs) == 4 and all(x['ok'] for x in runs.values())
    assert runs['train sdpa, target FSDP 1 rank']['fsdp'] is True and runs['train sdpa']['fsdp'] is False
    assert runs['train sdpa']['steps'] == 3 and runs['train sdpa']['tokens_per_s'] > 0
    assert runs['eval (greedy, vs plain greedy)']['lossless'] is True
    assert json.loads((tmp_path/'train_sdpa'/'drafter'/'config.json').read_text())['num_hidden_layers'] == 5
