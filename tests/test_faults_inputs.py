"""Hostile inputs (issue 23 items 10, 13, 18): pipes and devices among the completions, records and decompression
bombs past the record byte cap, runs of bad records, DatasetDict folders, file names that are not UTF-8, damaged
tokenizer files and folders the user cannot read. Real FIFOs, real device links, real gzip/zstd bombs, real
processes with a timeout (a hang fails the test) and their peak RSS measured."""
import gzip, json, os, shutil, subprocess, sys, tempfile, tracemalloc
from pathlib import Path

import pytest

from conftest import ROOT, cli
from dflash_nb.tokenize import ChatTokenizer, tokenize_dataset

OK = [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'a'}]
good = lambda i: json.dumps({'id': f'g{i}', 'messages': OK})

CHILD = """
import re, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a run that reads a device whole dies here, not the machine
from dflash_nb.cli import main
rc = main(sys.argv[1:])
# this program's peak (ru_maxrss would count the pytest process it forked from)
hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)
print(f"MAXRSS_KB {hwm}", file=sys.stderr)
sys.exit(rc)
"""

def tokenize_child(*args, timeout: int = 120):
    """`dflash-nb tokenize ARGS --quiet` in a child process (killed after `timeout` s: a hang fails); `(result, peak
    RSS in MB)`."""
    r = subprocess.run([sys.executable, '-c', CHILD, 'tokenize', *map(str, args), '--quiet'], capture_output=True,
                       text=True,
                       timeout=timeout)
    rss = [int(l.split()[1]) for l in r.stderr.splitlines() if l.startswith('MAXRSS_KB')]
    return r, (rss[0] / 1024 if rss else None)

def one_line_error(r, *needles):
    "The run failed with exit 1 and one line on stderr (no traceback) that names every one of `needles`."
    err = [l for l in r.stderr.splitlines() if not l.startswith('MAXRSS_KB')]
    assert r.returncode == 1 and len(err) == 1 and 'Traceback' not in r.stderr, r.stderr[-3000:]
    assert all(n in err[0] for n in needles), err[0]
    return err[0]

# ---------------------------------------------------------------------------------------------- 13: pipes, devices
def test_pipes_and_devices_are_ignored_with_a_reason_never_read(qwen_dir, tmp_path):
    "A FIFO named *.jsonl, a link to it, links to /dev/zero and /dev/urandom: listed as ignored; the good file is read."
    from dflash_nb.records import discover_inputs
    d = tmp_path/'in'; d.mkdir()
    (d/'good.jsonl').write_text(good(1) + '\n' + good(2) + '\n')
    os.mkfifo(d/'fifo.jsonl'); (d/'link-to-fifo.jsonl').symlink_to(d/'fifo.jsonl')
    (d/'zero.jsonl').symlink_to('/dev/zero'); (d/'zero.json').symlink_to('/dev/zero');
    (d/'random.jsonl').symlink_to('/dev/urandom')
    r, _ = tokenize_child('--model-path', qwen_dir, '--completions', d, '--output-dir', tmp_path/'out')
    assert r.returncode == 0, r.stderr[-3000:]
    st = json.loads((tmp_path/'out'/'stats.json').read_text())
    assert st['samples'] == 2 and st['records_read'] == 2
    ignored = {f['name']: f['reason'] for f in st['ignored']['files']}
    assert st['ignored']['count'] == 5 and set(ignored) == {'fifo.jsonl', 'link-to-fifo.jsonl', 'zero.jsonl',
                                                            'zero.json', 'random.jsonl'}
    assert 'FIFO' in ignored['fifo.jsonl'] and 'FIFO' in ignored[
        'link-to-fifo.jsonl'] and 'character device' in ignored['zero.jsonl']
    assert 'ignored 5 file(s)' in r.stdout and 'fifo.jsonl' in r.stdout
    for name in ('fifo.jsonl', 'link-to-fifo.jsonl', 'zero.jsonl'):  # named directly: refused in one line, at once
        with pytest.raises(ValueError,
                           match=f"{name}: a .*, not a regular file; --completions must be a regular file"):
            discover_inputs(d/name)

# ---------------------------------------------------------------------------------------------- 13: the record cap
CAP = 1 << 20

def _gz_bomb(f: Path, body: bytes, times: int, head: bytes, tail: bytes):
    "A gzip of `head`, `body` x `times`, `tail`, built from repeated members (a gzip stream reads them as one)."
    member = gzip.compress(body, 1)
    with open(f, 'wb') as o:
        o.write(gzip.compress(head)); [o.write(member) for _ in range(times)]; o.write(gzip.compress(tail))

