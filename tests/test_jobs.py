"""`dflash-nb run JOB ...` through the console script: the run folder, the rendered report, a failing job, and several
jobs in one call (every job runs even after one failed). All runs go to `--outputs tmp_path`."""
import base64, json, re, time
from datetime import datetime, timezone
from pathlib import Path

import datasets
import pytest

from conftest import ROOT, cli
from dflash_nb.stats import ratio_words

SAMPLES = ROOT/'data'/'samples'
RUN_DIR = re.compile(r'^(?P<job>[\w-]+?)-(?P<stamp>\d{8}T\d{6}Z)(-\d+)?$')
PLOTS = {'seq_len_hist.png', 'loss_tokens_hist.png', 'loss_fraction_hist.png', 'source_mix.png'}


@pytest.fixture(scope='module')
def dataset(qwen_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp('jobs')/'ds'
    cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', out, '--quiet')
    return out


def run_dirs(outputs: Path) -> list[Path]:
    return sorted((p for p in outputs.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime_ns)


def notebook_errors(nb_path: Path) -> list[dict]:
    nb = json.loads(nb_path.read_text())
    return [o for c in nb['cells'] for o in c.get('outputs', []) if o.get('output_type') == 'error']


def test_report_job_leaves_a_readable_report(dataset, tmp_path):
    before = tmp_path/'before'  # a dataset made by another tool: only input_ids and loss_mask
    datasets.disable_progress_bars(); datasets.Dataset.from_dict({'input_ids': [[1] * 40] * 8, 'loss_mask': [[
        False] * 34 + [True] * 6] * 8}).save_to_disk(str(before))
    t0 = datetime.now(timezone.utc).replace(microsecond=0)
    stamp_bytes = (dataset/'stats.json').read_bytes()
    r = cli('run', 'report', '-p', 'dataset', dataset, '-p', 'compare', before, '--outputs', tmp_path/'out')
    [d] = run_dirs(tmp_path/'out')
    m = RUN_DIR.match(d.name)
    assert m and m['job'] == 'report'
    stamp = datetime.strptime(m['stamp'], '%Y%m%dT%H%M%SZ').replace(tzinfo=timezone.utc)
    assert t0 <= stamp <= datetime.now(timezone.utc)
    assert {'report.ipynb', 'report.html', 'stats.json', 'job.json',
            'compare.png'} | PLOTS <= {p.name for p in d.iterdir()}
    assert r.stdout.startswith('ok') and str(d/'report.html') in r.stdout
    assert notebook_errors(d/'report.ipynb') == []

    st = json.loads((d/'stats.json').read_text())
    rec = json.loads((dataset/'stats.json').read_text())
    assert (st['samples'], st['total_tokens'], st['records_read']) == (rec['samples'], rec['total_tokens'],
                                                                       rec['records_read'])
    assert st['comparison']['before'] == str(before.resolve()) and st['comparison']['before_stats']['samples'] == 8

    html = (d/'report.html').read_text()
    assert len(re.findall(r'<table class=.dflash-stats.>', html)) >= 5
    assert f">{rec['samples']:,}<" in html and f">{rec['total_tokens']:,}<" in html and '>loss-token fraction<' in html
    images = re.findall(r'data:image/png;base64,([A-Za-z0-9+/=\s]+)', html)
    assert len(images) >= 5 and all(base64.b64decode(i)[:8] == b'\x89PNG\r\n\x1a\n' for i in images)
    assert f">{ratio_words(8, rec['samples'], 'samples')}<" in html and '>masked fraction ' in html
    # code hidden, no noise
    assert 'scan_token_counts(' not in html and 'Traceback' not in html and 'TqdmWarning' not in html
    assert (dataset/'stats.json').read_bytes() == stamp_bytes  # the dataset's own record is untouched


def test_failing_job_keeps_its_notebook_and_report_and_exits_nonzero(tmp_path):
    missing = tmp_path/'no-such-dataset'
    r = cli('run', 'report', '-p', 'dataset', missing, '--outputs', tmp_path/'out', check=False)
    assert r.returncode != 0 and r.stdout.startswith('FAILED report')
    [d] = run_dirs(tmp_path/'out')
    errs = notebook_errors(d/'report.ipynb')
    assert errs and errs[0]['ename'] == 'FileNotFoundError' and 'no such dataset directory' in errs[0]['evalue']
    assert str(missing) in errs[0]['evalue']
    html = (d/'report.html').read_text()
    assert 'FileNotFoundError' in html and 'no such dataset directory' in html
    assert json.loads((d/'job.json').read_text())['ok'] is False
    r = cli('run', 'report', '--outputs', tmp_path/'out2', check=False)  # no dataset given at all
    assert r.returncode != 0
    [d] = run_dirs(tmp_path/'out2')
    assert 'run report -p dataset DIR' in notebook_errors(d/'report.ipynb')[0]['evalue']


def test_several_jobs_in_one_call_all_run(qwen_dir, tmp_path):
    "report (fails: no dataset yet), tokenize (makes it), report (succeeds): one call, three run folders, exit 1."
    ds = tmp_path/'ds'
    r = cli('run', 'report', 'tokenize', 'report', '-p', 'dataset', ds, '-p', 'output_dir', ds, '-p', 'model_path',
            qwen_dir,
            '-p', 'workers', '1', '--outputs', tmp_path/'out', check=False)
    assert r.returncode == 1
    status = [line.split()[:2] for line in r.stdout.splitlines() if line.split()[:1] in (['ok'], ['FAILED'])]
    assert status == [['FAILED', 'report:'], ['ok', 'tokenize:'], ['ok', 'report:']]
    dirs = run_dirs(tmp_path/'out')
    assert [RUN_DIR.match(d.name)['job'] for d in dirs] == ['report', 'tokenize', 'report'] and len(set(dirs)) == 3
    tok, rep = json.loads((dirs[1]/'stats.json').read_text()), json.loads((dirs[2]/'stats.json').read_text())
    assert rep['samples'] == tok['samples'] > 200 and rep['records_read'] == tok['records_read']
    assert PLOTS <= {p.name for p in dirs[2].iterdir()} and (dirs[0]/'report.html').is_file()
    # it talks: cell n/N with the first line of each cell, on stderr, for every job
    assert re.search(r'^tokenize: cell 1/\d+ \(\+[\d.]+s\) ', r.stderr, re.M) and re.search(r'^report: cell \d+/\d+ ',
                                                                                            r.stderr, re.M)
    assert re.search(r'^tokenize: done after [\d.]+s$', r.stderr, re.M)
    # and, per cell, a summary line as it ends; in between the stage's own bar (rate and ETA), on the console only
    assert re.search(r'^tokenize: cell 3/\d+ done in [\d.]+s$', r.stderr, re.M)
    assert re.search(r'tokenize: +100%\|[^|]*\| [\d.]+[kMG]?/[\d.]+[kMG]? \[[\d:]+<00:00, +[\d.]+[kMG]?B/s\]\n',
                     r.stderr), r.stderr[-2000:]
    assert 'without encryption' not in r.stderr  # the kernel talks over IPC, not unencrypted TCP
    assert '100%|' not in (dirs[1]/'tokenize.ipynb').read_text() and '100%|' not in (dirs[1]/'report.html').read_text()
    # every report opens with its header: job, parameters (given and defaults), start, duration, version, commit,
    # machine
    html = (dirs[1]/'report.html').read_text()
    head = html[html.index('dflash-run-header'):][:4000]
    assert 'job <b>tokenize</b>' in head and 'started <b>' in head and 'took <b>' in head
    assert 'version <b>dflash_nb ' in head
    assert 'commit <b>' in head and 'machine <b>' in head and f"<code>workers</code></td><td><code>1</code>" in head
    assert '<code>max_seq_len</code></td><td><code>8192 (default)</code>' in head
    assert json.loads((dirs[1]/'job.json').read_text())['header']['job'] == 'tokenize'


def test_run_help_lists_jobs_and_parameters_and_refuses_unknown_names(tmp_path):
    r = cli('run', '--help')
    assert all(f"  {j} " in r.stdout for j in ('tokenize', 'train', 'report')) and 'Train a DFlash drafter' in r.stdout
    r = cli('run', 'train', '--help')
    assert '-p max_steps' in r.stdout and re.search(r'-p epochs\s+4\n', r.stdout) and 'out_dir' not in r.stdout
    for bad in ('epoch', 'x=1\nimport os', 'out_dir'):
        r = cli('run', 'train', '-p', bad, '1', '--outputs', tmp_path/'o', check=False)
        assert r.returncode == 1 and 'unknown parameter' in r.stderr and 'valid: ' in r.stderr and 'epochs' in r.stderr
        assert 'Traceback' not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path/'o').exists()  # refused before anything ran
