"""Held-out check of `dflash-nb tokenize` against an independent oracle.

The oracle below re-implements, from DESIGN.md alone and without importing `dflash_nb`, what the
tokenize stage must produce:

* records: the three record shapes, ShareGPT role names, `completion` appended to `messages`,
  tool-call `arguments` given as JSON strings parsed to dicts, `reasoning` as an alias of
  `reasoning_content`, `sample_id` = `id` else `<file name>:<line>`, `source` else "", blank lines
  ignored, one skip reason per bad record;
* rendering: transformers' own `apply_chat_template(..., tokenize=False)` with the chat template
  found in the model directory (here: the official Qwen3.6 template);
* the loss mask: generated turns are the assistant turns after the last real user message; turn j
  covers the text from the end of `render(messages[:j], add_generation_prompt=True)` to the end of
  that turn's `<|im_end|>`; prompt/between/tail segments and generated spans are tokenized
  separately (`add_special_tokens=False`) and concatenated; then truncated to max-seq-len.

Then it runs the real command line on `tests/data/heldout.jsonl` and compares token for token and
mask bit for mask bit, plus columns, order, stats.json and skipped.jsonl.

The oracle has its own tests that do not need the package's tokenize command (they use a tiny BPE
tokenizer trained on the spot, or the embedded Qwen3.6 tokenizer once it can be built).
"""
from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
HELDOUT = HERE / "data" / "heldout.jsonl"
# CI clones the repository elsewhere with shared/ beside it, so resolve relative to this file.
OFFICIAL_TEMPLATE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "qwen3_6_chat_template.jinja"
MAX_LEN = 1024
EOT = "<|im_end|>"

# Physical line numbers (1-based) of the held-out records that must be skipped, and why.
# Every other non-blank line is a good record. Keep in sync with tests/data/heldout.jsonl.
EXPECTED_SKIPS = {
    3: "invalid_json",
    7: "not_an_object",
    11: "no_messages",
    14: "bad_message",
    17: "unknown_role",
    20: "bad_tool_call",
    23: "no_user_query",
    26: "no_generated_turn",
    29: "template_error",
    32: "invalid_json",
    35: "not_an_object",
    38: "no_messages",
    41: "unknown_role",
    44: "bad_tool_call",
    47: "no_user_query",
    50: "no_generated_turn",
    53: "no_loss_after_truncation",
    56: "bad_message",
    59: "not_an_object",
}
BLANK_LINES = {9, 30, 60}  # ignored, not counted as read
HELDOUT_LINES = 66  # physical lines in heldout.jsonl (guards against edits that shift the table above)
TRUNCATED_IDS = {"ho-long-insertion-sort"}  # kept samples longer than MAX_LEN tokens
OK_IDS = ("ho-ok", "ho-ok-no-reasoning")  # single turn, empty reasoning, answer "OK."
OK_PIECES = ["\n", "</think>", "\n\n", "OK", ".", "<|im_end|>"]

# ------------------------------------------------------------------------------------------------
# The oracle
# ------------------------------------------------------------------------------------------------

SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                  "system": "system", "tool": "tool", "observation": "tool", "function_response": "tool"}
ROLES = {"system", "user", "assistant", "tool"}


