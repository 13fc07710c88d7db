"""Differential tests of tokenize's fast paths: fastokens must give the Hugging Face tokenizer's ids, the
native Qwen3.6 renderer must give the Jinja template's text, and each must switch off where that cannot be
established."""
import json, random, shutil
from pathlib import Path
import numpy as np, pytest
from tokenizers import Tokenizer
from dflash_nb.chat_template import ChatTemplate, ChatTemplateError
from dflash_nb.qwen import QWEN36_CHAT_TEMPLATE, render_qwen36
from dflash_nb.records import read_records, Record
from dflash_nb.tokenize import render_segments, tokenize_record
from dflash_nb.tokenizer import ChatTokenizer, FastokensEncoder, fastokens_verdict
from chat_conversations import conversations, RAISES
from test_qwen import CORPUS
from conftest import ROOT, REFERENCE_TEMPLATE

@pytest.fixture(scope='module')
def fast(qwen_dir): return ChatTokenizer(qwen_dir, encoder='fastokens')

@pytest.fixture(scope='module')
def slow(qwen_dir): return ChatTokenizer(qwen_dir, encoder='tokenizers', renderer='jinja')

def _records():
    for src in (ROOT/'data'/'samples', ROOT/'tests'/'data'/'heldout.jsonl'):
        yield from (r for r in read_records(src) if isinstance(r, Record))

def _fuzz(n=3000, seed=1):
    "Random strings from the characters where pre-tokenizer regexes and normalisers differ most."
    r = random.Random(seed)
    alphabet = list(" \t\n\r\u00a0\u2028\u3000aZ09_'’-.,;:!?()[]{}<>/\\\"#@$%^&*+=|~`") + \
               ['e\u0301', 'n\u0303', '\u0338', '>\u0338', 'ﬁ', 'Å', 'Å', '한', '\u1100\u1161', '👍🏽', '🇫🇷', '中文', '加拿大',
                '١٢٣', '६', 'ß', 'İ',
                '<|im_end|>', '<think>', '</think>', '<tool_call>', "'s", "'LL", '\ufeff', '\u200d', '𝔘']
    return [''.join(r.choice(alphabet) for _ in range(r.randint(1, 60))) for _ in range(n)]

def test_fast_encoder_is_on_for_the_embedded_tokenizer(fast, slow, qwen_dir):
    assert (fast.encoder_reason, fast.renderer) == ('ok', 'qwen36-native')
    assert ChatTokenizer(qwen_dir).encoder == 'fastokens'   # what auto picks
    assert (slow.encoder, slow.renderer) == ('tokenizers', 'jinja')
    assert fast.fingerprint == slow.fingerprint   # same tokenizer, same template: the encoder is not part of it

def test_corpus_ids_equal_hf(fast, slow):
    assert len(CORPUS) >= 5000
    bad = [l for l in CORPUS if fast.encode(l) != slow.encode(l)]
    assert bad == []
    whole = '\n'.join(CORPUS)
    assert fast.encode(whole) == slow.encode(whole)

def test_fuzzed_strings_ids_equal_hf(fast, slow):
    texts = _fuzz()
    bad = [t for t in texts if fast.encode(t) != slow.encode(t)]
    assert bad == [], bad[:5]

def test_rendered_records_ids_and_masks_equal_hf(fast, slow):
    n = 0
    for r in _records():
        try: a = tokenize_record(fast, r, None)
        except ValueError as e: 
            with pytest.raises(type(e)): tokenize_record(slow, r, None)
            continue
        b = tokenize_record(slow, r, None)
        assert np.array_equal(a.input_ids, b.input_ids) and np.array_equal(a.loss_mask, b.loss_mask), r.sample_id
        n += 1
    assert n > 300

