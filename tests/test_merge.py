"""The merge stage: counts, duplicates, refusals (template, schema, max_seq_len), atomicity under injected failures,
the existing dataset byte-identical after every merge (failed ones included), datasets.load_from_disk on the output,
dataset + dataset merges, the link fallback, the CLI functions and the papermill job."""
import argparse, errno, hashlib, json, os, shutil
from pathlib import Path

import datasets, numpy as np, pyarrow as pa, pytest
from conftest import ROOT, cli

import dflash_nb.merge as merge
from dflash_nb.merge import MergeError, add_merge_args, count_equation, merge_datasets, merge_main
from dflash_nb.tokenize import SCHEMA, content_hash, tokenize_dataset
from dflash_nb.dataset import record_shards, shard_record

SAMPLES = ROOT/'data'/'samples'

# ---------------------------------------------------------------- helpers

def rec(i, answer=None, sid=None, source='chat'):
    "A one-turn completion; the same (i, answer) always gives the same tokens."
    r = {'messages': [{'role': 'user', 'content': f"Question number {i}?"},
                      {'role': 'assistant', 'content': answer or f"Answer number {i}.",
                       'reasoning_content': f"think {i}"}],
         'source': source}
    if sid is not None: r['id'] = sid
    return r

def write_jsonl(path, recs):
    path.write_text(''.join((r if isinstance(r, str) else json.dumps(r)) + '\n' for r in recs))
    return path

def snapshot(d):
    "Every file under `d`: sha256, size, mtime and mode (what 'never modified' means)."
    out = {}
    for p in sorted(Path(d).rglob('*')):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(d))] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns,
                                          st.st_mode)
    return out

def rows(d):
    "All rows of a dataset via `datasets` (the contract with training)."
    return datasets.load_from_disk(str(d))

def no_output(out):
    return not Path(out).exists() and not Path(str(out) + '.partial').exists()

@pytest.fixture(scope='module')
def existing(qwen_dir, tmp_path_factory):
    "A 30-sample dataset of generated records (ids e0..e29, two sources, one bad line), never to be modified."
    d = tmp_path_factory.mktemp('ex')
    src = write_jsonl(d/'existing.jsonl', [rec(i, sid=f"e{i}",
                                               source='code' if i % 3 == 0 else 'chat') for i in range(30)] + ['{bad'])
    tokenize_dataset(qwen_dir, src, d/'ds', progress=False)
    return d/'ds'

@pytest.fixture(scope='module')
def samples_ds(qwen_dir, tmp_path_factory):
    "The shipped sample completions, tokenized (real data: 280 samples, 16 bad records)."
    out = tmp_path_factory.mktemp('samples')/'ds'
    tokenize_dataset(qwen_dir, SAMPLES, out, workers=1, progress=False)
    return out

@pytest.fixture(scope='module')
def edited_dir(qwen_dir, tmp_path_factory):
    """A copy of the tokenizer dir whose chat_template.jinja was edited (a comment: same rendering, different template
    hash)."""
    d = tmp_path_factory.mktemp('edited')/'qwen'
    shutil.copytree(qwen_dir, d)
    t = (qwen_dir/'chat_template.jinja').read_text()
    (d/'chat_template.jinja').write_text(t + "\n{#- locally edited template #}\n")
    return d

# ---------------------------------------------------------------- counts and duplicates

NEW = [rec(100, sid='n0'), rec(101, sid='n1'),                   # fresh
       rec(1, 'A different answer.', sid='e1'),                   # sample_id of an existing sample, other content
       rec(2, 'Changed too.', sid='e2'),                          # same
       rec(3, sid='n2'), rec(4, sid='n3'),                       # content of existing e3, e4 under new ids
       rec(102, sid='n0'),                                        # sample_id repeated within new (n0 kept first)
       rec(100, sid='n4'), rec(101, sid='n5'),                   # content repeated within new (n0, n1 kept first)
       rec(103, source='math'), rec(104, source='math'),          # no id: position ids new.jsonl:10, :11
       '{"messages": []}', 'not json']                            # bad records