class Skip(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class OracleSample:
    sample_id: str
    source: str
    line: int
    input_ids: list
    loss_mask: list
    truncated: bool
    text: str = ""  # full rendered conversation
    spans: list = field(default_factory=list)  # (start, end) character offsets of the generated spans
    full_len: int = 0  # tokens before truncation


@dataclass
class OracleSkip:
    line: int
    sample_id: str
    reason: str


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _norm_call(call):
    if not isinstance(call, dict):
        raise Skip("bad_tool_call")
    call = copy.deepcopy(call)
    fn = call["function"] if isinstance(call.get("function"), dict) else call
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise Skip("bad_tool_call") from None
        if not isinstance(args, dict):
            raise Skip("bad_tool_call")
        fn["arguments"] = args
    return call


def _norm_turn(turn, sharegpt: bool) -> dict:
    if not isinstance(turn, dict):
        raise Skip("bad_message")
    role = turn.get("role", turn.get("from"))
    if not isinstance(role, str):
        raise Skip("bad_message")
    if sharegpt:
        role = SHAREGPT_ROLES.get(role, role)
    if role not in ROLES:
        raise Skip("unknown_role")
    msg = {"role": role, "content": turn["content"] if "content" in turn else turn.get("value")}
    reasoning = turn.get("reasoning_content", turn.get("reasoning"))
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    if turn.get("tool_calls"):
        msg["tool_calls"] = [_norm_call(c) for c in turn["tool_calls"]]
    return msg


def normalise(rec) -> tuple[list, list | None]:
    """Record -> (messages, tools) or raise Skip(reason)."""
    if not isinstance(rec, dict):
        raise Skip("not_an_object")
    if "messages" in rec:
        turns, sharegpt = rec["messages"], False
    elif "conversations" in rec:
        turns, sharegpt = rec["conversations"], True
    else:
        raise Skip("no_messages")
    if not isinstance(turns, list) or not turns:
        raise Skip("no_messages")
    msgs = [_norm_turn(t, sharegpt) for t in turns]
    if rec.get("completion") is not None:
        comp = rec["completion"]
        if isinstance(comp, str):
            comp = {"role": "assistant", "content": comp}
        elif isinstance(comp, dict):
            comp = {"role": "assistant", **comp}
        else:
            raise Skip("bad_message")
        msgs.append(_norm_turn(comp, False))
    return msgs, rec.get("tools") or None


def last_user_index(msgs):
    """Index of the last real user message (not a bare tool-response wrapper), or None."""
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i]["role"] == "user":
            text = _content_text(msgs[i]["content"]).strip()
            if not (text.startswith("<tool_response>") and text.endswith("</tool_response>")):
                return i
    return None


def render(tok, msgs, tools, add_generation_prompt: bool) -> str:
    return tok.apply_chat_template(msgs, tools=tools, tokenize=False, add_generation_prompt=add_generation_prompt)


def encode(tok, text: str) -> list:
    return tok(text, add_special_tokens=False)["input_ids"] if text else []


def oracle_record(tok, rec, max_len: int):
    """Messages -> (ids, mask, truncated, text, spans, full_len) or raise Skip."""
    msgs, tools = normalise(rec)
    last = last_user_index(msgs)
    if last is None:
        raise Skip("no_user_query")
    gen = [j for j in range(last + 1, len(msgs)) if msgs[j]["role"] == "assistant"]
    if not gen:
        raise Skip("no_generated_turn")
    try:
        full = render(tok, msgs, tools, False)
        spans = []
        for j in gen:
            prefix = render(tok, msgs[:j], tools, True)
            upto = render(tok, msgs[: j + 1], tools, False)
            spans.append((prefix, upto))
    except Exception as e:  # jinja2 TemplateError from raise_exception, or a type error inside the template
        if type(e).__name__ in ("TemplateError", "UndefinedError", "TypeError", "TemplateRuntimeError"):
            raise Skip("template_error") from None
        raise
    bounds, pos = [], 0
    for prefix, upto in spans:
        end = upto.rfind(EOT) + len(EOT)
        if not (full.startswith(prefix) and full.startswith(upto[:end]) and pos <= len(prefix) < end):
            raise Skip("mask_mismatch")
        bounds.append((len(prefix), end))
        pos = end
    ids, mask, pos = [], [], 0
    for start, end in bounds:
        seg = encode(tok, full[pos:start])
        span = encode(tok, full[start:end])
        ids += seg + span
        mask += [False] * len(seg) + [True] * len(span)
        pos = end
    tail = encode(tok, full[pos:])
    ids += tail
    mask += [False] * len(tail)
    full_len = len(ids)
    truncated = full_len > max_len
    ids, mask = ids[:max_len], mask[:max_len]
    if not any(mask):
        raise Skip("no_loss_after_truncation")
    return ids, mask, truncated, full, bounds, full_len


