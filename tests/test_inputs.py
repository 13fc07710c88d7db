"Completion dumps as they come: every input form gives the dataset its .jsonl equivalent gives; other files are listed."
import gzip, json, os, shutil
from pathlib import Path

import pyarrow as pa, pyarrow.parquet as pq
import pytest

from conftest import ROOT, cli
from dflash_nb.tokenize import tokenize_dataset

SAMPLES = ROOT/'data'/'samples'

def _columnar(o: dict) -> dict:
    """A record as a Parquet/Arrow dump stores it: tool arguments and the tools schema as JSON strings, completion a
    message."""
    o = json.loads(json.dumps(o))
    if isinstance(o.get('completion'), str): o['completion'] = {'role': 'assistant', 'content': o['completion']}
    for m in o.get('messages', []) + [o.get('completion') or {}]:
        for tc in m.get('tool_calls') or []:
            if isinstance(tc['function'].get('arguments'),
                          dict): tc['function']['arguments'] = json.dumps(tc['function']['arguments'])
    if 'tools' in o: o['tools'] = json.dumps(o['tools'])
    return o

@pytest.fixture(scope='module')
def forms(tmp_path_factory, qwen_dir):
    """The shipped samples (real records of every shape; the undecodable lines left out, ids made explicit) as one
    .jsonl per sample file, and the same records in every other input form; plus the .jsonl dataset."""
    root = tmp_path_factory.mktemp('forms')
    files = {}
    for f in sorted(SAMPLES.glob('*.jsonl')):
        recs = []
        for n, line in enumerate(f.read_text().splitlines(), 1):
            try: o = json.loads(line)
            except json.JSONDecodeError: continue
            if isinstance(o, dict) and ('messages' in o or 'conversations' in o): o.setdefault(
                'id', f"{f.name}:{n}"); recs.append(o)
        files[f.stem] = recs
    want = {}
    # bad messages fit no column type
    for kind, stems in (('all', files), ('columnar', [s for s in files if s != 'bad_records'])):
        d = root/f'jsonl-{kind}'; d.mkdir()
        for stem in stems: (d/f'{stem}.jsonl').write_text(''.join(json.dumps(o) + '\n' for o in files[stem]))
        want[kind] = (tokenize_dataset(qwen_dir, d, root/f'want-{kind}', progress=False), root/f'want-{kind}')
    return root, files, want

def _table(out):
    import datasets
    ds = datasets.load_from_disk(str(out))
    return ds.to_dict()

def _write(form: str, d: Path, files: dict):
    import zstandard, datasets
    d.mkdir()
    for stem, recs in files.items():
        if form in COLUMNAR and stem == 'bad_records': continue
        lines = ''.join(json.dumps(o) + '\n' for o in recs).encode()
        if form == 'gz': (d/f'{stem}.jsonl.gz').write_bytes(gzip.compress(lines))
        elif form == 'zst': (d/f'{stem}.jsonl.zst').write_bytes(zstandard.ZstdCompressor().compress(lines))
        elif form == 'upper': (d/f'{stem}.JSONL').write_bytes(lines)
        elif form == 'array': (d/f'{stem}.json').write_text(json.dumps(recs, indent=1))
        elif form == 'parquet': pq.write_table(pa.Table.from_pylist([_columnar(o) for o in recs]), d/f'{stem}.parquet',
                                               row_group_size=16)
        elif form == 'hf': datasets.Dataset.from_list([_columnar(o) for o in recs]).save_to_disk(str(d/stem),
                                                                                                 max_shard_size='20KB')
        elif form == 'symlink':
            real = d.parent/f'{d.name}-real'/stem; real.mkdir(parents=True)
            (real/f'{stem}.jsonl').write_bytes(lines); (d/stem).symlink_to(real, target_is_directory=True)

COLUMNAR = ('parquet', 'hf')

