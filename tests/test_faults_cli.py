"""Fault tests of the command line, its worker processes and jobs (issue 23: items 9, 12, 15, 17, 18): real processes,
real signals (kill -9 of the main process only, SIGINT during start-up, SIGTERM during a job), a real read-only
mount."""
import json, os, re, signal, subprocess, sys, time
from pathlib import Path
import pytest
from conftest import mounted_tmpfs, ROOT, cli
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
    while len(kids) < n_workers and p.poll() is None and time.time() < deadline: time.sleep(0.02); kids = children(
        p.pid)
    assert len(
        kids) >= n_workers, (f"no {n_workers} workers seen (exit {p.poll()}): "
                             f"{p.stderr.read() if p.poll() is not None else ''}")
    os.kill(p.pid, signal.SIGKILL); p.wait(); p.stderr.close()
    return kids

def assert_workers_gone(kids: list[int], within: float = 5):
    deadline = time.time() + within
    while any(alive(k) for k in kids) and time.time() < deadline: time.sleep(0.05)
    left = [k for k in kids if alive(k)]
    for k in left: os.kill(k, signal.SIGKILL)   # the test's own clean-up: orphans must not outlive it
    assert not left, f"workers {left} outlived their killed parent"

def test_kill9_of_main_tokenize_kills_its_workers_and_the_rerun_resumes(qwen_dir, tmp_path):
    """Issue 23.12: kill -9 of the main process of `tokenize --workers 2` only; its workers die; the same command
    resumes."""
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
    cmd = lambda out: [EXE, 'merge', '--existing', str(ex), '--new', str(src), '--output-dir', str(out), '--workers',
                       '2', '--quiet']
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
    with mounted_tmpfs(tmp_path/'ro', 'ro,size=1m') as d: yield d

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
        assert p.returncode == 130 and err.splitlines() == [f"dflash-nb {command}: interrupted"], (delay, p.returncode,
                                                                                                   err)
    assert seen.count(130) >= 2, seen

EXIT_THEN_CTRL_C = """import atexit, os, signal, sys
atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))   # Ctrl-C once main has returned, as the process exits
from dflash_nb.cli import main
sys.argv = ['dflash-nb', 'stats', sys.argv[1], '--quiet']
sys.exit(main())                                                 # what the dflash-nb console script runs
"""