def _zst_bomb(f: Path, body: bytes, times: int, head: bytes, tail: bytes):
    import zstandard
    c = zstandard.ZstdCompressor()
    f.write_bytes(c.compress(head) + c.compress(body) * times + c.compress(tail))

BOMBS = {  # file name: (writer, body, times, head, tail, samples, skipped line)
    'gzip-512MB-of-zeros.jsonl.gz': (_gz_bomb, bytes(64 << 20), 8, (good(1) + '\n').encode(),
                                     ('\n' + good(2) + '\n').encode(), 2, 2),
    'zstd-1GB-of-zeros.jsonl.zst': (_zst_bomb, bytes(64 << 20), 16, (good(3) + '\n').encode(),
                                    ('\n' + good(4) + '\n').encode(), 2, 2),
    'array-512MB-element.json.gz': (_gz_bomb, b'x' * (64 << 20), 8, ('[' + good(5) + ', "').encode(),
                                    ('", ' + good(6) + ']').encode(), 1, 2),
}

def test_records_over_the_cap_are_listed_skips_in_bounded_memory(qwen_dir, tmp_path):
    """Records past --max-record-bytes, however well they compress, are read in pieces: record_too_large skips; RSS
    stays low."""
    d = tmp_path/'in'; d.mkdir()
    for name, (write, body, times, head, tail, *_) in BOMBS.items(): write(d/name, body, times, head, tail)
    r, rss = tokenize_child('--model-path', qwen_dir, '--completions', d, '--output-dir', tmp_path/'out',
                            '--max-record-bytes', CAP)
    assert r.returncode == 0, r.stderr[-3000:]
    st = json.loads((tmp_path/'out'/'stats.json').read_text())
    assert st['samples'] == sum(b[5] for b in BOMBS.values()) and st['skipped'] == {'record_too_large': len(BOMBS)}, st
    sk = [json.loads(l) for l in (tmp_path/'out'/'skipped.jsonl').read_text().splitlines()]
    assert [(s['file'], s['line'], s['reason']) for s in sk] == sorted((n, b[6], 'record_too_large') for n, b
                                                                       in BOMBS.items())
    assert all(f"{CAP:,}" in s['detail'] for s in sk)
    assert json.loads((tmp_path/'out'/'manifest.json').read_text())['params']['max_record_bytes'] == CAP
    # ~400 MB is the tokenizer; a record read whole is 1 GB more
    assert rss is not None and rss < 800, f"peak RSS {rss:.0f} MB"

def test_record_cap_reader_unit(tmp_path):
    """read_lines at the cap's edges: a line of exactly the cap is read, one byte more is a skip, the next line is
    intact."""
    from dflash_nb.records import TooLarge, parse_line, read_lines
    f = tmp_path/'c.jsonl'
    f.write_bytes(b'1' * 10 + b'\n' + b'2' * 11 + b'\n' + b'3' * 9 + b'\n' + b'4' * 25)
    got = list(read_lines(f, 10))
    assert [(n, type(raw) is TooLarge) for n, raw in got] == [(1, False), (2, True), (3, False), (4, True)]
    assert got[0][1] == b'1' * 10 + b'\n' and got[2][1] == b'3' * 9 + b'\n'
    assert 'is 11 bytes' in got[1][1].detail and 'is 25 bytes' in got[3][1].detail
    assert parse_line(got[1][1], 'c.jsonl', 2).reason == 'record_too_large'
    with pytest.raises(ValueError, match='max-record-bytes'): tokenize_dataset(None, f, tmp_path/'o',
                                                                               max_record_bytes=0)

def test_bad_records_do_not_pile_up_in_memory(qwen_dir, tmp_path):
    "A gzip of `{}` lines (every one a skip, no tokens, so no chunk commits): memory does not grow with the skips."
    def peak(n: int) -> int:
        d = tmp_path/f'in{n}'; d.mkdir()
        (d/'a.jsonl').write_text(good(0) + '\n')
        (d/'b.jsonl.gz').write_bytes(gzip.compress(b'{}\n' * n, 1))
        tracemalloc.start()
        try: st = tokenize_dataset(qwen_dir, d, tmp_path/f'out{n}', progress=False)
        finally: _, top = tracemalloc.get_traced_memory(); tracemalloc.stop()
        assert st['skipped'] == {'no_messages': n} and len(
            (tmp_path/f'out{n}'/'skipped.jsonl').read_text().splitlines()) == n
        return top
    small, big = peak(1_000), peak(21_000)
    # (~200 bytes a skip held)
    assert big - small < 500_000, f"20,000 more skips took {(big - small) / 1e6:.1f} MB more at the peak"

