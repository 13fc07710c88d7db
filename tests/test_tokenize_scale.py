"""What must not grow with the number of records (issue 27 item 3; the full-size measurement is benchmarks/seed_scale.py)."""
import json
from pathlib import Path

import numpy as np


def _flagged_batch(start: int, n: int):
    "A batch of `n` three-token samples, every one flagged (as a template that drops the final reasoning flags them all)."
    from dflash_nb.tokenize import Batch
    ids = [f"rec-{i:07d}" for i in range(start, start + n)]
    return Batch(np.arange(3 * n, dtype=np.int32) % 1000, np.tile(np.array([0, 1, 1], bool), n), np.full(n, 3, np.int64),
                 ids, [''] * n, records=n, hashes=np.arange(start, start + n, dtype=np.uint64),
                 flags=[dict(file='c.jsonl', line=i + 1, id=s, reason='reasoning_not_rendered', detail='turn 1: reasoning dropped')
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
    assert [f['id'] for f in got] == [f"rec-{i:07d}" for i in range(n)] and {f['reason'] for f in got} == {'reasoning_not_rendered'}
    assert not list(tmp_path.glob('chunk-*'))                        # the chunk files are gone once the dataset is laid out
