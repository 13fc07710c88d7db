"""speculators in and out, against the REAL speculators 0.9.0 package (installed by scripts/setup.sh with --no-deps
plus the modules its data path imports). Where it is not installed these tests say so and skip; nothing is faked.
Also: pre-tokenized rows (no sample_id/source, int64 lists, torch format) reviewed by stats/inspect and merged."""
import json, os, subprocess, sys
from pathlib import Path

import pytest

from conftest import ROOT, cli

SAMPLES = ROOT/'data'/'samples'

@pytest.fixture(scope='module')
def ds(tmp_path_factory, qwen_dir):
    from dflash_nb.tokenize import tokenize_dataset
    d = tmp_path_factory.mktemp('spec')/'ds'
    tokenize_dataset(qwen_dir, SAMPLES, d, progress=False)
    return d

def _speculators():
    "speculators 0.9 importable: scripts/setup.sh keeps it (--no-deps) in side_packages(), outside the environment."
    from dflash_nb.prompts import side_packages
    # after site-packages: the env's own win
    if str(side_packages()) not in sys.path: sys.path.append(str(side_packages()))
    try:
        from speculators.train.data import ArrowDataset  # noqa: F401
        return True
    except ImportError as e:
        pytest.skip(f"speculators 0.9.0 is not installed ({e}); scripts/setup.sh installs it: pip install --no-deps "
                    f"--target {side_packages()} speculators==0.9.0 hs-connectors==0.9.0 loguru; pip install openai "
                    "httpx aiohttp")

def test_pretokenized_rows_reviewed_and_merged(ds, qwen_dir, tmp_path):
    "Rows with only input_ids + loss_mask (int64, torch format, as speculators writes them): stats, inspect, merge."
    import datasets
    pre = datasets.load_from_disk(str(ds)).select_columns(['input_ids', 'loss_mask']).cast(datasets.Features(
        input_ids=datasets.List(datasets.Value('int64')), loss_mask=datasets.List(datasets.Value('int64'))))
    pre._format_type = None
    pre.save_to_disk(str(tmp_path/'pre'))
    st = json.loads((tmp_path/'pre'/'state.json').read_text()); st['_format_type'] = 'torch'
    (tmp_path/'pre'/'state.json').write_text(json.dumps(st))      # torch format: no need to import torch to write it
    want = json.loads((ds/'stats.json').read_text())
    r = cli('stats', tmp_path/'pre', '--quiet')
    got = json.loads(r.stdout[r.stdout.index('{'):r.stdout.rindex('}') + 1])
    assert (got['samples'], got['total_tokens'], got['loss_tokens']) == (want['samples'], want['total_tokens'],
                                                                         want['loss_tokens'])
    r = cli('inspect', tmp_path/'pre', '--model-path', qwen_dir, '--quiet', check=False)
    assert r.returncode == 0 and 'Traceback' not in r.stderr, r.stderr
    assert f"{want['samples']} samples" in r.stdout and r.stdout.count('PASS') >= 6 and 'e.g. pre:' in r.stdout
    r = cli('merge', '--existing', ds, '--new', tmp_path/'pre', '--output-dir', tmp_path/'m', '--quiet', check=False)
    assert r.returncode == 1 and 'no manifest.json' in r.stderr and '--allow-mismatch' in r.stderr
    r = cli('merge', '--existing', ds, '--new', tmp_path/'pre', '--output-dir', tmp_path/'m', '--quiet',
            '--allow-mismatch')
    # the same rows, found by content
    assert f"- duplicates {want['samples']} (sample_id 0, content {want['samples']})" in r.stdout