@pytest.mark.parametrize('template', ['ours', 'official'])
def test_native_renderer_equals_jinja(template):
    if template == 'official' and not REFERENCE_TEMPLATE.is_file(): pytest.skip('no ../shared reference template')
    t = ChatTemplate(QWEN36_CHAT_TEMPLATE if template == 'ours' else REFERENCE_TEMPLATE.read_text())
    convs = conversations(800, seed=3) + [(r.messages, r.tools, {}) for r in _records()]
    native = 0
    for msgs, tools, kw0 in convs:
        m, tl = t.prepare(msgs, tools)
        for j in range(1, len(m) + 1):
            for kw in ({}, {'add_generation_prompt': True}, {'add_generation_prompt': True, 'enable_thinking': False},
                       {'preserve_thinking': True}):
                kw = {**kw0, **kw}
                try: want = t.render_prepared(m[:j], tl, **kw)
                except ChatTemplateError: want = None
                got = render_qwen36(m[:j], tl, **kw)
                if got is not None:
                    native += 1
                    assert got == want, (msgs[:j], tools, kw)
    assert native > 8000   # it must actually cover the conversations, not decline them

def test_native_renderer_declines_what_jinja_rejects():
    for name, messages in RAISES:
        assert render_qwen36(ChatTemplate(QWEN36_CHAT_TEMPLATE).prepare(messages)[0]) is None, name

def _variant(qwen_dir, tmp_path, edit):
    d = tmp_path/'variant'; shutil.copytree(qwen_dir, d)
    tj = json.loads((d/'tokenizer.json').read_text()); edit(tj)
    (d/'tokenizer.json').write_text(json.dumps(tj, ensure_ascii=False))
    return d

@pytest.mark.parametrize('edit', [
    # merge priorities no longer follow ids
    lambda tj: tj['model']['merges'].insert(0, tj['model']['merges'].pop(5000)),
    # ByteLevel splits with its own regex too
    lambda tj: tj['pre_tokenizer']['pretokenizers'][1].update(use_regex=True),
    # ' the' can no longer be built from ' t'
    lambda tj: tj['model']['merges'].remove(['Ġ', 't']),
])
def test_auto_encoder_is_exact_on_variant_tokenizers(qwen_dir, tmp_path, monkeypatch, edit):
    """Variants an encoder that rebuilds the BPE itself (as the removed tiktoken path did) gets wrong: whatever `auto`
    picks must give the variant's own `tokenizers` ids (fastokens runs the file's real merges and pre-tokenizer)."""
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    d = _variant(qwen_dir, tmp_path, edit)
    hf, ct = Tokenizer.from_file(str(d/'tokenizer.json')), ChatTokenizer(d)
    texts = ['the cat and the dog went to the market, then they returned'] + CORPUS[::50] + _fuzz(300, seed=5)
    assert [ct.encode(t) for t in texts] == [e.ids for e
                                             in hf.encode_batch(texts, add_special_tokens=False)], ct.encoder
    assert ct.encoder == 'fastokens'

def test_other_template_uses_jinja(qwen_dir, tmp_path):
    d = tmp_path/'other'; shutil.copytree(qwen_dir, d)
    (d/'chat_template.jinja').write_text((d/'chat_template.jinja').read_text() + '\n')
    ct = ChatTokenizer(d)
    assert ct.renderer == 'jinja' and ct.encoder == 'fastokens'


# ---------------------------------------------------------------------------------------------- fastokens
def _glued(hf: Tokenizer, n=20000, seed=2):
    """Adversarial strings: vocabulary pieces glued together (the merge-less tokens among them), added-token strings and
    their prefixes, whitespace runs and random unicode."""
    r = random.Random(seed)
    vocab = sorted(hf.get_vocab(with_added_tokens=True).items(), key=lambda kv: kv[1])
    dec = lambda kv: hf.decode([kv[1]], skip_special_tokens=False)
    added = [t.content for t in hf.get_added_tokens_decoder().values()]
    pieces = [dec(r.choice(vocab)) for _ in range(4000)] + added + [a[:k] for a in added for k
                                                                    in (1, 2, len(a) - 1)] + \
             ['加拿大', '新加坡', ' ' * 7, '\n' * 5, '\t \n', '\r\n', '\u00a0', 'e\u0301', '\u0338', '🙂👍🏽']
    rnd = lambda: ''.join(chr(r.choice([r.randint(32, 0x2FF), r.randint(0x300, 0xD7FF), r.randint(0xE000, 0xFFFD),
                                         # no lone surrogates
                                         r.randint(0x1F300, 0x1FAFF)])) for _ in range(r.randint(1, 12)))
    return [''.join(r.choice(pieces) if r.random() < 0.8 else rnd() for _ in range(r.randint(1, 12))) for _ in range(n)]

