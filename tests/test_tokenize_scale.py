"""What must not grow with the number of records (issue 27 item 3; the full-size measurement is
benchmarks/seed_scale.py)."""
import json, time
from pathlib import Path

import numpy as np


def _flagged_batch(start: int, n: int):
    """A batch of `n` three-token samples, every one flagged (as a template that drops the final reasoning flags them
    all)."""
    from dflash_nb.tokenize import Batch
    ids = [f"rec-{i:07d}" for i in range(start, start + n)]
    return Batch(np.arange(3 * n, dtype=np.int32) % 1000, np.tile(np.array([0, 1, 1], bool), n),
                 np.full(n, 3, np.int64),
                 ids, [''] * n, records=n, hashes=np.arange(start, start + n, dtype=np.uint64),
                 flags=[dict(file='c.jsonl', line=i + 1, id=s, reason='reasoning_not_rendered',
                             detail='turn 1: reasoning dropped')
                        for i, s in zip(range(start, start + n), ids)])


def test_flagged_samples_are_streamed_to_disk_not_held_in_the_commit_records(tmp_path):
    """A run whose every sample is flagged (a template that does not render the final reasoning: 902,087 flags for the
    seed) kept every flag in memory, in each chunk's commit record and in the finish plan (finish.json), which are read
    back whole. The flags go to the chunk's file as they come, as skips do; the records hold counts only."""
    from dflash_nb.tokenize import Chunk, finish_chunks
    n, per = 4_000, 200
    chunk = Chunk(tmp_path, 0)
    for s in range(0, n, per): chunk.add(_flagged_batch(s, per))
    meta = chunk.commit((1, n))
    assert meta['flagged'] == {'reasoning_not_rendered': n}
    assert (tmp_path/'chunk-00000.json').stat().st_size < 2_000     # was ~120 bytes a flagged sample
    finish_chunks(tmp_path, [meta], stats=None)
    assert (tmp_path/'finish.json').stat().st_size < 2_000
    got = [json.loads(l) for l in (tmp_path/'flagged.jsonl').read_text().splitlines()]
    assert [f['id'] for f in got] == [f"rec-{i:07d}" for i in range(n)] and {f['reason'] for f in got} == {
        'reasoning_not_rendered'}
    # the chunk files are gone once the dataset is laid out
    assert not list(tmp_path.glob('chunk-*'))


def test_duplicate_ids_of_the_seeds_size_are_counted_in_about_a_sort(tmp_path):
    """chunk_stats counts duplicate sample ids from their 64-bit hashes. With numpy's np.unique (hash-based since numpy
    2.3) that took 15 s for the seed's 902,087 samples (0.3 s for a tenth: it grows ~50x for 10x); a sort takes ~1 s."""
    from dflash_nb.tokenize import chunk_stats
    n, dups = 902_087, 1_234
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 2**63, n, dtype=np.uint64)
    # `dups` ids written twice (none of the first `dups` replaced, almost surely)
    ids[rng.choice(n, dups, replace=False)] = ids[:dups]
    dups = n - len(np.unique(ids, return_counts=True)[0])       # (with counts, np.unique sorts)
    np.savez(tmp_path/'chunk-00000.npz', seq_len=np.full(n, 2, np.int64), loss_tokens=np.ones(n, np.int64),
             content_hash=ids, id_hash=ids)
    meta = dict(index=0, skipped={}, sources={'': n}, truncated=0, records=n, seconds=1.0)
    t = time.perf_counter(); np.sort(ids); sort_s = time.perf_counter() - t
    t = time.perf_counter(); st = chunk_stats(tmp_path, [meta]); took = time.perf_counter() - t
    assert st['duplicate_ids'] == dups and st['samples'] == n
    # was 15 s against a 0.9 s sort (a loaded 2-core machine)
    assert took < 5 * sort_s + 1.0, (took, sort_s)