def test_counts_duplicates_and_order(existing, qwen_dir, tmp_path):
    before = snapshot(existing)
    src = write_jsonl(tmp_path/'new.jsonl', NEW)
    out = tmp_path/'out'
    st = merge_datasets(existing, src, out, progress=False)
    assert snapshot(existing) == before
    man = json.loads((out/'manifest.json').read_text())
    m = man['merge']
    assert m['duplicates'] == st['duplicates'] == {'sample_id': 3, 'content': 4}
    assert m['duplicates_by_origin'] == {'existing': {'sample_id': 2, 'content': 2},
                                         'new': {'sample_id': 1, 'content': 2}}
    assert man['inputs']['existing']['samples'] == 30 and man['inputs']['new']['samples'] == 11
    assert st['samples'] == 30 + 11 - 7 == 34
    assert count_equation(out) == "merged 34 = existing 30 + new 11 - duplicates 7 (sample_id 3, content 4)"
    # records_read = existing + new records; skipped merged; the invariant with duplicates
    assert st['records_read'] == 31 + 13
    assert st['skipped'] == {'invalid_json': 2, 'no_messages': 1, 'duplicate_sample_id': 3, 'duplicate_content': 4}
    assert st['records_read'] == st['samples'] + sum(st['skipped'].values())
    assert st['sources'] == {'chat': 20 + 2, 'code': 10, 'math': 2}
    # rows: existing rows, then the kept new rows, in order; tokens of existing rows untouched
    ds, ex = rows(out), rows(existing)
    assert list(ds['sample_id']) == list(ex['sample_id']) + ['n0', 'n1', 'new.jsonl:10', 'new.jsonl:11']
    assert list(ds['input_ids'])[:30] == list(ex['input_ids']) and list(ds['loss_mask'])[:30] == list(ex['loss_mask'])
    lens = np.array(list(ds['seq_len']))
    assert st['total_tokens'] == lens.sum() and st['loss_tokens'] == sum(map(sum, list(ds['loss_mask'])))
    assert st['max_seq_len'] == lens.max() and st['median_seq_len'] == float(np.median(lens))
    # content hashes: existing then kept new, equal to the hashes of the rows
    h = np.load(out/'content_hashes.npy')
    assert h.tolist() == [content_hash(np.array(i), np.array(k)) for i, k
                          in zip(list(ds['input_ids']), list(ds['loss_mask']))]
    assert h[:30].tolist() == np.load(existing/'content_hashes.npy').tolist()
    # every dropped row listed; skipped.jsonl = existing's then new's (with `from`)
    dl = [json.loads(l) for l in (out/'duplicates.jsonl').read_text().splitlines()]
    assert [(d['sample_id'], d['kind'], d['duplicate_of'], d['other_row']) for d in dl] == [
        ('e1', 'sample_id', 'existing', 1), ('e2', 'sample_id', 'existing', 2), ('n2', 'content', 'existing', 3),
        ('n3', 'content', 'existing', 4), ('n0', 'sample_id', 'new', 0), ('n4', 'content', 'new', 0),
                                                                                            ('n5', 'content', 'new', 1)]
    sk = (out/'skipped.jsonl').read_text().splitlines()
    assert sk[0] == (existing/'skipped.jsonl').read_text().splitlines()[0]
    assert [json.loads(l)['reason'] for l in sk[1:]] == ['no_messages', 'invalid_json'] and all('from' in json.loads(l)
                                                                                                for l in sk[1:])
    # shards renamed, existing shard hard-linked (same inode), state.json lists them in order
    assert sorted(p.name for p in out.glob('*.arrow')) == ['data-00000-of-00002.arrow', 'data-00001-of-00002.arrow']
    assert os.stat(out/'data-00000-of-00002.arrow').st_ino == os.stat(existing/'data-00000-of-00001.arrow').st_ino
    assert [f['filename'] for f in json.loads((out/'state.json').read_text())['_data_files']] == [r['filename'] for r
                                                                                                  in man['shards']]
    assert man['shards'][0] == {**shard_record(existing/'data-00000-of-00001.arrow'),
                                'filename': 'data-00000-of-00002.arrow'}
    # the filtered new shard, recorded as written
    assert man['shards'][1] == shard_record(out/'data-00001-of-00002.arrow')
    assert m['shards'] == {'link': 1, 'write': 1} and not m['allow_mismatch'] and m['overridden'] == []
    assert man['tokenizer']['fingerprint'] == man['inputs']['new']['fingerprint'] == man['inputs']['existing'][
        'fingerprint']
    assert man['inputs']['new']['kind'] == 'completions' and man['inputs']['new']['files'][0]['name'] == 'new.jsonl'
    assert not list(tmp_path.glob('*.partial'))

