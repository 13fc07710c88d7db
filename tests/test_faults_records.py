"""Poison lines and a fixed-seed fuzz of the record reader: nothing a single line contains may end a tokenize run;
every line is a sample or a counted, listed skip (issue 15.2, 15.8)."""
import json, random
from pathlib import Path
import pyarrow as pa, pytest
from conftest import ROOT

from dflash_nb.records import SKIP_REASONS, Record, Skip, parse_line
from dflash_nb.tokenize import tokenize_dataset

OK = [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'a'}]
KEYS = ['id', 'messages', 'conversations', 'role', 'from', 'content', 'value', 'tool_calls', 'function', 'name',
        'arguments',
        'reasoning_content', 'completion', 'tools', 'source', 'type', 'text', 'image_url', 'tool_call_id', 'x']
ROLES = ['user', 'assistant', 'system', 'tool', 'human', 'gpt', 'narrator', '']

def deep(n: int) -> str:
    "JSON text nested `n` levels deep (objects and lists alternating)."
    return ''.join('[' if k % 2 else '{"a": ' for k in range(n)) + '1' + ''.join(']' if k % 2 else '}' for k
                                                                                 in reversed(range(n)))

def dumps(v) -> bytes:
    "json.dumps, with each string '<DEEP n>' replaced by JSON nested n deep (json.dumps itself cannot nest that far)."
    text = json.dumps(v)
    while (i := text.find('"<DEEP ')) >= 0:
        j = text.index('>"', i); text = text[:i] + deep(int(text[i + 7:j])) + text[j + 2:]
    return text.encode()

def rand_str(r: random.Random) -> str:
    pool = ['a', ' ', '\n', '<|im_end|>', '<think>', '</tool_call>', '{{', '{%', 'é', 'e\u0301', '中', '🙂', '\x00',
            '\u2028',
            '\ud800', '\udc00', '\ufeff', '\\', '"']
    return ''.join(r.choice(pool) for _ in range(r.randrange(0, 12)))

def rand_value(r: random.Random, depth: int = 0):
    k = r.randrange(9 if depth < 4 else 5)
    if k == 0: return None
    if k == 1: return r.choice([True, False])
    if k == 2: return r.choice([0, -1, 2**63, 10**r.randrange(1, 60), 1.5, float('inf')])
    if k in (3, 4): return r.choice([rand_str(r), r.choice(ROLES), r.choice(KEYS)])
    if k in (5, 6): return [rand_value(r, depth + 1) for _ in range(r.randrange(4))]
    return {r.choice(KEYS): rand_value(r, depth + 1) for _ in range(r.randrange(5))}

def mutate(r: random.Random, rec):
    "Replace one random node of `rec` (a parsed valid record) by a random or hostile value."
    node, path = rec, []
    while isinstance(node, (dict, list)) and node and r.random() < 0.7:
        key = r.choice(list(node)) if isinstance(node, dict) else r.randrange(len(node))
        path.append((node, key)); node = node[key]
    hostile = r.choice([lambda: rand_value(r), lambda: f'<DEEP {r.randrange(50, 3000)}>', lambda: 'x' * 100_000,
                        lambda: rand_str(r), lambda: {'type': 'image_url', 'image_url': {'url': 'data:'}},
                        lambda: [{'type': r.choice(['text', 'image', 'input_audio', None]), 'text': rand_str(r)}]])
    if not path: return hostile()
    parent, key = path[-1]; parent[key] = hostile()
    return rec

def fuzz_lines(seed: int = 15, n: int = 4000) -> list[bytes]:
    r = random.Random(seed)
    samples = [json.loads(l) for f in sorted((ROOT/'data'/'samples').glob('*.jsonl')) for l
               in f.read_text().splitlines()
               if l.strip() and l.lstrip().startswith('{') and _valid(l)]
    lines = []
    for i in range(n):
        k = i % 5
        if k == 0: line = bytes(r.randrange(256) for _ in range(r.randrange(1, 80))).replace(b'\n', b' ').replace(b'\r',
                                                                                                                  b' ')
        elif k == 1: line = json.dumps(rand_value(r)).encode()
        elif k == 2: line = json.dumps({'id': rand_value(r), 'messages': rand_value(r),
                                        'source': rand_value(r)}).encode()
        else: line = dumps(mutate(r, json.loads(json.dumps(r.choice(samples)))))
        lines.append(line if line.strip() else b'{}')
    lines += [b'{"id": 1%s, "messages": []}' % (b'0' * 5000), b'[' * 100_000 + b']' * 100_000]
    return lines

