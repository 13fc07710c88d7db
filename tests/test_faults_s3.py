"S3 faults against a real S3 protocol server on loopback (moto): provenance, credentials in endpoint URLs (issue 15.11)."
import os
from pathlib import Path
import pytest
from dflash_nb.storage import MotoServer, StorageError, download_objects, free_port, list_objects, s3_client
from conftest import ROOT, cli

@pytest.fixture(scope='module')
def server():
    with MotoServer() as srv: yield srv

@pytest.fixture
def env(server, tmp_path, monkeypatch):
    for k in list(os.environ):
        if k.startswith('AWS_'): monkeypatch.delenv(k)
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', 'testing'); monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', 'testing')
    monkeypatch.setenv('AWS_DEFAULT_REGION', 'us-east-1'); monkeypatch.setenv('AWS_ENDPOINT_URL', server.endpoint)
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    return dict(os.environ)

def test_object_replaced_between_listing_and_get_is_refused(env, server, tmp_path):
    "What is read must be what the manifest records: a GET that returns another ETag than the listing fails, naming it."
    c = s3_client(server.endpoint); c.create_bucket(Bucket='prov')
    c.put_object(Bucket='prov', Key='in/a.jsonl', Body=b'{"id": "old"}\n')
    it = download_objects('s3://prov/in', tmp_path/'cache', client=c, progress=False)  # listed now; GETs start when read
    c.put_object(Bucket='prov', Key='in/a.jsonl', Body=b'{"id": "new, replaced after the listing"}\n')
    with pytest.raises(StorageError, match='changed after it was listed') as e: list(it)
    assert 's3://prov/in/a.jsonl' in str(e.value)
    got = list(download_objects('s3://prov/in', tmp_path/'cache', client=c, progress=False))  # a fresh listing reads the new one
    assert b'replaced' in got[0][1].read_bytes()

def test_credentials_in_endpoint_url_are_never_echoed(qwen_dir, env, tmp_path):
    "An endpoint URL with user:secret@ in it: errors name the endpoint with the credentials redacted."
    ep = f"http://AKIAEXAMPLE:topsecret123@127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(StorageError) as e: list_objects('s3://b/x', None, s3_client(ep, max_attempts=2))
    assert 'topsecret123' not in str(e.value) and 'AKIAEXAMPLE' not in str(e.value) and '***@127.0.0.1' in str(e.value)
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', 's3://b/x', '--output-dir', tmp_path/'o', '--quiet',
            '--s3-endpoint', ep, check=False, env={**env, 'AWS_MAX_ATTEMPTS': '2'})
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert 'topsecret123' not in r.stderr + r.stdout and '***@127.0.0.1' in r.stderr
    with pytest.raises(StorageError) as e: s3_client("http://u:topsecret123@[bad")
    assert 'topsecret123' not in str(e.value)