def test_real_samples_into_themselves_and_half(samples_ds, qwen_dir, tmp_path):
    "Merging data/samples into its own dataset drops every new row; merging two halves gives the whole."
    before = snapshot(samples_ds)
    st = merge_datasets(samples_ds, SAMPLES, tmp_path/'same', progress=False)
    assert st['samples'] == 280 and sum(st['duplicates'].values()) == 280 and st['duplicates']['sample_id'] > 200
    assert list(rows(tmp_path/'same')['sample_id']) == list(rows(samples_ds)['sample_id'])
    assert json.loads((tmp_path/'same'/'manifest.json').read_text())['merge']['shards'] == {'link': 1}
    # halves: files A into B, as a later batch of generations would arrive
    a, b = tmp_path/'a', tmp_path/'b'
    a.mkdir(); b.mkdir()
    for i, f in enumerate(sorted(SAMPLES.glob('*.jsonl'))): shutil.copyfile(f, (a if i % 2 else b)/f.name)
    tokenize_dataset(qwen_dir, a, tmp_path/'ds_a', progress=False)
    sa = snapshot(tmp_path/'ds_a')
    st = merge_datasets(tmp_path/'ds_a', b, tmp_path/'ab', progress=False)
    assert snapshot(tmp_path/'ds_a') == sa and snapshot(samples_ds) == before
    whole = json.loads((samples_ds/'stats.json').read_text())
    dup_skips = {f'duplicate_{k}': v for k, v in st['duplicates'].items() if v}
    assert st['records_read'] == whole['records_read'] and st['skipped'] == {**whole['skipped'], **dup_skips}
    assert st['samples'] + sum(st['duplicates'].values()) == whole['samples']
    assert set(list(rows(tmp_path/'ab')['sample_id'])) <= set(list(rows(samples_ds)['sample_id']))

def test_dataset_plus_dataset(existing, qwen_dir, tmp_path):
    src = write_jsonl(tmp_path/'more.jsonl', [rec(200 + i, sid=f"m{i}", source='agent') for i in range(5)])
    tokenize_dataset(qwen_dir, src, tmp_path/'more', progress=False)
    be, bn = snapshot(existing), snapshot(tmp_path/'more')
    st = merge_datasets(existing, tmp_path/'more', tmp_path/'out', progress=False)
    assert snapshot(existing) == be and snapshot(tmp_path/'more') == bn
    assert st['samples'] == 35 and st['duplicates'] == {'sample_id': 0, 'content': 0}
    assert list(rows(tmp_path/'out')['sample_id']) == list(rows(existing)['sample_id']) + [f"m{i}" for i in range(5)]
    man = json.loads((tmp_path/'out'/'manifest.json').read_text())
    # nothing dropped: new shard linked too
    assert man['inputs']['new']['kind'] == 'dataset' and man['merge']['shards'] == {'link': 2}
    assert os.stat(tmp_path/'out'/'data-00001-of-00002.arrow').st_ino == os.stat(tmp_path/'more'
                                                                                 /'data-00000-of-00001.arrow').st_ino
    # a merge of merges keeps the invariant: duplicates accumulate, records_read adds up
    st2 = merge_datasets(tmp_path/'out', tmp_path/'out', tmp_path/'out2', progress=False)
    assert st2['samples'] == 35 and st2['records_read'] == 2 * st['records_read']
    assert st2['records_read'] == st2['samples'] + sum(st2['skipped'].values())
    assert count_equation(tmp_path
                          /'out2') == "merged 35 = existing 35 + new 35 - duplicates 35 (sample_id 35, content 0)"