@pytest.fixture(scope='module')
def fk(qwen_dir):
    ct = ChatTokenizer(qwen_dir, encoder='fastokens')
    return ct, ct.tokenizer

def test_fastokens_equals_hf_on_a_fuzz_corpus(fk):
    "25,000 adversarial strings, one by one and all together: the same ids as `tokenizers`, and back to their text."
    ct, hf = fk
    texts = _glued(hf) + _fuzz(5000, seed=7)
    got = ct.fast.encode_batch(texts)
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    bad = [t for t, a, b in zip(texts, got, want) if a.tolist() != b]
    assert bad == [], bad[:5]
    assert all(ct.same_text(a.view(np.int32), t) for t, a in zip(texts, got))   # the mask check's decode
    nfc = [t for t in texts if ct.normalize(t) != t]
    # (text Python's NFC changes: fastokens must normalise it as tokenizers does, not as Python does)
    assert len(nfc) > 100
    whole = ''.join(texts[:2000])
    assert ct.encode(whole) == hf.encode(whole, add_special_tokens=False).ids

def test_fastokens_normalises_as_tokenizers_not_as_python(fk):
    """Python's `unicodedata` (Unicode 14 on 3.11) and `tokenizers`' NFC order some combining marks differently;
    fastokens gets the raw text and normalises as `tokenizers` does (pre-normalising in Python, as the removed tiktoken
    path did, changes the ids), and the mask check still accepts the tokens' text."""
    import unicodedata
    ct, hf = fk
    s = 'a\u0d3c\u0301 and x\u0301\u0d3c'
    assert hf.normalizer.normalize_str(s) != unicodedata.normalize('NFC', s)   # the two NFCs really differ here
    ids = hf.encode(s, add_special_tokens=False).ids
    assert ct.encode(s) == ids and ct.same_text(np.array(ids, np.int32), s)

