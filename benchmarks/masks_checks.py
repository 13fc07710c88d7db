#!/usr/bin/env python3
"""Benchmark of the whole-dataset mask checks and quality gates (dflash_nb.inspect.inspect_dataset).

Generates a synthetic tokenized dataset written directly with pyarrow (the tokenize SCHEMA, 64 rows per record
batch, 1e8 tokens per shard like `dflash-nb tokenize`): Qwen3.6 framing around random ids, mean about 2,000
tokens a sample (lognormal prompt and answer lengths), 20% with a second generated turn after a tool result,
cut at max_seq_len 8192. Then runs the checks + gates in a fresh process for each size and reports samples/s
and memory (peak RSS = VmHWM; RSS after setup; peak growth during the scan).

    python benchmarks/masks_checks.py                       # 10K and 100K samples
    python benchmarks/masks_checks.py --sizes 100000 --no-release   # without releasing mmap pages (for comparison)

The datasets go to --work (default /tmp/dflash_bench_masks) and are reused on the next run.
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, time
from pathlib import Path

import numpy as np
import pyarrow as pa

IM_START, IM_END, THINK, USER, ASSISTANT, NL = 248045, 248046, 248068, 872, 74455, 198
VOCAB = 248044  # regular tokens; random ids stay below the added (special) tokens
MAX_SEQ_LEN, BATCH, SHARD_TOKENS = 8192, 64, 100_000_000


def _sample(rng, ids):
    "One sample's (ids, mask) from a pool of random ids."
    p, a = min(int(rng.lognormal(6.0, 0.8)), 6000), int(rng.lognormal(6.9, 0.7))  # means ~ 550 and ~ 1,300 tokens
    take = lambda k: ids[rng.integers(0, len(ids) - k):][:k] if k else ids[:0]
    parts, masks = [], []
    def add(x, m): parts.append(np.asarray(x, np.int32)); masks.append(np.full(len(x), m, bool))
    add([IM_START, USER, NL], False); add(take(p), False); add([IM_END, NL, IM_START, ASSISTANT, NL, THINK, NL], False)
    if rng.random() < 0.2:  # an agentic turn: answer, tool result, answer
        add(take(a // 3), True); add([IM_END], True)
        add([NL, IM_START, USER, NL], False); add(take(int(rng.integers(20, 400))), False)
        add([IM_END, NL, IM_START, ASSISTANT, NL, THINK, NL], False); a -= a // 3
    add(take(max(a, 1)), True); add([IM_END], True); add([NL], False)
    x, m = np.concatenate(parts)[:MAX_SEQ_LEN], np.concatenate(masks)[:MAX_SEQ_LEN]
    return x, m


def generate(out: Path, n: int, model_path: str | None, seed: int = 0):
    from dflash_nb.tokenize import SCHEMA, write_dataset_metadata
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, VOCAB, 2_000_000, dtype=np.int32)
    shards, w, shard_tokens, total, loss, t0 = [], None, 0, 0, 0, time.perf_counter()
    for start in range(0, n, BATCH):
        rows = [_sample(rng, pool) for _ in range(min(BATCH, n - start))]
        lens = np.array([len(x) for x, _ in rows], np.int64)
        off = pa.array(np.r_[0, np.cumsum(lens)].astype(np.int32))
        b = pa.RecordBatch.from_arrays([
            pa.ListArray.from_arrays(off, pa.array(np.concatenate([x for x, _ in rows]))),
            pa.ListArray.from_arrays(off, pa.array(np.concatenate([m for _, m in rows]))), pa.array(lens),
            pa.array([f"bench-{start + i:07d}" for i in range(len(rows))]),
            pa.array(['code', 'math', 'chat', 'agent'] * (len(rows) // 4) + ['chat'] * (len(rows) % 4))], schema=SCHEMA)
        if w is None:
            shards.append(f"data-{len(shards):05d}.arrow"); w = pa.ipc.new_stream(str(out/shards[-1]), SCHEMA)
        w.write_batch(b)
        shard_tokens += int(lens.sum()); total += int(lens.sum()); loss += int(sum(m.sum() for _, m in rows))
        if shard_tokens >= SHARD_TOKENS: w.close(); w, shard_tokens = None, 0
    if w is not None: w.close()
    names = [f"data-{i:05d}-of-{len(shards):05d}.arrow" for i in range(len(shards))]
    for a, nm in zip(shards, names): os.replace(out/a, out/nm)
    write_dataset_metadata(out, names)
    tok = {}
    if model_path:
        from dflash_nb.tokenize import ChatTokenizer
        tok = ChatTokenizer(model_path).describe()
    (out/'manifest.json').write_text(json.dumps(dict(format='dflash_nb.dataset', format_version=1, tokenizer=tok,
        params=dict(max_seq_len=MAX_SEQ_LEN, batch_size=BATCH, shard_tokens=SHARD_TOKENS), shards=names,
        counts=dict(samples=n, total_tokens=total, loss_tokens=loss)), indent=2))
    print(f"generated {n:,} samples, {total:,} tokens ({total / n:,.0f} per sample), {len(names)} shard(s), "
          f"{sum((out/s).stat().st_size for s in names) / 1e9:.2f} GB in {time.perf_counter() - t0:.1f} s", flush=True)


def _status() -> dict:
    out = {}
    for line in open('/proc/self/status'):
        k, _, v = line.partition(':')
        if k in ('VmRSS', 'VmHWM', 'RssAnon', 'RssFile'): out[k] = int(v.split()[0]) // 1024  # MiB
    return out


def run_child(path: Path, release: bool):
    "In a fresh process: open, learn the template, scan, gate; print one JSON line."
    import threading
    import dflash_nb.dataset as D, dflash_nb.inspect as M
    if not release: D._RELEASE_BYTES = 1 << 62
    ds = M.MaskDataset(path)
    M.TemplateFacts.from_tokenizer(ds.ct) if ds.ct is not None else None
    before = _status()
    peak = {'RssAnon': 0, 'VmRSS': 0}
    stop = threading.Event()
    def sample():
        while not stop.wait(0.05):
            s = _status(); peak['RssAnon'] = max(peak['RssAnon'], s['RssAnon']);
            peak['VmRSS'] = max(peak['VmRSS'], s['VmRSS'])
    th = threading.Thread(target=sample, daemon=True); th.start()
    t0 = time.perf_counter()
    rep = M.inspect_dataset(ds)
    secs = time.perf_counter() - t0
    stop.set(); th.join()
    after = _status()
    print(json.dumps(dict(samples=rep.samples, tokens=rep.total_tokens, seconds=round(secs, 2),
                          samples_per_s=round(rep.samples / secs), tokens_per_s=round(rep.total_tokens / secs),
                          rss_setup_mib=before['VmRSS'], peak_rss_mib=after['VmHWM'],
                          peak_rss_during_scan_mib=peak['VmRSS'],
                          peak_anon_during_scan_mib=peak['RssAnon'], anon_setup_mib=before['RssAnon'],
                          status=rep.status, checks={c.name: c.failures for c in rep.checks},
                          gates={g.name: g.status for g in rep.gates})))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--sizes', type=int, nargs='+', default=[10_000, 100_000])
    ap.add_argument('--work', default='/tmp/dflash_bench_masks')
    ap.add_argument('--model-path', default=None,
                    help="tokenizer dir for the manifest (default: the embedded Qwen3.6 one)")
    ap.add_argument('--no-release', action='store_true', help="keep mmap pages mapped (shows what madvise saves)")
    ap.add_argument('--child', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child: return run_child(Path(a.child), not a.no_release)
    mp = a.model_path
    if mp is None:
        from dflash_nb.jobs import default_model_path
        mp = str(default_model_path())
    for n in a.sizes:
        d = Path(a.work)/f"masks-{n}"
        if not (d/'manifest.json').is_file(): generate(d, n, mp)
        r = subprocess.run([sys.executable, __file__, '--child', str(d)] + (['--no-release'] if a.no_release else []),
                           capture_output=True, text=True)
        if r.returncode: sys.exit(f"child failed:\n{r.stderr}")
        res = json.loads(r.stdout.strip().splitlines()[-1])
        print(
            f"{n:>9,} samples: {res['seconds']:7.1f} s, {res['samples_per_s']:,} samples/s, "
            f"{res['tokens_per_s'] / 1e6:.1f} M tokens/s; RSS after setup {res['rss_setup_mib']:,} MiB, peak RSS "
            f"{res['peak_rss_mib']:,} MiB (anonymous: {res['anon_setup_mib']:,} -> peak "
            f"{res['peak_anon_during_scan_mib']:,} MiB); {res['status'].upper()} {json.dumps(res['gates'])}",
              flush=True)


if __name__ == '__main__':
    main()