def test_position_ids_are_not_identities(qwen_dir, tmp_path):
    "A regenerated file with the same name but new completions at the same lines must not be dropped."
    (tmp_path/'v1').mkdir(); (tmp_path/'v2').mkdir()
    write_jsonl(tmp_path/'v1'/'part.jsonl', [rec(i) for i in range(4)])
    write_jsonl(tmp_path/'v2'/'part.jsonl', [rec(i, 'Regenerated.') for i in range(3)] + [rec(3)])
    tokenize_dataset(qwen_dir, tmp_path/'v1', tmp_path/'d1', progress=False)
    st = merge_datasets(tmp_path/'d1', tmp_path/'v2', tmp_path/'out', progress=False)
    assert st['duplicates'] == {'sample_id': 0, 'content': 1} and st['samples'] == 7

# ---------------------------------------------------------------- refusals

def test_different_chat_template_refused_then_overridden(existing, edited_dir, qwen_dir, tmp_path):
    before = snapshot(existing)
    src = write_jsonl(tmp_path/'new.jsonl', NEW[:2])
    ex_fp = json.loads((existing/'manifest.json').read_text())['tokenizer']['fingerprint']
    # completions with an explicit --model-path whose template differs
    with pytest.raises(MergeError) as e:
        merge_datasets(existing, src, tmp_path/'o1', model_path=edited_dir, progress=False)
    msg = str(e.value)
    assert 'chat template differs' in msg and 'chat_template_sha256' in msg and 'tokenizer_sha256' not in msg
    assert ex_fp in msg and 'allow-mismatch' in msg and no_output(tmp_path/'o1')
    # a dataset made with the edited template
    tokenize_dataset(edited_dir, src, tmp_path/'edited_ds', progress=False)
    new_fp = json.loads((tmp_path/'edited_ds'/'manifest.json').read_text())['tokenizer']['fingerprint']
    assert new_fp != ex_fp
    with pytest.raises(MergeError, match='chat template differs') as e:
        merge_datasets(existing, tmp_path/'edited_ds', tmp_path/'o2', progress=False)
    assert ex_fp in str(e.value) and new_fp in str(e.value) and no_output(tmp_path/'o2')
    assert snapshot(existing) == before
    # the override works and is recorded
    st = merge_datasets(existing, tmp_path/'edited_ds', tmp_path/'o3', allow_mismatch=True, progress=False)
    m = json.loads((tmp_path/'o3'/'manifest.json').read_text())
    assert st['samples'] == 32 and m['merge']['allow_mismatch'] is True
    assert len(m['merge']['overridden']) == 1 and 'chat template differs' in m['merge']['overridden'][0]
    assert m['inputs']['new']['fingerprint'] == new_fp and m['tokenizer']['fingerprint'] == ex_fp
    assert snapshot(existing) == before

def test_tokenizer_dir_recorded_in_manifest_must_exist(qwen_dir, tmp_path):
    d = tmp_path/'tok'; shutil.copytree(qwen_dir, d)
    src = write_jsonl(tmp_path/'a.jsonl', [rec(1, sid='a')])
    tokenize_dataset(d, src, tmp_path/'ds', progress=False)
    shutil.rmtree(d)
    with pytest.raises(MergeError, match='pass --model-path'): merge_datasets(tmp_path/'ds', src, tmp_path/'o',
                                                                              progress=False)
    st = merge_datasets(tmp_path/'ds', write_jsonl(tmp_path/'b.jsonl', [rec(2, sid='b')]), tmp_path/'o',
                        model_path=qwen_dir, progress=False)
    assert st['samples'] == 2

