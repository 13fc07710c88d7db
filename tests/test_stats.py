"""Whole-dataset statistics (`dflash_nb.stats`): agreement with the tokenize run and with a plain Python count, datasets
made by other tools, random Arrow layouts, corrupt datasets, plots, and the `stats` command."""
import argparse, json, shutil
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pytest

from conftest import ROOT, cli
from dflash_nb.stats import (RUN_KEYS, STATS_KEYS, add_stats_args, compute_stats, compare_rows, dataset_shards,
                             save_plots,
                             scan_token_counts, stats_main)
from dflash_nb.tokenize import SCHEMA, tokenize_dataset, write_dataset_metadata

SAMPLES = ROOT/'data'/'samples'
datasets.disable_progress_bars()


@pytest.fixture(scope='module')
def samples_ds(qwen_dir, tmp_path_factory):
    "The shipped samples, tokenized with truncation at 512 (so some samples are cut) into several shards."
    out = tmp_path_factory.mktemp('stats')/'ds'
    tokenize_dataset(qwen_dir, SAMPLES, out, max_seq_len=512, shard_tokens=20_000, progress=False)
    return out


def naive(dataset_dir):
    "Per-sample lengths and masked counts the slow way: a Python loop over the rows that `datasets` yields."
    ds = datasets.load_from_disk(str(dataset_dir))
    return [len(r['input_ids']) for r in ds], [sum(map(bool, r['loss_mask'])) for r in ds]


def write_shards(out, batches_per_shard, fmt='stream'):
    "Write shards of record batches (lists of row dicts) with the dflash_nb schema."
    out.mkdir(parents=True, exist_ok=True)
    names = [f"data-{i:05d}-of-{len(batches_per_shard):05d}.arrow" for i in range(len(batches_per_shard))]
    for name, batches in zip(names, batches_per_shard):
        new = pa.ipc.new_stream if fmt == 'stream' else pa.ipc.new_file
        with new(str(out/name), SCHEMA) as w:
            for rows in batches: w.write_batch(pa.RecordBatch.from_pylist(rows, schema=SCHEMA))
    write_dataset_metadata(out, names)
    return out


def test_agrees_with_tokenize_run_and_python_count(samples_ds):
    st = compute_stats(samples_ds)
    rec = json.loads((samples_ds/'stats.json').read_text())
    assert len(dataset_shards(samples_ds)) > 2
    assert set(rec) == set(STATS_KEYS) | {'ignored', 'duplicate_ids'}  # + the files the run did not read, and
                                                                       # tokenize's count of repeated ids
    for k in STATS_KEYS: assert st[k] == (pytest.approx(rec[k]) if isinstance(rec[k], float) else rec[k]), k
    assert st['unknown'] == [] and st['warnings'] == []
    assert st['records_read'] == st['samples'] + sum(st['skipped'].values())
    lens, loss = naive(samples_ds)
    ds = scan_token_counts(samples_ds)
    assert ds.seq_len.tolist() == lens and ds.loss_tokens.tolist() == loss
    assert ds.seq_len.dtype == ds.loss_tokens.dtype == np.int32
    assert st['max_seq_len_limit'] == 512 and st['truncated'] > 0 and st['samples_at_limit'] >= st['truncated']
    assert st['p99_seq_len'] == pytest.approx(float(np.percentile(lens, 99)))
    assert st['loss_tokens_per_sample']['p50'] == pytest.approx(float(np.median(loss)))
    per = st['per_source']
    assert sum(v['samples'] for v in per.values()) == st['samples'] and sum(v['tokens'] for v in per.values()) == st[
        'total_tokens']
    assert sum(v['loss_tokens'] for v in per.values()) == st['loss_tokens']
    assert {s: v['samples'] for s, v in per.items()} == rec['sources']
    assert st['offline_hidden_states']['bytes'] == 5 * 5120 * 2 * st['total_tokens']
    json.dumps(st)  # plain JSON types only


