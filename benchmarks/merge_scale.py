"""Merge at scale: a large existing dataset (default 1M samples, mean ~2,000 tokens) plus 10K new samples, timed
against copying the existing dataset's files once (shutil.copytree) in the same run.

    python benchmarks/merge_scale.py                          # 1M x ~2,000 tokens (~8.3 GB of shards): check `df -h`
    python benchmarks/merge_scale.py --samples 1000000 --mean-len 200    # ~0.8 GB, when disk or time is short
    python benchmarks/merge_scale.py --new-kind both          # new data as a dataset AND as JSONL completions

The existing dataset is written directly with pyarrow in the project's layout (shards, state.json,
dataset_info.json, content_hashes.npy, stats.json, manifest.json with the embedded tokenizer's fingerprint), so
building it costs no tokenization. The new data holds fresh samples plus duplicates of existing ones (by
sample_id and by content) and within itself. Each merge runs in a subprocess so its peak RSS is its own.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

import numpy as np
import pyarrow as pa

from dflash_nb.tokenize import SCHEMA, content_hash, write_dataset_metadata
from dflash_nb.merge import summarize

VOCAB = 248_000

def gen_rows(rng, n, mean_len, max_len=8192):
    "Random samples: lengths ~ gamma(mean mean_len), tokens uniform, the last ~70% of each sample masked."
    lens = np.clip(rng.gamma(2.0, mean_len / 2.0, n).astype(np.int64), 16, max_len)
    ids = rng.integers(0, VOCAB, int(lens.sum()), dtype=np.int32)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    pos = np.arange(int(lens.sum())) - np.repeat(starts, lens)
    mask = pos >= np.repeat((lens * 0.3).astype(np.int64), lens)
    return lens, ids, mask

def to_batch(lens, ids, mask, sample_ids, sources):
    offs = pa.array(np.concatenate([[0], np.cumsum(lens)]).astype(np.int32))
    return pa.RecordBatch.from_arrays([pa.ListArray.from_arrays(offs, pa.array(ids)),
                                       pa.ListArray.from_arrays(offs, pa.array(mask)),
                                       pa.array(lens), pa.array(sample_ids, pa.string()),
                                       pa.array(sources, pa.string())], schema=SCHEMA)

def hashes_of(lens, ids, mask):
    o = np.concatenate([[0], np.cumsum(lens)])
    return np.fromiter((content_hash(ids[o[i]:o[i + 1]], mask[o[i]:o[i + 1]]) for i in range(len(lens))), np.uint64,
                       len(lens))

def write_dataset(out: Path, batches, tokenizer: dict, shard_tokens: int, max_seq_len=8192, records_read_extra=0):
    "Write `(lens, ids, mask, sample_ids, sources)` batches as a dataset made by this project."
    out.mkdir(parents=True)
    names, w, tokens, all_lens, all_h, loss, sources = [], None, 0, [], [], 0, {}
    for lens, ids, mask, sids, srcs in batches:
        if w is None:
            names.append(f"data-{len(names):05d}.arrow"); w = pa.ipc.new_stream(str(out/names[-1]), SCHEMA); tokens = 0
        w.write_batch(to_batch(lens, ids, mask, sids, srcs))
        all_lens.append(lens); all_h.append(hashes_of(lens, ids, mask)); loss += int(mask.sum())
        for s in srcs: sources[s] = sources.get(s, 0) + 1
        tokens += int(lens.sum())
        if tokens >= shard_tokens: w.close(); w = None
    if w is not None: w.close()
    final = [f"data-{i:05d}-of-{len(names):05d}.arrow" for i in range(len(names))]
    for a, b in zip(names, final): os.replace(out/a, out/b)
    write_dataset_metadata(out, final)
    np.save(out/'content_hashes.npy', np.concatenate(all_h))
    (out/'skipped.jsonl').write_text('')
    lens = np.concatenate(all_lens)
    st = summarize(lens, loss, 0, {}, len(lens) + records_read_extra, sources, 1.0, int(lens.sum()))
    (out/'stats.json').write_text(json.dumps(st, indent=2))
    (out/'manifest.json').write_text(json.dumps(dict(format='dflash_nb.dataset', format_version=1, created_utc='bench',
                                                     tokenizer=tokenizer,
        inputs=dict(completions='benchmarks/merge_scale.py',
                    files=[]), params=dict(max_seq_len=max_seq_len, batch_size=64, shard_tokens=shard_tokens),
        shards=final, counts={k: st[k] for k in ('samples', 'total_tokens', 'loss_tokens', 'records_read')}), indent=2))
    return st

def du(p: Path) -> int: return sum(f.stat().st_size for f in p.rglob('*') if f.is_file())

def run_merge(existing, new, out, workers):
    "One merge in a fresh process: wall time and peak RSS."
    code = ("import json, resource, sys, time\nfrom dflash_nb.merge import merge_datasets, count_equation\n"
            "t = time.perf_counter(); st = merge_datasets(sys.argv[1], sys.argv[2], sys.argv[3], "
            "workers=int(sys.argv[4]), progress=False)\nhwm = next(int(l.split()[1]) for l in "
            "open('/proc/self/status') if l.startswith('VmHWM'))\nprint(json.dumps(dict(seconds=time.perf_counter() - "
            "t, peak_rss_mb=hwm / 1024, equation=count_equation(sys.argv[3]))))")
    t = time.perf_counter()
    r = subprocess.run([sys.executable, '-c', code, str(existing), str(new), str(out), str(workers)],
                       capture_output=True, text=True)
    if r.returncode: sys.exit(f"merge failed:\n{r.stderr}")
    res = json.loads(r.stdout.strip().splitlines()[-1]); res['process_seconds'] = time.perf_counter() - t
    return res

def completion_text(rng, n_tokens):
    words = ['alpha', 'beta', 'gamma', 'delta', 'token', 'merge', 'value', 'list', 'data', 'model', 'the', 'of', 'and',
             'to']
    return ' '.join(rng.choice(words, max(1, n_tokens)))

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--samples', type=int, default=1_000_000, help="existing samples (default 1M)")
    ap.add_argument('--mean-len', type=int, default=2000, help="mean tokens per sample (default 2000)")
    ap.add_argument('--new', type=int, default=10_000, help="new samples (default 10K)")
    ap.add_argument('--dup-frac', type=float, default=0.05,
                    help="fraction of new samples that duplicate existing ones (default 0.05)")
    ap.add_argument('--new-kind', choices=('dataset', 'completions', 'both'), default='dataset')
    ap.add_argument('--shard-tokens', type=int, default=100_000_000)
    ap.add_argument('--workers', type=int, default=2, help="tokenizer processes for --new-kind completions")
    ap.add_argument('--workdir', default=None, help="where to build (default: a new temp dir); removed unless --keep")
    ap.add_argument('--keep', action='store_true',
                    help="keep the workdir (with --reuse, a later run skips building existing)")
    ap.add_argument('--reuse', action='store_true', help="reuse the existing dataset in a kept --workdir")
    a = ap.parse_args()

    from dflash_nb.jobs import default_model_path
    from dflash_nb.tokenize import ChatTokenizer
    model = default_model_path()
    tok = ChatTokenizer(model).describe()
    need = a.samples * a.mean_len * 4.2 * 2.2
    work = Path(a.workdir or tempfile.mkdtemp(prefix='merge_scale-'))
    work.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(work).free
    print(f"workdir {work}: {free / 1e9:.1f} GB free, this run needs about {need / 1e9:.1f} GB")
    if free < need: sys.exit("not enough disk: lower --samples or --mean-len")
    rng = np.random.default_rng(0)
    try:
        t = time.perf_counter()
        per, kept_rows = 10_000, {}
        def existing_batches():
            for s in range(0, a.samples, per):
                n = min(per, a.samples - s)
                lens, ids, mask = gen_rows(rng, n, a.mean_len)
                if s == 0: kept_rows['first'] = (lens[:1000].copy(), ids[:int(lens[:1000].sum())].copy(),
                                                 mask[:int(lens[:1000].sum())].copy())
                yield lens, ids, mask, [f"ex-{s + i}" for i in range(n)], [
                    ('chat', 'code', 'math', 'agent')[(s + i) % 4] for i in range(n)]
        # a kept workdir: the same seed gives the same first batch
        if a.reuse and (work/'existing'/'manifest.json').is_file():
            next(existing_batches())
            for p in [work/'new_ds', work/'new.jsonl',
                      *work.glob('merged*')]: shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
            ex_st = json.loads((work/'existing'/'stats.json').read_text()); build_s = 0.0
        else:
            ex_st = write_dataset(work/'existing', existing_batches(), tok, a.shard_tokens)
            build_s = time.perf_counter() - t
        size = du(work/'existing')
        print(
            f"existing: {ex_st['samples']:,} samples, {ex_st['total_tokens']:,} tokens (mean "
            f"{ex_st['mean_seq_len']:,.0f}), {len(list((work/'existing').glob('*.arrow')))} shards, {size / 1e9:.2f} "
            f"GB on disk; built in {build_s:.1f} s")

        # new data: fresh samples, duplicates of existing ones (half by sample_id, half by content), and within-new
        # repeats
        n_dup = int(a.new * a.dup_frac)
        n_id, k = n_dup // 2, min(n_dup - n_dup // 2, 1000)  # sample_id reuses; content copies of existing rows 0..k-1
        n_within = n_dup // 2                                  # repeats of kept new rows
        n_fresh = a.new - k - n_within
        rng = np.random.default_rng(1)  # new data: a stream independent of the existing data's
        lens, ids, mask = gen_rows(rng, n_fresh, a.mean_len)
        fl, fi, fm = kept_rows['first']
        off, foff = np.concatenate([[0], np.cumsum(lens)]), np.concatenate([[0], np.cumsum(fl)])
        r0, r1 = off[n_id], off[n_id + n_within]
        lens = np.concatenate([lens, fl[:k], lens[n_id:n_id + n_within]])
        ids = np.concatenate([ids, fi[:foff[k]], ids[r0:r1]]); mask = np.concatenate([mask, fm[:foff[k]], mask[r0:r1]])
        sids = ([f"ex-{i}" for i in range(n_id)] + [f"new-{i}" for i in range(n_id, n_fresh)]
                + [f"copy-{i}" for i in range(k)]
                + [f"again-{i}" for i in range(n_within)])
        srcs = ['new'] * len(lens)
        expect = (n_id, k + n_within)
        t = time.perf_counter()
        write_dataset(work/'new_ds', [(lens, ids, mask, sids, srcs)], tok, a.shard_tokens)
        print(
            f"new dataset: {len(lens):,} samples ({expect[0]:,} reuse an existing sample_id, {k:,} copy existing "
            f"content, {n_within:,} repeat new content); built in {time.perf_counter() - t:.1f} s")

        t = time.perf_counter()
        shutil.copytree(work/'existing', work/'copy')
        copy_s = time.perf_counter() - t
        print(f"\ncopy existing once (shutil.copytree, {size / 1e9:.2f} GB): {copy_s:.2f} s")
        shutil.rmtree(work/'copy')

        results = {}
        if a.new_kind in ('dataset', 'both'):
            r = run_merge(work/'existing', work/'new_ds', work/'merged_ds', a.workers)
            results['dataset'] = r
            print(
                f"merge, new = dataset:      {r['seconds']:.2f} s in merge_datasets ({r['process_seconds']:.2f} s with "
                f"interpreter start), peak RSS {r['peak_rss_mb']:,.0f} MB; {r['equation']}")
            print(
                f"  -> merge / copy = {r['seconds'] / copy_s:.3f}  (the copy takes {copy_s / r['seconds']:.1f}x the "
                "merge's time)")
            shutil.rmtree(work/'merged_ds')
        if a.new_kind in ('completions', 'both'):
            p = work/'new.jsonl'
            with open(p, 'w') as f:
                for i in range(a.new):
                    sid = f"ex-{i}" if i < expect[0] else f"c-{i}"
                    f.write(json.dumps({'id': sid, 'source': 'new', 'messages': [
                        {'role': 'user', 'content': f"Question {i}: " + completion_text(rng, 20)},
 {'role': 'assistant', 'content': completion_text(rng, int(rng.gamma(2.0, a.mean_len / 2.0))),
  'reasoning_content': ''}]}) + '\n')
            r = run_merge(work/'existing', p, work/'merged_c', a.workers)
            results['completions'] = r
            print(
                f"merge, new = completions:  {r['seconds']:.2f} s including tokenizing {a.new:,} completions with "
                f"{a.workers} workers, peak RSS {r['peak_rss_mb']:,.0f} MB; {r['equation']}")
            print(f"  -> merge / copy = {r['seconds'] / copy_s:.3f}")
            shutil.rmtree(work/'merged_c')
        print(json.dumps(dict(samples=a.samples, mean_len=a.mean_len, existing_gb=round(size / 1e9, 3),
                              copy_seconds=round(copy_s, 3),
                              merges={k_: {kk: (round(v, 3) if isinstance(v, float) else v) for kk, v in r.items()}
                                      for k_, r in results.items()})))
    finally:
        if not a.keep: shutil.rmtree(work, ignore_errors=True)

if __name__ == '__main__':
    main()
