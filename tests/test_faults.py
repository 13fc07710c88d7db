"""Fault tests of the tokenize/merge commit path: real kill -9 at every step of the finish, real concurrent runs on
one output, a real reader polling during overwrites."""
import json, os, shutil, signal, subprocess, sys, time
from pathlib import Path
import pyarrow as pa, pytest
from conftest import ROOT, cli
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
