"""The loss-mask rule on many chat templates: `dflash-nb tokenize` (a real run) against the transformers-based oracle
of tests/template_corpus.py, token for token and mask bit for mask bit; skips and flags compared by reason.

Real templates come from ../shared/reference/templates (skipped where absent); the small templates of the corpus,
one per failure class, run everywhere."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from template_corpus import (MINE, RECORDS, Case, Family, model_dir, oracle, real_families, record_line,
                             union_tokenizer_json)

REAL = real_families()
# tokens.json says 'string', but the template writes tool calls only for `content: None`, a key transformers drops
# (SOURCE.md): under apply_chat_template its tool calls never render, so no argument form is detected.
NO_TOOL_CALLS_UNDER_TRANSFORMERS = {'deepseek-r1-distill-qwen-32b': None}


@pytest.fixture(scope='module')
def corpus(qwen_dir, tmp_path_factory):
    "`(tokenizer.json dict, transformers tokenizer)` shared by every family (loading either costs seconds)."
    from transformers import AutoTokenizer
    tj = union_tokenizer_json(json.loads((qwen_dir / 'tokenizer.json').read_text(encoding='utf-8')), MINE + REAL)
    d = model_dir(tj, MINE[0], tmp_path_factory.mktemp('corpus') / 'tok')
    return tj, AutoTokenizer.from_pretrained(str(d))


def family_tokenizer(tok, fam: Family):
    "The shared transformers tokenizer set up as `fam`'s: its template(s) and its bos/eos as template variables."
    tok.chat_template = fam.templates['default'] if list(fam.templates) == ['default'] else dict(fam.templates)
    tok.bos_token, tok.eos_token = fam.bos, fam.eos
    return tok


def read_dataset(out: Path) -> dict:
    "sample_id -> (input_ids, loss_mask) of a tokenize output, read straight from its Arrow shards."
    rows = {}
    for f in sorted(out.glob('data-*.arrow')):
        with pa.ipc.open_stream(str(f)) as r:
            for b in r:
                for sid, ids, m in zip(b.column('sample_id').to_pylist(), b.column('input_ids').to_pylist(),
                                       b.column('loss_mask').to_pylist()):
                    rows[sid] = (ids, m)
    return rows


def run_family(fam: Family, corpus, tmp: Path, cases=RECORDS) -> tuple[int, list[str], dict]:
    "Tokenize the corpus for `fam` and compare with the oracle: (cases exact, what differs, the manifest)."
    from dflash_nb.tokenize import ChatTokenizer, tokenize_dataset, tokenize_lines, TokenizeError
    d = model_dir(corpus[0], fam, tmp / 'model')
    (tmp / 'c.jsonl').write_text(''.join(record_line(c) + '\n' for c in cases), encoding='utf-8')
    try: tokenize_dataset(d, tmp / 'c.jsonl', tmp / 'out', max_seq_len=None, progress=False)
    # a family whose every record is skipped (DeepSeek-R1) exits non-zero and writes nothing:
    except TokenizeError as e:
        # its skips (and template facts) from the same per-record code, in process
        if ': 0 samples (' not in str(e): raise
        ct, lines = ChatTokenizer(d), (tmp / 'c.jsonl').read_text(encoding='utf-8').splitlines()
        b = tokenize_lines(ct, [('c.jsonl', n, line) for n, line in enumerate(lines, 1)], None)
        assert not b.sample_ids, b.sample_ids
        (tmp / 'out').mkdir()
        (tmp / 'out' / 'skipped.jsonl').write_text(''.join(json.dumps(s) + '\n' for s in b.skips))
        (tmp / 'out' / 'manifest.json').write_text(json.dumps({'tokenizer': ct.describe()}))
    got = read_dataset(tmp / 'out')
    skips = {s['sample_id']: s for s in map(json.loads, (tmp / 'out' / 'skipped.jsonl').read_text().splitlines())}
    flagged = {}
    if (tmp / 'out' / 'flagged.jsonl').is_file():
        for f in map(json.loads, (tmp / 'out' / 'flagged.jsonl').read_text().splitlines()): flagged.setdefault(
            f['sample_id'], []).append(f['reason'])
    tok = family_tokenizer(corpus[1], fam)
    exact, diffs = 0, []
    for c in cases:
        want = oracle(tok, c, fam)
        if want.skip is not None:
            ok = c.id in skips and skips[c.id]['reason'] == want.skip and c.id not in got
            if want.why == 'prefix':  # skipped with exactly the rule's reason
                ok = ok and 'add_generation_prompt=True) is not a prefix of the full render' in skips[c.id]['detail']
            what = f"skip {want.skip}, got {skips.get(c.id, {}).get('reason') or 'a sample'}"
        else:
            ok = c.id in got and got[c.id] == (want.input_ids,
                                               want.loss_mask) and sorted(set(flagged.get(c.id, []))) == want.flags
            what = (f"skipped {skips[c.id]['reason']}: {skips[c.id]['detail'][:300]}" if c.id in skips else
                    f"flags {flagged.get(c.id)} vs {want.flags}" if c.id in got and got[c.id]
                    == (want.input_ids, want.loss_mask) else
                    'tokens/mask differ: ' + repr(tok.decode([i for i, m in zip(*got[c.id]) if m])[-200:])
                    + ' vs oracle '
                    + repr(tok.decode([i for i, m in zip(want.input_ids, want.loss_mask) if m])[-200:]) if c.id in got
                    else 'missing')
        exact += ok
        if not ok: diffs.append(f"{c.id}: {what}")
    print(f"\n{fam.name}: {len(got)} samples, skipped {dict(Counter(s['reason'] for s in skips.values()))}, "
          f"flagged {sum(map(len, flagged.values()))}", end='')
    return exact, diffs, json.loads((tmp / 'out' / 'manifest.json').read_text())


RESULTS = {}

def _report(fam, exact, diffs):
    RESULTS[fam.name] = (exact, len(RECORDS))
    print(f"\n{fam.name} ({fam.source}): {exact}/{len(RECORDS)} exact" + ''.join(f"\n    {d}" for d in diffs))


@pytest.mark.parametrize('fam', MINE, ids=[f.name.split(' ')[0] for f in MINE])
def test_small_templates_match_the_oracle(fam, corpus, tmp_path):
    exact, diffs, manifest = run_family(fam, corpus, tmp_path)
    _report(fam, exact, diffs)
    assert not diffs, diffs
    forms = manifest['tokenizer']['chat_templates']
    form = forms['tool_use' if 'tool_use' in forms else 'default']
    assert form['reasoning_field'] == fam.reasoning_field and form['tool_args'] == fam.tool_args
    assert manifest['tokenizer']['stop_tokens'] == list(dict.fromkeys(fam.end_of_turn + [fam.eos]))


@pytest.mark.skipif(not REAL, reason='../shared/reference/templates not present')
@pytest.mark.parametrize('fam', REAL, ids=[f.name for f in REAL])
def test_real_templates_match_the_oracle(fam, corpus, tmp_path):
    exact, diffs, manifest = run_family(fam, corpus, tmp_path)
    _report(fam, exact, diffs)
    assert not diffs, diffs
    forms = manifest['tokenizer']['chat_templates']
    assert forms['default']['reasoning_field'] == fam.reasoning_field
    assert forms['default']['end_of_turn'] and set(forms['default']['end_of_turn']) <= set(fam.end_of_turn)
    args = forms['tool_use' if 'tool_use' in forms else 'default']['tool_args']
    assert args == NO_TOOL_CALLS_UNDER_TRANSFORMERS.get(fam.name, fam.tool_args), args


# ---------------------------------------------------------------------------------------------- the check

WRONG_ENDS = [  # family, a wrong end-of-turn choice, what it would mask
    ('phi-like', ('<|endoftext|>',), "the eos the template appends after the final turn"),
    ('glm-like', ('</think>',), "the last special token before the answer (a special reasoning tag)"),
    ('qwen3-like', (), "no end-of-turn token: the template's newline after <|im_end|>"),
]


@pytest.mark.parametrize('name,wrong,what', WRONG_ENDS, ids=[w[0] for w in WRONG_ENDS])
def test_a_wrong_end_of_turn_fails_the_run(name, wrong, what, corpus, tmp_path, monkeypatch):
    "The per-sample check does not trust render_turns' end-of-turn choice: forcing a wrong one makes the run fail."
    import dataclasses
    import dflash_nb.tokenize as T, dflash_nb.tokenizer as TK
    fam = next(f for f in MINE if f.name.startswith(name))
    real = TK.detect_form
    monkeypatch.setattr(TK, 'detect_form', lambda *a, **k: dataclasses.replace(real(*a, **k), end_of_turn=wrong))
    d = model_dir(corpus[0], fam, tmp_path / 'model')
    (tmp_path / 'c.jsonl').write_text(''.join(record_line(c) + '\n' for c in RECORDS), encoding='utf-8')
    with pytest.raises(T.TokenizeError, match='mask_mismatch'):
        T.tokenize_dataset(d, tmp_path / 'c.jsonl', tmp_path / 'out', max_seq_len=None, progress=False)
    skipped = [json.loads(l) for l in (tmp_path / 'out' / 'skipped.jsonl').read_text().splitlines()]
    mismatched = [s for s in skipped if s['reason'] == 'mask_mismatch']
    assert not read_dataset(tmp_path / 'out'), what  # no sample with the wrong mask was written
    assert len(mismatched) > len(RECORDS) // 2 and all('but the model generates' in s['detail'] for s in mismatched), (
        what, skipped)
    # the rest: no end of turn found
    assert {s['reason'] for s in skipped} <= {'mask_mismatch', 'template_error'}, skipped


def test_reasoning_not_rendered_is_flagged_or_skipped_and_inspect_shows_the_template(corpus, tmp_path):
    """Kimi-like drops the final turn's reasoning: flagged by default (stats, flagged.jsonl), skipped on request;
    inspect shows the facts."""
    from conftest import cli
    fam = next(f for f in MINE if f.name.startswith('kimi-like'))
    d = model_dir(corpus[0], fam, tmp_path / 'model')
    (tmp_path / 'c.jsonl').write_text(''.join(record_line(c) + '\n' for c in RECORDS), encoding='utf-8')
    want = sorted(c.id for c in RECORDS if oracle(family_tokenizer(corpus[1], fam), c, fam).flags)
    assert len(want) >= 4
    cli('tokenize', '--model-path', d, '--completions', tmp_path / 'c.jsonl', '--output-dir', tmp_path / 'kept',
        '--quiet')
    st = json.loads((tmp_path / 'kept' / 'stats.json').read_text())
    man = json.loads((tmp_path / 'kept' / 'manifest.json').read_text())
    assert st['samples'] == len(RECORDS) and man['flagged'] == {'reasoning_not_rendered': len(want)}
    assert sorted(json.loads(l)['sample_id'] for l
                  in (tmp_path / 'kept' / 'flagged.jsonl').read_text().splitlines()) == want
    cli('tokenize', '--model-path', d, '--completions', tmp_path / 'c.jsonl', '--output-dir', tmp_path / 'skip',
        '--quiet',
        '--skip-reasoning-not-rendered')
    st = json.loads((tmp_path / 'skip' / 'stats.json').read_text())
    assert (st['samples'], st['skipped']) == (len(RECORDS) - len(want), {'reasoning_not_rendered': len(want)})
    r = cli('inspect', tmp_path / 'kept', '--quiet', check=False)
    line = next(l for l in r.stdout.splitlines() if l.startswith('chat template:'))
    assert line == (
        f"chat template: default ({len(RECORDS)} samples): end of turn <|im_end|>, tool arguments dict, reasoning "
        f"field reasoning_content; model stop tokens <|im_end|>; flagged reasoning_not_rendered {len(want)}"), line


@pytest.mark.skipif(not any(f.name == 'qwen2.5-7b-instruct' for f in REAL),
                    reason='../shared/reference/templates not present')
def test_a_template_that_writes_no_stop_token_is_warned_recorded_and_inspected(corpus, tmp_path, capsys):
    """Issue 24.13: a model directory whose stop token the template never writes (Gemma-style: eos <eos>, turns end in
    <end_of_turn>, no generation_config.json) silently fell back to "the turn ends where its rendering ends". Here the
    real Qwen2.5 template with the base model's eos <|endoftext|>: one warning line naming <|im_end|>, the fallback in
    the manifest, and inspect says so."""
    import dataclasses
    from dflash_nb.inspect import inspect_dataset
    from dflash_nb.tokenize import tokenize_dataset
    fam = dataclasses.replace(next(f for f in REAL if f.name == 'qwen2.5-7b-instruct'), eos='<|endoftext|>',
                              end_of_turn=['<|endoftext|>'])
    d = model_dir(corpus[0], fam, tmp_path / 'model')
    (d / 'generation_config.json').unlink()
    (tmp_path / 'c.jsonl').write_text(record_line(RECORDS[0]) + '\n', encoding='utf-8')
    capsys.readouterr()
    tokenize_dataset(d, tmp_path / 'c.jsonl', tmp_path / 'out', progress=False)
    [warning] = [l for l in capsys.readouterr().err.splitlines() if 'warning' in l]
    assert warning.startswith(
        f"tokenize: warning: {d}: the model's stop tokens (<|endoftext|>) are not written by chat template "
        "'default': each generated turn ends where its rendering ends; its turns end with <|im_end|>"), warning
    form = json.loads((tmp_path / 'out' / 'manifest.json').read_text())['tokenizer']['chat_templates']['default']
    assert (form['end_of_turn'], form['written'], form['turn_end']) == ([], ['<|im_end|>'],
                                                                        "fallback: where the turn's rendering ends")
    rep = inspect_dataset(tmp_path / 'out')
    assert 'default (1 samples): end of turn none written (fallback: a turn ends where its rendering ends; ' \
           'its turns end with <|im_end|>, not a stop token of the model)' in rep.chat_template, rep.chat_template
