"""Whole-dataset statistics at scale: `compute_stats` against the floor (reading the needed columns once) and a
naive Python loop over rows, on one generated dataset, in one run.

    python benchmarks/stats_scan.py [OUT] [--samples 1000000] [--keep] [--reuse]

Generates OUT (default /tmp/stats_bench): `--samples` samples (default 1M, about 2.1B tokens, ~8.6 GB on disk;
lengths shaped like real completions: mean ~2,120, median ~1,670, p90 ~4,100, 1.3% truncated at 8,192), written with
pyarrow directly the way `dflash-nb tokenize` writes (Arrow stream shards of ~1e8 tokens, record batches of 64
rows, the dflash_nb schema, state.json/dataset_info.json/manifest.json). Token ids are slices of one random
buffer and loss masks slices of one [0...0 1...1] pattern, so generating costs little more than writing.

Then it times, each with the shards evicted from the page cache first (cold, `posix_fadvise(DONTNEED)`) and
again with them cached (warm):

* `compute_stats(OUT)` (8 threads, the default: shards are scanned concurrently, which on a cold cache keeps
  several reads in flight) and `compute_stats(OUT, threads=1)`;
* the floor: one plain read of the columns compute_stats needs (`seq_len`, `loss_mask`, `source`, and the
  offsets of `input_ids`), copied into memory shard by shard, with the same 8 threads;
* for reference, reading every byte of every shard sequentially (what any approach that touches the token ids
  pays);

keeping the best of `--repeat` runs (the machine may be shared), and, warm only, a naive Python loop over rows (`for ex
in datasets.load_from_disk(OUT)`, summing lengths and masks) on the first `--naive-rows` rows, extrapolated to the
whole dataset (it would take hours). It checks that compute_stats agrees with the generator's own totals, prints times,
tokens/s and ratios, and deletes OUT unless `--keep`.
"""
import argparse, json, os, shutil, sys, time
from pathlib import Path

import numpy as np
import pyarrow as pa

from dflash_nb.tokenize import SCHEMA, write_dataset_metadata
from dflash_nb.stats import compute_stats, dataset_shards

SOURCES = ['chat', 'code', 'math', 'agent', 'multilingual', 'ok-degenerate']


def sample_lengths(rng, n: int, max_len: int = 8192) -> np.ndarray:
    "Lengths shaped like real completions: a gamma body plus a tail of long agentic/thinking samples, truncated."
    body = rng.gamma(4.0, 1650 / 4.0, n)
    tail = 2500 + rng.gamma(2.0, 1450, n)
    return np.clip(np.where(rng.random(n) < 0.13, tail, body), 16, max_len).astype(np.int64)


