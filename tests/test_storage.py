"""dflash_nb.storage against a real S3 protocol server (moto's server mode, a subprocess on loopback).

Covers listing and pagination, parallel and streaming downloads, the ETag cache, retries of corrupted or
truncated bodies, the upload commit protocol, killing the server mid-download, and the one-line errors for a
missing bucket, rejected credentials, denied access and an unreachable endpoint.
"""
import hashlib, io, json, os, threading, time, uuid
from pathlib import Path

import boto3
import pytest
from botocore.response import StreamingBody

from dflash_nb.testing import MotoServer, free_port
from dflash_nb.storage import (S3Object, StorageError, InvalidS3URL, download_dir, download_objects,
                               is_s3_url, list_objects, s3_client, split_s3_url,
                               staged_output, upload_dir)

pytest.importorskip("moto")


# ---------------------------------------------------------------- fixtures

@pytest.fixture(autouse=True)
def aws_env(monkeypatch, tmp_path_factory):
    "Fake credentials, and no trace of a real AWS configuration from the machine."
    empty = tmp_path_factory.mktemp("aws")
    for k in list(os.environ):
        if k.startswith("AWS_"): monkeypatch.delenv(k)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture(scope="module")
def server():
    with MotoServer() as srv: yield srv


@pytest.fixture
def client(server, aws_env):
    return s3_client(server.endpoint, workers=16)


@pytest.fixture
def bucket(client):
    name = f"b-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return name


def put_many(client, bucket, prefix, n, size=lambda i: 1000 + 37 * i, suffix=".jsonl"):
    "Put n objects with deterministic contents; return {key: bytes}."
    out = {}
    for i in range(n):
        key = f"{prefix}part-{i:04d}{suffix}"
        data = (json.dumps({"i": i}) + "\n").encode() * (size(i) // 9 + 1)
        client.put_object(Bucket=bucket, Key=key, Body=data)
        out[key] = data
    return out


def count_calls(client, op):
    "A list that grows by one entry (the key) per call of `op` made through `client`."
    calls = []
    client.meta.events.register(f"before-parameter-build.s3.{op}", lambda params, **kw: calls.append(params.get("Key")))
    return calls


def no_part_files(root: Path):
    return [p for p in Path(root).rglob("*.part")] == []


def one_line(e: Exception):
    return "\n" not in str(e)


# ---------------------------------------------------------------- URLs and the client

def test_urls():
    assert is_s3_url("s3://b/x") and not is_s3_url("/tmp/x") and not is_s3_url(Path("s3://b/x"))
    assert split_s3_url("s3://bucket/a/b/") == ("bucket", "a/b/")
    with pytest.raises(InvalidS3URL, match="not an s3:// URL"): split_s3_url("http://x/y")
    with pytest.raises(ValueError, match="not a valid bucket name"): split_s3_url("s3://")


def test_client_config(monkeypatch):
    c = s3_client("http://127.0.0.1:1", workers=64)
    assert c.meta.config.max_pool_connections == 68
    assert c.meta.config.retries == {"mode": "adaptive", "total_max_attempts": 8}
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")  # the user's own setting wins
    monkeypatch.setenv("AWS_RETRY_MODE", "standard")
    c = s3_client("http://127.0.0.1:1")
    assert c.meta.config.retries == {"mode": "standard", "total_max_attempts": 3}


def test_endpoint_from_environment(server, bucket, client, monkeypatch, tmp_path):
    src = put_many(client, bucket, "env/", 3)
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint)  # boto3 honours it natively
    c = s3_client()
    assert c.meta.endpoint_url == server.endpoint
    assert [o.key for o in list_objects(f"s3://{bucket}/env")] == sorted(src)
    got = dict(download_objects(f"s3://{bucket}/env/", tmp_path, progress=False))  # client=None: all from env
    assert {k: p.read_bytes() for k, p in got.items()} == {k[4:]: v for k, v in src.items()}


# ---------------------------------------------------------------- listing

