"tokenize from s3:// to s3:// through a real S3 protocol server on loopback (moto's server mode)."
import json, os
from pathlib import Path
import pyarrow as pa, pytest
from dflash_nb.storage import download_dir, s3_client
from conftest import ROOT, cli

SAMPLES = ROOT/'data'/'samples'

def table(d: Path):
    return pa.concat_tables([pa.ipc.open_stream(str(f)).read_all() for f in sorted(d.glob('data-*.arrow'))])

def test_s3_to_s3_equals_local(qwen_dir, tmp_path, env, server):
    c = s3_client(server.endpoint); c.create_bucket(Bucket='data')
    for f in sorted(SAMPLES.glob('*.jsonl')): c.upload_file(str(f), 'data', f'completions/{f.name}')
    local = tmp_path/'local'
    cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', local, '--quiet', '--workers',
        '2', env=env)
    cli('tokenize', '--model-path', qwen_dir, '--completions', 's3://data/completions', '--output-dir',
        's3://data/datasets/v1',
        '--quiet', '--workers', '2', env=env)
    got = tmp_path/'got'
    download_dir('s3://data/datasets/v1', got, client=c, progress=False)
    assert table(got).equals(table(local))
    assert (got/'skipped.jsonl').read_text() == (local/'skipped.jsonl').read_text()
    st = lambda d: {k: v for k, v in json.loads((d/'stats.json').read_text()).items() if k
                    not in ('seconds', 'tokens_per_second')}
    assert st(got) == st(local)
    man = json.loads((got/'manifest.json').read_text())
    assert man['inputs']['completions'] == 's3://data/completions' and all('etag' in f for f in man['inputs']['files'])
    # a second run to the same prefix is refused, like a local output that exists
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', 's3://data/completions', '--output-dir',
            's3://data/datasets/v1',
            '--quiet', check=False, env=env)
    assert r.returncode == 1 and 's3://data/datasets/v1' in r.stderr and 'already exists' in r.stderr

def test_missing_bucket_is_one_line_naming_the_url(qwen_dir, tmp_path, env):
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', 's3://no-such-bucket/x', '--output-dir',
            tmp_path/'o',
            '--quiet', check=False, env=env)
    assert r.returncode == 1 and 's3://no-such-bucket' in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path/'o').exists()

def test_merge_s3_inputs_and_output_equal_local(qwen_dir, tmp_path, env, server):
    c = s3_client(server.endpoint); c.create_bucket(Bucket='mrg')
    files = sorted(SAMPLES.glob('*.jsonl'))
    (tmp_path/'a').mkdir(); (tmp_path/'b').mkdir()
    for f in files[:2]: (tmp_path/'a'/f.name).write_bytes(f.read_bytes())
    for f in files[2:]: (tmp_path/'b'/f.name).write_bytes(f.read_bytes()); c.upload_file(str(f), 'mrg', f'new/{f.name}')
    cli('tokenize', '--model-path', qwen_dir, '--completions', tmp_path/'a', '--output-dir', tmp_path/'ex', '--quiet',
        env=env)
    cli('tokenize', '--model-path', qwen_dir, '--completions', tmp_path/'a', '--output-dir', 's3://mrg/ex', '--quiet',
        env=env)
    cli('merge', '--existing', tmp_path/'ex', '--new', tmp_path/'b', '--output-dir', tmp_path/'merged', '--quiet',
        env=env)
    cli('merge', '--existing', 's3://mrg/ex', '--new', 's3://mrg/new', '--output-dir', 's3://mrg/merged', '--quiet',
        env=env)
    got = tmp_path/'got'
    download_dir('s3://mrg/merged', got, client=c, progress=False)
    assert table(got).equals(table(tmp_path/'merged'))
    st = lambda d: {k: v for k, v in json.loads((d/'stats.json').read_text()).items() if k
                    not in ('seconds', 'tokens_per_second')}
    assert st(got) == st(tmp_path/'merged')

def test_stats_and_inspect_read_s3_datasets(qwen_dir, tmp_path, env, server):
    c = s3_client(server.endpoint); c.create_bucket(Bucket='reads')
    cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', tmp_path/'local', '--quiet',
        env=env)
    cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', 's3://reads/ds', '--quiet',
        env=env)
    local = json.loads(cli('stats', tmp_path/'local', '--quiet', env=env).stdout)
    remote = json.loads(cli('stats', 's3://reads/ds', '--quiet', env=env).stdout)
    for k in ('samples', 'total_tokens', 'loss_tokens', 'p90_seq_len', 'sources', 'skipped', 'records_read'):
        assert remote[k] == local[k], k
    r = cli('inspect', 's3://reads/ds', '--quiet', check=False, env=env)
    assert r.returncode == 0 and 'QUALITY GATES' in r.stdout
    # an incomplete dataset (no manifest.json: an upload that never finished) is refused with the URL named
    c.put_object(Bucket='reads', Key='half/data-00000-of-00001.arrow', Body=b'x')
    r = cli('stats', 's3://reads/half', '--quiet', check=False, env=env)
    assert r.returncode == 1 and 's3://reads/half' in r.stderr and 'manifest.json' in r.stderr
