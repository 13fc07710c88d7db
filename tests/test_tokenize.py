"End-to-end tests of the tokenize stage through the `dflash-nb` command, on the shipped sample completions."
import json, os, signal, subprocess, sys, textwrap, time
from pathlib import Path
import numpy as np, pyarrow as pa, pytest, datasets
from conftest import ROOT, cli

SAMPLES = ROOT/'data'/'samples'

def read_ds(out):
    return datasets.load_from_disk(str(out))

def test_samples_end_to_end(qwen_dir, tmp_path):
    out = tmp_path/'ds'
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', out, '--workers', '2',
            '--quiet')
    st = json.loads((out/'stats.json').read_text())
    assert st['records_read'] == st['samples'] + sum(st['skipped'].values())
    assert st['samples'] > 200 and st['skipped'] and 'mask_mismatch' not in st['skipped']
    ds = read_ds(out)
    assert ds.num_rows == st['samples']
    assert str(ds.features['input_ids'].feature.dtype) == 'int32' and str(
        ds.features['loss_mask'].feature.dtype) == 'bool'
    assert str(ds.features['seq_len'].dtype) == 'int64'
    lens = np.array(ds['seq_len'])
    assert lens.sum() == st['total_tokens'] and lens.max() == st['max_seq_len'] and lens.max() <= 8192
    assert sum(map(sum, ds['loss_mask'])) == st['loss_tokens']
    assert all(len(a) == len(b) == n for a, b, n in zip(ds['input_ids'], ds['loss_mask'], ds['seq_len']))
    assert sorted(st['sources']) == sorted(set(ds['source']))
    skipped = [json.loads(l) for l in (out/'skipped.jsonl').read_text().splitlines()]
    assert len(skipped) == sum(st['skipped'].values())
    assert all({'file', 'line', 'sample_id', 'reason'} <= s.keys() for s in skipped)
    man = json.loads((out/'manifest.json').read_text())
    assert len(man['tokenizer']['fingerprint']) == 16 and man['params']['max_seq_len'] == 8192
    assert f"{st['samples']:,} samples" in r.stdout

def test_worker_count_does_not_change_output(qwen_dir, tmp_path):
    outs = []
    for w in (1, 2):
        out = tmp_path/f'w{w}'
        cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', out, '--workers', w,
            '--quiet', '--max-seq-len', 512)
        outs.append(out)
    a, b = (pa.concat_tables([pa.ipc.open_stream(f).read_all() for f in sorted(o.glob('data-*.arrow'))]) for o in outs)
    assert a.num_rows > 0 and a.equals(b)
    assert (outs[0]/'skipped.jsonl').read_text() == (outs[1]/'skipped.jsonl').read_text()

def test_truncation_counts(qwen_dir, tmp_path):
    full, cut = tmp_path/'full', tmp_path/'t'
    cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', full, '--max-seq-len', 0,
        '--quiet')
    cli('tokenize', '--model-path', qwen_dir, '--completions', SAMPLES, '--output-dir', cut, '--max-seq-len', 256,
        '--quiet')
    st, whole = json.loads((cut/'stats.json').read_text()), read_ds(full)
    longer = sum(n > 256 for n in whole['seq_len'])
    # every sample longer than the limit is either kept truncated or skipped because nothing generated was left
    assert st['truncated'] > 0 and st['truncated'] + st['skipped'].get('no_loss_after_truncation', 0) == longer
    ds = read_ds(cut)
    assert st['max_seq_len'] == 256 and max(ds['seq_len']) == 256
    assert all(any(m) for m in ds['loss_mask'])
    # a truncated sample is the first 256 tokens of the untruncated one
    by_id = {sid: ids for sid, ids in zip(whole['sample_id'], whole['input_ids'])}
    assert all(ids == by_id[sid][:256] for sid, ids in zip(ds['sample_id'], ds['input_ids']))

def test_existing_output_refused_and_overwrite(qwen_dir, tmp_path):
    src = tmp_path/'c.jsonl'
    src.write_text(json.dumps({'messages': [{'role': 'user', 'content': 'hi'}, {'role': 'assistant',
                                                                                'content': 'hello'}]}) + '\n')
    out = tmp_path/'o'
    cli('tokenize', '--model-path', qwen_dir, '--completions', src, '--output-dir', out, '--quiet')
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', src, '--output-dir', out, '--quiet', check=False)
    assert r.returncode == 1 and 'already exists' in r.stderr and len(r.stderr.strip().splitlines()) == 1
    cli('tokenize', '--model-path', qwen_dir, '--completions', src, '--output-dir', out, '--quiet', '--overwrite')

def test_bad_inputs_give_one_line_errors(qwen_dir, tmp_path):
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', tmp_path/'missing.jsonl', '--output-dir',
            tmp_path/'o', check=False)
    assert r.returncode == 1 and 'missing.jsonl' in r.stderr and 'no such file' in r.stderr
    (tmp_path/'empty').mkdir()
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', tmp_path/'empty', '--output-dir', tmp_path/'o',
            check=False)
    assert r.returncode == 1 and 'no completions in this folder' in r.stderr
    r = cli('tokenize', '--model-path', tmp_path, '--completions', SAMPLES, '--output-dir', tmp_path/'o', check=False)
    assert r.returncode == 1 and 'tokenizer.json' in r.stderr
    assert not (tmp_path/'o').exists()

def test_all_bad_file_fails_in_one_line_and_writes_nothing(qwen_dir, tmp_path):
    "A run of 0 samples exits 1 naming its skips and the first one; it writes no (0-row) dataset (issue 24.14)."
    src = tmp_path/'bad.jsonl'
    src.write_text('not json\n[1,2]\n{"messages": [{"role": "user", "content": "q"}]}\n\n')
    out = tmp_path/'o'
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', src, '--output-dir', out, '--quiet', check=False)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1  # one line, no traceback
    assert '0 samples (3 records read: 1 invalid_json, 1 no_generated_turn, 1 not_an_object); nothing written; ' \
           'first: bad.jsonl:1 invalid_json: ' in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ['bad.jsonl']

def test_data_stages_run_without_torch(qwen_dir, tmp_path):
    "The data stages import and run with torch made unimportable (as on a tokenization node without torch)."
    code = textwrap.dedent(f"""
        import sys
        sys.modules['torch'] = None   # any `import torch` now raises ImportError
        import dflash_nb.records, dflash_nb.chat_template, dflash_nb.qwen, dflash_nb.tokenize, dflash_nb.jobs
        import dflash_nb.cli
        for m in ('dataset', 'views', 'inspect', 'stats', 'merge', 'storage'):
            try: __import__('dflash_nb.' + m)
            except ModuleNotFoundError as e:
                if e.name != 'dflash_nb.' + m: raise
        from dflash_nb.cli import main
        sys.exit(main(['tokenize', '--model-path', {str(qwen_dir)!r}, '--completions', {str(SAMPLES)!r},
                       '--output-dir', {str(tmp_path/'nt')!r}, '--workers', '2', '--quiet']))
    """)
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path/'nt'/'stats.json').is_file()
