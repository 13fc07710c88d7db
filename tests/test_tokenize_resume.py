"A tokenize run killed with SIGKILL part-way resumes to the same dataset an uninterrupted run writes."
import json, os, signal, subprocess, sys, time
from pathlib import Path
import pyarrow as pa, pytest
from conftest import ROOT, cli

def make_input(path: Path, copies: int = 6):
    "The shipped samples, `copies` times over (ids made unique), as one JSONL file."
    lines = [l for f in sorted((ROOT/'data'/'samples').glob('*.jsonl')) for l in f.read_text().splitlines()]
    with open(path, 'w') as out:
        for c in range(copies):
            for l in lines:
                try: rec = json.loads(l)
                except json.JSONDecodeError: out.write(l + '\n'); continue
                if isinstance(rec, dict) and 'id' in rec: rec['id'] = f"{rec['id']}-{c}"
                out.write(json.dumps(rec, ensure_ascii=False) + '\n')

def table(out: Path):
    return pa.concat_tables([pa.ipc.open_stream(str(f)).read_all() for f in sorted(out.glob('data-*.arrow'))])

def stats(out: Path):
    st = json.loads((out/'stats.json').read_text())
    return {k: v for k, v in st.items() if k not in ('seconds', 'tokens_per_second')}

ARGS = ['--max-seq-len', '1024', '--batch-size', '8', '--shard-tokens', '20000', '--quiet']

def test_kill9_then_rerun_gives_identical_dataset(qwen_dir, tmp_path):
    src = tmp_path/'c.jsonl'; make_input(src)
    ref = tmp_path/'ref'
    cli('tokenize', '--model-path', qwen_dir, '--completions', src, '--output-dir', ref, '--workers', '2', *ARGS)

    out = tmp_path/'out'
    cmd = [str(Path(sys.executable).with_name('dflash-nb')), 'tokenize', '--model-path', str(qwen_dir), '--completions',
           str(src),
           '--output-dir', str(out), '--workers', '2', *ARGS]
    p = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial = tmp_path/'out.partial'
    deadline = time.time() + 120
    while len(list(partial.glob('chunk-*.json'))) < 3 and p.poll() is None and time.time() < deadline: time.sleep(0.005)
    os.killpg(p.pid, signal.SIGKILL)   # the whole process group: the command and its workers
    p.wait()
    assert not out.exists(), "the run finished before it could be killed; make the input larger"
    done = len(list(partial.glob('chunk-*.json')))
    assert done >= 3

    r = cli('tokenize', *cmd[2:])
    assert table(out).equals(table(ref))
    assert (out/'skipped.jsonl').read_text() == (ref/'skipped.jsonl').read_text()
    assert stats(out) == stats(ref)
    assert (out/'content_hashes.npy').read_bytes() == (ref/'content_hashes.npy').read_bytes()
    assert sorted(f.name for f in out.iterdir()) == sorted(f.name for f in ref.iterdir())
    assert not partial.exists()

def test_changed_parameters_are_refused_then_restart(qwen_dir, tmp_path):
    src = tmp_path/'c.jsonl'; make_input(src, copies=1)
    out = tmp_path/'out'
    partial = tmp_path/'out.partial'
    # an interrupted run: leave a partial output behind by killing the command early
    cmd = [str(Path(sys.executable).with_name('dflash-nb')), 'tokenize', '--model-path', str(qwen_dir), '--completions',
           str(src),
           '--output-dir', str(out), *ARGS]
    p = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not (partial/'run.json').exists() and p.poll() is None: time.sleep(0.005)
    os.killpg(p.pid, signal.SIGKILL); p.wait()
    if out.exists(): pytest.skip("the run finished before it could be killed")
    r = cli('tokenize', *cmd[2:-len(ARGS)], '--max-seq-len', '512', *ARGS[2:], check=False)
    assert r.returncode == 1 and 'different max_seq_len' in r.stderr and '--restart' in r.stderr
    src.write_text(src.read_text() + '\n')     # the input changed too
    r = cli('tokenize', *cmd[2:], check=False)
    assert r.returncode == 1 and 'different inputs' in r.stderr
    cli('tokenize', *cmd[2:], '--restart')
    assert json.loads((out/'stats.json').read_text())['samples'] > 0
