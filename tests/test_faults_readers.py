"""Fault tests of the dataset READERS (issue 23: 5, 7, 8, 11, 15): damaged shards named by every reader, `inspect
--verify`, shards outside the folder, JSON files of the wrong shape, a reader during real overwrites in another
process, and an export view on a real tmpfs while its source is replaced."""
import json, os, shutil, subprocess, sys, time
from pathlib import Path
import numpy as np, pyarrow as pa, pytest
from conftest import mounted_tmpfs, cli

from dflash_nb.cli import main as dflash_main
from dflash_nb.dataset import (SCHEMA, dataset_shards, length_stats, record_shards, replace_dir, stream_batches,
                               write_dataset_metadata)

# ------------------------------------------------------------------------------------------------ datasets
def make_ds(out: Path, shards: int = 3, batches: int = 4, rows: int = 10, seed: int = 0, records: bool = True) -> Path:
    """A dataset as tokenize writes it (several shards of several record batches, manifest, stats.json), with random
    rows; `records=False`: an older dataset, whose manifest lists only shard names."""
    rng, out = np.random.default_rng(seed), Path(out)
    out.mkdir(parents=True)
    names, lens, loss, n = [], [], 0, 0
    for s in range(shards):
        names.append(f"data-{s:05d}-of-{shards:05d}.arrow")
        with pa.ipc.new_stream(str(out/names[-1]), SCHEMA) as w:
            for _ in range(batches):
                ls = rng.integers(4, 40, rows)
                ids = [rng.integers(0, 1000, l).tolist() for l in ls]
                mask = [(np.arange(l) >= l // 2).tolist() for l in ls]
                w.write_batch(pa.RecordBatch.from_pylist([dict(input_ids=i, loss_mask=m, seq_len=len(i),
                                                               sample_id=f"s{seed}-{n + k}",
                                                               source='a') for k, (i, m) in enumerate(zip(ids, mask))],
                                                         schema=SCHEMA))
                lens += ls.tolist(); loss += int(sum(map(sum, mask))); n += rows
    write_dataset_metadata(out, names)
    st = length_stats(np.array(lens), loss) | dict(truncated=0, skipped={}, records_read=n, sources={'a': n})
    (out/'stats.json').write_text(json.dumps(st))
    (out/'manifest.json').write_text(json.dumps(dict(
        format='dflash_nb.dataset', format_version=1, tokenizer={'fingerprint': 'fp', 'vocab_size': 1000},
                                                     params={'max_seq_len': 64},
        counts={k: st[k] for k in ('samples', 'total_tokens', 'loss_tokens', 'records_read')},
        shards=record_shards(out, names) if records else names)))
    return out

def batch_ends(shard: Path) -> list[int]:
    "Byte offsets at which each record batch of the stream shard ends."
    src = pa.BufferReader(pa.py_buffer(shard.read_bytes())); r = pa.ipc.open_stream(src); ends = []
    for _ in r: ends.append(src.tell())
    return ends

def cut(shard: Path, how: str):
    """Damage `shard`: 'empty' (0 bytes), 'batch' (cut after its second record batch: Arrow reads it without
    complaint), 'mid'."""
    data = shard.read_bytes()
    shard.write_bytes({'empty': b'', 'batch': data[:batch_ends(shard)[1]], 'mid': data[:len(data) // 2]}[how])

def run(*argv, capsys) -> tuple[int, list[str]]:
    "`dflash-nb ARGV` in this process: (exit code, stderr lines)."
    rc = dflash_main(list(map(str, argv)))
    return rc, capsys.readouterr().err.strip().splitlines()

def readers(ds: Path, other: Path, tmp: Path) -> dict:
    "Every reader of `ds`, as the command line runs it."
    return {'inspect': ('inspect', ds, '--no-tokenizer', '--quiet'), 'stats': ('stats', ds, '--quiet', '-o',
                                                                               tmp/'st.json'),
            'merge existing': ('merge', '--existing', ds, '--new', other, '--output-dir', tmp/'m1', '--quiet'),
            'merge new': ('merge', '--existing', other, '--new', ds, '--output-dir', tmp/'m2', '--quiet'),
            'export': ('export', ds, '--format', 'speculators', '--output-dir', tmp/'v')}

# ------------------------------------------------------------------------------------------------ 5, 15: damaged shards
@pytest.mark.parametrize('how,records', [('empty', True), ('batch', True), ('mid', True), ('empty', False), ('mid',
                                                                                                             False)])
def test_every_reader_names_a_damaged_shard(tmp_path, capsys, how, records):
    """Issue 23.5 + 23.15: a 0-byte shard, a shard cut at a record-batch boundary (both passed every check) and one cut
    inside a message (a bare `OSError: Expected to be able to read ...` traceback): every reader exits 1 with one line
    naming the shard, for a dataset with per-shard records (its size is checked on opening) and an older one without."""
    ds, other = make_ds(tmp_path/'ds', records=records), make_ds(tmp_path/'other', seed=1)
    victim = dataset_shards(ds)[1]; cut(victim, how)
    for name, argv in readers(ds, other, tmp_path).items():
        rc, err = run(*argv, capsys=capsys)
        assert rc == 1 and len(err) == 1 and f"{victim}: " in err[0], (name, rc, err)
        assert not any((tmp_path/o).exists() for o in ('m1', 'm2', 'v')), name
    from dflash_nb.views import MaskDataset
    with pytest.raises(ValueError, match=str(victim)): list(MaskDataset(ds, tokenizer=False).batches())

def test_train_reader_names_the_shard(tmp_path):
    "Issue 23.5: train's dataset reader (TokenDataset) names the shard cut at a record-batch boundary."
    from dflash_nb.train import open_token_dataset
    ds = make_ds(tmp_path/'ds'); victim = dataset_shards(ds)[2]; cut(victim, 'batch')
    with pytest.raises(ValueError, match=f"{victim}: .*bytes but .*manifest.json records"): open_token_dataset(ds)

def test_counts_are_checked_while_reading(tmp_path, capsys):
    """Issue 23.5: a shard of the recorded size whose rows changed (another dataset's shard of the same size) is named
    when it is read, with both counts; an older dataset (no per-shard records) is checked against its totals."""
    ds = make_ds(tmp_path/'ds')
    man = json.loads((ds/'manifest.json').read_text())
    man['shards'][0]['rows'] += 1; (ds/'manifest.json').write_text(json.dumps(man))
    rc, err = run('inspect', ds, '--no-tokenizer', '--quiet', capsys=capsys)
    assert rc == 1 and len(err) == 1 and f"{ds/'data-00000-of-00003.arrow'}: holds 40 rows / " in err[
        0] and 'records 41 / ' in err[0], err
    old = make_ds(tmp_path/'old', records=False); cut(dataset_shards(old)[1], 'batch')
    for name, argv in readers(old, make_ds(tmp_path/'other', seed=1), tmp_path).items():
        rc, err = run(*argv, capsys=capsys)
        assert rc == 1 and len(err) == 1 and 'shard(s) hold 100 rows' in err[0] and 'manifest.json records 120' in err[
            0], (name, err)
    r = cli('stats', old, '--quiet', check=False)  # the installed console script: exit code and one line
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and str(old) in r.stderr, r.stderr

def test_inspect_verify_names_flipped_bytes(tmp_path, capsys):
    """Issue 23.5: 64 flipped bytes in a shard's token ids pass stats, merge and export (size and counts unchanged);
    `inspect --verify` names the shard (sha256) and the rows (content_hashes.npy); an older dataset has nothing to
    verify."""
    from dflash_nb.tokenize import batch_content_hashes
    ds = make_ds(tmp_path/'ds')
    np.save(ds/'content_hashes.npy',
            np.concatenate([batch_content_hashes(b) for s in dataset_shards(ds) for b in stream_batches(s)]))
    rc, err = run('inspect', ds, '--verify', '--quiet', capsys=capsys)
    assert rc == 0 and err == [], err
    victim = dataset_shards(ds)[2]; data = bytearray(victim.read_bytes())
    first = pa.ipc.open_stream(bytes(data)).read_next_batch()
    # row 3 of the shard: dataset row 83
    at = data.find(np.asarray(first.column('input_ids')[3].values, '<i4').tobytes())
    data[at:at + 64] = bytes(x ^ 0x01 for x in data[at:at + 64]); victim.write_bytes(bytes(data))
    assert run('stats', ds, '--quiet', '-o', tmp_path/'s.json', capsys=capsys)[0] == 0  # the cheap checks cannot see it
    assert run('export', ds, '--format', 'speculators', '--output-dir', tmp_path/'v', capsys=capsys)[0] == 0
    rc, err = run('inspect', ds, '--verify', '--quiet', capsys=capsys)
    assert rc == 1 and len(err) == 2 and err[0].startswith(f"{victim}: sha256 ") and "row 83 ('s0-83'" in err[1], err
    old = make_ds(tmp_path/'old', records=False)
    rc, out = dflash_main(['inspect', str(old), '--verify', '--quiet']), capsys.readouterr().out
    assert rc == 0 and 'nothing to verify the bytes against' in out, out

# ------------------------------------------------------------------------------------------------ 11, 15: hostile
# metadata
@pytest.mark.parametrize('where', ['dotdot', 'absolute', 'symlink'])
def test_shard_outside_the_folder_is_refused(tmp_path, capsys, where):
    """Issue 23.11: state.json listing ../elsewhere/x.arrow, an absolute path, or a symbolic link out of the folder:
    refused in one line."""
    ds, far = make_ds(tmp_path/'ds'), make_ds(tmp_path/'elsewhere', seed=3)
    state = json.loads((ds/'state.json').read_text()); name = state['_data_files'][0]['filename']
    if where == 'symlink': (ds/name).unlink(); (ds/name).symlink_to(far/name)
    else:
        state['_data_files'][0]['filename'] = f"../elsewhere/{name}" if where == 'dotdot' else str(far/name)
        (ds/'state.json').write_text(json.dumps(state))
        man = json.loads((ds/'manifest.json').read_text()); del man['shards'];
        (ds/'manifest.json').write_text(json.dumps(man))
    for argv in (('stats', ds, '--quiet', '-o', tmp_path/'s.json'), ('inspect', ds, '--no-tokenizer', '--quiet')):
        rc, err = run(*argv, capsys=capsys)
        assert rc == 1 and len(err) == 1 and ('not inside' in err[0] or 'outside the dataset folder' in err[0]), err

@pytest.mark.parametrize('name,value', [('manifest.json', [1, 2]), ('manifest.json', "x"), ('stats.json', [1]),
                                        ('state.json', "s")])
def test_json_of_the_wrong_shape_is_one_line(tmp_path, capsys, name, value):
    """Issue 23.15: manifest.json / stats.json / state.json holding a list or a string (an AttributeError before): one
    line naming it."""
    ds = make_ds(tmp_path/'ds'); (ds/name).write_text(json.dumps(value))
    for argv in readers(ds, make_ds(tmp_path/'other', seed=1), tmp_path).values():
        rc, err = run(*argv, capsys=capsys)
        assert rc == 1 and len(err) == 1 and f"{ds/name}: holds a" in err[0], (argv, err)

# ------------------------------------------------------------------------------------------------ 7: readers during
# overwrites
WRITER = r'''
import shutil, sys, time
from pathlib import Path
from dflash_nb.dataset import replace_dir
out, a, b, stop = map(Path, sys.argv[1:5])
n = 0
while not stop.exists():
    tmp = out.with_name(out.name + '.partial'); shutil.copytree(a if n % 2 else b, tmp); replace_dir(tmp, out); n += 1
print(n)
'''
READER = r'''
import json, sys, time
from dflash_nb.stats import compute_stats
out, seconds = sys.argv[1], float(sys.argv[2])
keys = ('samples', 'total_tokens', 'loss_tokens', 'records_read', 'max_seq_len', 'mean_seq_len', 'size_on_disk_bytes',
        'sources', 'warnings')
t0 = time.time()
while time.time() - t0 < seconds:
    try: st = compute_stats(out, threads=4); print(json.dumps({k: st[k] for k in keys}), flush=True)
    except Exception as e: print(json.dumps({'error': f"{type(e).__name__}: {e}"}), flush=True)
'''

def test_reader_during_overwrites_sees_one_dataset(tmp_path):
    """Issue 23.7: a writer process swaps datasets A and B (different counts, same shard names) into OUT as fast as it
    can while a reader process loops compute_stats: every scan reports exactly A's or B's numbers, none an error."""
    from dflash_nb.stats import compute_stats
    a, b = make_ds(tmp_path/'A', shards=12, batches=2, rows=20, seed=1), make_ds(tmp_path/'B', shards=12, batches=2,
                                                                                 rows=25, seed=2)
    keys = ('samples', 'total_tokens', 'loss_tokens', 'records_read', 'max_seq_len', 'mean_seq_len',
            'size_on_disk_bytes', 'sources', 'warnings')
    want = [{k: compute_stats(d)[k] for k in keys} for d in (a, b)]
    out, stop = tmp_path/'out', tmp_path/'stop'
    shutil.copytree(a, out)
    writer = subprocess.Popen([sys.executable, '-c', WRITER, out, a, b, stop], stdout=subprocess.PIPE, text=True)
    reader = subprocess.run([sys.executable, '-c', READER, out, '8'], capture_output=True, text=True)
    stop.touch(); swaps = int(writer.communicate()[0])
    got = [json.loads(l) for l in reader.stdout.splitlines()]
    bad = [g for g in got if g not in want]
    assert len(got) >= 30 and swaps >= 100 and not bad, (len(got), swaps, bad[:3], reader.stderr[-2000:])
    # both were seen
    assert {json.dumps(g, sort_keys=True) for g in got} == {json.dumps(w, sort_keys=True) for w in want}

# ------------------------------------------------------------------------------------------------ 8: export across file
# systems
@pytest.fixture
def tmpfs(tmp_path):
    "A real tmpfs (root only: skipped where mount is not permitted); unmounted after the test."
    with mounted_tmpfs(tmp_path/'tmpfs', 'size=16m') as d: yield d

def test_export_view_on_another_file_system_keeps_its_rows(tmp_path, tmpfs, capsys):
    """Issue 23.8: an export view on a real tmpfs (another file system than its source) is a copy, not symbolic links:
    after the source is overwritten (the swap tokenize --overwrite makes) the view still reads its own rows."""
    import datasets
    src = make_ds(tmp_path/'src', seed=1)
    rows = datasets.load_from_disk(str(src)).data.table
    rc, err = run('export', src, '--format', 'speculators', '--output-dir', tmpfs/'view', capsys=capsys)
    assert rc == 0 and not any(p.is_symlink() for p in (tmpfs/'view').iterdir())
    new = make_ds(tmp_path/'new', seed=2, rows=12); replace_dir(new, src)  # `tokenize --overwrite` of the source
    assert datasets.load_from_disk(str(tmpfs/'view')).with_format(None).data.table.equals(rows)
    from dflash_nb.stats import compute_stats
    assert compute_stats(tmpfs/'view')['samples'] == rows.num_rows  # our readers check the view against its records
