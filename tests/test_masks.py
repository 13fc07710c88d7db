"""Mask inspection and quality gates: every gate on passing and failing data (datasets tokenized from generated
completions with the real embedded tokenizer), mask checks on deliberately corrupted datasets, the HTML views,
the `inspect` command's function and the inspect job."""
import argparse, contextlib, io, json, random, re, shutil, warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from conftest import ROOT
from dflash_nb.testing import write_dataset
from dflash_nb.dataset import dataset_shards, stream_batches
from dflash_nb.views import MaskDataset, TokenView, compare_tokenizations
from dflash_nb.inspect import Thresholds, inspect_dataset, add_inspect_args, inspect_main, describe_loop
from dflash_nb.tokenize import TokenizeError, tokenize_dataset

SAMPLES = ROOT/'data'/'samples'
WORDS = ("alpha beta gamma delta river mountain cache index vector tensor kernel packet socket thread mutex queue "
         "budget invoice harbor lantern orbit prism quartz saddle timber velvet walnut yarrow zenith").split()


def prose(rng, n=40):
    return ' '.join(rng.choice(WORDS) for _ in range(n)).capitalize() + '.'


def chat(i, answer, reasoning, source='chat'):
    return {'id': f'r{i:04d}', 'source': source, 'messages': [
        {'role': 'user',
         'content': f'Question {i}: please explain the following topic in some detail, with an example.'},
        {'role': 'assistant', 'content': answer, 'reasoning_content': reasoning}]}


def healthy(i, rng, source='chat'):
    return chat(i, prose(rng, 60), prose(rng, 30), source)


def code_answer(i, rng):
    body = '\n'.join(f"    x{k} = {rng.choice(WORDS)!r} * {k + i}" for k in range(12))
    return f"```python\ndef f_{i}():\n{body}\n    return x0\n```\nThis builds {prose(rng, 10)}"


def agent(i, paths, rng, answer=None):
    "User question, then one read_file tool call per path (each with its result), then a final answer."
    msgs = [{'role': 'user', 'content': f'Task {i}: summarise the modules of the project.'}]
    for k, p in enumerate(paths):
        msgs += [{'role': 'assistant', 'content': '',
                  'reasoning_content': f'Read {p} next.' if k else 'Start with the files.',
                  'tool_calls': [{'type': 'function', 'function': {'name': 'read_file', 'arguments': {'path': p}}}]},
                 {'role': 'tool', 'content': f'contents of {p}: {prose(rng, 8)}'}]
    msgs.append({'role': 'assistant', 'content': answer or prose(rng, 40), 'reasoning_content': 'Summarise.'})
    tools = [{'type': 'function', 'function': {'name': 'read_file', 'description': 'Read a file.',
              'parameters': {'type': 'object', 'properties': {'path': {'type': 'string'}}, 'required': ['path']}}}]
    return {'id': f'a{i:04d}', 'source': 'agent', 'tools': tools, 'messages': msgs}


def build(qwen_dir, root: Path, name: str, records, **kw) -> Path:
    src = root/f'{name}.jsonl'
    src.write_text(''.join(json.dumps(r) + '\n' for r in records))
    out = root/name
    tokenize_dataset(qwen_dir, src, out, progress=False, **kw)
    return out


@pytest.fixture(scope='module')
def root(tmp_path_factory): return tmp_path_factory.mktemp('masks')


@pytest.fixture(scope='module')
def samples_ds(qwen_dir, root):
    out = root/'samples'
    tokenize_dataset(qwen_dir, SAMPLES, out, progress=False)
    return out


@pytest.fixture(scope='module')
def samples_report(samples_ds): return inspect_dataset(samples_ds)


@pytest.fixture(scope='module')
def ok_ds(qwen_dir, root):
    "Built like the dataset that failed: 87% of answers 'OK.' after an empty think block."
    rng = random.Random(0)
    return build(qwen_dir, root, 'ok', [chat(i, 'OK.', '') if i % 100 < 87 else healthy(i, rng) for i in range(200)])