def test_export_feeds_speculators_arrowdataset_and_dataloader(ds, tmp_path):
    _speculators()
    import torch
    from safetensors.torch import save_file
    from speculators.train.data import ArrowDataset
    from speculators.train.dataloader import _setup_dataloader
    import datasets
    out = tmp_path/'spec'
    r = cli('export', ds, '--format', 'speculators', '--output-dir', out)
    assert 'hardlink' in r.stdout and sorted(p.name for p in out.iterdir()) == ['data-00000-of-00001.arrow',
                                                                                'dataset_info.json', 'state.json']
    rows = datasets.load_from_disk(str(ds)).to_dict()
    # hidden states as speculators' offline generation leaves them: hidden_states/hs_<i>.safetensors (3 layers + last)
    hs, H = out/'hidden_states', 8
    hs.mkdir()
    for i, ids in enumerate(rows['input_ids']):
        save_file({'hidden_states': torch.randn(len(ids), 4, H, dtype=torch.bfloat16),
                   'token_ids': torch.tensor(ids, dtype=torch.long)},
                  str(hs/f'hs_{i}.safetensors'))
    d = ArrowDataset(max_len=2048, datapath=str(out), on_missing='raise')
    assert len(d) == len(rows['input_ids']) and d.approx_lengths == rows['seq_len']
    for i in (0, 7, len(d) - 1):
        s = d[i]
        assert s['input_ids'].tolist() == rows['input_ids'][i] and s['loss_mask'].bool().tolist() == rows['loss_mask'][
            i]
        assert s['hidden_states'].shape == (rows['seq_len'][i], 3 * H) and s['lengths'].tolist() == [rows['seq_len'][i]]
    batches = list(_setup_dataloader(d, total_seq_len=8192, hidden_size=H, num_workers=0, prefetch_factor=None))
    assert len(batches) > 1
    seen = sum(int((b['document_ids'] >= 0).sum()) for b in batches)
    masked = sum(int(b['loss_mask'][b['document_ids'] >= 0].sum()) for b in batches)
    assert seen == sum(rows['seq_len']) and masked == sum(map(sum, rows['loss_mask']))  # every token and mask, packed
    assert json.loads((ds/'state.json').read_text())['_format_type'] is None  # our own dataset stays format-free

def test_stats_and_inspect_read_speculators_prepare_data_output(ds, qwen_dir, tmp_path):
    "`speculators prepare-data` (its own code, offline: pre-tokenized JSONL rows pass through) -> stats and inspect."
    _speculators()
    import datasets
    rows = datasets.load_from_disk(str(ds)).select(range(40)).to_dict()
    src = tmp_path/'rows.jsonl'
    src.write_text(''.join(json.dumps({'input_ids': i, 'loss_mask': [int(x) for x in m]}) + '\n'
                           for i, m in zip(rows['input_ids'], rows['loss_mask'])))
    from dflash_nb.prompts import side_packages
    env = {**os.environ, 'HF_HUB_OFFLINE': '1', 'HF_DATASETS_OFFLINE': '1', 'HF_DATASETS_CACHE': str(tmp_path/'hf'),
           'PYTHONPATH': os.pathsep.join(filter(None, [os.environ.get('PYTHONPATH'), str(side_packages())]))}
    p = subprocess.run([sys.executable, '-m', 'speculators', 'prepare-data', '--model', str(qwen_dir), '--data',
                        str(src), '--output', str(tmp_path/'prep'),
                        '--seq-length', '8192', '--num-preprocessing-workers', '1'], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert json.loads((tmp_path/'prep'/'state.json').read_text())['_format_type'] == 'torch'
    r = cli('stats', tmp_path/'prep', '--quiet')
    got = json.loads(r.stdout[r.stdout.index('{'):r.stdout.rindex('}') + 1])
    assert (got['samples'], got['total_tokens'], got['loss_tokens']) == (40, sum(rows['seq_len']),
                                                                         sum(map(sum, rows['loss_mask'])))
    r = cli('inspect', tmp_path/'prep', '--model-path', qwen_dir, '--quiet', check=False)
    assert 'Traceback' not in r.stderr and '40 samples' in r.stdout and 'MASK CHECKS' in r.stdout, r.stdout + r.stderr