def test_list_pagination_and_scope(bucket, client):
    src = put_many(client, bucket, "data/", 7)
    put_many(client, bucket, "data/", 2, suffix=".txt")
    put_many(client, bucket, "data2/", 2)
    client.put_object(Bucket=bucket, Key="data/sub/deep.jsonl", Body=b"{}\n")
    pages = count_calls(client, "ListObjectsV2")
    objs = list_objects(f"s3://{bucket}/data", client=client, page_size=3)
    assert len(pages) == 4  # 10 keys under data/ in pages of 3
    assert [o.key for o in objs] == sorted([*src, "data/sub/deep.jsonl"])
    first = objs[0]
    assert first == S3Object(first.key, len(src[first.key]), hashlib.md5(src[first.key]).hexdigest())
    assert len(list_objects(f"s3://{bucket}/data/", suffixes=None, client=client)) == 10
    assert [o.key for o in list_objects(f"s3://{bucket}/data/part-0003.jsonl", client=client)] == [
        "data/part-0003.jsonl"]
    assert list_objects(f"s3://{bucket}/nothing/", client=client) == []


# ---------------------------------------------------------------- downloads

def test_parallel_download_equals_source(bucket, client, tmp_path):
    src = put_many(client, bucket, "c/", 40, size=lambda i: 500 + 997 * i)
    client.put_object(Bucket=bucket, Key="c/big.jsonl", Body=os.urandom(2_500_000))  # several 1 MiB chunks
    src["c/big.jsonl"] = client.get_object(Bucket=bucket, Key="c/big.jsonl")["Body"].read()
    st = {}
    got = list(download_objects(f"s3://{bucket}/c", tmp_path, workers=8, client=client, progress=True, stats=st))
    assert [k for k, _ in got] == sorted(k[2:] for k in src)  # key order, relative to the URL
    for rel, path in got:
        assert path == tmp_path / bucket / "c" / rel
        assert path.read_bytes() == src["c/" + rel]
    assert st["downloaded"] == 41 and st["skipped"] == 0 and st["bytes"] == sum(map(len, src.values()))
    assert no_part_files(tmp_path)


def test_streaming_yields_before_everything_is_down(bucket, client, tmp_path):
    "The first objects are yielded while a later one is still blocked: tokenization need not wait."
    put_many(client, bucket, "s/", 8)
    release, last = threading.Event(), "s/part-0007.jsonl"
    def block_last(params, **kw):
        if params["Key"] == last: assert release.wait(10), "streaming did not yield before the last object"
    client.meta.events.register("before-parameter-build.s3.GetObject", block_last)
    it = download_objects(f"s3://{bucket}/s/", tmp_path, workers=4, client=client, progress=False)
    seen = [next(it)[0] for _ in range(7)]  # would deadlock (until the 10 s guard) without streaming
    assert seen == [f"part-{i:04d}.jsonl" for i in range(7)]
    assert not (tmp_path / bucket / last).exists()
    release.set()
    assert next(it)[0] == "part-0007.jsonl"
    assert list(it) == []


def test_streaming_keeps_key_order_when_early_keys_are_slow(bucket, client, tmp_path):
    put_many(client, bucket, "o/", 12)
    def slow_early(params, **kw):
        if params["Key"] < "o/part-0004": time.sleep(0.15)
    client.meta.events.register("before-parameter-build.s3.GetObject", slow_early)
    got = [k for k, _ in download_objects(f"s3://{bucket}/o", tmp_path, workers=6, client=client, progress=False)]
    assert got == sorted(got) and len(got) == 12


def test_second_run_downloads_nothing(bucket, client, tmp_path):
    put_many(client, bucket, "k/", 10)
    list(download_objects(f"s3://{bucket}/k", tmp_path, client=client, progress=False))
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / bucket).rglob("*.jsonl")}
    gets, st = count_calls(client, "GetObject"), {}
    again = list(download_objects(f"s3://{bucket}/k", tmp_path, client=client, progress=False, stats=st))
    assert len(again) == 10 and gets == [] and st["downloaded"] == 0 and st["skipped"] == 10
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / bucket).rglob("*.jsonl")} == mtimes


def test_changed_or_tampered_object_is_downloaded_again(bucket, client, tmp_path):
    src = put_many(client, bucket, "ch/", 6)
    url = f"s3://{bucket}/ch"
    list(download_objects(url, tmp_path, client=client, progress=False))
    # same size, different bytes: only the ETag tells
    key = "ch/part-0002.jsonl"
    new = src[key].replace(b'"i": 2', b'"i": 9')
    assert len(new) == len(src[key])
    client.put_object(Bucket=bucket, Key=key, Body=new)
    # and a cached file edited locally (same size)
    local = tmp_path / bucket / "ch/part-0004.jsonl"
    local.write_bytes(local.read_bytes().replace(b"4", b"5"))
    gets, st = count_calls(client, "GetObject"), {}
    got = dict(download_objects(url, tmp_path, client=client, progress=False, stats=st))
    assert sorted(gets) == [key, "ch/part-0004.jsonl"] and st["skipped"] == 4
    assert got["part-0002.jsonl"].read_bytes() == new
    assert got["part-0004.jsonl"].read_bytes() == src["ch/part-0004.jsonl"]


