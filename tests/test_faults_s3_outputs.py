"""Issue 23 (items 1, 2, 4, 18): what a writer may replace (s3:// prefixes and local folders), one committer wins on the
server, the s3:// layout opens with `datasets.load_from_disk` (s3fs) and as a plain copy, an HTML endpoint, stale
stages. Real processes, a real S3 protocol server (moto) behind a proxy that lines requests up, real HTTP servers, real
kill -9."""
import json, os, signal, subprocess, sys, threading, time
from pathlib import Path
import pytest
from dflash_nb.storage import StorageError, download_dir, list_objects, s3_client, staged_output, upload_dir
from dflash_nb.testing import Proxy
from conftest import ROOT, cli
from test_faults_s3 import load_s3, real_dataset

SAMPLES = ROOT/'data'/'samples'
EXE = Path(sys.executable).with_name('dflash-nb')
WARM = os.environ.get('DFLASH_NB_CACHE')  # (read at import: the `env` fixture points it at an empty folder)

def machine(d: Path) -> str:
    """A cache folder of its own (another machine's), with the encoder tables already built (else each run builds them:
    ~20 s)."""
    import shutil
    if WARM and (Path(WARM)/'encoders').is_dir(): shutil.copytree(Path(WARM)/'encoders', d/'encoders',
                                                                  dirs_exist_ok=True)
    d.mkdir(parents=True, exist_ok=True)
    return str(d)

def keys(c, bucket: str, prefix: str) -> dict:
    "key -> bytes of every object under `prefix`."
    got = {}
    for page in c.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get('Contents', []): got[o['Key']] = c.get_object(Bucket=bucket, Key=o['Key'])['Body'].read()
    return got

def plain_copy(c, bucket: str, prefix: str, dest: Path) -> Path:
    "What `aws s3 sync s3://bucket/prefix dest` does: every object under the prefix, as a file (no metadata)."
    for k, v in keys(c, bucket, prefix + '/').items():
        p = dest/k[len(prefix) + 1:]; p.parent.mkdir(parents=True, exist_ok=True); p.write_bytes(v)
    return dest

@pytest.fixture(scope='module')
def tokenized(qwen_dir, tmp_path_factory):
    """Two small datasets tokenized locally: `ex` (one sample file) and `nb` (another); a merge of the two needs no
    tokenizer."""
    d = tmp_path_factory.mktemp('tok')
    for name, f in (('ex', 'openai_chat.jsonl'), ('nb', 'sharegpt.jsonl')):
        (d/f'{name}-in').mkdir(); (d/f'{name}-in'/f).write_bytes((SAMPLES/f).read_bytes())
        cli('tokenize', '--model-path', qwen_dir, '--completions', d/f'{name}-in', '--output-dir', d/name, '--quiet')
    return d

# ------------------------------------------------------------------------------------------------ 1. what a writer may
# replace

def test_s3_prefix_holding_other_objects_is_refused_with_and_without_overwrite(qwen_dir, env, server, tmp_path):
    """23.1: tokenize into an s3:// prefix that holds objects but no dataset: refused (one line), every object still
    there."""
    c = s3_client(server.endpoint); c.create_bucket(Bucket='mixed')
    mine = {'out/notes.txt': b'my notes', 'out/data/x.bin': os.urandom(100), 'out/manifest.jsonl': b'{}\n'}
    for k, v in mine.items(): c.put_object(Bucket='mixed', Key=k, Body=v)
    for extra in ([], ['--overwrite']):
        r = cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', 's3://mixed/out',
                '--quiet', *extra,
                check=False, env={**env, 'DFLASH_NB_CACHE': machine(tmp_path/'cache')})
        assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert 's3://mixed/out' in r.stderr and '3 objects' in r.stderr
        assert ('no dataset written by dflash-nb' in r.stderr) == bool(extra)
        assert keys(c, 'mixed', 'out/') == mine  # nothing deleted, nothing added

def test_s3_overwrite_deletes_only_what_the_old_commit_names(env, server, tmp_path, capsys):
    "23.1: --overwrite replaces the dataset: the old run's objects go, other objects and unfinished runs' folders stay."
    c = s3_client(server.endpoint); c.create_bucket(Bucket='owned')
    url = 's3://owned/ds'
    upload_dir(real_dataset(tmp_path/'a', 3, 'a'), url, client=c, progress=False)
    old = set(keys(c, 'owned', 'ds/runs/'))
    others = {'ds/notes.txt': b'not the dataset', 'ds/runs/20260101T000000Z-99-abcdef/x.arrow': b'a writer at work'}
    for k, v in others.items(): c.put_object(Bucket='owned', Key=k, Body=v)
    upload_dir(real_dataset(tmp_path/'b', 4, 'b'), url, client=c, progress=False)
    now = keys(c, 'owned', 'ds/')
    assert all(now.get(k) == v for k, v in others.items()) and not old & set(now)
    assert '1 object(s) of unfinished uploads remain' in capsys.readouterr().err
    assert load_s3(url, server)['sample_id'] == [f'b-{i}' for i in range(4)]
    n = len(now) - 1  # (an unfinished run's folder is not counted: it may be a writer at work)
    with pytest.raises(FileExistsError, match=rf'already exists \({n} objects, a dataset\).*--overwrite'):
        with staged_output(url, client=c, progress=False, overwrite=False): pass

