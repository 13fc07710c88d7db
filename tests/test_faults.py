"""Fault tests of the tokenize/merge commit path: real kill -9 at every step of the finish, real concurrent runs on
one output, a real reader polling during overwrites."""
import json, os, shutil, signal, subprocess, sys, time
from pathlib import Path
import pyarrow as pa, pytest
from conftest import mounted_tmpfs, ROOT, cli
from test_tokenize_resume import make_input, table, stats

import dflash_nb.tokenize as T

KW = dict(max_seq_len=1024, batch_size=8, shard_tokens=20000, progress=False)
SLOW = pytest.mark.skipif(not os.environ.get('DFLASH_NB_SLOW'), reason="slow variant: run with DFLASH_NB_SLOW=1")
FS_STEPS = ('replace', 'rename', 'unlink', 'rmdir')  # every change a finish makes to the filesystem is one of these

def killed_at(step: int, *args, **kw) -> bool:
    """Run `tokenize_dataset(*args, **kw)` in a forked child that SIGKILLs itself just before the `step`-th filesystem
    change (rename, unlink, rmdir) after its finish step began. True if it was killed, False if it completed."""
    pid = os.fork()
    if pid == 0:
        try:
            n, armed = [0], [False]
            def counting(fn):
                def f(*a, **k):
                    if armed[0]:
                        n[0] += 1
                        if n[0] == step: os.kill(os.getpid(), signal.SIGKILL)
                    return fn(*a, **k)
                return f
            for name in FS_STEPS: setattr(os, name, counting(getattr(os, name)))
            real = T.finish_chunks
            def finish(*a, **k): armed[0] = True; return real(*a, **k)
            T.finish_chunks = finish
            T.tokenize_dataset(*args, **kw)
            os._exit(0)
        except BaseException as e:
            sys.stderr.write(f"child failed: {e!r}\n"); os._exit(3)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status): assert os.WTERMSIG(status) == signal.SIGKILL; return True
    assert os.WEXITSTATUS(status) == 0, "the child failed (not killed): see stderr"
    return False

def same_dataset(a: Path, b: Path):
    assert table(a).equals(table(b))
    assert (a/'skipped.jsonl').read_bytes() == (b/'skipped.jsonl').read_bytes()
    assert (a/'content_hashes.npy').read_bytes() == (b/'content_hashes.npy').read_bytes()
    assert stats(a) == stats(b)
    assert sorted(f.name for f in a.iterdir()) == sorted(f.name for f in b.iterdir())

@pytest.mark.parametrize('overwrite', [True, pytest.param(False, marks=SLOW)])  # True's steps include False's
def test_kill9_at_every_step_of_the_finish(qwen_dir, tmp_path, overwrite):
    """Issue 15.1 + 15.4: a kill -9 before each filesystem change of the finish and the commit, in turn; after each,
    OUT is absent or whole (old or new), and the same command again gives the uninterrupted run's dataset."""
    src = tmp_path/'c.jsonl'; make_input(src, copies=2)
    kw = {**KW, 'shard_tokens': 80000}
    ref = tmp_path/'ref'; T.tokenize_dataset(qwen_dir, src, ref, **kw)
    assert len(list(ref.glob('data-*.arrow'))) >= 3  # several shards, so each rename is a step of its own
    old = tmp_path/'old'; T.tokenize_dataset(qwen_dir, ROOT/'data'/'samples'/'openai_chat.jsonl', old, **kw)
    staged = tmp_path/'staged.partial'  # every chunk committed, the finish not begun: what each trial starts from
    assert killed_at(1, qwen_dir, src, tmp_path/'staged', **kw) and not (staged/'finish.json').exists()
    steps, step = [], 1
    while True:
        out = tmp_path/f'out{step}'
        shutil.copytree(staged, tmp_path/f'out{step}.partial')
        if overwrite: shutil.copytree(old, out)
        if not killed_at(step, qwen_dir, src, out, overwrite=overwrite, **kw): break
        if overwrite:  # at every instant OUT is a whole dataset: the old one or the new one
            assert out.is_dir(), f"killed before step {step}: {out} missing"
            assert table(out).equals(table(old)) or table(out).equals(table(ref)), step
        try: T.tokenize_dataset(qwen_dir, src, out, overwrite=overwrite, **kw)  # the same command again
        except FileExistsError:  # only when killed after its last change: the dataset was complete already
            assert not overwrite and not (tmp_path/f'out{step}.partial').exists() and not (out/'run.json').exists()
        same_dataset(out, ref)
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(out.name)) == [out.name], step
        steps.append(step); shutil.rmtree(out); step += 1
    assert len(steps) >= 20, steps  # renames, bookkeeping files, chunk deletions, the swap, the tidy-up