def test_max_seq_len_difference_refused(existing, qwen_dir, tmp_path):
    src = write_jsonl(tmp_path/'n.jsonl', [rec(300, sid='x')])
    tokenize_dataset(qwen_dir, src, tmp_path/'short', max_seq_len=4096, progress=False)
    with pytest.raises(MergeError, match=r'params.max_seq_len differs: 8192 \(existing\) vs 4096 \(new\)'):
        merge_datasets(existing, tmp_path/'short', tmp_path/'o', progress=False)
    assert no_output(tmp_path/'o')

def _foreign_dataset(existing, out, table):
    "A dataset folder like ours (manifest copied from `existing`) holding `table`."
    out.mkdir()
    with pa.ipc.new_stream(str(out/'data-00000-of-00001.arrow'), table.schema) as w: w.write_table(table)
    for f in ('state.json', 'dataset_info.json'): shutil.copyfile(existing/f, out/f)
    # its own shard's record: readers check the shard against it
    man = json.loads((existing/'manifest.json').read_text())
    (out/'manifest.json').write_text(json.dumps({**man, 'shards': record_shards(out, ['data-00000-of-00001.arrow'])}))
    return out

def test_schema_mismatch_refused(existing, qwen_dir, tmp_path):
    before = snapshot(existing)
    tokenize_dataset(qwen_dir, write_jsonl(tmp_path/'s.jsonl', [rec(400 + i, sid=f"s{i}") for i in range(3)]),
                     tmp_path/'base', progress=False)
    t = datasets.load_from_disk(str(tmp_path/'base')).data.table
    extra = _foreign_dataset(existing, tmp_path/'extra', t.append_column('score', pa.array([1.0, 2.0, 3.0],
                                                                                           pa.float32())))
    for allow in (False, True):  # a column on one side only is never mergeable
        with pytest.raises(MergeError, match="column 'score' \\(float\\) only in new"):
            merge_datasets(existing, extra, tmp_path/'o', allow_mismatch=allow, progress=False)
        assert no_output(tmp_path/'o')
    i64 = pa.schema([('input_ids', pa.list_(pa.int64())), *[f for f in SCHEMA if f.name != 'input_ids']])
    wide = _foreign_dataset(existing, tmp_path/'i64', t.cast(i64))
    with pytest.raises(MergeError,
                       match="schema differs: column 'input_ids' is list<item: int32> \\(existing\\) vs list<item: "
                             "int64> \\(new\\)"):
        merge_datasets(existing, wide, tmp_path/'o', progress=False)
    assert no_output(tmp_path/'o') and snapshot(existing) == before
    # castable: cast and recorded
    st = merge_datasets(existing, wide, tmp_path/'o', allow_mismatch=True, progress=False)
    ds = rows(tmp_path/'o')
    assert st['samples'] == 33 and str(ds.features['input_ids'].feature.dtype) == 'int32'
    assert list(ds['input_ids'])[30:] == list(rows(tmp_path/'base')['input_ids']) and list(ds['sample_id'])[30:] == [
        's0', 's1', 's2']
    assert json.loads((tmp_path/'o'/'manifest.json').read_text())['merge']['overridden'][0].startswith('schema differs')
    assert snapshot(existing) == before

