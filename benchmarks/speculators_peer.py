"""The peer comparison: speculators 0.9's own DFlash trainer on the recipe study's data, budget and held-out prompts.

speculators (installed `--no-deps` in `side_packages()`, as tests/test_speculators.py uses it) trains its DFlash
speculator from the view `dflash-nb export DS --format speculators` writes plus its offline hidden-state files
(`hidden_states/hs_<row>.safetensors`: `hidden_states` (T, taps + 1, H) bfloat16, the last slice the target's final
pre-norm hidden state, and `token_ids`). This script builds that input from the recipe study's tokenized training set
and the job's feature cache (taps 1, 8, 14, 20, 27: speculators numbers the same tensors 2, 9, 15, 21, 28, the
input of the next layer; the final hidden state is the cached layer-27 output run through the target's last two
layers), builds speculators' DFlash model for SmolLM2-135M-Instruct (2 full-attention layers, block 8, the arms'
draft vocabulary through its own t2d/d2t), and trains it with ITS `Trainer.train_epoch` for `--cpu-minutes` of process
CPU time (one torch thread, niced), its loss (CE on the verifier's argmax, D-PACE position weights), Muon+AdamW and
linear schedule (total steps estimated from a calibration step). The result is converted to our drafter (the same
tensor names; the frozen heads dropped, the draft vocabulary kept) and measured with `drafter_recipe.heldout()` on the
study's 12 held-out prompts, so its tau sits beside the arms'.

It does not run on CPU as shipped. `--probe` tries each obstacle on one real batch and prints one line each (file:line,
error, the shim that gets past it); the training run applies the shims (monkeypatches in this process, nothing edited):
  * trainer device: trainer.py:228 picks `torch.accelerator.current_accelerator()` or else "cuda"; trainer.py:348 moves
    the model to `get_local_rank()` (0): "Cannot access accelerator device when none is available"; its step timer
    (trainer.py:80, `torch.accelerator.synchronize()`, on every step where global_step % log_freq == 0) raises the same
    -> local rank 'cpu', `device_type = 'cpu'` (autocast('cuda') is off on CPU: fp32 fc vs bf16 hidden states fails at
    core.py:418 "expected m1 and m2 to have the same dtype"), its _StepTimer never enabled;
  * attention: flex attention has no CPU backward (attention.py:55 -> torch flex_attention.py:2082 NotImplementedError),
    with the compiled mask (core.py:35 `torch.compile(create_block_mask)`; on a synthetic 600-token batch inductor's
    C++ build of it failed, CppCompileError) or the uncompiled one (6 minutes for one mask)
    -> its `draft_attn_impl='sdpa'`;
  * loss: losses/utils.py:120, the default fused loss needs Triton -> its `loss_implementation='eager'`.
With these it trains, slowly: at 2,048 tokens and 128 anchors a step, forward+backward take ~27 CPU-s (bf16 matmuls,
82%) and its default Muon+AdamW step ~49 CPU-s (`--optimizer adamw --hidden-states-dtype float32` are its CPU-friendlier
options).

  python benchmarks/speculators_peer.py --out-dir .cache/peer --probe
  python benchmarks/speculators_peer.py --out-dir .cache/peer --cpu-minutes 5 --recipe-dir /work/bench/recipe
"""
import argparse, json, os, shutil, sys, time, traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

SPEC_TAPS = [i + 1 for i in [1, 8, 14, 20, 27]]   # speculators' ids of our taps (z-lab id + 1, its converter's rule)
# Its defaults (speculators train --speculator-type dflash) except: 2 layers and block 8 (the arms'), full attention
# (its default is sliding-window layers), 2,048 tokens a packed step (the arms' --max-tokens; its default 8,192 with 512
# anchors, so 128 anchors keeps its anchor density), and the two CPU options (sdpa attention, eager loss).
RECIPE = dict(layers=2, block=8, total_seq_len=2048, max_anchors=128, optimizer='muon', lr=1e-3, weight_decay=0.01,
              scheduler='linear', hidden_states_dtype='bfloat16', loss_fn='ce', per_position_loss_weight='dpace',
              attn='sdpa', loss_impl='eager')