def oracle_file(tok, path: Path, max_len: int):
    """Run the oracle over one JSONL file -> (samples, skips, records_read)."""
    samples, skips, read = [], [], 0
    text = path.read_bytes().decode("utf-8")
    for line_no, raw in enumerate(text.split("\n"), 1):  # only \n ends a line (not U+2028, U+0085, ...)
        if not raw.strip():
            continue
        read += 1
        fallback = f"{path.name}:{line_no}"
        rec = None
        try:
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                raise Skip("invalid_json") from None
            ids, mask, truncated, full, bounds, full_len = oracle_record(tok, rec, max_len)
        except Skip as s:
            sid = rec.get("id") if isinstance(rec, dict) and isinstance(rec.get("id"), str) else fallback
            skips.append(OracleSkip(line_no, sid, s.reason))
            continue
        sid = rec["id"] if isinstance(rec.get("id"), str) else fallback
        source = rec["source"] if isinstance(rec.get("source"), str) else ""
        samples.append(OracleSample(sid, source, line_no, ids, mask, truncated, full, bounds, full_len))
    return samples, skips, read


def load_oracle_tokenizer(model_dir: Path):
    """The tokenizer and chat template of a model directory, loaded by transformers."""
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast.from_pretrained(str(model_dir))
    tmpl = model_dir / "chat_template.jinja"
    if tmpl.exists():
        tok.chat_template = tmpl.read_text(encoding="utf-8")
    assert tok.chat_template, f"{model_dir}: no chat template (tokenizer_config.json or chat_template.jinja)"
    return tok


def decode(tok, ids) -> str:
    return tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def check_invariants(tok, s: OracleSample):
    """The oracle's own sanity checks for one sample."""
    nfc = unicodedata.normalize("NFC", s.text)  # the tokenizers normalise to NFC
    assert len(s.input_ids) == len(s.loss_mask) <= MAX_LEN
    if not s.truncated:
        assert decode(tok, s.input_ids) == nfc, s.sample_id
        # masked runs decode to exactly the generated spans, in order
        runs, cur = [], []
        for i, m in zip(s.input_ids, s.loss_mask):
            if m:
                cur.append(i)
            elif cur:
                runs.append(cur)
                cur = []
        if cur:
            runs.append(cur)
        # adjacent spans never touch (a "\n<|im_start|>..." sits between them), so runs == spans
        assert [decode(tok, r) for r in runs] == [unicodedata.normalize("NFC", s.text[a:b]) for a, b
                                                  in s.spans], s.sample_id
        for a, b in s.spans:
            assert s.text[a:b].endswith(EOT) and s.text[b:b + 1] in ("\n", "")
    else:
        assert len(s.input_ids) == MAX_LEN < s.full_len
        assert nfc.startswith(decode(tok, s.input_ids)[:-20])


# ------------------------------------------------------------------------------------------------
# Tokenizer directories
# ------------------------------------------------------------------------------------------------

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
            "<tool_response>", "</tool_response>", "<think>", "</think>"]


def _need_template():
    if not OFFICIAL_TEMPLATE.exists():
        pytest.skip(f"official chat template not found at {OFFICIAL_TEMPLATE} (shared/ must sit beside the repo)")
    return OFFICIAL_TEMPLATE.read_text(encoding="utf-8")


def _install_template(model_dir: Path, template: str):
    """Make the official template the only one in the model dir (chat_template.jinja)."""
    cfg = model_dir / "tokenizer_config.json"
    if cfg.exists():
        data = json.loads(cfg.read_text(encoding="utf-8"))
        if data.pop("chat_template", None) is not None:
            cfg.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    (model_dir / "chat_template.jinja").write_text(template, encoding="utf-8")


def _cli() -> str | None:
    exe = Path(sys.executable).with_name("dflash-nb")
    if exe.exists():
        return str(exe)
    return shutil.which("dflash-nb")


def _run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=900, **kw)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """A small byte-level BPE trained on the held-out text: enough to test the oracle's invariants."""
    template = _need_template()
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.normalizer = normalizers.NFC()
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(HELDOUT.read_text(encoding="utf-8").split("\n"), trainer)
    d = tmp_path_factory.mktemp("tiny_tok")
    PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|im_end|>",
                            pad_token="<|endoftext|>").save_pretrained(str(d))
    _install_template(d, template)
    return d