class Flaky:
    "A client whose GetObject returns a corrupted or truncated body for the first `bad[key]` calls."
    def __init__(self, real, bad, mode):
        self._real, self.bad, self.mode = real, dict(bad), mode
    def __getattr__(self, name): return getattr(self._real, name)
    def get_object(self, **kw):
        r = self._real.get_object(**kw)
        if self.bad.get(kw["Key"], 0) > 0:
            self.bad[kw["Key"]] -= 1
            data = r["Body"].read()
            bad = bytes([data[0] ^ 1]) + data[1:] if self.mode == "flip" else data[:-5]
            r["Body"] = StreamingBody(io.BytesIO(bad), len(data))
        return r


@pytest.mark.parametrize("mode", ["flip", "truncate"])
def test_bad_bodies_are_retried(bucket, client, tmp_path, mode):
    src = put_many(client, bucket, "f/", 5)
    flaky = Flaky(client, {"f/part-0001.jsonl": 2, "f/part-0003.jsonl": 1}, mode)
    st = {}
    got = dict(download_objects(f"s3://{bucket}/f", tmp_path, client=flaky, progress=False, backoff=0.01, stats=st))
    assert st["retries"] == 3
    assert {k: p.read_bytes() for k, p in got.items()} == {k[2:]: v for k, v in src.items()}
    assert no_part_files(tmp_path)


def test_persistently_bad_body_is_a_clean_error(bucket, client, tmp_path):
    put_many(client, bucket, "p/", 5)
    flaky = Flaky(client, {"p/part-0002.jsonl": 99}, "flip")
    with pytest.raises(StorageError) as ei:
        list(download_objects(f"s3://{bucket}/p", tmp_path, client=flaky, progress=False, retries=2, backoff=0.01))
    msg = str(ei.value)
    assert one_line(ei.value) and msg.startswith(
        f"s3://{bucket}/p/part-0002.jsonl: download failed verification after 3")
    assert not (tmp_path / bucket / "p/part-0002.jsonl").exists() and no_part_files(tmp_path)


def test_permanent_error_names_the_object_and_stops(bucket, client, tmp_path):
    put_many(client, bucket, "m/", 30)
    it = download_objects(f"s3://{bucket}/m", tmp_path, workers=2, client=client, progress=False)
    client.delete_object(Bucket=bucket, Key="m/part-0005.jsonl")  # listed, then gone
    gets = count_calls(client, "GetObject")
    with pytest.raises(StorageError) as ei: list(it)
    assert str(ei.value).startswith(f"s3://{bucket}/m/part-0005.jsonl: no such object") and one_line(ei.value)
    time.sleep(0.3)
    assert len(gets) < 30  # the rest was cancelled
    assert no_part_files(tmp_path)


# ---------------------------------------------------------------- uploads and the commit protocol

def make_dataset(root: Path, shards: int = 3, big: int = 0) -> Path:
    (root / "train").mkdir(parents=True, exist_ok=True)
    for i in range(shards): (root / f"train/data-{i:05d}-of-{shards:05d}.arrow").write_bytes(os.urandom(5000 + i))
    if big: (root / "train/big.arrow").write_bytes(os.urandom(big))
    (root / "stats.json").write_text('{"samples": 3}')
    (root / "manifest.json").write_text(json.dumps({"shards": shards}))
    return root


def tree(root: Path):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".s3meta" not in p.parts}