def log(out: Path, msg: str):
    line = f"{time.strftime('%H:%M:%S', time.gmtime())} {msg}"
    print(line, flush=True)
    with open(out/'log.txt', 'a') as f: f.write(line + '\n')


def import_speculators():
    "speculators from `side_packages()` (after site-packages, as the tests add it); the one-line obstacle if it fails."
    from dflash_nb.prompts import side_packages
    if str(side_packages()) not in sys.path: sys.path.append(str(side_packages()))
    try:
        import speculators.models.dflash.core, speculators.train.trainer, speculators.train.cli  # noqa: F401
        return None
    except Exception as e: return where(e, 'import speculators')


def where(e: BaseException, what: str) -> str:
    "One line: what failed, at the innermost speculators frame and the innermost frame, with the error's first line."
    tb = traceback.extract_tb(e.__traceback__)
    spec = [f for f in tb if '/speculators/' in f.filename or '/hs_connectors/' in f.filename]
    short = lambda f: f"{f.filename.split('site-packages/')[-1].split('dflash-nb-side/')[-1]}:{f.lineno}"
    at = (f"{short(spec[-1])} -> " if spec else '') + (short(tb[-1]) if tb else '?')
    msg = (str(e).strip().splitlines() or [''])[0][:200]
    return f"{what}: {at}: {type(e).__name__}: {msg}"


# ---- input: the exported view + offline hidden-state files -----------------------------------------------------------

def copy_recipe_inputs(recipe_dir: Path, out: Path, n_samples: int, n_eval: int, max_new: int):
    """The study's tokenized training set and held-out baseline (greedy tokens, prompt lookup), copied so prepare()
    reuses them."""
    for src, dst in ((recipe_dir/'data'/f"n{n_samples}-s0", out/'data'/f"n{n_samples}-s0"),):
        if (src/'dataset'/'stats.json').is_file() and not (dst/'dataset'/'stats.json').is_file():
            shutil.copytree(src, dst, dirs_exist_ok=True)
    b = recipe_dir/f"heldout-{n_eval}x{max_new}"/'baseline.json'
    if b.is_file():
        (out/f"heldout-{n_eval}x{max_new}").mkdir(parents=True, exist_ok=True)
        shutil.copy(b, out/f"heldout-{n_eval}x{max_new}"/'baseline.json')


def final_hidden(tgt, tap27, n_rest: int):
    """The target's final pre-norm hidden state: the cached layer-27 output (T, H) through its last `n_rest` decoder
    layers."""
    import torch
    m = tgt.model
    h = tap27[None].float()
    pos = torch.arange(h.shape[1])[None]
    pe = m.rotary_emb(h, pos)
    with torch.no_grad():
        for layer in m.layers[len(m.layers) - n_rest:]:
            o = layer(h, attention_mask=None, position_ids=pos, position_embeddings=pe, use_cache=False)
            h = o[0] if isinstance(o, tuple) else o
    return h[0]


def check_final_hidden(tgt, ds, rows, feats) -> float:
    """Share of positions where the target's own logits and the reconstructed final state's agree on the argmax (one
    sample)."""
    import torch
    from dflash_nb.train import sample_key
    ids = ds[int(rows[0])][0]
    f = feats[sample_key(ids)]
    h = final_hidden(tgt, f[:, -576:], len(tgt.model.layers) - 28)
    with torch.no_grad():
        ref = tgt(input_ids=torch.as_tensor(ids)[None], use_cache=False).logits[0].argmax(-1)
        got = tgt.lm_head(tgt.model.norm(h)).argmax(-1)
    return float((ref == got).float().mean())


def write_hidden_states(out: Path, tgt, ds, feats, spec_dir: Path) -> int:
    "hidden_states/hs_<row>.safetensors for every row with cached features (speculators' FileTransfer layout)."
    import torch
    from safetensors.torch import save_file
    from dflash_nb.train import sample_key
    hs = spec_dir/'hidden_states'; hs.mkdir(exist_ok=True)
    n, t0 = 0, time.time()
    for i in range(len(ds)):
        p = hs/f"hs_{i}.safetensors"
        ids = ds[i][0]
        k = sample_key(ids)
        if p.is_file(): n += 1; continue
        if k not in feats: continue
        f = feats[k]
        taps = f.view(f.shape[0], 5, 576)
        last = final_hidden(tgt, f[:, -576:], len(tgt.model.layers) - 28)
        save_file({'hidden_states': torch.cat([taps, last[:, None]], 1).to(torch.bfloat16).contiguous(),
                   'token_ids': torch.as_tensor(np.asarray(ids), dtype=torch.long)}, str(p))
        n += 1
    log(out, f"hidden states: {n} files in {hs} ({time.time() - t0:.0f} s)")
    return n