def generate(out: Path, samples: int, batch_rows: int = 64, shard_tokens: int = 100_000_000, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    if out.exists(): shutil.rmtree(out)
    out.mkdir(parents=True)
    lens = sample_lengths(rng, samples)
    # the generated part starts after a prompt of 5-90% of the sample; 3% are degenerate ("OK.": 6 masked tokens)
    prompt = (lens * rng.uniform(0.05, 0.9, samples)).astype(np.int64)
    degenerate = rng.random(samples) < 0.03
    prompt[degenerate] = np.maximum(lens[degenerate] - 6, 0)
    src = np.where(degenerate, len(SOURCES) - 1, rng.choice(len(SOURCES) - 1, samples, p=[0.3, 0.25, 0.2, 0.17, 0.08]))
    pool = pa.array(rng.integers(0, 248_044, 1 << 24, dtype=np.int32))   # token ids: slices of one 64 MB buffer
    pattern = np.concatenate([np.zeros(8192, bool), np.ones(8192, bool)])  # mask = pattern[8192-p : 8192-p+n]
    names = pa.array(SOURCES)
    shards, w, shard_tok = [], None, 0
    t0 = time.perf_counter()
    for b0 in range(0, samples, batch_rows):
        bl, bp = lens[b0:b0 + batch_rows], prompt[b0:b0 + batch_rows]
        total = int(bl.sum())
        offs = pa.array(np.concatenate([[0], np.cumsum(bl)]).astype(np.int32))
        start = int(rng.integers(0, len(pool) - total))
        ids = pa.ListArray.from_arrays(offs, pool.slice(start, total))
        mask = pa.ListArray.from_arrays(offs, pa.array(np.concatenate([pattern[8192 - p:8192 - p + n] for n, p in zip(
            bl, bp)])))
        rb = pa.RecordBatch.from_arrays([ids, mask, pa.array(bl), pa.array([f"bench-{i}" for i in range(b0,
                                                                                                        b0 + len(bl))]),
                                         names.take(pa.array(src[b0:b0 + batch_rows]))], schema=SCHEMA)
        if w is None:
            shards.append(f"data-{len(shards):05d}.arrow"); w = pa.ipc.new_stream(str(out/shards[-1]), SCHEMA)
        w.write_batch(rb); shard_tok += total
        if shard_tok >= shard_tokens: w.close(); w, shard_tok = None, 0
        if b0 // batch_rows % 2000 == 0:
            print(f"\r  generating: {b0 + len(bl):,}/{samples:,} samples", end='', file=sys.stderr, flush=True)
    if w is not None: w.close()
    print(file=sys.stderr)
    final = [f"data-{i:05d}-of-{len(shards):05d}.arrow" for i in range(len(shards))]
    for a, b in zip(shards, final): os.replace(out/a, out/b)
    write_dataset_metadata(out, final)
    total, loss = int(lens.sum()), int((lens - prompt).sum())
    (out/'manifest.json').write_text(json.dumps(dict(format='dflash_nb.dataset', format_version=1,
                                                     generator='benchmarks/stats_scan.py',
        params=dict(max_seq_len=8192, batch_size=batch_rows, shard_tokens=shard_tokens), shards=final,
        counts=dict(samples=samples, total_tokens=total, loss_tokens=loss)), indent=2))
    for f in final:  # flush to disk so the pages are clean and can be evicted for the cold runs
        with open(out/f, 'rb+') as fh: os.fsync(fh.fileno())
    return dict(samples=samples, total_tokens=total, loss_tokens=loss, seconds=time.perf_counter() - t0,
                bytes=sum((out/f).stat().st_size for f in final), shards=len(final))


def evict(paths):
    "Drop the files' pages from the page cache (clean pages only; no root needed)."
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally: os.close(fd)


def _read_needed(f) -> int:
    t = pa.ipc.open_stream(pa.memory_map(str(f))).read_all()
    cols = t.select(['seq_len', 'loss_mask', 'source']).combine_chunks()
    ids_offsets = pa.concat_arrays([c.offsets for c in t.column('input_ids').chunks])
    return cols.nbytes + ids_offsets.nbytes

def read_needed_columns(out: Path, threads: int = 8) -> int:
    """The floor: the columns compute_stats needs, copied into memory once, shards read by as many threads as
    compute_stats uses."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(threads) as ex: return sum(ex.map(_read_needed, dataset_shards(out)))


def read_everything(out: Path) -> int:
    "Every byte of every shard, sequentially."
    n = 0
    for f in dataset_shards(out):
        with open(f, 'rb', buffering=0) as fh:
            while b := fh.read(16 << 20): n += len(b)
    return n


def naive_loop(out: Path, rows: int) -> tuple[float, int, int]:
    "The loop one writes first: iterate over rows with `datasets`, sum lengths and masks in Python."
    import datasets
    ds = datasets.load_from_disk(str(out)).select_columns(['input_ids', 'loss_mask'])
    t = time.perf_counter(); tokens = loss = 0
    for i, ex in enumerate(ds):
        if i == rows: break
        tokens += len(ex['input_ids']); loss += sum(ex['loss_mask'])
    return time.perf_counter() - t, tokens, loss


def timed(fn, *a):
    t = time.perf_counter(); r = fn(*a); return time.perf_counter() - t, r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('out', nargs='?', default='/tmp/stats_bench',
                    help="dataset folder to generate (default /tmp/stats_bench)")
    ap.add_argument('--samples', type=int, default=1_000_000,
                    help="samples to generate (default 1M, ~2.1B tokens, ~8.5 GB)")
    ap.add_argument('--batch-rows', type=int, default=64,
                    help="rows per Arrow record batch (default 64, as tokenize writes)")
    ap.add_argument('--naive-rows', type=int, default=20_000, help="rows the naive loop runs over (default 20K)")
    ap.add_argument('--repeat', type=int, default=3,
                    help="time each variant this many times and keep the best (default 3)")
    ap.add_argument('--reuse', action='store_true', help="reuse an existing OUT instead of generating it")
    ap.add_argument('--keep', action='store_true', help="keep OUT afterwards")
    a = ap.parse_args(argv)
    out = Path(a.out)
    need = a.samples * 2_100 * 4.2
    free = shutil.disk_usage(out.parent if out.parent.exists() else '/').free
    if not a.reuse and free < need * 1.1:
        sys.exit(
            f"{out.parent}: {free / 1e9:.1f} GB free, the dataset needs ~{need / 1e9:.1f} GB; use --samples to scale "
            "down")
    try:
        if a.reuse:
            man = json.loads((out/'manifest.json').read_text())
            gen = dict(man['counts'], seconds=0.0, shards=len(man['shards']),
                       bytes=sum(f.stat().st_size for f in dataset_shards(out)))
        else:
            gen = generate(out, a.samples, a.batch_rows)
        print(f"dataset: {gen['samples']:,} samples, {gen['total_tokens']:,} tokens, {gen['bytes'] / 1e9:.2f} GB in "
              f"{gen['shards']} shards" + (f", generated in {gen['seconds']:.1f} s" if gen['seconds'] else ''))
        print(f"machine: {os.cpu_count()} CPUs, numpy {np.__version__}, pyarrow {pa.__version__}")
        shards, T = dataset_shards(out), gen['total_tokens']
        res = {}
        fns = (('compute_stats', compute_stats), ('compute_stats, 1 thread', lambda o: compute_stats(o, threads=1)),
               ('floor: read needed columns', read_needed_columns), ('read every byte', read_everything))
        for rep in range(a.repeat):
            for mode in ('cold', 'warm'):
                for name, fn in fns:
                    if mode == 'cold': evict(shards)
                    else: fn(out)  # make sure the pages are cached
                    secs, r = timed(fn, out)
                    res[name, mode] = min(secs, res.get((name, mode), secs))
                    if name.startswith('compute_stats'):
                        assert (r['samples'], r['total_tokens'],
                                r['loss_tokens']) == (gen['samples'], gen['total_tokens'], gen['loss_tokens']), r
        secs, tok, _ = naive_loop(out, a.naive_rows)
        naive = secs * T / tok
        print(f"\nbest of {a.repeat} runs each; cold = shards evicted from the page cache first")
        print(f"{'':34}{'cold s':>9}{'tokens/s':>11}{'warm s':>9}{'tokens/s':>11}")
        for name in ('compute_stats', 'compute_stats, 1 thread', 'floor: read needed columns', 'read every byte'):
            c, w = res[name, 'cold'], res[name, 'warm']
            print(f"{name:34}{c:9.2f}{T / c:11.3g}{w:9.2f}{T / w:11.3g}")
        print(f"{'naive Python loop (extrapolated)':34}{'':9}{'':11}{naive:9.0f}{T / naive:11.3g}"
              f"   <- {a.naive_rows:,} rows ({tok:,} tokens) took {secs:.1f} s; x {T / tok:.0f}")
        for mode in ('cold', 'warm'):
            print(
                f"{mode}: compute_stats / floor = "
                f"{res['compute_stats', mode] / res['floor: read needed columns', mode]:.2f}; read every byte / "
                f"compute_stats = {res['read every byte', mode] / res['compute_stats', mode]:.1f}x")
        print(f"naive loop / compute_stats (warm) = {naive / res['compute_stats', 'warm']:,.0f}x")
    finally:
        if not a.keep and out.exists() and not a.reuse: shutil.rmtree(out)


if __name__ == '__main__':
    main()