def test_upload_dir_commits_last_and_roundtrips(server, bucket, tmp_path):
    client = s3_client(server.endpoint)
    ds = make_dataset(tmp_path / "ds", big=6 * 1024 * 1024)  # > chunksize: multipart
    # an older commit (the first layout: beside it)
    client.put_object(Bucket=bucket, Key="sets/v1/manifest.json", Body=b"{old}")
    client.put_object(Bucket=bucket, Key="sets/v1/state.json",
                      Body=b'{"_data_files": [{"filename": "train/stale.arrow"}]}')
    client.put_object(Bucket=bucket, Key="sets/v1/train/stale.arrow", Body=b"old shard")
    client.put_object(Bucket=bucket, Key="sets/v1/notes.txt", Body=b"not the dataset's: kept")
    order = []
    for op in ("DeleteObjects", "PutObject", "CreateMultipartUpload"):
        client.meta.events.register(f"before-parameter-build.s3.{op}",
                                    lambda params, model, **kw: order.append((model.name, params.get("Key"))))
    keys = upload_dir(ds, f"s3://{bucket}/sets/v1", workers=4, client=client, progress=True,
                      chunksize=5 * 1024 * 1024)
    assert keys[-1] == "sets/v1/manifest.json"
    put = order.index(("PutObject", "sets/v1/manifest.json"))
    # old objects go after the commit
    assert ("DeleteObjects", None) not in order[:put] and order[put + 1:] == [("DeleteObjects", None)]
    assert any(op == "CreateMultipartUpload" and k.startswith("sets/v1/runs/") and k.endswith("/train/big.arrow")
               for op, k in order)
    listed = {o.key for o in list_objects(f"s3://{bucket}/sets/v1", None, client)}
    # only what the old commit listed goes
    assert "sets/v1/train/stale.arrow" not in listed and "sets/v1/notes.txt" in listed
    assert len(listed) == 1 + 1 + 6  # notes.txt, the root manifest, the run folder (3 shards, big, stats, its
                                     # manifest); no root state.json: the new one has none
    out = download_dir(f"s3://{bucket}/sets/v1", tmp_path / "copy", workers=4, client=client, progress=False)
    assert tree(out) == tree(ds)
    st = {}
    download_dir(f"s3://{bucket}/sets/v1", tmp_path / "copy", client=client, progress=False, stats=st)
    assert st["downloaded"] == 0 and st["skipped"] == 6


def test_failed_upload_keeps_the_old_version_readable(server, bucket, tmp_path):
    "Issue 15.5: an overwrite that fails part-way leaves the old dataset complete and readable."
    client = s3_client(server.endpoint, max_attempts=1)
    url = f"s3://{bucket}/sets/v2"
    upload_dir(make_dataset(tmp_path / "v1"), url, client=client, progress=False)
    download_dir(url, tmp_path / "ok", client=client, progress=False)  # committed: fine
    def fail_shard(params, **kw):
        if params["Key"].endswith("data-00001-of-00004.arrow"): raise ConnectionResetError("network gone")
    client.meta.events.register("before-parameter-build.s3.PutObject", fail_shard)
    with pytest.raises(StorageError) as ei:
        upload_dir(make_dataset(tmp_path / "v2", shards=4), url, client=client, progress=False)
    assert "data-00001-of-00004.arrow" in str(ei.value) and one_line(ei.value)
    assert tree(download_dir(url, tmp_path / "after", client=client, progress=False)) == tree(tmp_path / "v1")


def test_upload_refuses_without_commit_file_and_at_bucket_root(bucket, client, tmp_path):
    ds = make_dataset(tmp_path / "ds")
    (ds / "manifest.json").unlink()
    with pytest.raises(StorageError, match="no manifest.json; refusing"):
        upload_dir(ds, f"s3://{bucket}/x", client=client, progress=False)
    with pytest.raises(StorageError, match="root of a bucket"):
        upload_dir(ds, f"s3://{bucket}", client=client, progress=False)


def test_staged_output_and_input_files(bucket, client, tmp_path):
    with staged_output(f"s3://{bucket}/out", client=client, progress=False) as d:
        make_dataset(d)
    assert (tree(download_dir(f"s3://{bucket}/out", tmp_path / "o", client=client, progress=False)).keys()
            == {"manifest.json", "stats.json", *(f"train/data-{i:05d}-of-00003.arrow" for i in range(3))})
    with pytest.raises(RuntimeError):
        with staged_output(f"s3://{bucket}/crashed", client=client, progress=False) as d:
            make_dataset(d); raise RuntimeError("job failed")
    assert list_objects(f"s3://{bucket}/crashed", None, client) == []  # nothing uploaded
    (tmp_path / "local/sub").mkdir(parents=True)
    (tmp_path / "local/b.jsonl").write_text("{}\n"); (tmp_path / "local/sub/a.jsonl").write_text("{}\n")
    (tmp_path / "local/notes.txt").write_text("x")
    from dflash_nb.records import discover_inputs  # (storage.input_files was this, for local sources)
    assert [r for r, _ in discover_inputs(tmp_path / "local").files] == ["b.jsonl", "sub/a.jsonl"]


# ---------------------------------------------------------------- faults: kill the server, bad buckets and credentials