def _valid(l):
    try: json.loads(l); return True
    except ValueError: return False

POISON = {  # line -> the reason it must be skipped with
    '{"id": "a\\udc00", "messages": %s}' % json.dumps(OK): 'unsupported_value',
    '{"id": "ok-source", "source": "\\ud800x", "messages": %s}' % json.dumps(OK): 'unsupported_value',
    '{"id": "big", "n": %s, "messages": %s}' % ('9' * 4301, json.dumps(OK)): 'unsupported_value',
    '{"id": "deep", "x": %s, "messages": %s}' % (deep(1000), json.dumps(OK)): 'unsupported_value',
    json.dumps({'id': 'deep-args', 'messages': [OK[0], {'role': 'assistant', 'content': '', 'tool_calls': [
        {'function': {'name': 'f', 'arguments': '{"a": %s}' % deep(999)}}]}]}): 'unsupported_value',
    json.dumps({'id': 'image', 'messages': [{'role': 'user', 'content': [{'type': 'image_url',
                                                                          'image_url': {'url': 'x'}},
                                                                     {'type': 'text', 'text': 'what is it?'}]},
                                            OK[1]]}): 'unsupported_content',
}

def test_poison_lines_are_listed_skips_and_the_run_goes_on(qwen_dir, tmp_path):
    """Issue 15.2/15.8: each poison line (in the middle of good ones) is a listed skip with its reason; the run
    completes."""
    src = tmp_path/'c.jsonl'
    good = [json.dumps({'id': f'g{i}', 'messages': OK}) for i in range(3)]
    src.write_text('\n'.join([good[0], *POISON, good[1], good[2]]) + '\n')
    st = tokenize_dataset(qwen_dir, src, tmp_path/'out', progress=False)
    assert st['samples'] == 3 and st['records_read'] == 3 + len(POISON)
    sk = [json.loads(l) for l in (tmp_path/'out'/'skipped.jsonl').read_text(encoding='utf-8').splitlines()]
    assert [s['reason'] for s in sk] == list(POISON.values())
    assert [s['line'] for s in sk] == list(range(2, 2 + len(POISON))) and all(s['file'] == 'c.jsonl' for s in sk)
    assert sk[0]['sample_id'] == 'a\\udc00'  # the bad id, its escape visible
    assert st['skipped'] == {'unsupported_value': 5, 'unsupported_content': 1}

def test_fuzz_record_reader(qwen_dir, tmp_path):
    "Fixed-seed fuzz (random bytes, random JSON, mutated real records, huge and deep values): every line accounted for."
    lines = fuzz_lines()
    for i, l in enumerate(lines, 1): assert isinstance(parse_line(l, 'f.jsonl', i), (Record, Skip))
    src = tmp_path/'fuzz.jsonl'; src.write_bytes(b'\n'.join(lines) + b'\n')
    st = tokenize_dataset(qwen_dir, src, tmp_path/'out', max_seq_len=2048, progress=False)
    assert st['records_read'] == len(lines) == st['samples'] + sum(st['skipped'].values())
    assert set(st['skipped']) <= set(SKIP_REASONS) and 'mask_mismatch' not in st['skipped']
    sk = (tmp_path/'out'/'skipped.jsonl').read_bytes().split(b'\n')[:-1]  # not splitlines: \u2028 is text
    assert len(sk) == sum(st['skipped'].values()) and st['samples'] > 50
    t = pa.concat_tables([pa.ipc.open_stream(str(f)).read_all() for f in sorted((tmp_path/'out').glob('data-*.arrow'))])
    assert t.num_rows == st['samples']

