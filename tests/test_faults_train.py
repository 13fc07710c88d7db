"Issue 15.9: train checks what it reads (row counts vs manifest/stats, id range, the shard named in read errors)."
import json, shutil
from pathlib import Path
import numpy as np, pyarrow as pa, pytest
from conftest import mounted_tmpfs, ROOT

torch = pytest.importorskip('torch')
from dflash_nb.tokenize import tokenize_dataset
from dflash_nb.train import train, train_args

@pytest.fixture(scope='module')
def dataset(qwen_dir, tmp_path_factory):
    "A real tokenized dataset of 48 samples in record batches of 16 (one shard)."
    d = tmp_path_factory.mktemp('ds')
    src = d/'c.jsonl'
    src.write_text(''.join(json.dumps({'id': f's{i}', 'messages': [{'role': 'user', 'content': f'Count to {i}.'},
                   {'role': 'assistant', 'content': ' '.join(map(str, range(1, i + 3)))}]}) + '\n' for i in range(48)))
    tokenize_dataset(qwen_dir, src, d/'ds', batch_size=16, progress=False)
    assert json.loads((d/'ds'/'stats.json').read_text())['samples'] == 48
    return d/'ds'

def rewrite(ds: Path, dst: Path, fn):
    "A copy of `ds` whose one shard is `fn(table)`, or `fn(bytes)` when fn takes bytes."
    shutil.copytree(ds, dst)
    shard = next(dst.glob('data-*.arrow'))
    t = pa.ipc.open_stream(shard.read_bytes()).read_all()
    out = fn(t, shard.read_bytes())
    if isinstance(out, bytes): shard.write_bytes(out); return dst
    with pa.ipc.new_stream(str(shard), t.schema) as w:
        for b in out: w.write_batch(b)
    return dst

def refused(ds, tmp_path) -> str:
    with pytest.raises(ValueError) as e:
        train(train_args(dataset=str(ds), target='tiny', output_dir=str(tmp_path/'run'), max_steps=1, quiet=True,
                         device='cpu'))
    assert not (tmp_path/'run'/'summary.json').exists()
    return str(e.value)

def test_shard_cut_at_a_batch_boundary(dataset, tmp_path):
    ds = rewrite(dataset, tmp_path/'cut', lambda t, raw: t.to_batches()[:1])
    assert pa.ipc.open_stream(str(next(ds.glob('data-*.arrow')))).read_all().num_rows == 16  # reads without error
    msg = refused(ds, tmp_path)  # the manifest records the shard's size: the cut shard is named on opening
    assert (f"{next(ds.glob('data-*.arrow'))}: " in msg and 'bytes but' in msg and 'manifest.json records' in msg
            and '(cut short)' in msg), msg

def test_negative_id(dataset, tmp_path):
    def neg(t, raw):
        ids = t.column('input_ids').combine_chunks()
        vals = ids.values.to_numpy().copy(); vals[5] = -3
        col = pa.ListArray.from_arrays(ids.offsets, pa.array(vals, pa.int32()))
        return t.set_column(0, t.schema.field(0), col).to_batches()
    msg = refused(rewrite(dataset, tmp_path/'neg', neg), tmp_path)
    assert 'token ids span [-3,' in msg

