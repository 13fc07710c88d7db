"""Differential tests of tokenize's fast paths: tiktoken must give the Hugging Face tokenizer's ids, the native
Qwen3.6 renderer must give the Jinja template's text, and both must switch off where that cannot be established."""
import json, random, shutil
from pathlib import Path
import numpy as np, pytest
from tokenizers import Tokenizer
from dflash_nb.chat_template import ChatTemplate, ChatTemplateError
from dflash_nb.qwen import QWEN36_CHAT_TEMPLATE, render_qwen36
from dflash_nb.records import read_records, Record
from dflash_nb.tokenize import ChatTokenizer, TiktokenEncoder, render_segments, tokenize_record
from chat_conversations import conversations, RAISES
from test_qwen import CORPUS
from conftest import ROOT, REFERENCE_TEMPLATE

@pytest.fixture(scope='module')
def fast(qwen_dir): return ChatTokenizer(qwen_dir)

@pytest.fixture(scope='module')
def slow(qwen_dir): return ChatTokenizer(qwen_dir, encoder='tokenizers', renderer='jinja')

def _records():
    for src in (ROOT/'data'/'samples', ROOT/'tests'/'data'/'heldout.jsonl'):
        yield from (r for r in read_records(src) if isinstance(r, Record))

def _fuzz(n=3000, seed=1):
    "Random strings from the characters where pre-tokenizer regexes and normalisers differ most."
    r = random.Random(seed)
    alphabet = list(" \t\n\r\u00a0\u2028\u3000aZ09_'’-.,;:!?()[]{}<>/\\\"#@$%^&*+=|~`") + \
               ['e\u0301', 'n\u0303', '\u0338', '>\u0338', 'ﬁ', 'Å', 'Å', '한', '\u1100\u1161', '👍🏽', '🇫🇷', '中文', '加拿大', '١٢٣', '६', 'ß', 'İ',
                '<|im_end|>', '<think>', '</think>', '<tool_call>', "'s", "'LL", '\ufeff', '\u200d', '𝔘']
    return [''.join(r.choice(alphabet) for _ in range(r.randint(1, 60))) for _ in range(n)]

def test_fast_encoder_is_on_for_the_embedded_tokenizer(fast, slow):
    assert (fast.encoder, fast.encoder_reason, fast.renderer) == ('tiktoken', 'ok', 'qwen36-native')
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
            for kw in ({}, {'add_generation_prompt': True}, {'add_generation_prompt': True, 'enable_thinking': False}, {'preserve_thinking': True}):
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

@pytest.mark.parametrize('edit,why', [
    (lambda tj: tj['added_tokens'][1].update(lstrip=True), 'strips'),
    (lambda tj: tj.update(normalizer={'type': 'NFKC'}), 'not NFC'),
    (lambda tj: tj['model']['merges'].insert(0, tj['model']['merges'].pop(5000)), 'merge priorities'),
    (lambda tj: tj['pre_tokenizer']['pretokenizers'][1].update(use_regex=True), 'pre-tokenizer'),
    (lambda tj: tj['model'].update(byte_fallback=True), 'byte_fallback'),
])
def test_fast_encoder_switches_off_where_not_provable(qwen_dir, tmp_path, monkeypatch, edit, why):
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    d = _variant(qwen_dir, tmp_path, edit)
    ct = ChatTokenizer(d)
    assert ct.encoder == 'tokenizers' and why in ct.encoder_reason
    with pytest.raises(ValueError, match='tiktoken cannot reproduce'): ChatTokenizer(d, encoder='tiktoken')
    assert ct.encode('Hello <|im_end|> world') == Tokenizer.from_file(str(d/'tokenizer.json')).encode('Hello <|im_end|> world', add_special_tokens=False).ids

def test_probe_catches_what_the_structure_checks_miss(qwen_dir, tmp_path, monkeypatch):
    """Without the merge that makes 'Ġt', tokenizers can no longer build ' the' from ' t'+'he', while tiktoken still
    joins ' '+'the' (any pair whose concatenation is a token). Every structural check passes; the probe must not."""
    monkeypatch.setenv('DFLASH_NB_CACHE', str(tmp_path/'cache'))
    d = _variant(qwen_dir, tmp_path, lambda tj: tj['model']['merges'].remove(['Ġ', 't']))
    hf = Tokenizer.from_file(str(d/'tokenizer.json'))
    text = 'the cat and the dog went to the market, then they returned'
    enc, why = TiktokenEncoder.from_tokenizer_json(json.loads((d/'tokenizer.json').read_text()))
    assert why == 'ok' and enc.encode(text) != hf.encode(text, add_special_tokens=False).ids   # structurally "fine", yet wrong
    ct = ChatTokenizer(d)
    assert ct.encoder == 'tokenizers' and 'probe' in ct.encoder_reason
    assert ct.encode(text) == hf.encode(text, add_special_tokens=False).ids

def test_other_template_uses_jinja(qwen_dir, tmp_path):
    d = tmp_path/'other'; shutil.copytree(qwen_dir, d)
    (d/'chat_template.jinja').write_text((d/'chat_template.jinja').read_text() + '\n')
    ct = ChatTokenizer(d)
    assert ct.renderer == 'jinja' and ct.encoder == 'tiktoken'