@pytest.mark.parametrize('form', ['gz', 'zst', 'upper', 'array', 'parquet', 'hf', 'symlink'])
def test_form_gives_the_jsonl_dataset(forms, qwen_dir, form):
    root, files, want = forms
    want, want_dir = want['columnar' if form in COLUMNAR else 'all']
    _write(form, root/form, files)
    got = tokenize_dataset(qwen_dir, root/form, root/f'{form}-out', progress=False)
    for k in ('samples', 'total_tokens', 'loss_tokens', 'records_read', 'skipped', 'sources',
              'truncated'): assert got[k] == want[k], k
    assert got['samples'] > 250 and (form in COLUMNAR or sum(got['skipped'].values()) > 0) and got['ignored'][
        'count'] == 0
    a, b = _table(want_dir), _table(root/f'{form}-out')
    for col in ('input_ids', 'loss_mask', 'source', 'sample_id'): assert a[col] == b[col], col

def test_row_skips_name_file_and_row(tmp_path, qwen_dir):
    "Bad rows of a Parquet file are counted and listed with the file and the 1-based row, like bad JSONL lines."
    good = {'messages': [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'a'}]}
    rows = [good, {'messages': []}, good, {'messages': [{'role': 'user', 'content': 'q'}]}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path/'dump.parquet')
    st = tokenize_dataset(qwen_dir, tmp_path/'dump.parquet', tmp_path/'o', progress=False)
    assert st['samples'] == 2 and st['skipped'] == {'no_generated_turn': 1, 'no_messages': 1}
    sk = [json.loads(l) for l in (tmp_path/'o'/'skipped.jsonl').read_text().splitlines()]
    assert [(s['file'], s['line'], s['sample_id'], s['reason']) for s in sk] == [
        ('dump.parquet', 2, 'dump.parquet:2', 'no_messages'), ('dump.parquet', 4, 'dump.parquet:4',
                                                               'no_generated_turn')]
    import datasets
    assert datasets.load_from_disk(str(tmp_path/'o'))['sample_id'] == ['dump.parquet:1', 'dump.parquet:3']

def test_other_files_listed_as_ignored_and_zero_samples_fail(tmp_path, qwen_dir):
    "`--completions .` in a working folder: only completions are read; the rest is listed; 0 samples exits non-zero."
    w = tmp_path/'work'; w.mkdir()
    shutil.copytree(qwen_dir, w/'tok')                                   # tokenizer.json, tokenizer_config.json, ...
    shutil.copy(SAMPLES/'openai_chat.jsonl', w/'chat.jsonl')
    (w/'notes.txt').write_text('todo'); (w/'.hidden.jsonl').write_text('{}\n')
    (w/'loop').symlink_to(w, target_is_directory=True)
    cli('tokenize', '--model-path', qwen_dir, '--completions', w/'chat.jsonl', '--output-dir', w/'earlier', '--quiet')
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', w, '--output-dir', tmp_path/'o', '--quiet')
    st = json.loads((tmp_path/'o'/'stats.json').read_text())
    assert st['records_read'] == json.loads((w/'earlier'/'stats.json').read_text())['records_read']  # chat.jsonl only
    ign = {f['name']: f['reason'] for f in st['ignored']['files']}
    assert st['ignored']['count'] == len(ign) and {'notes.txt', '.hidden.jsonl', 'loop/', 'earlier',
                                                   'tok/tokenizer.json'} <= set(ign)
    assert 'saved dataset without a messages/conversations column' in ign['earlier'] and 'symlink' in ign['loop/']
    assert f"ignored {len(ign)} file(s) that are not completions" in r.stdout
    (w/'chat.jsonl').unlink(); (w/'empty.jsonl').write_text('')
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', w, '--output-dir', tmp_path/'o2', '--quiet',
            check=False)
    assert r.returncode == 1 and len(
        r.stderr.strip().splitlines()) == 1 and '0 samples (0 records read: no records' in r.stderr