def test_kill_server_mid_download_then_rerun(tmp_path):
    srv = MotoServer().start()
    try:
        def populate():
            c = s3_client(srv.endpoint)
            c.create_bucket(Bucket="kill")
            return put_many(c, "kill", "data/", 40, size=lambda i: 20_000 + i)
        src = populate()
        client = s3_client(srv.endpoint, workers=2, max_attempts=1)  # no botocore retries still in flight later
        client.meta.events.register("before-parameter-build.s3.GetObject", lambda **kw: time.sleep(0.05))
        it = download_objects("s3://kill/data", tmp_path, workers=2, client=client, progress=False, retries=1,
                              backoff=0.05, retry_budget=0.5)  # give up on the dead server after 0.5 s
        for _ in range(5): next(it)
        srv.kill()  # SIGKILL: connections drop, the port refuses
        with pytest.raises(StorageError) as ei: list(it)
        assert ei.value.url.startswith("s3://kill/data/part-") and one_line(ei.value)
        assert "cannot reach the S3 endpoint" in str(ei.value)
        time.sleep(0.5)
        assert no_part_files(tmp_path)
        done_before = len([p for p in (tmp_path / "kill/data").glob("*.jsonl")])
        assert 5 <= done_before < 40
        srv.start()  # same port, empty: moto is in-memory
        assert populate() == src
        st = {}
        got = list(download_objects("s3://kill/data", tmp_path, workers=4, client=client, progress=False, stats=st))
        assert {f"data/{k}": p.read_bytes() for k, p in got} == src
        assert st["skipped"] == done_before and st["downloaded"] == 40 - done_before
    finally:
        srv.kill()


def test_missing_bucket_is_one_line_naming_the_url(client, tmp_path):
    for call in (lambda u: list_objects(u, client=client),
                 lambda u: download_objects(u, tmp_path, client=client),
                 lambda u: download_dir(u, tmp_path / "d", client=client),
                 lambda u: upload_dir(make_dataset(tmp_path / "ds"), u, client=client, progress=False)):
        url = "s3://no-such-bucket-42/completions/"
        with pytest.raises(StorageError) as ei: call(url)
        assert one_line(ei.value) and str(ei.value).startswith(url)
        assert "bucket 'no-such-bucket-42' does not exist" in str(ei.value)


def test_unreachable_endpoint(tmp_path):
    client = s3_client(f"http://127.0.0.1:{free_port()}", max_attempts=2)
    with pytest.raises(StorageError) as ei: list(download_objects("s3://b/c/", tmp_path, client=client))
    assert one_line(ei.value) and str(ei.value).startswith("s3://b/c/: cannot reach the S3 endpoint http://127.0.0.1:")


def test_wrong_credentials_and_denied_access(tmp_path):
    with MotoServer() as srv:
        admin = srv.client()
        admin.create_bucket(Bucket="secure")
        admin.put_object(Bucket="secure", Key="c/a.jsonl", Body=b"{}\n")
        iam = boto3.client("iam", endpoint_url=srv.endpoint, region_name="us-east-1", **srv.credentials)
        def user(name, allow):
            iam.create_user(UserName=name)
            if allow:
                iam.put_user_policy(UserName=name, PolicyName="s3", PolicyDocument=json.dumps({
                    "Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
            k = iam.create_access_key(UserName=name)["AccessKey"]
            return k["AccessKeyId"], k["SecretAccessKey"]
        good, nobody = user("reader", True), user("nobody", False)
        srv.enable_auth()
        url = "s3://secure/c/"
        def client_for(key_id, secret):
            return s3_client(srv.endpoint, max_attempts=1, aws_access_key_id=key_id, aws_secret_access_key=secret)
        ok = dict(download_objects(url, tmp_path, client=client_for(*good), progress=False))
        assert ok["a.jsonl"].read_bytes() == b"{}\n"  # enforcement is on, and real credentials pass
        for creds, expect in [(("AKIAIOSFODNN7EXAMPLE", "wrong"), "the credentials were rejected"),
                              ((good[0], "not-the-secret"), "the credentials were rejected"),
                              (nobody, "access denied")]:
            with pytest.raises(StorageError) as ei:
                download_objects(url, tmp_path / "x", client=client_for(*creds))
            assert one_line(ei.value) and str(ei.value).startswith(url) and expect in str(ei.value), str(ei.value)
        with pytest.raises(StorageError) as ei:
            download_dir(url, tmp_path / "y", client=client_for("AKIAIOSFODNN7EXAMPLE", "wrong"), commit_file=None)
        assert one_line(ei.value) and "s3://secure/c" in str(ei.value)
