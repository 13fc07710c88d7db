"""End to end: the pipeline job (prompts -> target completions -> dataset -> inspect -> train -> eval) and the eval
job, CPU."""
import json

import pytest

from dflash_nb.jobs import run_job


@pytest.fixture(scope='module')
def pipeline(tmp_path_factory):
    "The pipeline job with small settings (about 40 s on one CPU core)."
    out = tmp_path_factory.mktemp('outputs')
    run = run_job('pipeline', {'train_prompts': 384, 'gen_max_new_tokens': 64, 'epochs': 8, 'eval_prompts': 16,
                               'eval_max_new_tokens': 48}, outputs=out)
    assert run.ok, f"{run.error}; see {run.notebook}"
    return run


def test_pipeline_trains_a_drafter_that_beats_the_untrained_one(pipeline):
    s = json.loads((pipeline.out_dir/'pipeline.json').read_text())
    assert s['path'] == 'token' and s['train_prompts'] == 384 and s['eval_prompts'] == 16 and s['samples'] == 384
    assert s['lossless'] and s['untrained']['lossless'] and s['trained']['lossless']
    assert s['untrained']['prompts'] == s['trained']['prompts'] == 16
    assert s['tau_trained'] > s['tau_untrained'] + 0.3, (s['tau_trained'], s['tau_untrained'])
    assert s['trained']['target_forwards_saved'] > s['untrained']['target_forwards_saved']
    assert s['trained']['new_tokens'] == 16 * 48
    # every stage left its output
    d = pipeline.out_dir
    for f in ('target/config.json', 'dataset/manifest.json', 'inspect.json', 'train/drafter/model.safetensors',
              'train/metrics.jsonl',
              'eval-trained/eval.json', 'eval-untrained/eval.json', 'training.png', 'acceptance.png', 'tau.png'):
        assert (d/f).is_file(), f
    html = pipeline.report.read_text()
    assert html.count('<img') >= 3 and 'held-out prompts' in html and 'Trained drafter: mean tau' in html


def test_eval_job_on_the_pipeline_outputs(pipeline, tmp_path):
    d = pipeline.out_dir
    run = run_job('eval', {'target': str(d/'target'), 'drafter': str(d/'train'/'drafter'), 'random_prompts': 6,
                           'max_new_tokens': 30,
                           'suppress_token_ids': '511', 'seed': 3}, outputs=tmp_path)
    assert run.ok, f"{run.error}; see {run.notebook}"
    s = json.loads((run.out_dir/'eval.json').read_text())
    assert set(s) == {'untrained', 'trained', 'seconds'}
    assert s['trained']['lossless'] and s['untrained']['lossless'] and s['trained']['prompts'] == 6
    assert (run.out_dir/'acceptance.png').is_file() and run.report.is_file()


def test_pipeline_chat_path(tmp_path, qwen_dir):
    """The chat path of the same job: prompt records -> records by a (tiny, Qwen-vocabulary) model dir -> tokenize ->
    inspect -> train -> eval."""
    import shutil
    from dflash_nb.toy import tiny_qwen3_target
    from dflash_nb.tokenize import ChatTokenizer
    ct = ChatTokenizer(qwen_dir)
    tgt = tiny_qwen3_target(vocab_size=ct.vocab_size, num_layers=4, hidden_size=16, num_heads=2, num_kv_heads=1,
                            head_dim=8,
                            intermediate_size=32, tie_word_embeddings=False)
    tgt.generation_config.eos_token_id = ct.tokenizer.token_to_id('<|im_end|>')
    tgt.save_pretrained(tmp_path/'target')
    for f in qwen_dir.iterdir():
        if f.is_file(): shutil.copy(f, tmp_path/'target'/f.name)
    topics = ['rust lifetimes', 'a haiku about rain', 'TCP slow start', 'the capital of Peru', 'sorting in O(n log n)',
              'CRDTs']
    (tmp_path/'prompts.jsonl').write_text(''.join(json.dumps({'id': f"p{i}", 'messages': [{
        'role': 'user', 'content': f"Explain {t} ({i})."}]}) + '\n'
                                                  for i, t in enumerate(topics * 3)))
    run = run_job('pipeline', {'target': str(tmp_path/'target'), 'prompts': str(tmp_path/'prompts.jsonl'),
                               'holdout_every': 6,
                               'gen_max_new_tokens': 24, 'gen_batch_size': 8, 'max_steps': 3, 'max_tokens': 1024,
                               'max_anchors': 4,
                               'max_seq_len': 256, 'eval_max_new_tokens': 12, 'stop_on_inspect_fail': False},
                  outputs=tmp_path/'out')
    assert run.ok, f"{run.error}; see {run.notebook}"
    s = json.loads((run.out_dir/'pipeline.json').read_text())
    assert s['path'] == 'chat' and s['train_prompts'] == 15 and s['eval_prompts'] == 3 and s['train_steps'] == 3
    assert s['lossless'] and s['trained']['new_tokens'] > 0
    recs = [json.loads(l) for l in (run.out_dir/'completions.jsonl').read_text().splitlines()]
    assert len(recs) == 15 and all(r['completion']['role'] == 'assistant' for r in recs)
    man = json.loads((run.out_dir/'dataset'/'manifest.json').read_text())
    assert man['tokenizer']['fingerprint'] == ct.fingerprint and man['counts']['samples'] + sum(
        json.loads((run.out_dir/'dataset'/'stats.json').read_text())['skipped'].values()) == 15