@pytest.fixture(scope="module")
def heldout_qwen_dir(tmp_path_factory):
    """The embedded Qwen3.6 tokenizer (`dflash-nb build-tokenizer`, else the python function) + official template."""
    template = _need_template()
    d = tmp_path_factory.mktemp("qwen36") / "model"
    cli = _cli()
    if cli:
        r = _run([cli, "build-tokenizer", str(d)])
        assert r.returncode == 0, f"dflash-nb build-tokenizer failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    else:
        try:
            from dflash_nb.qwen import build_qwen36_tokenizer
        except ImportError:
            pytest.skip(
                "neither the dflash-nb console script nor dflash_nb.qwen.build_qwen36_tokenizer is available yet")
        build_qwen36_tokenizer(d)
    assert (d / "tokenizer.json").exists(), f"{d}: no tokenizer.json after building the tokenizer"
    _install_template(d, template)
    return d


@pytest.fixture(scope="module")
def oracle(heldout_qwen_dir):
    tok = load_oracle_tokenizer(heldout_qwen_dir)
    samples, skips, read = oracle_file(tok, HELDOUT, MAX_LEN)
    return tok, samples, skips, read


@pytest.fixture(scope="module")
def tokenized(heldout_qwen_dir, tmp_path_factory):
    """Run `dflash-nb tokenize` on the held-out set."""
    cli = _cli()
    if not cli:
        pytest.skip("the dflash-nb console script is not installed yet (pip install -e . in the venv)")
    out = tmp_path_factory.mktemp("heldout_out") / "ds"
    r = _run([cli, "tokenize", "--model-path", str(heldout_qwen_dir), "--completions", str(HELDOUT),
              "--output-dir", str(out), "--max-seq-len", str(MAX_LEN), "--workers", "2"])
    assert r.returncode == 0, f"dflash-nb tokenize failed ({r.returncode}):\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    import datasets

    ds = datasets.load_from_disk(str(out))
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    skipped = [json.loads(l) for l in (out / "skipped.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    return ds, stats, skipped


# ------------------------------------------------------------------------------------------------
# Tests of the held-out file and of the oracle itself (no tokenize command needed)
# ------------------------------------------------------------------------------------------------


def test_heldout_file_layout():
    lines = HELDOUT.read_bytes().decode("utf-8").split("\n")
    assert lines[-1] == "", "heldout.jsonl must end with a newline"
    lines = lines[:-1]
    assert len(lines) == HELDOUT_LINES, "heldout.jsonl changed: update EXPECTED_SKIPS / BLANK_LINES / HELDOUT_LINES"
    assert {i for i, l in enumerate(lines, 1) if not l.strip()} == BLANK_LINES
    assert not set(EXPECTED_SKIPS) & BLANK_LINES


def test_oracle_invariants_tiny_tokenizer(tiny_dir):
    """decode(ids) == render, masked runs == generated spans, skip reasons (tokenizer-independent ones)."""
    tok = load_oracle_tokenizer(tiny_dir)
    samples, skips, read = oracle_file(tok, HELDOUT, MAX_LEN)
    assert read == HELDOUT_LINES - len(BLANK_LINES)
    length_reasons = {"no_loss_after_truncation"}
    got = {s.line: s.reason for s in skips if s.reason not in length_reasons}
    assert got == {k: v for k, v in EXPECTED_SKIPS.items() if v not in length_reasons}
    assert len(samples) + len(skips) == read
    for s in samples:
        check_invariants(tok, s)


def test_oracle_invariants_qwen(oracle):
    tok, samples, skips, read = oracle
    assert {s.line: s.reason for s in skips} == EXPECTED_SKIPS
    assert {s.sample_id for s in samples if s.truncated} == TRUNCATED_IDS
    for s in samples:
        check_invariants(tok, s)
    # the segment-wise tokenization really differs from whole-text tokenization on the empty-reasoning sample
    ok = next(s for s in samples if s.sample_id == OK_IDS[0])
    assert encode(tok, ok.text) != ok.input_ids


@pytest.mark.parametrize("sid", OK_IDS)
def test_oracle_ok_masks_six_tokens(oracle, sid):
    tok, samples, _, _ = oracle
    s = next(s for s in samples if s.sample_id == sid)
    masked = [i for i, m in zip(s.input_ids, s.loss_mask) if m]
    assert [tok.decode([i]) for i in masked] == OK_PIECES


# ------------------------------------------------------------------------------------------------
# The package's tokenize command against the oracle
# ------------------------------------------------------------------------------------------------


def test_columns_and_types(tokenized):
    import pyarrow as pa

    ds, _, _ = tokenized
    assert set(ds.column_names) >= {"input_ids", "loss_mask", "seq_len", "sample_id", "source"}
    schema = ds.data.schema
    for name, value_type in (("input_ids", pa.int32()), ("loss_mask", pa.bool_())):
        t = schema.field(name).type
        assert (pa.types.is_list(t) or pa.types.is_large_list(t)) and t.value_type == value_type, (name, t)
    assert schema.field("seq_len").type == pa.int64()
    for name in ("sample_id", "source"):
        t = schema.field(name).type
        assert pa.types.is_string(t) or pa.types.is_large_string(t), (name, t)


def test_samples_match_oracle(tokenized, oracle):
    ds, _, _ = tokenized
    _, samples, _, _ = oracle
    rows = ds.to_list()
    assert [r["sample_id"] for r in rows] == [s.sample_id for s
                                              in samples], "samples missing, extra or out of input order"
    for r, s in zip(rows, samples):
        assert r["source"] == s.source, s.sample_id
        assert r["seq_len"] == len(r["input_ids"]) == len(r["loss_mask"]), s.sample_id
        assert r["input_ids"] == s.input_ids, f"{s.sample_id} (line {s.line}): token ids differ from the oracle"
        assert [bool(m) for m in r["loss_mask"]] == s.loss_mask, f"{s.sample_id} (line {s.line}): loss mask differs"


@pytest.mark.parametrize("sid", OK_IDS)
def test_ok_sample_masks_six_tokens(tokenized, oracle, sid):
    ds, _, _ = tokenized
    tok = oracle[0]
    row = next(r for r in ds.to_list() if r["sample_id"] == sid)
    masked = [i for i, m in zip(row["input_ids"], row["loss_mask"]) if m]
    assert [tok.decode([i]) for i in masked] == OK_PIECES


def test_stats(tokenized, oracle):
    ds, stats, _ = tokenized
    _, samples, skips, read = oracle
    assert stats["records_read"] == read == HELDOUT_LINES - len(BLANK_LINES)
    assert stats["samples"] == len(ds) == len(samples)
    assert stats["records_read"] == stats["samples"] + sum(stats["skipped"].values())
    assert {k: v for k, v in stats["skipped"].items() if v} == dict(Counter(EXPECTED_SKIPS.values()))
    assert stats["truncated"] == sum(s.truncated for s in samples) == len(TRUNCATED_IDS)
    assert stats["total_tokens"] == sum(len(s.input_ids) for s in samples)
    assert stats["loss_tokens"] == sum(sum(s.loss_mask) for s in samples)
    assert stats["max_seq_len"] == max(len(s.input_ids) for s in samples) == MAX_LEN
    assert stats["min_seq_len"] == min(len(s.input_ids) for s in samples)
    assert stats["sources"] == dict(Counter(s.source for s in samples))


def test_skipped_jsonl(tokenized, oracle):
    _, _, skipped = tokenized
    _, _, skips, _ = oracle
    for rec in skipped:
        assert {"file", "line", "sample_id", "reason"} <= set(rec), rec
        assert Path(rec["file"]).name == HELDOUT.name, rec
    assert {r["line"]: r["reason"] for r in skipped} == EXPECTED_SKIPS
    assert {r["line"]: r["sample_id"] for r in skipped} == {s.line: s.sample_id for s in skips}