# ---- speculators' model, loader and trainer --------------------------------------------------------------------------

def spec_model(tdir, vocab, cfg: dict, attn: str):
    "speculators' DFlash speculator for the target (its own config builder and from_training_args)."
    import torch
    from speculators.models.dflash.core import DFlashDraftModel as SpecDFlash
    from speculators.train.cli import create_transformer_layer_config
    from dflash_nb.targets import default_mask_token_id
    torch.manual_seed(0)
    tl = create_transformer_layer_config(str(tdir), num_layers=cfg['layers'], draft_arch='qwen3', hidden_act=None,
                                         sliding_window=2048, full_attention_indices=list(range(cfg['layers'])))
    V = tl.vocab_size
    t2d = torch.zeros(V, dtype=torch.bool); t2d[torch.as_tensor(vocab)] = True
    d2t = torch.as_tensor(vocab) - torch.arange(len(vocab))
    return SpecDFlash.from_training_args(verifier_config=tl, t2d=t2d, d2t=d2t, draft_vocab_size=len(vocab),
                                         block_size=cfg['block'],
                                         verifier_name_or_path=str(tdir), target_layer_ids=SPEC_TAPS,
                                         mask_token_id=default_mask_token_id(tdir), draft_attn_impl=attn)


def spec_loader(spec_dir: Path, cfg: dict, on_missing: str, seed: int = 0):
    "Its ArrowDataset over the exported view (all rows: the arms train on all) and its packing DataLoader, no workers."
    import torch
    from speculators.train.data import ArrowDataset
    from speculators.train.dataloader import _setup_dataloader
    d = ArrowDataset(max_len=cfg['total_seq_len'], datapath=str(spec_dir), on_missing=on_missing,
                     hidden_states_dtype=getattr(torch, cfg['hidden_states_dtype']))
    return _setup_dataloader(d, total_seq_len=cfg['total_seq_len'], hidden_size=576, num_workers=0, num_target_layers=5,
                             prefetch_factor=None, seed=seed)


def call_kwargs(cfg: dict, loss_impl: str) -> dict:
    from speculators.models.dflash.core import DFlashDraftModel as SpecDFlash
    return SpecDFlash.get_trainer_kwargs(loss_fn=cfg['loss_fn'], loss_implementation=loss_impl,
                                         max_anchors=cfg['max_anchors'],
                                         per_position_loss_weight=cfg['per_position_loss_weight'])[0]


def trainer_config(cfg: dict, save: Path, loss_impl: str, total_steps: int | None):
    import torch
    from speculators.train.trainer import TrainerConfig
    kw = call_kwargs(cfg, loss_impl)
    return TrainerConfig(lr=cfg['lr'], num_epochs=10_000, save_path=str(save), resume_from_checkpoint=False,
                         train_call_kwargs=kw,
                         val_call_kwargs=kw, optimizer=cfg['optimizer'], weight_decay=cfg['weight_decay'],
                         muon_lr=cfg['lr'],
                         scheduler_type=cfg['scheduler'], scheduler_total_steps=total_steps,
                         hidden_states_dtype=getattr(torch, cfg['hidden_states_dtype']),
                         log_freq=10**9)      # metrics logged at step 0 only: no per-step .item() syncs in the budget


def cpu_shim():
    """Trainer device selection on a CPU-only torch: its local rank (the device it moves model and batches to) -> 'cpu';
    its step timer never profiles (its marks call torch.accelerator.synchronize(), trainer.py:80, which raises here;
    it profiles, and logs metrics, on steps where global_step % log_freq == 0, step 0 always)."""
    import speculators.train.trainer as tr
    class NoProfile(tr._StepTimer):
        def reset(self, enabled: bool) -> None: super().reset(False)
    tr.get_local_rank, tr._StepTimer = (lambda: 'cpu'), NoProfile
    return lambda: setattr(tr, 'get_local_rank', _LOCAL_RANK) or setattr(tr, '_StepTimer', _STEP_TIMER)