def test_not_a_dataset_and_bad_paths(existing, tmp_path, monkeypatch):
    src = write_jsonl(tmp_path/'n.jsonl', NEW[:1])
    with pytest.raises(FileNotFoundError, match='--existing must be a dataset'): merge_datasets(tmp_path, src, tmp_path
                                                                                                /'o', progress=False)
    with pytest.raises(FileNotFoundError, match='--new must be JSONL completions'): merge_datasets(
        existing, tmp_path/'nope', tmp_path/'o', progress=False)
    with pytest.raises(MergeError, match='must be a new folder'): merge_datasets(existing, src, existing,
                                                                                 overwrite=True, progress=False)
    with pytest.raises(MergeError, match='must be a new folder'): merge_datasets(existing, src, existing/'sub',
                                                                                 progress=False)
    with pytest.raises(MergeError, match='must be a new folder'): merge_datasets(existing, src, existing.parent,
                                                                                 overwrite=True, progress=False)
    (tmp_path/'taken').mkdir()
    with pytest.raises(FileExistsError, match='already exists'): merge_datasets(existing, src, tmp_path/'taken',
                                                                                progress=False)
    for k in [k for k in os.environ if k.startswith('AWS_')]: monkeypatch.delenv(k)
    monkeypatch.setenv('AWS_SHARED_CREDENTIALS_FILE', str(tmp_path/'none')); monkeypatch.setenv('AWS_CONFIG_FILE',
                                                                                                str(tmp_path/'none'))
    with pytest.raises(RuntimeError, match='s3://b/p.*credentials'): merge_datasets(existing, 's3://b/p', tmp_path/'o',
                                                                                    progress=False)
    nm = tmp_path/'nomanifest'; shutil.copytree(existing, nm); (nm/'manifest.json').unlink()
    with pytest.raises(MergeError, match='no manifest.json'): merge_datasets(existing, nm, tmp_path/'o', progress=False)
    with pytest.raises(MergeError, match='no manifest.json'): merge_datasets(nm, src, tmp_path/'o', progress=False)

def test_damaged_stats_refused_missing_files_recomputed(existing, tmp_path):
    """A stats.json that disagrees with the shards is refused; a missing stats.json / content_hashes.npy is computed by
    streaming."""
    src = write_jsonl(tmp_path/'n.jsonl', NEW)
    ref = merge_datasets(existing, src, tmp_path/'ref', progress=False)
    bare = tmp_path/'bare'; shutil.copytree(existing, bare)
    st = json.loads((bare/'stats.json').read_text()); st['samples'] += 1; (bare/'stats.json').write_text(json.dumps(st))
    with pytest.raises(MergeError, match='delete that stats.json'): merge_datasets(bare, src, tmp_path/'o',
                                                                                   progress=False)
    (bare/'stats.json').unlink(); (bare/'content_hashes.npy').unlink()
    got = merge_datasets(bare, src, tmp_path/'o', progress=False)
    for k in ('samples', 'total_tokens', 'loss_tokens', 'skipped', 'records_read', 'sources', 'duplicates',
              'median_seq_len'):
        assert got[k] == ref[k], k
    assert np.array_equal(np.load(tmp_path/'o'/'content_hashes.npy'), np.load(tmp_path/'ref'/'content_hashes.npy'))
    assert json.loads((tmp_path/'o'/'manifest.json').read_text())['merge']['hashes_computed'] == {'existing': True,
                                                                                                  'new': False}

# ---------------------------------------------------------------- atomicity

@pytest.mark.parametrize('where', ['link_or_copy', 'write_filtered', 'write_hashes', 'replace_dir'])
def test_failure_mid_merge_leaves_nothing(existing, tmp_path, monkeypatch, where):
    before = snapshot(existing)
    src = write_jsonl(tmp_path/'new.jsonl', NEW)
    real = getattr(merge, where)
    def boom(*a, **k):
        if where == 'link_or_copy': real(*a, **k)  # the link exists in OUT.partial when it fails
        raise OSError(errno.ENOSPC, f"No space left on device (injected in {where})")
    monkeypatch.setattr(merge, where, boom)
    with pytest.raises(OSError, match='injected'): merge_datasets(existing, src, tmp_path/'out', progress=False)
    assert no_output(tmp_path/'out') and snapshot(existing) == before
    monkeypatch.setattr(merge, where, real)
    merge_datasets(existing, src, tmp_path/'out', progress=False)  # and the same merge then works
    assert snapshot(existing) == before and rows(tmp_path/'out').num_rows == 34

