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