def make_trainer(model, cfg, save, loss_impl, total_steps, loader):
    from speculators.train.trainer import Trainer
    t = Trainer(model, trainer_config(cfg, save, loss_impl, total_steps), loader, None)
    t.device_type = 'cpu'   # trainer.py:228 fell back to "cuda" (no accelerator): autocast must be the CPU's
    return t


class Budget(Exception): pass


def _originals():
    global _LOCAL_RANK, _STEP_TIMER
    import speculators.train.trainer as tr
    _LOCAL_RANK, _STEP_TIMER = tr.get_local_rank, tr._StepTimer


def train_budget(trainer, budget_s: float, out: Path) -> dict:
    """Its train_epoch, epoch after epoch, stopped by a step callback once the process CPU time of the loop reaches the
    budget."""
    import torch
    st = {'cpu': 0.0, 'steps': 0, 't0': time.process_time(), 'predictions': 0, 'losses': []}
    def count(m, args, out):   # its own metrics: labelled slots after the anchor (our arms' "predictions") and the loss
        st['predictions'] += int(out[2]['full_acc_total']); st['losses'].append(round(float(out[1]), 4))
    hook = trainer.model.register_forward_hook(count)
    def cb():
        st['steps'] += 1; st['cpu'] = time.process_time() - st['t0']
        if st['cpu'] >= budget_s: raise Budget
    epoch = 0
    try:
        while True:
            trainer.train_epoch(epoch, step_callback=cb); epoch += 1
    except Budget: pass
    finally: hook.remove()
    st['epochs'] = epoch + 1
    return st


def calibrate(model, loader, cfg, loss_impl, n: int = 3) -> float:
    """Process CPU seconds of one forward+backward+step on real batches (a throwaway copy of the model), for the LR
    schedule's length."""
    import copy, torch
    m = copy.deepcopy(model).train()
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=0.0)
    kw = call_kwargs(cfg, loss_impl)
    ts = []
    for i, b in enumerate(loader):
        if i >= n: break
        b = {k: v for k, v in b.items() if k != 'error_records' and not k.startswith('_')}
        t0 = time.process_time()
        with torch.autocast('cpu', dtype=torch.bfloat16, enabled=cfg['hidden_states_dtype'] == 'bfloat16'):
            _, loss, _ = m(**b, **kw)
        loss.backward(); opt.step(); opt.zero_grad()
        ts.append(time.process_time() - t0)
    return float(np.median(ts))


# ---- conversion to our drafter and the held-out measurement ----------------------------------------------------------

def to_ours(spec, tgt, tdir, vocab, cfg: dict):
    """Our DFlashDraftModel with speculators' trained weights (same names; its frozen embedding/heads/verifier norm
    dropped)."""
    import torch
    from drafter_recipe import LAYER_IDS
    from dflash_nb.model import DFlashDraftModel
    from dflash_nb.targets import default_mask_token_id
    dr = DFlashDraftModel.from_target(tgt, cfg['layers'], LAYER_IDS, cfg['block'], default_mask_token_id(tdir),
                                      draft_vocab_size=len(vocab))
    dr.set_draft_vocab(vocab)
    drop = ('embed_tokens.', 'lm_head.', 'verifier_lm_head.', 'verifier_norm.', 't2d', 'd2t', 'rotary_emb.')
    sd = {k: v.float() for k, v in spec.state_dict().items() if not k.startswith(drop)}
    missing, extra = dr.load_state_dict(sd, strict=False)
    if extra or set(missing) - {'d2t', 't2d'}:
        raise ValueError(
            f"speculators -> drafter: unexpected {extra[:5]}, missing {sorted(set(missing) - {'d2t', 't2d'})[:5]}")
    if not torch.equal(spec.lm_head.weight.detach().float(), dr.draft_head.detach().float()):
        raise ValueError("speculators' lm_head is not our draft head at the draft vocabulary's ids")
    return dr