def test_fastokens_special_token_semantics_match_hf(fk, qwen_dir):
    """Template text: special tokens become their ids in both libraries. With special tokens split (transformers'
    `split_special_tokens=True`), both spell them out as text the same way."""
    ct, hf = fk
    texts = [f"a{t}b{t}{t}\n" for t in ct.special_tokens] + ['<|im_start|>user\nHi<|im_end|>\n<think>\n\n</think>\n\n']
    assert [ct.encode(t) for t in texts] == [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert ct.encode('<|im_start|>')== [248045] and ct.encode('</think>') == [248069]
    split = FastokensEncoder(qwen_dir/'tokenizer.json', nfc=True, split_special_tokens=True)
    hf2 = Tokenizer.from_file(str(qwen_dir/'tokenizer.json')); hf2.encode_special_tokens = True
    assert [split.encode(t) for t in texts] == [e.ids for e in hf2.encode_batch(texts, add_special_tokens=False)]
    assert 248045 not in split.encode('<|im_start|>')

def test_fastokens_probe_catches_a_different_tokenizer(qwen_dir, tmp_path, monkeypatch):
    """The probe compares against the reference it is given: against a tokenizer without the 'Ġ t' merge, fastokens
    (loading the original file) must be refused, not trusted because the structure checks pass."""
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    d = _variant(qwen_dir, tmp_path, lambda tj: tj['model']['merges'].remove(['Ġ', 't']))
    sha = 'probe-test'
    v = fastokens_verdict(qwen_dir/'tokenizer.json', sha, lambda: Tokenizer.from_file(str(d/'tokenizer.json')))
    assert 'disagree on probe text' in v['reason']
    # cached: no reference needed
    assert fastokens_verdict(qwen_dir/'tokenizer.json', sha, None)['reason'] == v['reason']

@pytest.mark.parametrize('edit,why', [
    (lambda tj: tj['added_tokens'][1].update(lstrip=True), 'strips'),
    (lambda tj: tj.update(normalizer={'type': 'NFKC'}), 'not NFC'),
    (lambda tj: tj.update(decoder=None), 'not ByteLevel'),
])
def test_fastokens_switches_off_where_not_provable(qwen_dir, tmp_path, monkeypatch, edit, why):
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    d = _variant(qwen_dir, tmp_path, edit)
    with pytest.raises(ValueError, match='fastokens cannot reproduce'): ChatTokenizer(d, encoder='fastokens')
    ct = ChatTokenizer(d)
    assert ct.encoder != 'fastokens' and f"fastokens: " in ct.encoder_reason and why in ct.encoder_reason
    text = 'Hello <|im_end|> world e\u0301'
    assert ct.encode(text) == Tokenizer.from_file(str(d/'tokenizer.json')).encode(text, add_special_tokens=False).ids

def test_fastokens_run_writes_hf_ids_and_records_the_encoder(qwen_dir, tmp_path):
    "A whole run at 2 workers with fastokens: every sample equals the `tokenizers` run, the manifest names the encoder."
    import datasets
    from dflash_nb.tokenize import tokenize_dataset
    src = ROOT/'data'/'samples'
    # (auto: tokenizers, small)
    a = tokenize_dataset(qwen_dir, src, tmp_path/'fk', workers=2, encoder='fastokens', progress=False)
    b = tokenize_dataset(qwen_dir, src, tmp_path/'hf', encoder='tokenizers', renderer='jinja', progress=False)
    assert a['samples'] == b['samples'] > 250 and a['skipped'] == b['skipped']
    assert json.loads((tmp_path/'fk'/'manifest.json').read_text())['tokenizer']['encoder'] == 'fastokens'
    x, y = datasets.load_from_disk(str(tmp_path/'fk')), datasets.load_from_disk(str(tmp_path/'hf'))
    assert x['input_ids'] == y['input_ids'] and x['loss_mask'] == y['loss_mask'] and x['sample_id'] == y['sample_id']

_RUN_CLI = """import sys
from dflash_nb.cli import main
try: rc = main(sys.argv[1:])
finally: print('FASTOKENS_IMPORTED', 'fastokens' in sys.modules)
sys.exit(rc)
"""

def _tokenize_cli(out, *extra):
    """A real `dflash-nb tokenize` process on a small sample file; its stdout, manifest and stats, and whether it
    imported fastokens."""
    import subprocess, sys
    r = subprocess.run([sys.executable, '-c', _RUN_CLI, 'tokenize', '--completions',
                        ROOT/'data'/'samples'/'sharegpt.jsonl',
                        '--output-dir', out, '--quiet', *extra], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout, json.loads((out/'manifest.json').read_text()), json.loads((out/'stats.json').read_text()), \
           'FASTOKENS_IMPORTED True' in r.stdout

def test_small_input_uses_tokenizers_without_loading_fastokens(tmp_path):
    """--encoder auto on an 84 KB file: `tokenizers` (never imports fastokens), the manifest says why; the ids are
    fastokens'."""
    import datasets
    out, man, st, imported = _tokenize_cli(tmp_path/'auto')
    assert man['tokenizer']['encoder'] == 'tokenizers' and not imported, (man['tokenizer'], out)
    assert man['tokenizer']['encoder_reason'].startswith('auto: 84,255 bytes of input, under 2,097,152'), man[
        'tokenizer']
    out2, man2, st2, imported2 = _tokenize_cli(tmp_path/'fk', '--encoder', 'fastokens')  # asked for: always
    assert man2['tokenizer']['encoder'] == 'fastokens' and imported2
    a, b = datasets.load_from_disk(str(tmp_path/'auto')), datasets.load_from_disk(str(tmp_path/'fk'))
    assert a['input_ids'] == b['input_ids'] and a['loss_mask'] == b['loss_mask'] and st['samples'] == st2[
        'samples'] == 70

def test_tokens_per_second_is_over_the_tokenizing_not_the_start_up(tmp_path):
    """stats.json `seconds` is the tokenizing; the encoder load, template probes and workers are the manifest's
    start-up, apart."""
    # (tokenizers: small; loaded before the workers fork)
    out, man, st, _ = _tokenize_cli(tmp_path/'o', '--workers', '2')
    t = man['timing']
    assert t['startup_seconds'] > 0 and st['seconds'] > 0 and t['tokenize_seconds'] == st['seconds'], (t, st)
    # stats.json: the DESIGN keys (runs compare equal apart from seconds and tokens/s)
    assert 'startup_seconds' not in st
    # (seconds: rounded to ms)
    assert st['tokens_per_second'] == pytest.approx(st['total_tokens'] / st['seconds'], rel=0.01)
    assert f"tokens/s over {st['seconds']:,.1f} s of tokenizing (+{t['startup_seconds']:,.1f} s start-up)" in out, out