def test_random_layouts_match_python_count(tmp_path):
    "Odd lengths (0 included), masks that are not one prefix, uneven batches, stream and file shards."
    rng = np.random.default_rng(7)
    rows, shards = [], []
    for s in range(3):
        batches = []
        for _ in range(int(rng.integers(1, 5))):
            batch = []
            for _ in range(int(rng.integers(1, 9))):
                n = int(rng.choice([0, 1, 7, 63, 64, 65, int(rng.integers(0, 300))]))
                m = (rng.random(n) < rng.random()).tolist()
                batch.append(dict(input_ids=rng.integers(0, 1000, n).tolist(), loss_mask=m, seq_len=n,
                                  sample_id=f"r{len(rows)}",
                                  source=str(rng.choice(['x', 'y', '']))))
                rows.append(batch[-1])
            batches.append(batch)
        shards.append(batches)
    out = write_shards(tmp_path/'ds', shards)
    ds = scan_token_counts(out)
    assert ds.seq_len.tolist() == [r['seq_len'] for r in rows]
    assert ds.loss_tokens.tolist() == [sum(r['loss_mask']) for r in rows]
    lens = np.array([r['seq_len'] for r in rows])
    assert ds.stats['p90_seq_len'] == pytest.approx(float(np.percentile(lens, 90)))
    assert ds.stats['sources'] == {k: sum(r['source'] == k for r in rows) for k in ('', 'x', 'y')}
    one = scan_token_counts(out, threads=1)  # the thread count changes nothing but the time
    drop = lambda st: {k: v for k, v in st.items() if not k.startswith('scan_')}
    assert drop(one.stats) == drop(ds.stats) and one.loss_tokens.tolist() == ds.loss_tokens.tolist()
    # the same data as IPC *file* shards
    file_ds = write_shards(tmp_path/'file', shards, fmt='file')
    assert compute_stats(file_ds)['loss_tokens'] == ds.stats['loss_tokens']


@pytest.mark.parametrize('mask_type', ['bool', 'int'])
def test_dataset_made_by_another_tool(tmp_path, mask_type):
    rng = np.random.default_rng(3)
    ids = [rng.integers(0, 50_000, int(n)).tolist() for n in rng.integers(1, 400, 300)]
    masks = [(rng.random(len(x)) < 0.4).tolist() for x in ids]
    if mask_type == 'int': masks = [[int(v) for v in m] for m in masks]
    datasets.Dataset.from_dict({'input_ids': ids, 'loss_mask': masks, 'text': ['x'] * len(ids)}).save_to_disk(
        str(tmp_path/'f'), num_shards=3)
    st = compute_stats(tmp_path/'f')
    assert (st['samples'], st['total_tokens'], st['loss_tokens']) == (300, sum(map(len, ids)), sum(map(sum, masks)))
    assert st['shards'] == 3 and 'text' in st['columns']
    assert st['unknown'] == ['truncated', 'skipped', 'records_read', 'sources', 'seconds', 'tokens_per_second',
                             'max_seq_len_limit']
    assert all(st[k] is None for k in st['unknown']) and st['per_source'] is None
    assert any("no 'source' column" in w for w in st['warnings']) and any('no stats.json' in w for w in st['warnings'])
    assert any("no 'seq_len' column" in w for w in st['warnings'])
    pngs = save_plots(scan_token_counts(tmp_path/'f'), tmp_path/'plots')
    assert all(p.stat().st_size > 1000 for p in pngs.values())


def test_datasetdict_and_bad_directories(tmp_path):
    dd = datasets.DatasetDict(train=datasets.Dataset.from_dict({'input_ids': [[1]], 'loss_mask': [[True]]}))
    dd.save_to_disk(str(tmp_path/'dd'))
    with pytest.raises(ValueError, match=r"DatasetDict with splits \['train'\]; give one split's folder"):
        compute_stats(tmp_path/'dd')
    assert compute_stats(tmp_path/'dd'/'train')['samples'] == 1
    with pytest.raises(FileNotFoundError, match='no such dataset directory'): compute_stats(tmp_path/'missing')
    (tmp_path/'file.txt').write_text('x')
    with pytest.raises(NotADirectoryError): compute_stats(tmp_path/'file.txt')
    no_mask = tmp_path/'no_mask'
    datasets.Dataset.from_dict({'input_ids': [[1, 2]]}).save_to_disk(str(no_mask))
    with pytest.raises(ValueError, match="no 'loss_mask' column"): compute_stats(no_mask)
    float_mask = tmp_path/'float_mask'
    datasets.Dataset.from_dict({'input_ids': [[1, 2]], 'loss_mask': [[0.0, 1.0]]}).save_to_disk(str(float_mask))
    with pytest.raises(ValueError,
                       match="column 'loss_mask': expected a list of bool or int"): compute_stats(float_mask)