class _Payload:
    "A pickle that creates a file when loaded: what a writer of a shared cache folder could plant."
    def __init__(self, marker): self.marker = marker
    def __reduce__(self): return (open, (self.marker, 'w'))

def test_encoder_cache_runs_no_code_and_rebuilds_bad_files(qwen_dir, tmp_path, monkeypatch):
    """Issue 15.6: planted pickles never run; corrupt or foreign cache files (verdict, byte table) are rebuilt with a
    warning."""
    import pickle, shutil, warnings, numpy as np
    from dflash_nb.tokenizer import ChatTokenizer, sha256_file
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    text = 'Hello, wörld <|im_end|>'
    def fresh():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            ct = ChatTokenizer(qwen_dir)
            ok = ct.encoder == 'fastokens' and ct.fast.decode_bytes(np.array(ct.encode(text))) == text.encode()
        # another test's unclosed pipe may be collected here
        return ok, [str(x.message) for x in w if not issubclass(x.category, ResourceWarning)]
    assert fresh() == (True, [])   # builds both cache files
    enc = tmp_path/'cache'/'encoders'
    table, verdict = next(enc.glob('*.fastokens-bytes-*.npz')), next(enc.glob('*.fastokens-*.json'))
    good = {f: f.read_bytes() for f in (table, verdict)}
    marker = tmp_path/'pwned'
    # the same files made for another tokenizer.json: foreign
    other = tmp_path/'other'; shutil.copytree(qwen_dir, other)
    (other/'tokenizer.json').write_text((other/'tokenizer.json').read_text().replace('"<|im_end|>"', '"<|im_end|>" ',
                                                                                     1))
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache2'))
    ChatTokenizer(other).fast.ready()
    foreign = {f: next((tmp_path/'cache2'/'encoders').glob(f.name.replace(sha256_file(qwen_dir/'tokenizer.json'),
                                                                          '*'))).read_bytes()
               for f in (table, verdict)}
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    for f in (table, verdict):
        for bad in (pickle.dumps(_Payload(str(marker))), good[f][:len(good[f]) // 3], foreign[f]):
            f.write_bytes(bad)
            ok, msgs = fresh()
            assert not marker.exists(), "a planted pickle was executed"
            assert ok and any('rebuilding it' in m and str(f) in m for m in msgs), (f.name, bad[:20], msgs)
            assert fresh() == (True, [])   # rebuilt

def test_duplicate_ids_counted_and_gated(qwen_dir, tmp_path):
    "Issue 15.12: duplicate ids (also 1 vs \"1\") are counted in stats.json and fail the inspect gate, never silent."
    from dflash_nb.inspect import inspect_dataset
    src = tmp_path/'c.jsonl'
    src.write_text(''.join(json.dumps({'id': i, 'messages': OK}) + '\n' for i in (1, '1', 'a', 'a', 'b', 'c')))
    st = tokenize_dataset(qwen_dir, src, tmp_path/'out', progress=False)
    assert st['samples'] == 6 and st['duplicate_ids'] == 2
    g = inspect_dataset(tmp_path/'out').gate('duplicate_ids')
    assert g.status == 'fail' and g.value == pytest.approx(2 / 6) and set(g.examples) == {'1', 'a'}
    uniq = tmp_path/'u.jsonl'; uniq.write_text(''.join(json.dumps({'id': f'u{i}',
                                                                   'messages': OK}) + '\n' for i in range(3)))
    assert tokenize_dataset(qwen_dir, uniq, tmp_path/'u', progress=False)['duplicate_ids'] == 0
    assert inspect_dataset(tmp_path/'u').gate('duplicate_ids').status == 'pass'

def test_manifest_model_path_is_absolute_so_merge_runs_elsewhere(qwen_dir, tmp_path):
    "Issue 15.12: tokenize with a relative --model-path, then merge from another folder without --model-path."
    import shutil, subprocess, sys
    from conftest import cli
    shutil.copytree(qwen_dir, tmp_path/'tok')
    src = tmp_path/'c.jsonl'; src.write_text(''.join(json.dumps({'id': f'e{i}',
                                                                 'messages': OK}) + '\n' for i in range(3)))
    exe = str(Path(sys.executable).with_name('dflash-nb'))
    subprocess.run([exe, 'tokenize', '--model-path', 'tok', '--completions', 'c.jsonl', '--output-dir', 'ds',
                    '--quiet'],
                   cwd=tmp_path, check=True, capture_output=True)
    man = json.loads((tmp_path/'ds'/'manifest.json').read_text())
    assert man['tokenizer']['model_path'] == str(tmp_path/'tok') and len(man['tokenizer']['fingerprint']) == 16
    (tmp_path/'elsewhere').mkdir()
    new = tmp_path/'n.jsonl'; new.write_text(json.dumps({'id': 'n0', 'messages': OK}) + '\n')
    r = subprocess.run([exe, 'merge', '--existing', '../ds', '--new', str(new), '--output-dir', 'm', '--quiet'],
                       cwd=tmp_path/'elsewhere', capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert 'merged 3 = existing 3 + new 1 - duplicates 1' in r.stdout  # n0 has e0's content

@pytest.mark.parametrize('prefix,why', [
    # a gigabyte in one expression
    ("{% set s = 'a' * 2**30 %}{{ s|length }}", 'limit 16,777,216'),
    # 30 MB of output (the template probes may hit the time cap first)
    ("{% for i in range(3) %}{{ 'x' * 10000000 }}{% endfor %}", 'characters (limit|took longer than 1 s'),
    # for ever
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", 'took longer than 1 s'),
])
def test_hostile_template_is_a_bounded_template_error(qwen_dir, tmp_path, monkeypatch, prefix, why):
    "Issue 15.12: a chat template that allocates, outputs or loops without bound costs each record a capped skip."
    import shutil
    import dflash_nb.tokenize as T
    # (the limit lives in tokenizer, which probes templates; tokenize arms it per record)
    import dflash_nb.tokenizer as TK
    # the real limit is 30 s; the mechanism is the same
    for m in (T, TK): monkeypatch.setattr(m, 'MAX_RECORD_SECONDS', 1.0)
    d = tmp_path/'tok'; shutil.copytree(qwen_dir, d)
    (d/'chat_template.jinja').write_text(prefix + (qwen_dir/'chat_template.jinja').read_text())
    src = tmp_path/'c.jsonl'; src.write_text(''.join(json.dumps({'id': f'r{i}',
                                                                 'messages': OK}) + '\n' for i in range(2)))
    with pytest.raises(T.TokenizeError, match='0 samples') as e: tokenize_dataset(d, src, tmp_path/'out',
                                                                                  progress=False)
    msg = str(e.value)  # a run of 0 samples exits non-zero, writes nothing, and names its skips and the first one
    assert '(2 records read: 2 template_error); nothing written; first: c.jsonl:1 template_error: ' in msg, msg
    assert any(w in msg for w in why.split('|')), msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ['c.jsonl', 'tok']


def test_a_run_of_0_samples_leaves_nothing_behind(qwen_dir, tmp_path):
    "Issue 24.14: a 0-sample run left a complete 0-row dataset, so the corrected rerun was refused ('already exists')."
    src = tmp_path/'c.jsonl'; src.write_text(json.dumps({'id': 'q', 'messages': OK[:1]}) + '\n')  # no assistant turn
    with pytest.raises(Exception,
                       match=r'0 samples \(1 records read: 1 no_generated_turn\); nothing written; first: c.jsonl:1 '):
        tokenize_dataset(qwen_dir, src, tmp_path/'out', progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['c.jsonl']  # no dataset, no .partial, no lock
    src.write_text(json.dumps({'id': 'q', 'messages': OK}) + '\n')  # corrected: the same command now runs
    assert tokenize_dataset(qwen_dir, src, tmp_path/'out', progress=False)['samples'] == 1