@pytest.fixture(scope='module')
def ok_report(ok_ds): return inspect_dataset(ok_ds)


def run_cli(*args):
    p = add_inspect_args(argparse.ArgumentParser('inspect'))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = inspect_main(p.parse_args([*map(str, args), '--quiet', '--color', 'never']))
    return rc, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- healthy data

def test_shipped_samples_pass(samples_report):
    r = samples_report
    assert [c.status for c in r.checks] == ['pass'] * 6 and not r.failed
    st = {g.name: g.status for g in r.gates}
    # the shipped samples reuse one reasoning + answer for several paraphrased questions (data/make_samples.py),
    # so the 5 most common answers cover 8.6% of 280 samples: a warning, not a failure
    assert st == {'tiny_span': 'pass', 'identical_answers': 'warn', 'empty_reasoning': 'pass', 'repetition': 'pass',
                  'short_samples': 'pass', 'truncated': 'pass', 'source_skew': 'pass', 'duplicate_ids': 'pass'}
    assert r.samples == 280 and r.total_tokens == json.loads((Path(r.path)/'stats.json').read_text())['total_tokens']


def test_cli_exit_codes_on_samples(samples_ds, tmp_path):
    rc, out, _ = run_cli(samples_ds, '--json', tmp_path/'r.json')
    assert rc == 0 and 'QUALITY GATES' in out and 'MASK CHECKS' in out
    d = json.loads((tmp_path/'r.json').read_text())
    assert d['status'] == 'warn' and len(d['gates']) == 8 and d['thresholds']['tiny_span_tokens'] == 16
    assert run_cli(samples_ds, '--strict')[0] == 1  # --strict: a warning fails
    assert run_cli(samples_ds, '--strict', '--identical-warn', 0.5)[0] == 0


# ---------------------------------------------------------------- the 87% "OK." dataset

def test_ok_dataset_fails_and_names_the_answer(ok_report, ok_ds):
    r = ok_report
    assert r.failed and [c.status for c in r.checks] == ['pass'] * 6
    g = r.gate('identical_answers')
    assert g.status == 'fail' and g.value == pytest.approx(0.87)
    assert g.message.startswith(
        '"OK." (after an empty think block) is the whole answer in 87.0% of samples (174 of 200)')
    assert len(g.examples) == 5 and g.examples[0] == 'r0000'
    for name in ('tiny_span', 'empty_reasoning', 'short_samples'):
        assert r.gate(name).status == 'fail' and r.gate(name).value == pytest.approx(0.87), name
    rc, out, _ = run_cli(ok_ds)
    assert rc == 1 and '"OK." (after an empty think block) is the whole answer in 87.0% of samples' in out
    assert 'FAIL' in out


def test_thresholds_are_parameters(ok_ds):
    relaxed = dict(tiny_span_fail=1, identical_fail=1, empty_reasoning_fail=1, short_sample_fail=1)
    r = inspect_dataset(ok_ds, **relaxed)
    assert not r.failed and r.gate('tiny_span').status == 'warn'
    assert run_cli(ok_ds, '--tiny-span-fail', 1, '--identical-fail', 1, '--empty-reasoning-fail', 1,
                   '--short-sample-fail', 1)[0] == 0
    with pytest.raises(ValueError, match='unknown threshold'): inspect_dataset(ok_ds, tiny_fail=1)


# ---------------------------------------------------------------- each gate both ways

def test_tiny_span_and_identical_pass_on_varied_answers(qwen_dir, root):
    rng = random.Random(1)
    r = inspect_dataset(build(qwen_dir, root, 'varied', [healthy(i, rng) for i in range(60)]))
    assert r.gate('tiny_span').status == 'pass' and r.gate('tiny_span').value == 0
    assert r.gate('identical_answers').status == 'pass' and r.gate(
        'identical_answers').message == 'no two samples have the same answer'
    assert r.gate('empty_reasoning').status == 'pass' and r.gate('short_samples').status == 'pass'