# ---------------------------------------------------------------------------------------------- 10: DatasetDict
@pytest.fixture
def dataset_dict(tmp_path):
    import datasets
    d = tmp_path/'dd'
    # distinct: no duplicate content
    rec = lambda i: {'id': i, 'messages': [OK[0], {'role': 'assistant', 'content': f'answer {i}'}]}
    datasets.DatasetDict({'train': datasets.Dataset.from_list([rec(f't{i}') for i in range(3)]),
                          'test': datasets.Dataset.from_list([rec('u0')])}).save_to_disk(str(d))
    return d

def _ids(out) -> list:
    import datasets
    return datasets.load_from_disk(str(out))['sample_id']

def test_dataset_dict_reads_the_train_split_and_names_the_splits(qwen_dir, tmp_path, dataset_dict):
    "A DatasetDict folder as --completions: its `train` split only (the test split stays out of training), named."
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', dataset_dict, '--output-dir', tmp_path/'out',
            '--quiet')
    assert sorted(_ids(tmp_path/'out')) == ['t0', 't1', 't2']
    assert "splits train, test; reading split 'train'" in r.stderr
    man = json.loads((tmp_path/'out'/'manifest.json').read_text())
    assert man['inputs']['splits'] == [{'folder': '.', 'split': 'train', 'splits': ['train', 'test']}]
    assert [f['name'] for f in man['inputs']['files']] == ['train']
    tokenize_dataset(qwen_dir, dataset_dict, tmp_path/'test', split='test', progress=False)
    assert _ids(tmp_path/'test') == ['u0']
    r = cli('tokenize', '--model-path', qwen_dir, '--completions', dataset_dict, '--output-dir', tmp_path/'x',
            '--split', 'valid', check=False)
    assert r.returncode == 1 and r.stderr.count(
        '\n') == 1 and 'splits train, test' in r.stderr and "'valid'" in r.stderr
    # merge: the DatasetDict as --new (completions) and as --existing (tokenized datasets)
    from dflash_nb.merge import merge_datasets
    import datasets
    st = merge_datasets(tmp_path/'test', dataset_dict, tmp_path/'merged', progress=False)
    assert sorted(_ids(tmp_path/'merged')) == ['t0', 't1', 't2', 'u0'] and st['samples'] == 4
    assert json.loads((tmp_path/'merged'/'manifest.json').read_text())['inputs']['new']['splits'][0]['split'] == 'train'
    shutil.copytree(tmp_path/'out', tmp_path/'dd2'/'train'); shutil.copytree(tmp_path/'test', tmp_path/'dd2'/'test')
    (tmp_path/'dd2'/'dataset_dict.json').write_text(json.dumps({'splits': ['train', 'test']}))
    (tmp_path/'n.jsonl').write_text(json.dumps({'id': 'n0', 'messages': [OK[0], {'role': 'assistant',
                                                                                 'content': 'new'}]}) + '\n')
    merge_datasets(tmp_path/'dd2', tmp_path/'n.jsonl', tmp_path/'merged2', progress=False, split='test')
    assert _ids(tmp_path/'merged2') == ['u0', 'n0']  # the existing DatasetDict's test split, and the new record
    assert json.loads((tmp_path/'merged2'/'manifest.json').read_text())['inputs']['existing']['split'] == 'test'

# ---------------------------------------------------------------------------------------------- 18: messages
def test_non_utf8_file_name_is_read_under_an_escaped_name(qwen_dir, tmp_path):
    ("A file whose name is not UTF-8 (b'bad\\xff.jsonl'; it stopped the run naming no file): read, named "
     "'bad\\\\xff.jsonl'.")
    d = tmp_path/'in'; d.mkdir()
    (d/'good.jsonl').write_text(good(1) + '\n')
    with open(os.path.join(os.fsencode(d), b'bad\xff.jsonl'),
              'w') as f: f.write(json.dumps({'messages': OK}) + '\n{oops\n')
    cli('tokenize', '--model-path', qwen_dir, '--completions', d, '--output-dir', tmp_path/'out', '--quiet')
    assert sorted(_ids(tmp_path/'out')) == ['bad\\xff.jsonl:1', 'g1']
    assert [f['name'] for f in json.loads((tmp_path/'out'/'manifest.json').read_text())['inputs']['files']] == [
        'bad\\xff.jsonl', 'good.jsonl']
    [sk] = [json.loads(l) for l in (tmp_path/'out'/'skipped.jsonl').read_text().splitlines()]
    assert (sk['file'], sk['line'], sk['reason']) == ('bad\\xff.jsonl', 2, 'invalid_json')