def test_corrupt_shard_is_named(dataset, tmp_path):
    ds = rewrite(dataset, tmp_path/'bad', lambda t, raw: raw[:len(raw) // 2])
    msg = refused(ds, tmp_path)
    assert str(next(ds.glob('data-*.arrow'))) in msg and '(cut short)' in msg and len(msg.splitlines()) == 1
    man = json.loads((ds/'manifest.json').read_text()); del man['shards'];
    (ds/'manifest.json').write_text(json.dumps(man))
    msg = refused(ds, tmp_path)  # a dataset without per-shard records: the read error names the shard
    assert str(next(ds.glob('data-*.arrow'))) in msg and 'cannot be read' in msg and len(msg.splitlines()) == 1, msg

def _fill(path, sign: int, n: int, width: int):
    "One writer process: `n` samples with features only it writes (sign x (i mod 200 + 1), exact in bfloat16)."
    from dflash_nb.train import FeatureCache
    c = FeatureCache(path, [0], width, 'fp')
    for i in range(n): c.put(f"{sign}:{i}", torch.full((1 + i % 5, width), float(sign * (i % 200 + 1))))

def test_feature_cache_shared_by_concurrent_writers(tmp_path):
    "Two runs (or ranks) appending to one --feature-cache while a third opens it: every entry reads back as written."
    import multiprocessing as mp
    from dflash_nb.train import FeatureCache
    ctx, n, width = mp.get_context('fork'), 300, 4
    procs = [ctx.Process(target=_fill, args=(tmp_path/'fc', s, n, width)) for s in (1, -1)]
    for p in procs: p.start()
    # opening trims a crashed tail
    while any(p.is_alive() for p in procs): FeatureCache(tmp_path/'fc', [0], width, 'fp')
    assert [p.exitcode for p in procs] == [0, 0]
    c = FeatureCache(tmp_path/'fc', [0], width, 'fp')
    assert len(c) == 2 * n
    for s in (1, -1):
        for i in range(n): assert torch.equal(c.get(f"{s}:{i}"), torch.full((1 + i % 5, width),
                                                                            float(s * (i % 200 + 1)))), (s, i)
    assert (tmp_path/'fc'/'features.bf16').stat().st_size == c.tokens * width * 2

def test_feature_cache_after_a_kill_mid_append(tmp_path):
    "A run killed between its features and its index line (or mid-line): reopening drops both; later appends read back."
    from dflash_nb.train import FeatureCache
    c = FeatureCache(tmp_path, [0], 4, 'fp')
    c.put('a', torch.ones(3, 4))
    with open(tmp_path/'features.bf16', 'ab') as f: f.write(b'\0' * 8 * 5)          # 5 rows of features, no index line
    with open(tmp_path/'index.tsv', 'a') as f: f.write('b\t3\t5')                    # its line, cut before the newline
    c = FeatureCache(tmp_path, [0], 4, 'fp')
    assert (len(c), c.tokens, (tmp_path/'features.bf16').stat().st_size) == (1, 3, 3 * 8)
    assert (tmp_path/'index.tsv').read_text() == 'a\t0\t3\n'
    c.put('b', torch.full((2, 4), 2.0))
    c = FeatureCache(tmp_path, [0], 4, 'fp')
    assert torch.equal(c.get('a'), torch.ones(3, 4)) and torch.equal(c.get('b'), torch.full((2, 4), 2.0))


# ---- issue 23.6 and 23.16: resumes that change the data or target, cut metrics, a full disk, a kill inside the save
# ----
import os, signal, subprocess, sys
from dflash_nb.toy import synthetic_dataset, tiny_qwen3_target
from dflash_nb.model import DFlashDraftModel

torch.set_num_threads(1)

def tiny_run(ds, out, **kw):
    "Options of a ~2 s CPU run on a tiny target (4 steps, a checkpoint every 2)."
    return {**dict(dataset=str(ds), target='tiny', output_dir=str(out), draft_layers=2, block_size=8, max_seq_len=70,
                   max_tokens=280,
                   max_anchors=8, epochs=1, max_steps=4, quiet=True, save_every=2, device='cpu'), **kw}

@pytest.fixture(scope='module')
def syn(tmp_path_factory):
    return synthetic_dataset(tmp_path_factory.mktemp('syn')/'ds', n_samples=48, vocab_size=64, min_len=30, max_len=70,
                             seed=3)

def metric_rows(out): return [json.loads(l) for l in (Path(out)/'metrics.jsonl').read_text().splitlines()]

def test_resume_on_another_dataset_or_target_is_refused(syn, tmp_path):
    """Issue 23.6: a resume with another --dataset or --target (same shapes: it would run) is refused in one line; a
    copy resumes."""
    tdir = tmp_path/'target'; tiny_qwen3_target(64, seed=0).save_pretrained(tdir)
    out = tmp_path/'run'
    train(train_args(**tiny_run(syn, out, target=str(tdir), mask_token_id=63)))
    other = synthetic_dataset(tmp_path/'other', n_samples=48, vocab_size=64, min_len=30, max_len=70, seed=4)
    with pytest.raises(ValueError) as e: train(train_args(**tiny_run(other, out, target=str(tdir), mask_token_id=63)))
    msg = str(e.value)
    assert 'was trained on another dataset' in msg and str(syn) in msg and str(other) in msg and len(
        msg.splitlines()) == 1, msg
    # the record still names the data trained on
    assert json.loads((out/'train_args.json').read_text())['dataset'] == str(syn)
    # the same data elsewhere: resumes
    copy = tmp_path/'copy'; shutil.copytree(syn, copy)
    assert train(train_args(**tiny_run(copy, out, target=str(tdir), mask_token_id=63)))['steps'] == 4
    # other weights, same shapes and files
    tiny_qwen3_target(64, seed=1).save_pretrained(tdir)
    with pytest.raises(ValueError) as e: train(train_args(**tiny_run(copy, out, target=str(tdir), mask_token_id=63)))
    assert 'was trained on another target' in str(e.value) and 'weights' in str(e.value) and len(
        str(e.value).splitlines()) == 1
    with pytest.raises(ValueError, match='another target'): train(train_args(**tiny_run(copy, out,
                                                                                        target='tiny:seed=1')))

def test_resume_with_another_norm_lr_mult_is_refused_in_one_line(syn, tmp_path):
    """A checkpoint's optimizer has one learning-rate group, a resume with --norm-lr-mult 30 needs two: one line naming
    the option."""
    out = tmp_path/'run'
    train(train_args(**tiny_run(syn, out, max_steps=2)))
    with pytest.raises(ValueError) as e: train(train_args(**tiny_run(syn, out, max_steps=2, norm_lr_mult=30.0)))
    assert '--norm-lr-mult' in str(e.value) and len(str(e.value).splitlines()) == 1, str(e.value)

def test_cut_last_metrics_line_does_not_block_the_resume(syn, tmp_path, capfd):
    """Issue 23.16: a kill while metrics.jsonl got its line leaves it cut; the resume drops it, warns, and matches the
    whole run."""
    full = tmp_path/'full'; train(train_args(**tiny_run(syn, full, keep_checkpoints=3)))
    part = tmp_path/'part'; (part/'checkpoints').mkdir(parents=True)
    shutil.copytree(full/'checkpoints'/'step-00000002', part/'checkpoints'/'step-00000002')
    lines = (full/'metrics.jsonl').read_text().splitlines(keepends=True)
    # step 3's line, cut mid-write
    (part/'metrics.jsonl').write_text(''.join(lines[:2]) + lines[2][:len(lines[2]) // 2])
    capfd.readouterr()
    train(train_args(**tiny_run(syn, part)))
    assert 'metrics.jsonl: dropped its last line' in capfd.readouterr().err
    a, b = metric_rows(full), metric_rows(part)
    assert [r['step'] for r in b] == [1, 2, 3, 4] and [r['loss'] for r in a] == [r['loss'] for r in b]

def _train_cmd(ds, out):
    return ['train'] + [f"--{k.replace('_', '-')}={v}" for k, v in tiny_run(ds, out).items() if k != 'quiet'] + [
        '--quiet']

def test_full_disk_at_a_checkpoint_is_one_line_and_the_rerun_completes(syn, tmp_path, capsys):
    """Issue 23.16: a real 600 KB tmpfs fills while the first checkpoint is written (torch.save): one line, partial
    removed."""
    from dflash_nb.cli import main
    with mounted_tmpfs(tmp_path/'disk', 'size=600k') as disk:
        out = disk/'run'
        capsys.readouterr()
        # the console script's entry point, in-process (a subprocess adds ~10 s of imports)
        rc = main(_train_cmd(syn, out))
        err = capsys.readouterr().err.strip()
        assert rc == 1 and len(err.splitlines()) == 1 and 'Traceback' not in err, err
        assert (f"{out/'checkpoints'/'step-00000002'}: no space left on device" in err
                and 'rerun the same command' in err), err
        # the partial checkpoint is gone
        assert 'inline_container' not in err and not list((out/'checkpoints').iterdir())
        subprocess.run(['mount', '-o', 'remount,size=64m', str(disk)], check=True)        # space freed
        train(train_args(**tiny_run(syn, out)))
        assert [m['step'] for m in metric_rows(out)] == [1, 2, 3, 4] and (out/'drafter'/'model.safetensors').is_file()

def test_full_disk_in_the_final_save_is_one_line(syn, tmp_path):
    """Issue 23.16: drafter/ on a real 64 KB tmpfs (safetensors' own error): one line naming it, no tmp files, the
    rerun saves."""
    out = tmp_path/'run'
    with mounted_tmpfs(out/'drafter', 'size=64k') as d:
        with pytest.raises(OSError) as e: train(train_args(**tiny_run(syn, out)))
        msg = str(e.value)
        assert msg.startswith(f"{d}: no space left on device") and len(msg.splitlines()) == 1, msg
        assert list(d.iterdir()) == []
        subprocess.run(['mount', '-o', 'remount,size=2m', str(d)], check=True)
        assert train(train_args(**tiny_run(syn, out)))['steps'] == 4
        assert sorted(p.name for p in d.iterdir()) == ['README.md', 'config.json', 'dflash.py', 'model.safetensors']

def killed_in_final_save(opts: dict) -> int:
    """Run `train` in a forked child that SIGKILLs itself when the final save renames its first file into drafter/; its
    status."""
    pid = os.fork()
    if pid == 0:
        try:
            real = os.replace
            def replace(src, dst, *a, **k):
                if os.path.basename(os.path.dirname(str(src))) == 'drafter' and '.tmp-' in str(src): os.kill(
                    os.getpid(), signal.SIGKILL)
                return real(src, dst, *a, **k)
            os.replace = replace
            train(train_args(**opts))
            os._exit(0)
        except BaseException as e:
            sys.stderr.write(f"child failed: {e!r}\n"); os._exit(3)
    return os.waitpid(pid, 0)[1]

def test_kill_inside_the_final_save_leaves_no_tmp_files(syn, tmp_path):
    """Issue 23.16: a real SIGKILL inside the final save; the rerun removes the dead run's *.tmp-PID files, not a live
    one's."""
    out = tmp_path/'run'
    status = killed_in_final_save(tiny_run(syn, out))
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
    left = sorted(f.name for f in (out/'drafter').iterdir())
    assert left and all('.tmp-' in f for f in left), left                     # the fault: the killed save's files
    alive = subprocess.Popen(['sleep', '60'])
    try:
        (out/'drafter'/f'model.safetensors.tmp-{alive.pid}').write_bytes(b'another save, still running')
        # resumes from the final checkpoint, saves
        assert train(train_args(**tiny_run(syn, out)))['steps'] == 4
        names = sorted(f.name for f in (out/'drafter').iterdir())
        assert names == ['README.md', 'config.json', 'dflash.py', 'model.safetensors',
                         f'model.safetensors.tmp-{alive.pid}'], names
    finally: alive.kill(); alive.wait()
    ck = DFlashDraftModel.from_pretrained(out/'checkpoints'/'step-00000004').state_dict()
    dr = DFlashDraftModel.from_pretrained(out/'drafter').state_dict()
    assert all(torch.equal(ck[k].to(torch.bfloat16), dr[k]) for k in ck)

def test_a_second_train_on_one_output_is_refused_in_one_line(dataset, tmp_path):
    """Trust contract: one writer per output. While another run holds OUT.lock, `dflash-nb train` exits 1 with one
    line, writing nothing."""
    from conftest import cli
    from dflash_nb.dataset import output_lock
    out = tmp_path/'run'
    with output_lock(out):
        r = cli('train', '--dataset', dataset, '--target', 'tiny', '--output-dir', out, '--max-steps', '1', '--quiet',
                check=False)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert 'another run' in r.stderr and str(out) in r.stderr
    assert not out.exists() or not any(out.iterdir())
