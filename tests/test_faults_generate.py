"""Issue 23.3: token-level `generate --overwrite` keeps the old output whole until the new one is complete; a killed or
interrupted run resumes from its journal and writes what an uninterrupted run writes; one run per output (real
processes: forked children killed with SIGKILL / SIGINT, the console script's entry point for the second run)."""
import json, os, signal, sys, time
from pathlib import Path
import pyarrow as pa, pytest

torch = pytest.importorskip('torch')
from dflash_nb.generate import generate_records, generate_records_api

torch.set_num_threads(1)
V = 128

def table(d: Path) -> pa.Table:
    "The rows of dataset `d` (read into memory: the file may be replaced next)."
    return pa.ipc.open_stream((d/'data-00000-of-00001.arrow').read_bytes()).read_all()

def journal(out: Path) -> Path: return out.with_name(out.name + '.partial')/'batches.jsonl'
def journaled(out: Path) -> int: return journal(out).read_bytes().count(b'\n') if journal(out).is_file() else 0

def forked(fn) -> int:
    "Run `fn()` in a forked child (exit: what it returns, 130 on KeyboardInterrupt, 3 on another error); its pid."
    pid = os.fork()
    if pid == 0:
        code = 0
        try: code = fn() or 0
        except KeyboardInterrupt: code = 130
        except BaseException as e: sys.stderr.write(f"child failed: {e!r}\n"); code = 3
        os._exit(code)
    return pid

def when_journaled(pid: int, out: Path, n: int, old: bool = False):
    """Wait until the run `pid` has journaled `n` batches (failing if it ends first), or (`old`: an output there)
    deleted `out`."""
    deadline = time.time() + 120
    while journaled(out) < n and (out.exists() or not old):
        assert os.waitpid(pid, os.WNOHANG)[0] == 0, "the run ended before it was interrupted; give it more prompts"
        assert time.time() < deadline, "no progress"
        time.sleep(0.002)

def gen_cmd(out: Path, n: int, seed: int = 1) -> list[str]:
    """`dflash-nb generate` of `n` random prompts by a tiny target, sampled (a resume must draw what the whole run
    draws)."""
    return ['generate', '--target', f'tiny:vocab_size={V}', '--random-prompts', str(n), '--prompt-len', '4,12',
            '--seed', str(seed),
            '--max-new-tokens', '8', '--temperature', '1.3', '--batch-size', '2', '--output', str(out), '--quiet']

def test_killed_overwrite_keeps_the_old_output_and_the_rerun_resumes(tmp_path, monkeypatch):
    from dflash_nb.cli import main   # the console script's entry point: in forked children and in this process
    out, ref = tmp_path/'out', tmp_path/'ref'
    assert main(gen_cmd(ref, 16)) == 0                           # uninterrupted: 8 batches
    assert main(gen_cmd(out, 3, seed=9)) == 0                    # the old output
    old, cmd = table(out), gen_cmd(out, 16) + ['--overwrite']
    pid = forked(lambda: main(cmd))
    when_journaled(pid, out, 2, old=True); os.kill(pid, signal.SIGKILL)
    st = os.waitpid(pid, 0)[1]
    assert os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL
    assert table(out).equals(old)                               # the old output, whole
    first, inode = journal(out).read_bytes(), journal(out).stat().st_ino
    pid = forked(lambda: main(cmd))                              # the same command again, then Ctrl-C
    when_journaled(pid, out, first.count(b'\n') + 2, old=True); os.kill(pid, signal.SIGINT)
    st = os.waitpid(pid, 0)[1]
    assert os.WIFEXITED(st) and os.WEXITSTATUS(st) == 130       # the CLI's "interrupted"
    assert table(out).equals(old)
    # resumed, not restarted
    assert journal(out).stat().st_ino == inode and journal(out).read_bytes().startswith(first)
    done = journaled(out)
    assert 0 < done < 8
    from transformers import Qwen3ForCausalLM
    calls, real = [0], Qwen3ForCausalLM.generate
    def counted(self, *a, **k): calls[0] += 1; return real(self, *a, **k)
    monkeypatch.setattr(Qwen3ForCausalLM, 'generate', counted)   # counts the real calls
    assert main(cmd) == 0
    assert calls[0] == 8 - done                                  # only the batches the journal lacked
    assert table(out).equals(table(ref))                         # = the uninterrupted run
    assert json.loads((out/'stats.json').read_text()) == json.loads((ref/'stats.json').read_text())
    assert json.loads((out/'manifest.json').read_text())['generation'] == json.loads((ref/'manifest.json').read_text())[
        'generation']
    assert sorted(p.name for p in tmp_path.iterdir()) == ['out', 'ref']   # no journal, lock or old copy left

def test_a_second_run_on_one_output_is_refused_in_one_line_and_the_cli_resumes(tmp_path, capsys):
    from dflash_nb.cli import main
    out = tmp_path/'out'
    cmd = gen_cmd(out, 30)
    pid = forked(lambda: main(cmd))                              # a real second process runs the command
    when_journaled(pid, out, 1)
    capsys.readouterr()
    assert main(cmd + ['--overwrite']) == 1                      # the console script's entry point, in this process
    err = capsys.readouterr().err.strip()
    assert os.waitpid(pid, os.WNOHANG)[0] == 0, "the first run ended before the second one tried"
    assert f"another run (pid {pid})" in err and len(err.splitlines()) == 1, err
    for fn in (lambda: generate_records_api([], out, 'http://127.0.0.1:9'), lambda: generate_records(None, None, [],
                                                                                                     out)):
        # the chat-record writers take the lock too
        with pytest.raises(RuntimeError, match=f"another run \\(pid {pid}\\)"): fn()
    os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
    assert not out.exists() and journaled(out) >= 1
    assert main(cmd) == 0                                        # the same command: continues from the journal
    said = capsys.readouterr().out
    assert '30 of 30 prompts' in said and 'resumed from' in said, said
    assert table(out).num_rows == 30 and sorted(p.name for p in tmp_path.iterdir()) == ['out']