DAMAGE = {  # case: (file, new contents)
    'empty tokenizer.json': ('tokenizer.json', b''),
    'truncated tokenizer.json': ('tokenizer.json', None),
    'tokenizer.json a list': ('tokenizer.json', b'[]'),
    'tokenizer.json model a list': ('tokenizer.json', b'{"model": [], "added_tokens": 5}'),
    'tokenizer_config.json a list': ('tokenizer_config.json', b'[1]'),
    'tokenizer_config.json truncated': ('tokenizer_config.json', b'{"chat_template": "x'),
}

@pytest.mark.parametrize('case', list(DAMAGE))
@pytest.mark.parametrize('encoder', ['auto', 'tokenizers'])
def test_damaged_tokenizer_files_are_one_line_naming_the_file(qwen_dir, tmp_path, case, encoder):
    name, data = DAMAGE[case]
    m = tmp_path/'model'; shutil.copytree(qwen_dir, m)
    (m/name).write_bytes((qwen_dir/name).read_bytes()[:5000] if data is None else data)
    with pytest.raises(ValueError, match=str(m/name).replace('.', r'\.')):
        ct = ChatTokenizer(m, encoder)
        ct.tokenizer  # (`tokenizers` loads on first use)

def test_damaged_tokenizer_file_through_the_cli(qwen_dir, tmp_path):
    m = tmp_path/'model'; shutil.copytree(qwen_dir, m); (m/'tokenizer.json').write_text('[]')
    (tmp_path/'c.jsonl').write_text(good(1) + '\n')
    r = cli('tokenize', '--model-path', m, '--completions', tmp_path/'c.jsonl', '--output-dir', tmp_path/'out',
            check=False)
    assert r.returncode == 1 and r.stderr.count('\n') == 1 and str(
        m/'tokenizer.json') in r.stderr and 'Traceback' not in r.stderr

NOBODY = """
import os, sys
from dflash_nb.records import discover_inputs
os.setgid(65534); os.setuid(65534)  # root reads through chmod 000; nobody does not
try: discover_inputs(sys.argv[1]); print('no error')
except PermissionError as e: print(f"ERROR {e}")
"""

@pytest.mark.skipif(os.getuid() != 0,
                    reason="dropping to the user nobody needs root (as a user, chmod already stops reads)")
@pytest.mark.parametrize('mode', [0o000, 0o444])
def test_unreadable_sub_folder_is_named(mode):
    """A sub-folder nobody may list (000) or look into (444): one line naming that folder, not a file in it that does
    not exist."""
    d = Path(tempfile.mkdtemp(prefix='dflash-unreadable-')); os.chmod(d, 0o755)
    try:
        (d/'a.jsonl').write_text(good(1) + '\n'); (d/'locked').mkdir();
        (d/'locked'/'b.jsonl').write_text(good(2) + '\n')
        (d/'locked').chmod(mode)
        r = subprocess.run([sys.executable, '-c', NOBODY, str(d)], capture_output=True, text=True, timeout=60)
        assert r.stdout.startswith(f"ERROR {d/'locked'}: cannot read this folder"), r.stdout + r.stderr[-2000:]
    finally:
        (d/'locked').chmod(0o755); shutil.rmtree(d)

def test_record_cap_across_workers(qwen_dir, tmp_path):
    "The over-long record's skip crosses the worker pool (pickled) like any other, in input order."
    f = tmp_path/'c.jsonl'
    f.write_text(good(1) + '\n' + json.dumps({'id': 'big', 'messages': [OK[0], {'role': 'assistant', 'content': 'x'
                                                                                * 5000}]}) + '\n' + good(2) + '\n')
    st = tokenize_dataset(qwen_dir, f, tmp_path/'out', workers=2, batch_size=1, max_record_bytes=2000, progress=False)
    assert st['samples'] == 2 and st['skipped'] == {'record_too_large': 1}
    [sk] = [json.loads(l) for l in (tmp_path/'out'/'skipped.jsonl').read_text().splitlines()]
    assert (sk['line'], sk['sample_id']) == (2, 'c.jsonl:2')
