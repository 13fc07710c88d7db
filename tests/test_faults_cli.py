"""Fault tests of the command line, its worker processes and jobs (issue 23: items 9, 12, 15, 17, 18): real processes,
real signals (kill -9 of the main process only, SIGINT during start-up, SIGTERM during a job), a real read-only mount."""
import json, os, signal, subprocess, sys, time
from pathlib import Path
import pytest
from conftest import ROOT, cli
from test_tokenize_resume import make_input
from test_faults import KW, same_dataset, tokenize_cmd

import dflash_nb.tokenize as T

EXE = str(Path(sys.executable).with_name('dflash-nb'))

def children(pid: int) -> list[int]:
    "Live (not zombie) processes whose parent is `pid`, from /proc."
    out = []
    for d in Path('/proc').iterdir():
        if not d.name.isdigit(): continue
        try: stat = (d/'stat').read_text()
        except OSError: continue
        state, ppid = stat.rsplit(')', 1)[1].split()[:2]
        if int(ppid) == pid and state != 'Z': out.append(int(d.name))
    return out

def alive(pid: int) -> bool:
    "Is `pid` a live process (a zombie, killed and not yet reaped, is not)?"
    try: return (Path('/proc')/str(pid)/'stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError: return False

def kill_main_only(cmd, n_workers: int, timeout: float = 60) -> list[int]:
    "Start `cmd`, wait until it has `n_workers` live children, kill -9 the main process only; the workers' pids."
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline, kids = time.time() + timeout, []
    while len(kids) < n_workers and p.poll() is None and time.time() < deadline: time.sleep(0.02); kids = children(p.pid)
    assert len(kids) >= n_workers, f"no {n_workers} workers seen (exit {p.poll()}): {p.stderr.read() if p.poll() is not None else ''}"
    os.kill(p.pid, signal.SIGKILL); p.wait(); p.stderr.close()
    return kids

def assert_workers_gone(kids: list[int], within: float = 5):
    deadline = time.time() + within
    while any(alive(k) for k in kids) and time.time() < deadline: time.sleep(0.05)
    left = [k for k in kids if alive(k)]
    for k in left: os.kill(k, signal.SIGKILL)   # the test's own clean-up: orphans must not outlive it
    assert not left, f"workers {left} outlived their killed parent"

def test_kill9_of_main_tokenize_kills_its_workers_and_the_rerun_resumes(qwen_dir, tmp_path):
    "Issue 23.12: kill -9 of the main process of `tokenize --workers 2` only; its workers die; the same command resumes."
    src = tmp_path/'c.jsonl'; make_input(src, copies=8)
    ref = tmp_path/'ref'; T.tokenize_dataset(qwen_dir, src, ref, workers=2, **KW)
    out = tmp_path/'out'
    kids = kill_main_only(tokenize_cmd(qwen_dir, src, out, '--workers', '2'), 2)
    assert_workers_gone(kids)
    cli(*tokenize_cmd(qwen_dir, src, out, '--workers', '2')[1:])   # not refused by "another run (pid <dead>)"
    same_dataset(out, ref)

def test_kill9_of_main_merge_kills_its_workers_and_the_rerun_finishes(qwen_dir, tmp_path):
    "Issue 23.12 for merge: its new completions are tokenized by `--workers 2`; kill -9 of the main pid only."
    ex = tmp_path/'ex'; T.tokenize_dataset(qwen_dir, ROOT/'data'/'samples'/'openai_chat.jsonl', ex, **KW)
    src = tmp_path/'c.jsonl'; make_input(src, copies=8)
    cmd = lambda out: [EXE, 'merge', '--existing', str(ex), '--new', str(src), '--output-dir', str(out), '--workers', '2', '--quiet']
    from dflash_nb.merge import merge_datasets
    ref = tmp_path/'ref'; merge_datasets(ex, src, ref, workers=2, progress=False)
    out = tmp_path/'out'
    kids = kill_main_only(cmd(out), 2)
    assert_workers_gone(kids)
    cli(*cmd(out)[1:])
    same_dataset(out, ref)

@pytest.fixture
def read_only_dir(tmp_path):
    "A real read-only tmpfs (root ignores file modes, not a read-only mount); skipped where mount is not permitted."
    d = tmp_path/'ro'; d.mkdir()
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', str(d)], capture_output=True, text=True)
    if r.returncode != 0: pytest.skip(f"cannot mount a read-only tmpfs here ({r.stderr.strip()})")
    try: yield d
    finally: subprocess.run(['umount', '-l', str(d)], check=False)

def test_run_into_a_read_only_outputs_folder_is_one_line(read_only_dir):
    "Issue 23.15: `dflash-nb run JOB --outputs <read-only>` was an OSError traceback; now one line naming the folder."
    r = cli('run', 'report', '-p', 'dataset', 'x', '--outputs', read_only_dir/'runs', '--quiet', check=False)
    err = r.stderr.strip()
    assert r.returncode == 1 and len(err.splitlines()) == 1, err
    assert str(read_only_dir/'runs') in err and 'read-only file system' in err.lower(), err

def imported(pid: int, lib: str = '_multiarray_umath') -> bool:
    "Has process `pid` loaded the shared library `lib` (numpy's, by default: the stage's imports are under way)?"
    try: return lib in (Path('/proc')/str(pid)/'maps').read_text()
    except OSError: return False

@pytest.mark.parametrize('command', ['tokenize', 'stats'])
def test_ctrl_c_during_start_up_is_one_line_and_exit_130(qwen_dir, tmp_path, command):
    """Issue 23.15: a real SIGINT to the CLI at several moments of its start-up (the stage's imports, the tokenizer's
    load, the first batches), counted from when numpy is mapped (before, Python itself is starting: its own `site`
    import is not ours to handle): exit 130 and one line, never a KeyboardInterrupt traceback."""
    src = tmp_path/'c.jsonl'; make_input(src, copies=2)
    ds = tmp_path/'ds'; T.tokenize_dataset(qwen_dir, src, ds, **KW)
    cmd = tokenize_cmd(qwen_dir, src, tmp_path/'out') if command == 'tokenize' else [EXE, 'stats', str(ds), '--quiet']
    seen = []
    for delay in (0, 0.3, 1.0):
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while not imported(p.pid) and p.poll() is None: time.sleep(0.002)
        time.sleep(delay); p.send_signal(signal.SIGINT)
        err = p.communicate()[1].strip(); seen.append(p.returncode)
        if p.returncode == 0: continue  # finished before the signal came
        assert p.returncode == 130 and err.splitlines() == [f"dflash-nb {command}: interrupted"], (delay, p.returncode, err)
    assert seen.count(130) >= 2, seen