def check_conversion(spec, dr, held, cfg: dict, loss_impl: str) -> dict:
    """Argmax agreement of speculators' own forward and the converted drafter at the same anchors of one held-out
    sequence."""
    import torch
    from dflash_nb.model import block_layout
    from dflash_nb.train import make_blocks
    h = held[0]; ids, P = h['ids'], h['prompt_len']; T = ids.shape[1]; bs = cfg['block']
    lm = torch.zeros_like(ids); lm[:, P:] = 1
    from speculators.train.data import ArrowDataset  # noqa: F401  (import order as in training)
    spec.eval(); dr.eval()
    with torch.no_grad():
        torch.manual_seed(0)
        last = torch.zeros(1, T, 576)
        _, logits, _, mask, idx = spec._backbone_forward(h['feats'], ids, lm, last, torch.zeros(1, T, dtype=torch.long),
                                                         max_anchors=16)
        anchors = idx.view(-1, bs)[:, 0]
        ok = mask.view(-1, bs)[:, 1:].bool()
        sp = spec.d2t[logits.view(-1, bs, logits.shape[-1])[:, 1:].argmax(-1)] + logits.view(-1, bs, logits.shape[-1])[
            :, 1:].argmax(-1)
        batch = {'input_ids': ids, 'loss_mask': lm.bool(), 'lengths': torch.tensor([T]), 'anchors': anchors[None],
                 'anchor_valid': torch.ones(1, len(anchors), dtype=torch.bool)}
        block_ids, block_pos, labels, lok = make_blocks(batch, bs, dr.config.mask_token_id)
        hid = dr(block_ids, block_pos, h['feats'], torch.arange(T)[None], block_layout(anchors[None], T, bs),
                 return_hidden=True)
        ours = dr.vocab_ids[(hid @ dr.draft_head.T).argmax(-1)].view(len(anchors), bs)[:, 1:]
    spec.train(); dr.train()
    return {'slots': int(ok.sum()), 'argmax_agreement': float((ours == sp)[ok].float().mean())}


# ---- the probe: each obstacle on one real batch ----------------------------------------------------------------------

def probe(a, out: Path, ctx: dict) -> list[str]:
    "Try speculators' CPU path unshimmed, one obstacle at a time; one line each (file:line, error, shim, shim result)."
    import torch
    import speculators.models.dflash.core as core
    from torch.nn.attention.flex_attention import create_block_mask
    tdir, vocab, spec_dir = ctx['tdir'], ctx['vocab'], ctx['spec_dir']
    cfg = {**RECIPE}
    lines = []
    def step(model, loss_impl, b=None):
        b = b or {k: v for k, v in next(iter(spec_loader(spec_dir, cfg, ctx['on_missing']))).items() if k
                  != 'error_records'}
        with torch.autocast('cpu', dtype=torch.bfloat16):
            _, loss, _ = model(**b, **call_kwargs(cfg, loss_impl))
        loss.backward()
        return loss.item()
    def attempt(name, fn, shim, shim_fn):
        try: fn(); r = f"{name}: no error"
        except Exception as e: r = where(e, name)
        try: s = f"ok ({shim_fn()})" if shim_fn else 'n/a'
        except Exception as e: s = 'FAILS ' + where(e, 'shim')
        lines.append(f"OBSTACLE {r} | shim: {shim} -> {s}"); log(out, lines[-1])
    # 1. its trainer picks cuda: model.to(local rank 0)
    def trainer_unshimmed():
        from speculators.train.trainer import Trainer
        Trainer(spec_model(tdir, vocab, cfg, 'sdpa'), trainer_config(cfg, out/'probe-ckpt', 'eager', 10),
                spec_loader(spec_dir, cfg, ctx['on_missing']), None)
    def trainer_shimmed():
        undo = cpu_shim()
        try:
            t = make_trainer(spec_model(tdir, vocab, cfg, 'sdpa'), cfg, out/'probe-ckpt', 'eager', 10,
                             spec_loader(spec_dir, cfg, ctx['on_missing']))
            st = train_budget(t, 1e-9, out)   # one optimizer step through train_epoch
            return f"one train_epoch step on CPU, device_type {t.device_type}, loss {st['losses'][0]:.3f}"
        finally: undo()
    attempt('trainer device (trainer.py:228 "cuda" fallback, model.to(get_local_rank()))', trainer_unshimmed,
            "speculators.train.trainer.get_local_rank -> 'cpu'; trainer.device_type = 'cpu'; its _StepTimer never "
            "enabled (trainer.py:80 torch.accelerator.synchronize() raises without an accelerator)", trainer_shimmed)
    # 2. the default attention: compiled block mask, then flex attention backward
    attempt('simple_flex_attention mask (compiled create_block_mask)',
            lambda: step(spec_model(tdir, vocab, cfg, 'simple_flex_attention'), 'eager'),
            "core._compiled_create_block_mask = create_block_mask (uncompiled)", None)
    def flex_uncompiled():
        keep = core._compiled_create_block_mask
        core._compiled_create_block_mask = create_block_mask
        try: step(spec_model(tdir, vocab, cfg, 'simple_flex_attention'), 'eager')
        finally: core._compiled_create_block_mask = keep
    attempt('simple_flex_attention backward (uncompiled mask)', flex_uncompiled,
            "its draft_attn_impl='sdpa' (dense mask from the same mask_mod)",
            lambda: f"loss {step(spec_model(tdir, vocab, cfg, 'sdpa'), 'eager'):.3f}")
    # 3. the default fused loss
    attempt('loss_implementation fused', lambda: step(spec_model(tdir, vocab, cfg, 'sdpa'), 'fused'),
            "its loss_implementation='eager'",
            lambda: f"loss {step(spec_model(tdir, vocab, cfg, 'sdpa'), 'eager'):.3f}")
    attempt('draft_attn_impl eager (the other non-flex option)', lambda: step(spec_model(tdir, vocab, cfg, 'eager'),
                                                                              'eager'), 'none needed', None)
    (out/'probe.json').write_text(json.dumps(lines, indent=1))
    return lines


