"Issue 15.9: train checks what it reads (row counts vs manifest/stats, id range, the shard named in read errors)."
import json, shutil
from pathlib import Path
import numpy as np, pyarrow as pa, pytest
from conftest import ROOT

torch = pytest.importorskip('torch')
from dflash_nb.tokenize import tokenize_dataset
from dflash_nb.train import train, train_args

@pytest.fixture(scope='module')
def dataset(qwen_dir, tmp_path_factory):
    "A real tokenized dataset of 48 samples in record batches of 16 (one shard)."
    d = tmp_path_factory.mktemp('ds')
    src = d/'c.jsonl'
    src.write_text(''.join(json.dumps({'id': f's{i}', 'messages': [{'role': 'user', 'content': f'Count to {i}.'},
                   {'role': 'assistant', 'content': ' '.join(map(str, range(1, i + 3)))}]}) + '\n' for i in range(48)))
    tokenize_dataset(qwen_dir, src, d/'ds', batch_size=16, progress=False)
    assert json.loads((d/'ds'/'stats.json').read_text())['samples'] == 48
    return d/'ds'

def rewrite(ds: Path, dst: Path, fn):
    "A copy of `ds` whose one shard is `fn(table)`, or `fn(bytes)` when fn takes bytes."
    shutil.copytree(ds, dst)
    shard = next(dst.glob('data-*.arrow'))
    t = pa.ipc.open_stream(shard.read_bytes()).read_all()
    out = fn(t, shard.read_bytes())
    if isinstance(out, bytes): shard.write_bytes(out); return dst
    with pa.ipc.new_stream(str(shard), t.schema) as w:
        for b in out: w.write_batch(b)
    return dst

def refused(ds, tmp_path) -> str:
    with pytest.raises(ValueError) as e:
        train(train_args(dataset=str(ds), target='tiny', output_dir=str(tmp_path/'run'), max_steps=1, quiet=True, device='cpu'))
    assert not (tmp_path/'run'/'summary.json').exists()
    return str(e.value)

def test_shard_cut_at_a_batch_boundary(dataset, tmp_path):
    ds = rewrite(dataset, tmp_path/'cut', lambda t, raw: t.to_batches()[:1])
    assert pa.ipc.open_stream(str(next(ds.glob('data-*.arrow')))).read_all().num_rows == 16  # reads without error
    msg = refused(ds, tmp_path)  # the manifest records the shard's size: the cut shard is named on opening
    assert f"{next(ds.glob('data-*.arrow'))}: " in msg and 'bytes but' in msg and 'manifest.json records' in msg and '(cut short)' in msg, msg

def test_negative_id(dataset, tmp_path):
    def neg(t, raw):
        ids = t.column('input_ids').combine_chunks()
        vals = ids.values.to_numpy().copy(); vals[5] = -3
        col = pa.ListArray.from_arrays(ids.offsets, pa.array(vals, pa.int32()))
        return t.set_column(0, t.schema.field(0), col).to_batches()
    msg = refused(rewrite(dataset, tmp_path/'neg', neg), tmp_path)
    assert 'token ids span [-3,' in msg

def test_corrupt_shard_is_named(dataset, tmp_path):
    ds = rewrite(dataset, tmp_path/'bad', lambda t, raw: raw[:len(raw) // 2])
    msg = refused(ds, tmp_path)
    assert str(next(ds.glob('data-*.arrow'))) in msg and '(cut short)' in msg and len(msg.splitlines()) == 1
    man = json.loads((ds/'manifest.json').read_text()); del man['shards']; (ds/'manifest.json').write_text(json.dumps(man))
    msg = refused(ds, tmp_path)  # a dataset without per-shard records: the read error names the shard
    assert str(next(ds.glob('data-*.arrow'))) in msg and 'cannot be read' in msg and len(msg.splitlines()) == 1, msg

def _fill(path, sign: int, n: int, width: int):
    "One writer process: `n` samples with features only it writes (sign x (i mod 200 + 1), exact in bfloat16)."
    from dflash_nb.train import FeatureCache
    c = FeatureCache(path, [0], width, 'fp')
    for i in range(n): c.put(f"{sign}:{i}", torch.full((1 + i % 5, width), float(sign * (i % 200 + 1))))

def test_feature_cache_shared_by_concurrent_writers(tmp_path):
    "Two runs (or ranks) appending to one --feature-cache while a third opens it: every entry reads back as written."
    import multiprocessing as mp
    from dflash_nb.train import FeatureCache
    ctx, n, width = mp.get_context('fork'), 300, 4
    procs = [ctx.Process(target=_fill, args=(tmp_path/'fc', s, n, width)) for s in (1, -1)]
    for p in procs: p.start()
    while any(p.is_alive() for p in procs): FeatureCache(tmp_path/'fc', [0], width, 'fp')   # opening trims a crashed tail
    assert [p.exitcode for p in procs] == [0, 0]
    c = FeatureCache(tmp_path/'fc', [0], width, 'fp')
    assert len(c) == 2 * n
    for s in (1, -1):
        for i in range(n): assert torch.equal(c.get(f"{s}:{i}"), torch.full((1 + i % 5, width), float(s * (i % 200 + 1)))), (s, i)
    assert (tmp_path/'fc'/'features.bf16').stat().st_size == c.tokens * width * 2

def test_feature_cache_after_a_kill_mid_append(tmp_path):
    "A run killed between its features and its index line (or mid-line): reopening drops both; later appends read back."
    from dflash_nb.train import FeatureCache
    c = FeatureCache(tmp_path, [0], 4, 'fp')
    c.put('a', torch.ones(3, 4))
    with open(tmp_path/'features.bf16', 'ab') as f: f.write(b'\0' * 8 * 5)          # 5 rows of features, no index line
    with open(tmp_path/'index.tsv', 'a') as f: f.write('b\t3\t5')                    # its line, cut before the newline
    c = FeatureCache(tmp_path, [0], 4, 'fp')
    assert (len(c), c.tokens, (tmp_path/'features.bf16').stat().st_size) == (1, 3, 3 * 8)
    assert (tmp_path/'index.tsv').read_text() == 'a\t0\t3\n'
    c.put('b', torch.full((2, 4), 2.0))
    c = FeatureCache(tmp_path, [0], 4, 'fp')
    assert torch.equal(c.get('a'), torch.ones(3, 4)) and torch.equal(c.get('b'), torch.full((2, 4), 2.0))