def test_ctrl_c_while_the_process_exits_leaves_its_exit_code(qwen_dir, tmp_path):
    """A Ctrl-C after the command has ended (its outputs complete, the process exiting) changes nothing: exit 0, no
    'interrupted', no traceback. An atexit hook in the process sends it, so it lands after main returned, every time
    (before the fix the handler put back then raised KeyboardInterrupt there, or, later in finalisation, the
    default handler killed the process: exit -2)."""
    src = tmp_path/'c.jsonl'; make_input(src, copies=2)
    ds = tmp_path/'ds'; T.tokenize_dataset(qwen_dir, src, ds, **KW)
    p = subprocess.run([sys.executable, '-c', EXIT_THEN_CTRL_C, str(ds)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0 and 'interrupted' not in p.stderr and 'Traceback' not in p.stderr, (p.returncode,
                                                                                                  p.stderr[-500:])
    assert json.loads(p.stdout)['samples'] > 0

BAD_OPTIONS = [  # (command line, the option named in the one-line refusal); torch-free commands: real CLI processes
    (['tokenize', '--completions', 'c', '--output-dir', 'o', '--workers', '-1'], '--workers'),
    (['tokenize', '--completions', 'c', '--output-dir', 'o', '--shard-tokens', '1e3'], '--shard-tokens'),
    (['merge', '--existing', 'a', '--new', 'b', '--output-dir', 'o', '--workers', '0'], '--workers'),
    (['stats', 'x', '--hidden-size', '-1'], '--hidden-size'),
    (['inspect', 'x', '--identical-fail', '1.5'], '--identical-fail'),
]

@pytest.mark.parametrize('argv,option', BAD_OPTIONS, ids=[' '.join(a[-2:]) for a, _ in BAD_OPTIONS])
def test_out_of_range_option_is_refused_in_one_line(argv, option):
    "Issue 23.9: a numeric option out of its range is refused by argparse in one line naming it (exit 2), nothing runs."
    r = cli(*argv, check=False)
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 2 and last.startswith(f"dflash-nb {argv[0]}: error: argument {option}: "), r.stderr
    assert 'must be' in last or 'is not' in last, last

TORCH_OPTIONS = [(['train', '--dataset', 'd', '--target', 'tiny', '--output-dir', 'o', '--lr', 'nan'], '--lr',
                  'must be a finite number'),
                 (['train', '--dataset', 'd', '--target', 'tiny', '--output-dir', 'o', '--block-size', '1'],
                  '--block-size', 'must be at least 2'),
                 (['train', '--dataset', 'd', '--target', 'tiny', '--output-dir', 'o', '--warmup-ratio', '2'],
                  '--warmup-ratio', 'must be from 0 to 1'),
                 (['eval', '--target', 'tiny', '--drafter', 'untrained', '--top-p', '0'], '--top-p',
                  'must be above 0 and at most 1'),
                 (['generate', '--output', 'o', '--concurrency', '0'], '--concurrency', 'must be from 1 to 1024')]

def test_out_of_range_torch_stage_options_are_refused(capsys):
    "Issue 23.9 for train/eval/generate (their parsers, in this process: each CLI start imports torch)."
    from dflash_nb.cli import make_parser
    for argv, option, words in TORCH_OPTIONS:
        with pytest.raises(SystemExit) as e: make_parser(argv[0]).parse_args(argv)
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert e.value.code == 2 and last.startswith(
            f"dflash-nb {argv[0]}: error: argument {option}: ") and last.endswith(words), last
    from dflash_nb.train import train_args
    with pytest.raises(ValueError, match='training option --max-steps 0: must be at least 1'): train_args(max_steps=0)

def test_negative_max_seq_len_no_longer_cuts_samples(qwen_dir, tmp_path):
    """Issue 23.9: `--max-seq-len -5` cut 5 tokens (the closing <|im_end|> among them) off every sample, exit 0; now
    nothing is written."""
    src = ROOT/'data'/'samples'/'openai_chat.jsonl'
    r = cli(*tokenize_cmd(qwen_dir, src, tmp_path/'out')[1:-5], '--max-seq-len', '-5', '--quiet', check=False)
    assert r.returncode == 2 and not (tmp_path/'out').exists() and not (tmp_path/'out.partial').exists(), r.stderr

def test_config_values_are_checked_however_the_config_is_made():
    "Issue 23.9: Python callers and job notebooks make configs without argparse: the same ranges, one ValueError line."
    from dflash_nb.tokenize import TokenizeConfig
    from dflash_nb.config import make_config
    from dflash_nb.inspect import Thresholds
    for make, words in [(lambda: make_config(TokenizeConfig, workers=0),
                         'tokenize option --workers 0: must be from 1 to 1024'),
                        (lambda: TokenizeConfig(max_seq_len=-5),
                         'tokenize option --max-seq-len -5: must be at least 0'),
                        (lambda: make_config(TokenizeConfig, {'workers': 'abc'}),
                         "--workers 'abc': must be an integer"),
                        (lambda: Thresholds.make({'identical_fail': 2}),
                         'inspect option --identical-fail 2: must be from 0 to 1')]:
        with pytest.raises(ValueError, match=words.replace('(', r'\(').replace(')', r'\)')): make()
    assert make_config(TokenizeConfig, max_seq_len=0, workers=4).workers == 4  # 0: no limit, as documented

BAD_PARAMS = [  # (job, name, value, words of the refusal)
    ('tokenize', 'workers', 'abc', 'parameter workers = "abc": expected an integer (default 2)'),
    ('tokenize', 'max_seq_len', '1e3', 'parameter max_seq_len = 1000.0: expected an integer (default 8192)'),
    ('tokenize', 'workers', '0', 'parameter workers = 0: must be from 1 to 1024'),
    ('tokenize', 'max_seq_len', '-5', 'parameter max_seq_len = -5: must be at least 0'),
    ('merge', 'workers', '-1', 'parameter workers = -1: must be from 1 to 1024'),
    ('merge', 'overwrite', 'yes', 'parameter overwrite = "yes": expected true or false (default False)'),
    ('report', 'num_layers', '1.5', 'parameter num_layers = 1.5: expected an integer (default 5)'),
]

@pytest.mark.parametrize('job,name,value,words', BAD_PARAMS, ids=[f"{j}-{n}={v}" for j, n, v, _ in BAD_PARAMS])
def test_bad_job_parameter_is_refused_before_the_job_runs(tmp_path, job, name, value, words):
    """Issue 23.9 + 23.18: `-p workers abc` / `-p max_seq_len 1e3` were TypeErrors naming nothing, `-p workers 0` ran:
    one line, no run folder."""
    r = cli('run', job, '-p', name, value, '--outputs', tmp_path/'runs', '--quiet', check=False)
    err = r.stderr.strip()
    assert r.returncode == 1 and err.splitlines() == [f"dflash-nb run: error: job {job}: {words}"], err
    assert not (tmp_path/'runs').exists()

@pytest.mark.parametrize('name', ['../../x', '../jobs/tokenize', '/tmp/x', 'x.ipynb'])
def test_run_refuses_notebooks_outside_the_jobs_folder(tmp_path, name):
    """Issue 23.18: `dflash-nb run ../../x` ran a notebook outside nbs/jobs and wrote outside --outputs: refused, one
    line."""
    outside = tmp_path/'x.ipynb';
    outside.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    r = cli('run', name, '--outputs', tmp_path/'runs', '--quiet', check=False, cwd=tmp_path)
    err = r.stderr.strip()
    assert r.returncode == 1 and len(err.splitlines()) == 1 and 'not a job name' in err, err
    assert not (tmp_path/'runs').exists() and sorted(p.name for p in tmp_path.iterdir()) == ['x.ipynb']

def test_a_jobs_notebook_path_inside_the_jobs_folder_is_its_name(tmp_path):
    "A path that resolves inside nbs/jobs is the job of that name (here only checked, via its --help)."
    r = cli('run', ROOT/'nbs'/'jobs'/'report.ipynb', '--help')
    assert r.stdout.startswith('dflash-nb run report [-p NAME VALUE ...]'), r.stdout

@pytest.mark.parametrize('sig', [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.skipif(
    not os.environ.get('DFLASH_NB_SLOW'), reason="slow variant: run with DFLASH_NB_SLOW=1"))],
                         ids=['SIGTERM', 'SIGINT'])
def test_interrupted_run_writes_its_report_and_resumes(qwen_dir, tmp_path, sig):
    """Issue 23.17: SIGTERM (or SIGINT) to `dflash-nb run tokenize` while its tokenize cell runs: report.html and
    job.json (status interrupted) are written, the kernel is gone, one line says how to resume, exit 130; `run --resume
    RUN_DIR` finishes the job in the same folder with the uninterrupted run's dataset."""
    src = tmp_path/'c.jsonl'; make_input(src, copies=6)
    runs = tmp_path/'runs'
    p = subprocess.Popen([EXE, 'run', 'tokenize', '-p', 'completions', str(src), '-p', 'max_seq_len', '1024', '-p',
                          'workers', '1',
                          '--outputs', str(runs), '--quiet'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not list(runs.glob('*/dataset.lock')) and p.poll() is None and time.time() < deadline: time.sleep(0.02)
    kernels = children(p.pid)
    assert p.poll() is None and kernels, f"the job ended before its tokenize cell was seen: {p.communicate()}"
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    run_dir = next(runs.iterdir())
    job = json.loads((run_dir/'job.json').read_text())
    assert p.returncode == 130 and (job['status'], job['ok']) == ('interrupted', False), (p.returncode, err)
    assert err.strip().splitlines()[-1] == (f"dflash-nb run: tokenize interrupted; report {run_dir/'report.html'}; "
                                            f"resume with: dflash-nb run --resume {run_dir}"), err
    assert 'Traceback' not in err, err
    assert 'Interrupted (Ctrl-C or SIGTERM)' in (run_dir/'report.html').read_text()
    assert_workers_gone(kernels)  # the kernel (and so its lock on dataset) is gone with the run
    r = cli('run', '--resume', run_dir, '--quiet')
    assert r.stdout.strip() == f"ok     tokenize: {run_dir/'report.html'}", r.stdout
    # --quiet: no cell lines, no bars, no kernel warning ('running over TCP without encryption')
    assert r.stderr == '', r.stderr
    assert json.loads((run_dir/'job.json').read_text())['status'] == 'ok' and list(runs.iterdir()) == [run_dir]
    ref = tmp_path/'ref'; T.tokenize_dataset(qwen_dir, src, ref, max_seq_len=1024, progress=False)
    same_dataset(run_dir/'dataset', ref)
    assert 'completed; nothing to resume' in cli('run', '--resume', run_dir, check=False).stderr


def test_version_and_the_one_line_hints(tmp_path):
    """Issue 24.11 + 24.14: `--version`; `generate --prompts /nope` names --prompts (not --completions); a hub id
    (`Qwen/Qwen3-8B`) is told that nothing is downloaded here; `tokenize --help` names the input formats; `stats FILE`
    says it is a file (not 'no such dataset directory')."""
    import dflash_nb, torch
    from dflash_nb.records import discover_inputs
    from dflash_nb.stats import compute_stats
    from dflash_nb.inspect import inspect_dataset
    from dflash_nb.train import load_target
    from dflash_nb.generate import read_prompts
    assert cli('--version').stdout.strip() == f"dflash-nb {dflash_nb.__version__}"
    with pytest.raises(FileNotFoundError,
                       match=re.escape(f"{tmp_path/'nope'}: no such file or folder; check the --prompts path")):
        read_prompts(tmp_path/'nope')  # what `dflash-nb generate --prompts /nope` says (after loading torch: slow here)
    hint = ('Qwen/Qwen3-8B looks like a Hugging Face Hub id, and nothing is downloaded here: download it first (`hf '
            'download Qwen/Qwen3-8B --local-dir DIR`)')
    with pytest.raises(FileNotFoundError, match=re.escape(hint)): T.ChatTokenizer('Qwen/Qwen3-8B')
    with pytest.raises(FileNotFoundError, match=re.escape(hint)): load_target('Qwen/Qwen3-8B', torch.device('cpu'))
    r = cli('train', '--target', 'Qwen/Qwen3-8B', '--dataset', tmp_path/'nope', '--output-dir', tmp_path/'tr',
            check=False)
    # no empty folder left
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and not (tmp_path/'tr').exists(), r.stderr
    with pytest.raises(FileNotFoundError, match=re.escape(
        '`hf download --repo-type dataset HuggingFaceH4/ultrachat_200k --local-dir DIR`')):
        discover_inputs('HuggingFaceH4/ultrachat_200k')
    help_text = ' '.join(cli('tokenize', '--help').stdout.split())
    assert all(f in help_text for f in ('.jsonl', '.ndjson', '.json', '.gz', '.zst', 'Parquet',
                                        'saved Hugging Face dataset', 's3://'))
    (f := tmp_path/'stats.json').write_text('{}')
    for read in (compute_stats, inspect_dataset):
        with pytest.raises(NotADirectoryError,
                           match=re.escape(f"{f}: a file, not a dataset directory; give the folder")): read(f)