def tokenize_cmd(qwen_dir, src, out, *extra):
    return [str(Path(sys.executable).with_name('dflash-nb')), 'tokenize', '--model-path', str(qwen_dir),
            '--completions', str(src),
            '--output-dir', str(out), '--max-seq-len', '1024', '--batch-size', '8', '--shard-tokens', '20000',
            '--quiet', *extra]

def test_second_run_on_one_output_fails_at_once_naming_the_holder(qwen_dir, tmp_path):
    "Issue 15.3: two real concurrent runs on one OUT; the second exits 1 at once with one line naming the first's pid."
    # long enough to outlast two CLI start-ups (fastokens made it 3x faster)
    src = tmp_path/'c.jsonl'; make_input(src, copies=48)
    ref = tmp_path/'ref'; cli(*tokenize_cmd(qwen_dir, src, ref)[1:])
    out = tmp_path/'out'
    first = subprocess.Popen(tokenize_cmd(qwen_dir, src, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    deadline = time.time() + 60
    while not list((tmp_path/'out.partial').glob('chunk-*.json')) and time.time() < deadline: time.sleep(0.01)
    second = cli(*tokenize_cmd(qwen_dir, src, out, '--overwrite')[1:], check=False)
    assert first.poll() is None, "the first run ended before the second started; make the input larger"
    assert second.returncode == 1 and f"another run (pid {first.pid})" in second.stderr, second.stderr
    # 'at once': the first run is still going (checked above), no clock
    assert len(second.stderr.strip().splitlines()) == 1
    # the same lock
    merge = cli('merge', '--existing', ref, '--new', src, '--output-dir', out, '--overwrite', '--quiet', check=False)
    assert first.poll() is None, "the first run ended before the merge tried; make the input larger"
    assert merge.returncode == 1 and f"another run (pid {first.pid})" in merge.stderr, merge.stderr
    assert first.wait() == 0, first.stderr.read()
    first.stderr.close()
    same_dataset(out, ref)  # the first run's dataset, untouched by the others: no stray chunk or shard files
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith('out')) == ['out']  # lock file removed too

READER = r'''
import os, sys, time
out, stop = sys.argv[1], sys.argv[2]
reads = missing = 0
while not os.path.exists(stop):
    reads += 1
    try:
        with open(os.path.join(out, 'manifest.json')) as f: f.read()
    except FileNotFoundError: missing += 1
print(reads, missing)
'''

def test_overwrite_never_leaves_output_missing(tmp_path):
    "Issue 15.4: a real reader process polls OUT/manifest.json while OUT is replaced 300 times: never missing."
    import dflash_nb.merge as M
    out = tmp_path/'out'; out.mkdir(); (out/'manifest.json').write_text('0')
    for i in range(20): (out/f'data-{i:05d}.arrow').write_bytes(b'x' * 4096)
    stop = tmp_path/'stop'
    reader = subprocess.Popen([sys.executable, '-c', READER, str(out), str(stop)], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    for k in range(300):
        new = tmp_path/'out.partial'; shutil.copytree(out, new); (new/'manifest.json').write_text(str(k + 1))
        M.replace_dir(new, out)
    stop.touch()
    reads, missing = map(int, reader.communicate()[0].split())
    assert reads > 1000 and missing == 0, (reads, missing)
    assert (out/'manifest.json').read_text() == '300' and sorted(p.name for p in tmp_path.iterdir()) == ['out', 'stop']

def test_merge_cleans_old_asides_and_cites_new_path(qwen_dir, tmp_path):
    "Issue 15.4 (merge's OUT.old-PID left by a kill) and 15.12 (skipped.jsonl's `from` names --new, not a temp folder)."
    from dflash_nb.merge import merge_datasets
    ex = tmp_path/'ex'; T.tokenize_dataset(qwen_dir, ROOT/'data'/'samples'/'openai_chat.jsonl', ex, **KW)
    # bad records (for skipped.jsonl) and good ones (a merge whose new part is all bad exits non-zero)
    src = tmp_path/'new.jsonl'
    src.write_bytes((ROOT/'data'/'samples'/'bad_records.jsonl').read_bytes()
                    + (ROOT/'data'/'samples'/'sharegpt.jsonl').read_bytes())
    out = tmp_path/'out'; merge_datasets(ex, src, out, progress=False)
    (tmp_path/'out.old-99999').mkdir(); (tmp_path/'out.old-99999'/'manifest.json').write_text('{}')  # a killed commit's
    merge_datasets(ex, src, out, progress=False, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith('out')) == ['out']
    froms = {json.loads(l).get('from') for l in (out/'skipped.jsonl').read_text().splitlines()}
    assert str(src) in froms and not any(f and '.partial' in f for f in froms), froms

@pytest.fixture
def small_disk(tmp_path):
    "A real 1 MB tmpfs (root only: skipped where mount is not permitted); unmounted after the test."
    with mounted_tmpfs(tmp_path/'disk', 'size=1m') as d: yield d

def test_full_disk_is_one_line_and_a_rerun_resumes(qwen_dir, tmp_path, small_disk):
    """Issue 15.10: a real full disk (tmpfs) mid-run: one line naming the folder, space and estimate; the rerun
    completes."""
    src = tmp_path/'c.jsonl'; make_input(src, copies=6)
    ref = tmp_path/'ref'; T.tokenize_dataset(qwen_dir, src, ref, **KW)
    out = small_disk/'out'
    r = cli(*tokenize_cmd(qwen_dir, src, out)[1:], check=False)
    err = r.stderr.strip()
    assert r.returncode == 1 and len(err.splitlines()) == 1, err
    assert f"{small_disk/'out.partial'}" in err and 'no space left on device' in err, err
    assert 'rerun the same command' in err, err
    assert 'more (it wrote' in err, err  # the estimate of what is still needed
    committed = len(list((small_disk/'out.partial').glob('chunk-*.json')))
    assert committed >= 1 and not out.exists()
    subprocess.run(['mount', '-o', 'remount,size=64m', str(small_disk)], check=True)  # space freed
    cli(*tokenize_cmd(qwen_dir, src, out)[1:])
    same_dataset(out, ref)

def test_full_disk_in_merge_is_one_line(qwen_dir, tmp_path, small_disk):
    """Issue 15.10 for merge: a real full disk (tmpfs; the shards cannot be hard-linked across filesystems, so they are
    copied)."""
    ex = tmp_path/'ex'; src = tmp_path/'c.jsonl'; make_input(src, copies=6)
    T.tokenize_dataset(qwen_dir, src, ex, **KW)
    new = tmp_path/'n.jsonl'; new.write_text((ROOT/'data'/'samples'/'openai_chat.jsonl').read_text())
    r = cli('merge', '--existing', ex, '--new', new, '--output-dir', small_disk/'m', '--quiet', check=False)
    err = r.stderr.strip()
    assert r.returncode == 1 and len(err.splitlines()) == 1, err
    assert f"{small_disk/'m.partial'}/" in err and 'no space left on device (' in err and 'starts over' in err, err
    assert sorted(p.name for p in small_disk.iterdir()) == []  # nothing left behind on the full disk