def test_identical_answers_with_reasoning(qwen_dir, root):
    "The same answer after the same non-empty reasoning: named, with the reasoning mentioned."
    rng = random.Random(2)
    recs = [chat(i, 'Paris is the capital of France.', 'The user asks for a capital; it is Paris.') if i % 4 == 0
            else healthy(i, rng)
            for i in range(80)]
    g = inspect_dataset(build(qwen_dir, root, 'paris', recs)).gate('identical_answers')
    assert g.status == 'fail' and g.value == pytest.approx(0.25)
    assert g.message.startswith(
        '"Paris is the capital of France." (after a ') and 'reasoning, the same each time' in g.message


def test_source_skew(qwen_dir, root):
    rng = random.Random(3)
    skewed = [chat(i, code_answer(i, rng), prose(rng, 20), 'code') if i < 77 else healthy(i, rng, 'chat') for i
              in range(100)]
    g = inspect_dataset(build(qwen_dir, root, 'code77', skewed)).gate('source_skew')
    assert g.status == 'fail' and 0.72 < g.value < 0.9 and g.message.startswith("'code' is ")
    mixed = [healthy(i, rng, ['chat', 'math', 'code', 'agent'][i % 4]) for i in range(80)]
    g = inspect_dataset(build(qwen_dir, root, 'mixed', mixed)).gate('source_skew')
    assert g.status == 'pass' and g.value < 0.35
    single = [healthy(i, rng, 'code') for i in range(10)]
    assert inspect_dataset(build(qwen_dir, root, 'single', single)).gate('source_skew').status == 'warn'
    nosrc = [healthy(i, rng, None) for i in range(10)]
    g = inspect_dataset(build(qwen_dir, root, 'nosrc', nosrc)).gate('source_skew')
    assert g.status == 'n/a' and g.value is None


def test_repetition_loops(qwen_dir, root):
    rng = random.Random(4)
    # healthy agents read several different files: consecutive calls share their framing, which is no loop
    recs = [agent(i, [f'/src/project/module_{k}.py' for k in range(8)], rng) for i in range(30)]
    recs += [healthy(100 + i, rng) for i in range(50)]
    r = inspect_dataset(build(qwen_dir, root, 'agents_ok', recs))
    assert r.gate('repetition').status == 'pass' and r.gate('repetition').value == 0
    # 10 of 80 samples call the same tool with the same argument 6 times; 4 more loop in plain text
    loops = [agent(i, ['/src/project/main.py'] * 6, rng) for i in range(10)]
    loops += [chat(200 + i, 'Let me check the configuration file once more to be sure. ' * 12, prose(rng, 20)) for i
              in range(4)]
    r = inspect_dataset(build(qwen_dir, root, 'agents_loop', loops + recs[:66]))
    g = r.gate('repetition')
    assert g.status == 'fail' and g.value == pytest.approx(14 / 80)
    assert set(g.examples) <= {f'a{i:04d}' for i in range(10)} | {f'r{200 + i:04d}' for i in range(4)}
    assert 'repeats' in g.message and g.message.startswith('14 of 80 samples')
    assert set(r.summary.ids(r.summary.select('loops', n=20))) == set(g.examples) | set(
        r.summary.ids(r.summary.select('loops', n=20)))
    assert len(r.summary.select('loops', n=20)) == 14
    a = r.dataset.find('a0000')
    what, times = describe_loop(a.input_ids, a.loss_mask, r.thresholds, r.dataset.display, run=True)
    assert times == 5 and what.startswith(
        "the same generated turn 'Read /src/project/main.py next.") and '<tool_call>' in what
    assert r.summary.loop_kind[a.index] == 2 and r.summary.loop_count[a.index] >= 5
    t = r.dataset.find('r0200')
    what, times = describe_loop(t.input_ids, t.loss_mask, r.thresholds, r.dataset.display)
    assert times >= 4 and 'check the configuration file' in what
    assert r.summary.loop_kind[t.index] == 1 and r.summary.loop_count[t.index] >= 4