@pytest.mark.parametrize('command', ['tokenize', 'merge', 'export'])
def test_local_overwrite_of_a_folder_that_is_not_ours_is_refused(qwen_dir, tokenized, tmp_path, command):
    """23.1: `--overwrite` of a local folder that is no dataset this project wrote (no manifest.json) is refused; its
    files stay."""
    out = tmp_path/'photos'; out.mkdir(); (out/'holiday.jpg').write_bytes(b'\xff\xd8 precious')
    args = {'tokenize': ['tokenize', '--model-path', qwen_dir, '--completions', SAMPLES],
            'merge': ['merge', '--existing', tokenized/'ex', '--new', tokenized/'nb'],
            'export': ['export', tokenized/'ex', '--format', 'speculators']}[command]
    r = cli(*args, '--output-dir', out, '--overwrite', '--quiet' if command != 'export' else '--overwrite', check=False)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert 'not a dataset' in r.stderr and str(out) in r.stderr
    assert sorted(p.name for p in out.iterdir()) == ['holiday.jpg'] and (
        out/'holiday.jpg').read_bytes() == b'\xff\xd8 precious'
    if command == 'export':  # a view export wrote is replaced by --overwrite
        cli('export', tokenized/'ex', '--format', 'speculators', '--output-dir', tmp_path/'view')
        cli('export', tokenized/'ex', '--format', 'speculators', '--output-dir', tmp_path/'view', '--overwrite')

# ------------------------------------------------------------------------------------------------ 2. one committer wins

@pytest.mark.parametrize('fresh', [True, False], ids=['new-output', 'overwrite'])
def test_two_writers_on_two_machines_one_commits(tokenized, env, server, tmp_path, fresh):
    """23.2: two real `dflash-nb merge` processes (two cache folders, as on two machines) into one s3:// output; the
    proxy holds each commit PUT until both have arrived. Exactly one exits 0; the other fails in one line and leaves
    nothing of its own; the dataset there is the winner's, whole (downloaded, counted, opened by `datasets`)."""
    c = s3_client(server.endpoint); bucket = f'race{int(fresh)}'; c.create_bucket(Bucket=bucket)
    url = f's3://{bucket}/out'
    if not fresh: upload_dir(tokenized/'ex', url, client=c, progress=False)
    proxy = Proxy(server.port)
    gate = proxy.rule(rf'^PUT /{bucket}/out/manifest\.json', barrier=2, timeout=60)
    procs = []
    for i in range(2):
        e = {**env, 'AWS_ENDPOINT_URL': proxy.endpoint, 'DFLASH_NB_CACHE': machine(tmp_path/f'machine{i}')}
        procs.append(subprocess.Popen([str(EXE), 'merge', '--existing', str(tokenized/'ex'), '--new',
                                       str(tokenized/'nb'),
                                       '--output-dir', url, '--quiet', *([] if fresh else ['--overwrite'])],
                                      env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=300) for p in procs]
    rcs = [p.returncode for p in procs]
    assert sorted(rcs) == [0, 1] and gate['arrived'] == 2, (rcs, outs)
    win, lose = (procs[0], procs[1]) if rcs[0] == 0 else (procs[1], procs[0])
    err = outs[procs.index(lose)][1].strip()
    assert len(err.splitlines()) == 1 and url in err and 'another writer committed' in err, err
    run = c.head_object(Bucket=bucket, Key='out/manifest.json')['Metadata']['dflash-data-prefix']
    assert f'-{win.pid}-' in run  # the winner's run is committed
    folders = {k.split('/')[2] for k in keys(c, bucket, 'out/runs/')}
    assert folders == {run.split('/')[1]}  # the loser's upload is gone, and so is the old dataset's (overwrite)
    got = download_dir(url, tmp_path/'got', client=c, progress=False)
    stats = json.loads((got/'stats.json').read_text())
    ds = load_s3(url, server)
    assert len(ds) == stats['samples'] > 0 and sum(ds['seq_len']) == stats['total_tokens']

# ------------------------------------------------------------------------------------------------ 4. the layout

def test_s3_output_opens_with_load_from_disk_and_as_a_plain_copy(env, server, tmp_path):
    """23.4: a committed s3:// output is a dataset directory: load_from_disk through s3fs, and a plain copy of the
    prefix."""
    import datasets
    from dflash_nb.dataset import dataset_stats, open_dataset
    c = s3_client(server.endpoint); c.create_bucket(Bucket='layout')
    url = 's3://layout/ds'
    for n, tag in ((3, 'a'), (6, 'b')):  # a new output, then an overwrite
        upload_dir(real_dataset(tmp_path/tag, n, tag), url, client=c, progress=False)
        want = [f'{tag}-{i}' for i in range(n)]
        assert load_s3(url, server)['sample_id'] == want
        copy = plain_copy(c, 'layout', 'ds', tmp_path/f'copy-{tag}')
        assert datasets.load_from_disk(str(copy))['sample_id'] == want
        assert dataset_stats(open_dataset(copy))['tag'] == tag  # this project's reader: the run folder, stats and all
        assert json.loads((copy/'manifest.json').read_text())['tag'] == tag