def test_failed_overwrite_keeps_old_output_and_stale_partial_removed(existing, tmp_path, monkeypatch):
    src = write_jsonl(tmp_path/'new.jsonl', NEW)
    merge_datasets(existing, src, tmp_path/'out', progress=False)
    old = snapshot(tmp_path/'out')
    monkeypatch.setattr(merge, 'write_filtered', lambda *a, **k: (_ for _ in ()).throw(RuntimeError('injected')))
    with pytest.raises(RuntimeError): merge_datasets(existing, src, tmp_path/'out', overwrite=True, progress=False)
    assert snapshot(tmp_path/'out') == old and not (tmp_path/'out.partial').exists()
    monkeypatch.undo()
    (tmp_path/'o2.partial').mkdir(); (tmp_path/'o2.partial'/'junk').write_text('left by a killed merge')
    merge_datasets(existing, src, tmp_path/'o2', progress=False)
    assert not (tmp_path/'o2'/'junk').exists() and not (tmp_path/'o2.partial').exists()
    st = merge_datasets(existing, write_jsonl(tmp_path/'n2.jsonl', [rec(500, sid='z')]), tmp_path/'out', overwrite=True,
                        progress=False)
    assert st['samples'] == 31 and list(rows(tmp_path/'out')['sample_id'])[-1] == 'z'

def test_link_fallback_copies(existing, tmp_path, monkeypatch):
    before = snapshot(existing)
    def no_link(src, dst): raise OSError(errno.EXDEV, 'Invalid cross-device link')
    monkeypatch.setattr(os, 'link', no_link)
    src = write_jsonl(tmp_path/'new.jsonl', NEW)
    merge_datasets(existing, src, tmp_path/'out', progress=False)
    o, e = tmp_path/'out'/'data-00000-of-00002.arrow', existing/'data-00000-of-00001.arrow'
    assert os.stat(o).st_ino != os.stat(e).st_ino and o.read_bytes() == e.read_bytes()
    assert json.loads((tmp_path/'out'/'manifest.json').read_text())['merge']['shards'] == {'copy': 1, 'write': 1}
    monkeypatch.undo()
    merge_datasets(existing, src, tmp_path/'out2', progress=False, link=False)
    assert os.stat(tmp_path/'out2'/'data-00000-of-00002.arrow').st_ino != os.stat(e).st_ino
    assert snapshot(existing) == before

# ---------------------------------------------------------------- CLI and job

def test_cli_functions(existing, tmp_path, capsys):
    src = write_jsonl(tmp_path/'new.jsonl', NEW)
    p = add_merge_args(argparse.ArgumentParser())
    a = p.parse_args(['--existing', str(existing), '--new', str(src), '--output-dir', str(tmp_path/'o'), '--quiet',
                      '--workers', '2'])
    assert merge_main(a) == 0
    assert 'merged 34 = existing 30 + new 11 - duplicates 7 (sample_id 3, content 4)' in capsys.readouterr().out
    assert a.copy is False and a.allow_mismatch is False and a.model_path is None

def test_console_script(existing, tmp_path):
    src = write_jsonl(tmp_path/'new.jsonl', NEW)
    r = cli('merge', '--existing', existing, '--new', src, '--output-dir', tmp_path/'o', '--quiet')
    assert 'merged 34 = existing 30 + new 11' in r.stdout
    r = cli('merge', '--existing', existing, '--new', src, '--output-dir', tmp_path/'o', '--quiet', check=False)
    assert r.returncode == 1 and 'already exists' in r.stderr and len(r.stderr.strip().splitlines()) == 1

def test_job_report(existing, tmp_path):
    from dflash_nb.jobs import run_job
    before = snapshot(existing)
    src = write_jsonl(tmp_path/'new.jsonl', NEW)
    run = run_job('merge', {'existing': str(existing), 'new': str(src), 'output_dir': str(tmp_path/'merged')},
                  outputs=tmp_path/'runs')
    assert run.ok, run.error
    html = run.report.read_text()
    assert 'merged 34 = existing 30 + new 11 - duplicates 7 (sample_id 3, content 4)' in html
    assert 'Source mix' in html and html.count('<img') >= 2
    assert (run.out_dir/'compare_hist.png').is_file() and (run.out_dir/'source_mix.png').is_file()
    assert snapshot(existing) == before