def test_truncated_gate_and_checks_stay_clean(qwen_dir, root, samples_report):
    out = root/'trunc256'
    tokenize_dataset(qwen_dir, SAMPLES, out, max_seq_len=256, progress=False)
    r = inspect_dataset(out)
    g = r.gate('truncated')
    st = json.loads((out/'stats.json').read_text())
    assert g.status == 'fail' and g.value == pytest.approx(st['truncated'] / st['samples'], abs=0.01)
    # the cut last runs are exempt from span_end: the checks all pass on a truncated dataset
    assert [c.status for c in r.checks] == ['pass'] * 6
    assert 'cut by truncation' in r.check('span_end').note
    assert samples_report.gate('truncated').status == 'pass'
    v = r.select('truncated', n=1)[0]
    assert v.truncated and len(v.input_ids) == 256 and 'truncated' in v.to_html()


def test_empty_reasoning_not_measured_without_reasoning_template(qwen_dir, root):
    d = root/'plain_tok'; d.mkdir()
    for f in Path(qwen_dir).iterdir(): shutil.copy(f, d/f.name)
    (d/'chat_template.jinja').write_text(
        "{%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}"
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")
    src = root/'plain.jsonl'
    src.write_text(''.join(json.dumps(chat(i, 'OK.', '')) + '\n' for i in range(10)))
    tokenize_dataset(d, src, root/'plain', progress=False)
    r = inspect_dataset(root/'plain')
    assert r.gate('empty_reasoning').status == 'n/a' and 'renders no reasoning' in r.gate('empty_reasoning').message
    assert [c.status for c in r.checks] == ['pass'] * 6  # gen prompt '<|im_start|>assistant\n', end '<|im_end|>'
    assert r.check('gen_prompt').title.endswith("'<|im_start|>assistant\\n' (ids 248045, 74455, 198)")


# ---------------------------------------------------------------- mask checks on corrupted datasets

def _rows(ds, idx):
    out = []
    for r in MaskDataset(ds).rows(idx):
        out.append(dict(input_ids=r['input_ids'].tolist(), loss_mask=r['loss_mask'].tolist(),
                        seq_len=len(r['input_ids']),
                        sample_id=r['sample_id'], source=r['source']))
    return out


def test_mask_checks_catch_corruption(samples_ds, root):
    man = json.loads((samples_ds/'manifest.json').read_text())
    rows = _rows(samples_ds, range(10))
    ids = [r['sample_id'] for r in rows]
    def last_masked(m): return len(m) - 1 - m[::-1].index(True)
    # mask runs past <|im_end|> into '\n'
    m = rows[0]['loss_mask']; m[last_masked(m) + 1] = True
    # the prompt's <|im_start|>... masked
    rows[1]['loss_mask'][:4] = [True] * 4
    rows[2]['loss_mask'] = [False] * rows[2]['seq_len']                              # nothing masked
    rows[3]['loss_mask'] = rows[3]['loss_mask'][:-1]                                 # one mask value short
    rows[4]['input_ids'][3] = 400_000                                                # id beyond the vocabulary
    m = rows[5]['loss_mask']; rows[5]['loss_mask'] = m[1:] + [False]                 # mask shifted left by one token
    rows[6]['seq_len'] += 1                                                          # seq_len disagrees
    r = inspect_dataset(write_dataset(root/'corrupt', rows, man))
    got = {c.name: c.examples for c in r.checks}
    assert got == {'lengths': [ids[3], ids[6]], 'has_loss': [ids[2]], 'span_end': [ids[0], ids[1], ids[5]],
                   'turn_start': [ids[1]], 'gen_prompt': [ids[1], ids[5]], 'vocab': [ids[4]]}
    assert r.failed and "'\\n' (id 198)" in r.check('span_end').note
    rc, out, _ = run_cli(root/'corrupt')
    assert rc == 1 and 'span_end    FAIL    3' in out
    # the healthy rows written the same way pass
    assert [c.status for c in inspect_dataset(write_dataset(root/'uncorrupted', _rows(samples_ds, range(7, 10)),
                                                            man)).checks] == ['pass'] * 6


def test_masked_user_turn_in_the_middle(samples_ds, root):
    "A generated turn whose mask swallows the following user turn (a multi-turn sample merged into one run)."
    man = json.loads((samples_ds/'manifest.json').read_text())
    ds = MaskDataset(samples_ds)
    r = inspect_dataset(samples_ds)
    multi = [i for i in range(len(ds)) if r.summary.n_runs[i] >= 2][0]
    row = _rows(samples_ds, [multi])[0]
    m = np.array(row['loss_mask'])
    starts = np.flatnonzero(np.diff(np.r_[0, m.astype(int)]) == 1)
    m[starts[0]:starts[1]] = True  # the tool/user turn between the first two runs is now masked
    row['loss_mask'] = m.tolist()
    rep = inspect_dataset(write_dataset(root/'merged', [row], man))
    # starts and ends right, but spans a turn
    assert {c.name for c in rep.checks if c.status == 'fail'} == {'turn_start'}


def test_empty_and_foreign_datasets(qwen_dir, samples_ds, root):
    src = root/'bad.jsonl'; src.write_text('not json\n')
    # refused, nothing written
    with pytest.raises(TokenizeError, match='0 samples'): tokenize_dataset(qwen_dir, src, root/'empty', progress=False)
    assert not (root/'empty').exists()
    man = json.loads((samples_ds/'manifest.json').read_text())  # a 0-row dataset (another writer's) still inspects
    man['counts'] = dict.fromkeys(man['counts'], 0)
    r = inspect_dataset(write_dataset(root/'empty', [], man))
    assert r.samples == 0 and not r.failed and all(g.status == 'n/a' for g in r.gates)
    # a dataset saved by `datasets` (no manifest): decode with --model-path, vocab check skipped, not truncated
    import datasets
    datasets.load_from_disk(str(samples_ds)).save_to_disk(str(root/'hf'))
    r = inspect_dataset(root/'hf', model_path=qwen_dir)
    assert 'not verified' in r.tokenizer and r.check('vocab').status == 'pass'  # vocab size from the tokenizer
    assert [c.status for c in r.checks] == ['pass'] * 6 and r.gate('truncated').status == 'n/a'
    with pytest.raises(FileNotFoundError, match='no such dataset directory'): inspect_dataset(root/'nope')


def test_without_tokenizer(samples_ds, root):
    r = inspect_dataset(samples_ds, tokenizer=False)
    st = {c.name: c.status for c in r.checks}
    assert st == {'lengths': 'pass', 'has_loss': 'pass', 'span_end': 'pass', 'turn_start': 'skipped',
                  'gen_prompt': 'skipped', 'vocab': 'pass'}
    assert 'inferred from the data' in r.tokenizer and r.check('span_end').title.endswith("id 248046")
    v = r.dataset.view(0)
    assert 'no tokenizer: token ids' in v.to_html() and '>248045<' in v.to_html()
    # a manifest pointing at a tokenizer that is gone: ids, with a note that says what to do
    moved = root/'moved'; shutil.copytree(samples_ds, moved)
    man = json.loads((moved/'manifest.json').read_text()); man['tokenizer']['model_path'] = str(root/'gone')
    (moved/'manifest.json').write_text(json.dumps(man))
    ds = MaskDataset(moved)
    assert ds.ct is None and 'pass --model-path' in ds.tokenizer_note


def test_fingerprint_mismatch(samples_ds, qwen_dir, root):
    other = root/'other_tok'; other.mkdir()
    for f in Path(qwen_dir).iterdir(): shutil.copy(f, other/f.name)
    (other/'tokenizer.json').write_text((Path(qwen_dir)/'tokenizer.json').read_text().replace('"NFC"', '"NFKC"'))
    with pytest.raises(ValueError, match='does not match the dataset'): MaskDataset(samples_ds, other)
    with warnings.catch_warnings(record=True):
        assert MaskDataset(samples_ds, other, ignore_fingerprint=True).tokenizer_note.startswith('UNVERIFIED')
    # only the chat template differs: decoding is right, so it proceeds with a warning
    tpl = root/'other_tpl'; tpl.mkdir()
    for f in Path(qwen_dir).iterdir(): shutil.copy(f, tpl/f.name)
    (tpl/'chat_template.jinja').write_text((Path(qwen_dir)/'chat_template.jinja').read_text() + '\n')
    with pytest.warns(UserWarning, match='another chat template'): ds = MaskDataset(samples_ds, tpl)
    assert ds.ct is not None
    with pytest.raises(ValueError, match='--ignore-fingerprint'): run_cli(samples_ds, '--model-path', other)


# ---------------------------------------------------------------- views

def test_html_view_has_coloured_chips(samples_ds):
    ds = MaskDataset(samples_ds)
    v = ds.find('agent-00001')
    h = v._repr_html_()
    n, k = len(v.input_ids), int(v.loss_mask.sum())
    assert h.count('class="t"') == n                      # every token is a chip (short sample: nothing hidden)
    green = h.count('<span class="t" style="background:#a8e6b4') + h.count('<span class="t" style="background:#cdf2d4')
    assert green == k  # masked: green
    assert h.count('<span class="t" style="background:#e3e3e3') + h.count(
        '<span class="t" style="background:#f3f3f3') == n - k
    assert '&lt;tool_call&gt;' in h and 'color:#6a1b9a;font-weight:bold' in h and '↵' in h and '·' in h
    assert '<script' not in h
    # a long sample collapses around mask boundaries, full text one click away
    r = inspect_dataset(samples_ds)
    lv = r.select('longest', n=1)[0]
    h = lv._repr_html_()
    assert len(lv.input_ids) > 4000 and h.count('class="t"') < 300 and 'tokens hidden' in h and '<details>' in h
    assert ds.view(0).to_text(color=True).count('\x1b[') > 10


def test_selection(samples_ds):
    r = inspect_dataset(samples_ds)
    ds = r.dataset
    assert [v.index for v in ds.sample(4, seed=7)] == [v.index for v in ds.sample(4, seed=7)]
    assert [v.index for v in ds.sample(4, seed=7)] != [v.index for v in ds.sample(4, seed=8)]
    short = r.select('shortest_span', n=3)
    runs = [int(r.summary.min_run[v.index]) for v in short]
    assert runs == sorted(runs) and runs[0] == int(r.summary.min_run[r.summary.n_runs > 0].min())
    assert all(v.source == 'math' for v in r.select(source='math', n=5))
    assert all(v.source == 'code' for v in r.select('longest', source='code', n=3))
    assert [v.sample_id for v in r.select(where=lambda t: t.seq_len > 3000, by='longest', n=10)] == \
           [v.sample_id for v in r.select('longest', n=10) if len(v.input_ids) > 3000]
    with pytest.raises(KeyError, match='unknown filter'): r.select('nope')
    assert ds[5].index == 5 and ds.find('agent-00001').sample_id == 'agent-00001'


def test_diff_of_two_runs_and_two_templates(qwen_dir, official_qwen_dir, samples_ds, root):
    a = MaskDataset(samples_ds)
    out = root/'trunc512'
    if not out.exists(): tokenize_dataset(qwen_dir, SAMPLES, out, max_seq_len=512, progress=False)
    b = MaskDataset(out)
    long_id = inspect_dataset(samples_ds).select('longest', n=1)[0].sample_id
    dv = a.diff(b, long_id)
    assert dv.changed > 3000 and 'outline:2px solid #d62728' in dv._repr_html_()
    assert a.diff(a, 'agent-00001').summary() == 'identical tokens and masks'
    rec = json.loads((SAMPLES/'openai_chat.jsonl').read_text().splitlines()[0])
    dv = compare_tokenizations(rec, qwen_dir, official_qwen_dir)
    assert dv.summary() == 'identical tokens and masks'  # the embedded template reproduces the official one


def test_cli_ids_view(ok_ds):
    rc, out, err = run_cli(ok_ds, '--ids', 'r0000', 'nope', '--context', 4)
    assert rc == 1 and "no sample with id 'nope'" in err
    assert '[[↵|</think>|↵↵|OK|.|<|im_end|>]]' in out.replace('\n', '') and '== r0000' in out
    rc, out, _ = run_cli(ok_ds, '--index', 0, 1)
    assert rc == 0 and out.count('== r000') == 2


def test_streaming_reads_batches_lazily(samples_ds, tmp_path):
    """A batch comes out before the rest of the shard is read: a shard cut inside its second batch still yields the
    first, then fails."""
    shard = dataset_shards(samples_ds)[0]
    first = next(stream_batches(shard))
    assert 0 < first.num_rows < 280 and first.schema.names[:3] == ['input_ids', 'loss_mask', 'seq_len']
    data = shard.read_bytes()
    src = pa.BufferReader(data); r = pa.ipc.open_stream(src); r.read_next_batch()
    cut = tmp_path/'cut.arrow'; cut.write_bytes(data[:src.tell() + 100])  # the second batch's message is torn
    it = stream_batches(cut)
    assert next(it).equals(first)              # an eager reader (read_all) would have failed before yielding anything
    with pytest.raises((pa.ArrowInvalid, OSError, ValueError)): list(it)


# ---------------------------------------------------------------- the job

def test_inspect_job_report(samples_ds, ok_ds, tmp_path):
    from dflash_nb.jobs import run_job
    run = run_job('inspect', {'dataset': str(samples_ds)}, outputs=tmp_path)
    assert run.ok, run.error
    h = run.report.read_text()
    assert h.count('class="t"') > 100 and 'dfk-gates' in h and 'identical_answers' in h and 'dfk-checks' in h
    assert '#a8e6b4' in h and 'Random sample' in h and 'Traceback' not in h
    # the verdict is one line under the gate and check tables, not both tables again as plain text (issue 24.9)
    assert 'QUALITY GATES' not in h and 'MASK CHECKS' not in h and re.search(r'<strong>(PASS|WARN)</strong>: gates \d',
                                                                             h)
    d = json.loads((run.out_dir/'inspect.json').read_text())
    assert d['samples'] == 280 and {g['name'] for g in d['gates']} >= {'tiny_span', 'source_skew'}
    bad = run_job('inspect', {'dataset': str(ok_ds)}, outputs=tmp_path)
    assert not bad.ok and 'identical_answers' in bad.error
    h = bad.report.read_text()
    assert 'dfk-gates' in h and 'class="t"' in h and 'OK.' in h


def test_console_script_inspect(samples_ds, ok_ds):
    "`dflash-nb inspect` as a user runs it: exit 1 naming the pattern on the failed dataset, 0 on healthy data."
    from conftest import cli
    bad = cli('inspect', ok_ds, '--quiet', check=False)
    assert bad.returncode == 1
    assert '"OK." (after an empty think block) is the whole answer in 87.0% of samples' in bad.stdout
    good = cli('inspect', samples_ds, '--quiet', check=False)
    assert good.returncode == 0 and 'QUALITY GATES' in good.stdout