def test_earlier_layout_reads_and_is_replaced(env, server, tmp_path):
    """23.4: an output of the earlier layout (manifest metadata -> runs/RUN/, no root state.json) reads, and an
    overwrite replaces it."""
    c = s3_client(server.endpoint); c.create_bucket(Bucket='early')
    old = real_dataset(tmp_path/'old', 2, 'old')
    run = 'runs/20250101T000000Z-1-000000/'
    for p in old.rglob('*'):
        if p.is_file() and p.name != 'manifest.json': c.put_object(Bucket='early', Key=f'ds/{run}{p.relative_to(old)}',
                                                                   Body=p.read_bytes())
    c.put_object(Bucket='early', Key='ds/manifest.json', Body=(old/'manifest.json').read_bytes(),
                 Metadata={'dflash-data-prefix': run})
    got = download_dir('s3://early/ds', tmp_path/'got', client=c, progress=False)
    assert json.loads((got/'stats.json').read_text())['tag'] == 'old' and json.loads((got/'manifest.json').read_text())[
        'tag'] == 'old'
    upload_dir(real_dataset(tmp_path/'new', 3, 'new'), 's3://early/ds', client=c, progress=False)
    assert not any(k.startswith(f'ds/{run}') for k in keys(c, 'early', 'ds/'))
    assert load_s3('s3://early/ds', server)['sample_id'] == ['new-0', 'new-1', 'new-2']

# ------------------------------------------------------------------------------------------------ 18. an HTML endpoint,
# stale stages

def test_endpoint_answering_html_is_not_an_s3_listing(qwen_dir, env, tmp_path):
    "23.18: an endpoint that answers a listing with an HTML page (200) is named as such, not 'no completions'."
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    class Login(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            b = b'<!DOCTYPE html><html><body><form>Sign in</form></body></html>'
            self.send_response(200); self.send_header('Content-Type', 'text/html; charset=utf-8')
            self.send_header('Content-Length', str(len(b))); self.end_headers(); self.wfile.write(b)
        do_HEAD = do_GET
    httpd = ThreadingHTTPServer(('127.0.0.1', 0), Login)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    ep = f'http://127.0.0.1:{httpd.server_address[1]}'
    try:
        with pytest.raises(StorageError, match='not an S3 listing') as e: list_objects('s3://bkt/x', None,
                                                                                       s3_client(ep))
        assert 'answered HTML' in str(e.value) and '--s3-endpoint' in str(e.value)
        r = cli('tokenize', '--model-path', qwen_dir, '--completions', 's3://bkt/completions', '--output-dir',
                tmp_path/'o',
                '--quiet', '--s3-endpoint', ep, check=False, env={**env, 'DFLASH_NB_CACHE': machine(tmp_path/'cache')})
        assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert 's3://bkt/completions' in r.stderr and 'not an S3 listing (the endpoint' in r.stderr
        assert 'HTML' in r.stderr
    finally: httpd.shutdown(); httpd.server_close()

def test_killed_s3_merge_leaves_no_stage_for_ever(tokenized, env, server, tmp_path, monkeypatch):
    """23.18: a `merge` to s3:// killed (kill -9) while uploading leaves /tmp/dflash-stage-*; the next staged run
    removes it."""
    import tempfile
    c = s3_client(server.endpoint); c.create_bucket(Bucket='stages')
    tmp = tmp_path/'tmp'; tmp.mkdir()
    proxy = Proxy(server.port)
    proxy.rule(r'^PUT /stages/out/manifest\.json', delay=120)  # the commit hangs: the stage is there, full
    p = subprocess.Popen([str(EXE), 'merge', '--existing', str(tokenized/'ex'), '--new', str(tokenized/'nb'),
                          '--output-dir',
                          's3://stages/out', '--quiet'], env={**env, 'AWS_ENDPOINT_URL': proxy.endpoint,
                                                              'TMPDIR': str(tmp),
                                                              'DFLASH_NB_CACHE': machine(tmp_path/'cache')},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not any(l.startswith('PUT /stages/out/manifest.json') for l
                  in proxy.seen) and p.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    stages = list(tmp.glob('dflash-stage-*'))
    assert p.poll() is None and len(stages) == 1 and any(
        stages[0].rglob('*.arrow')), "the merge did not reach its commit"
    p.send_signal(signal.SIGKILL); p.wait()
    assert stages[0].exists()  # nothing else would ever remove it
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp))
    with staged_output('s3://stages/other', client=c, progress=False) as d:
        assert not stages[0].exists() and d.parent == tmp  # removed before this run's work; this run's own stage is not
        (d/'manifest.json').write_text('{}')
    assert list(tmp.iterdir()) == []