def test_corrupt_datasets_are_errors_naming_shard_and_sample(samples_ds, tmp_path):
    row = lambda i, n, m, sl=None: dict(input_ids=list(range(n)), loss_mask=[True] * m, seq_len=n if sl is None else sl,
                                        sample_id=f"id{i}", source='')
    out = write_shards(tmp_path/'lens', [[[row(0, 3, 3), row(1, 4, 4)]], [[row(2, 5, 5), row(3, 6, 5)]]])
    with pytest.raises(ValueError,
                       match=r"data-00001-of-00002.arrow: row 1 \(dataset row 3, sample_id 'id3'\): input_ids and "
                             r"loss_mask have different lengths \(6 vs 5\)"):
        compute_stats(out)
    out = write_shards(tmp_path/'seq', [[[row(0, 3, 3), row(1, 4, 4, sl=9)]]])
    with pytest.raises(ValueError,
                       match=r"row 1 \(dataset row 1, sample_id 'id1'\): seq_len differs from len\(input_ids\) \(9 vs "
                             r"4\)"):
        compute_stats(out)
    broken = tmp_path/'missing_shard'
    shutil.copytree(samples_ds, broken)
    victim = dataset_shards(broken)[1]; victim.unlink()
    with pytest.raises(FileNotFoundError,
                       match=f"{victim.name}: listed in .*state.json but missing"): compute_stats(broken)
    victim.write_bytes(b'not arrow at all')
    with pytest.raises(ValueError,
                       match=f"{victim.name}: 16 bytes but .*manifest.json records .* \\(cut short\\)"): compute_stats(
                           broken)
    man = json.loads((broken/'manifest.json').read_text()); del man['shards']  # an older dataset: no per-shard records
    (broken/'manifest.json').write_text(json.dumps(man))
    with pytest.raises(ValueError, match=f"{victim.name}: not an Arrow IPC stream or file"): compute_stats(broken)


def test_stale_or_inconsistent_run_stats_are_not_trusted(samples_ds, tmp_path):
    d = tmp_path/'ds'
    shutil.copytree(samples_ds, d)
    rec = json.loads((d/'stats.json').read_text())
    (d/'stats.json').write_text(json.dumps({**rec, 'samples': rec['samples'] + 1}))
    st = compute_stats(d)
    assert all(st[k] is None for k in RUN_KEYS) and set(RUN_KEYS) <= set(st['unknown'])
    assert 'the dataset changed after it was written' in st['warnings'][0]
    (d/'stats.json').write_text(json.dumps({**rec, 'records_read': rec['records_read'] + 5}))
    st = compute_stats(d)
    assert (st['records_read'], st['skipped'], st['truncated']) == (None, None, rec['truncated'])
    assert 'records_read' in st['warnings'][0]
    (d/'stats.json').unlink()  # without stats.json: records_read from the manifest, skipped from skipped.jsonl
    st = compute_stats(d)
    assert (st['records_read'], st['skipped'], st['truncated'], st['max_seq_len_limit']) == (rec['records_read'],
                                                                                             rec['skipped'], None, 512)
    assert st['unknown'] == ['truncated', 'seconds', 'tokens_per_second']
    assert 'no stats.json' in st['warnings'][0] and 'truncated' in st['warnings'][0]


def test_s3_dataset(samples_ds, tmp_path, monkeypatch):
    pytest.importorskip('moto')
    from dflash_nb.storage import upload_dir
    from dflash_nb.testing import MotoServer
    for k in [k for k in __import__('os').environ if k.startswith('AWS_')]: monkeypatch.delenv(k)
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    with MotoServer() as srv:
        client = srv.client()
        client.create_bucket(Bucket='stats-test')
        upload_dir(samples_ds, 's3://stats-test/data/ds', client=client, progress=False)
        st = compute_stats('s3://stats-test/data/ds', client=client)
    local = compute_stats(samples_ds)
    assert st['dataset'] == 's3://stats-test/data/ds'
    for k in (*STATS_KEYS, 'per_source', 'size_on_disk_bytes', 'max_seq_len_limit'):
        if k not in ('seconds', 'tokens_per_second'): assert st[k] == local[k], k


def test_empty_dataset(tmp_path):
    out = write_shards(tmp_path/'empty', [[]])
    ds = scan_token_counts(out)
    assert (ds.stats['samples'], ds.stats['total_tokens'], ds.stats['loss_token_fraction'],
            ds.stats['max_seq_len']) == (0, 0, 0.0, 0)
    assert len(save_plots(ds, tmp_path/'p', compare=ds)) == 5