def heldout_set(a, out: Path, wait_s: float = 900):
    "The held-out set of the arms (after training: the study's baseline.json is copied once it exists, else made here)."
    from drafter_recipe import prepare
    b = a.recipe_dir/f"heldout-{a.eval_prompts}x{a.max_new_tokens}"/'baseline.json' if a.recipe_dir else None
    t0 = time.time()
    while b is not None and not b.is_file() and time.time() - t0 < wait_s: time.sleep(15)
    if a.recipe_dir: copy_recipe_inputs(a.recipe_dir, out, a.samples, a.eval_prompts, a.max_new_tokens)
    *_, held, base = prepare(out, a.samples, a.eval_prompts, a.max_new_tokens, fill='cached')
    return held, base


# ---- main ------------------------------------------------------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--out-dir', type=Path, required=True)
    p.add_argument('--cpu-minutes', type=float, default=5.0,
                   help='process CPU minutes of training (its train_epoch loop)')
    p.add_argument('--recipe-dir', type=Path,
                   help="the recipe study's --out-dir: reuse its tokenized training set and held-out baseline")
    p.add_argument('--samples', type=int, default=916)
    p.add_argument('--eval-prompts', type=int, default=12)
    p.add_argument('--max-new-tokens', type=int, default=128)
    p.add_argument('--probe', action='store_true', help='only the obstacles, on one real batch, one line each')
    for k, v in RECIPE.items():
        if k not in ('attn', 'loss_impl'): p.add_argument(f"--{k.replace('_', '-')}", type=type(v), default=v)
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    out = a.out_dir; out.mkdir(parents=True, exist_ok=True)
    bad = import_speculators()
    if bad: print(f"OBSTACLE {bad}", flush=True); return 2
    _originals()
    cfg = {**RECIPE, **{k: getattr(a, k) for k in RECIPE if k not in ('attn', 'loss_impl')}}
    from drafter_recipe import prepare
    from dflash_nb.train import default_eos_ids
    from real_target_scaling import cli
    if a.recipe_dir: copy_recipe_inputs(a.recipe_dir, out, a.samples, a.eval_prompts, a.max_new_tokens)
    tgt, tdir, ds, rows, feats, _, _ = prepare(out, a.samples, a.eval_prompts, a.max_new_tokens, fill='cached',
                                               heldout_set=False)
    vocab = np.unique(np.concatenate([ids[m] for ids, m in (ds[i] for i in range(len(ds)))]
                                     + [np.array(default_eos_ids(tgt), np.int64)]))
    spec_dir = out/'spec'
    if not (spec_dir/'state.json').is_file():
        log(out, cli('export', out/'data'/f"n{a.samples}-s0"/'dataset', '--format', 'speculators', '--output-dir',
                     spec_dir).strip().splitlines()[-1])
    agree = check_final_hidden(tgt, ds, rows, feats)
    log(out,
        f"final hidden state from the cached layer-27 output: argmax agrees with the target's logits at {agree:.4f} of "
        "positions")
    n_hs = write_hidden_states(out, tgt, ds, feats, spec_dir)
    ctx = {'tdir': tdir, 'vocab': vocab, 'spec_dir': spec_dir, 'on_missing': 'raise' if n_hs == len(ds) else 'skip'}
    if a.probe:
        probe(a, out, ctx); return 0
    # the run: shims applied, calibration, its trainer for the budget
    cpu_shim()
    model = spec_model(tdir, vocab, cfg, cfg['attn'])
    loader = spec_loader(spec_dir, cfg, ctx['on_missing'])
    per_step = calibrate(model, loader, cfg, cfg['loss_impl'])
    budget = a.cpu_minutes * 60
    total = max(10, int(budget / per_step))
    log(out,
        f"speculators DFlash: {sum(p.numel() for p in model.parameters() if p.requires_grad):,} trainable parameters, "
             f"{len(loader)} packed batches an epoch ({cfg['total_seq_len']} tokens, {cfg['max_anchors']} anchors), "
             f"calibrated {per_step:.2f} CPU-s a step -> LR schedule over {total} steps")
    try:
        trainer = make_trainer(model, cfg, out/'ckpt', cfg['loss_impl'], total, loader)
        st = train_budget(trainer, budget, out)
    except Exception as e:
        print(f"OBSTACLE {where(e, 'training on CPU with the shims')}", flush=True); return 2
    preds = st['predictions']
    torch.save(model.state_dict(), out/'speculators_state.pt')
    held, base = heldout_set(a, out)
    dr = to_ours(model, tgt, tdir, vocab, cfg)
    conv = check_conversion(model, dr, held, cfg, cfg['loss_impl'])
    from drafter_recipe import heldout
    ev = heldout(dr, held, {'block': cfg['block']})
    res = {'peer': 'speculators 0.9.0 DFlash (its Trainer.train_epoch, shimmed for CPU)', 'config': cfg,
           'budget_s': budget,
           'steps': st['steps'], 'cpu_s': st['cpu'], 'scheduled_steps': total, 'calibrated_step_cpu_s': per_step,
           'predictions': preds, 'predictions_per_cpu_s': preds / st['cpu'], 'loss_first_last': [st['losses'][0],
                                                                                                 st['losses'][-1]],
           'losses': st['losses'],
           'conversion_check': conv, 'final': ev, 'prompt_lookup': base['prompt_lookup'],
           'shims': ["speculators.train.trainer.get_local_rank -> 'cpu'", "Trainer.device_type = 'cpu'",
                     "speculators.train.trainer._StepTimer: never enabled (no accelerator to synchronize)",
                     "draft_attn_impl='sdpa'", "loss_implementation='eager'"]}
    (out/'result.json').write_text(json.dumps(res, indent=1))
    pa = ev['position_acceptance']
    log(out,
        f"speculators peer: {st['steps']} steps in {st['cpu']:.0f} CPU-s, {preds / st['cpu']:.0f} pred/CPU-s, loss "
             f"{st['losses'][0]:.3f} -> {st['losses'][-1]:.3f}, held-out tau {ev['tau_all_anchors']:.3f}, acc@1..3 "
             f"{pa[0]:.3f} {pa[1]:.3f} {pa[2]:.3f} (prompt lookup {base['prompt_lookup']['mean_tau']:.3f}); conversion "
             f"argmax agreement {conv['argmax_agreement']:.4f} on {conv['slots']} slots")
    return 0


if __name__ == '__main__':
    sys.exit(main())