def test_stats_main(samples_ds, tmp_path, capsys):
    p = add_stats_args(argparse.ArgumentParser('dflash-nb stats'))
    before = tmp_path/'before'
    datasets.Dataset.from_dict({'input_ids': [[1] * 40] * 8,
                                'loss_mask': [[False] * 34 + [True] * 6] * 8}).save_to_disk(str(before))
    assert stats_main(p.parse_args([str(samples_ds), '--quiet'])) == 0
    o = capsys.readouterr()
    assert json.loads(o.out)['samples'] == json.loads((samples_ds/'stats.json').read_text())['samples']
    assert 'loss-token fraction' in o.err and 'offline hidden states' in o.err
    a = p.parse_args([str(samples_ds), '-o', str(tmp_path/'s.json'), '--plots', str(tmp_path/'plots'), '--compare',
                      str(before),
                      '--num-layers', '4', '--hidden-size', '4096', '--quiet'])
    assert a.fn is stats_main and stats_main(a) == 0
    o = capsys.readouterr()
    st = json.loads((tmp_path/'s.json').read_text())
    assert st['offline_hidden_states']['bytes'] == 4 * 4096 * 2 * st['total_tokens']
    assert st['comparison']['before'] == str(before.resolve()) and st['comparison']['rows'][0]['metric'] == 'samples'
    assert 'masked fraction' in st['comparison']['rows'][3]['in_words']
    assert sorted(f.name for f in (tmp_path/'plots').iterdir()) == ['compare.png', 'loss_fraction_hist.png',
                                                                    'loss_tokens_hist.png',
                                                                    'seq_len_hist.png', 'source_mix.png']
    assert f"wrote {tmp_path/'s.json'}" in o.out and 'after vs before' in o.out
    stamp = (samples_ds/'stats.json').read_bytes()
    for target in (samples_ds/'stats.json', samples_ds/'other.json'):
        with pytest.raises(ValueError, match="inside the dataset"): stats_main(p.parse_args([str(samples_ds), '-o',
                                                                                             str(target)]))
    assert (samples_ds/'stats.json').read_bytes() == stamp and not (samples_ds/'other.json').exists()


def test_compare_words():
    a = dict(samples=800, total_tokens=2_000_000, loss_tokens=1_750_000, loss_token_fraction=0.875, mean_seq_len=2500.0,
             median_seq_len=2400.0, p90_seq_len=4000.0, max_seq_len=8192, loss_tokens_per_sample=dict(p50=6.0),
             loss_fraction_per_sample=dict(p50=0.9), samples_without_loss=0, offline_hidden_states=dict(bytes=10**12))
    b = dict(a, samples=1600, total_tokens=11_500_000, loss_token_fraction=0.035, samples_without_loss=16)
    words = {r[0]: r[3] for r in compare_rows(a, b)}
    assert words['tokens'] == '5.75x more tokens' and words['samples'] == '2.00x more samples'
    assert words['loss-token fraction'] == 'masked fraction 3.5% vs 87.5%'
    assert words['samples without masked tokens'] == '1.0% vs 0.0% of samples'
    assert words['max sequence length'] == 'same tokens at the longest'


def test_stats_command_through_the_console_script(samples_ds, tmp_path):
    r = cli('stats', samples_ds, '--quiet', '--plots', tmp_path/'p')
    assert json.loads(r.stdout)['samples'] > 0 and len(list((tmp_path/'p').glob('*.png'))) == 4
    r = cli('stats', tmp_path/'nope', check=False)
    assert r.returncode == 1 and 'no such dataset directory' in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_report_wording(tmp_path):
    """Issue 24.9: a sample without a source is '(no source)' everywhere (as inspect and the tokenize report say it, not
    '(empty)'); a dataset is named with its folder's parent (not 'before: dataset'); sample-count axes tick whole
    samples (3 samples gave ticks at 0.5); sizes in words (not '0.00 MB')."""
    from dflash_nb.merge import plot_source_mix
    from dflash_nb.stats import file_sizes
    from dflash_nb.stats import (plot_compare, plot_loss_fraction, plot_loss_tokens, plot_seq_len, plot_sources,
                                 source_rows)
    from dflash_nb.testing import write_dataset
    rows = [dict(input_ids=list(range(4 + i)), loss_mask=[False, False] + [True] * (2 + i), seq_len=4 + i,
                 sample_id=f"s{i}",
                 source='web' if i else '') for i in range(3)]
    ds = scan_token_counts(write_dataset(tmp_path/'tokenize-1'/'dataset', rows))
    assert ds.name == 'tokenize-1/dataset'
    assert '(no source)' in [r[0] for r in source_rows(ds.stats)] and '(empty)' not in str(source_rows(ds.stats))
    assert '(no source)' in [r[0] for r in plot_source_mix(ds, ds, tmp_path/'mix.png')]
    assert '(no source)' in [t.get_text() for t in plot_sources(ds).axes[0].get_yticklabels()]
    for plot in (plot_seq_len, plot_loss_tokens, plot_loss_fraction):
        ax = plot(ds).axes[0]; ax.figure.canvas.draw()
        assert [float(t).is_integer() for t in ax.get_yticks()] == [True] * len(ax.get_yticks()), (plot.__name__,
                                                                                                   ax.get_yticks())
    labels = [t.get_text() for t in plot_compare(ds, ds).axes[0].get_legend().get_texts()]
    assert labels == ['before: tokenize-1/dataset (3)', 'after: tokenize-1/dataset (3)'], labels
    assert file_sizes(tmp_path/'tokenize-1'/'dataset').startswith(
        'data-00000-of-00001.arrow (') and ' MB)' not in file_sizes(tmp_path/'tokenize-1'/'dataset')
