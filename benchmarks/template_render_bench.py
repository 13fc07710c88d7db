#!/usr/bin/env python
"""Chat-template render speed: 2,000 records rendered with Jinja (no native renderer) by the Qwen3.6 template and each
reference template of ../shared/reference/templates, as tokenize renders them (`prepare` once, then the full
conversation and the prompt before the last turn). Prints the best of `--repeats` CPU times per template (CPU time, not
wall time: on a shared machine wall time measures the neighbours) and a hash of
what it rendered (the same before and after a change to the sandbox).

    python benchmarks/template_render_bench.py [--records 2000] [--repeats 5]
"""
from __future__ import annotations
import argparse, hashlib, itertools, json, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent/'shared'/'reference'/'templates'

def templates() -> dict[str, str]:
    from dflash_nb.qwen import QWEN36_CHAT_TEMPLATE
    out = {'qwen3.6': QWEN36_CHAT_TEMPLATE}
    for d in sorted(REFERENCE.glob('*')) if REFERENCE.is_dir() else []:
        for f in sorted(d.glob('chat_template*.jinja')): out[f'{d.name}/{f.stem}'] = f.read_text()
    return out

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--records', type=int, default=2000)
    ap.add_argument('--repeats', type=int, default=5)
    a = ap.parse_args()
    from dflash_nb.records import read_records, Record
    from dflash_nb.chat_template import ChatTemplate, ChatTemplateError
    base = [r for r in read_records(ROOT/'data'/'samples') if isinstance(r, Record)]
    recs = list(itertools.islice(itertools.cycle(base), a.records))
    total = 0.0
    for name, src in templates().items():
        ct = ChatTemplate(src, {'bos_token': '<s>', 'eos_token': '</s>'})
        def run():
            h = hashlib.sha256()
            for r in recs:
                try:
                    msgs, tools = ct.prepare(r.messages, r.tools, copy=False)
                    h.update(ct.render_prepared(msgs, tools).encode()); h.update(ct.render_prepared(msgs[:-1], tools,
                                                                                                    True).encode())
                except ChatTemplateError as e: h.update(e.reason.encode())
            return h.hexdigest()[:16]
        best, chars = float('inf'), None
        for _ in range(a.repeats):
            t = time.process_time(); chars = run(); best = min(best, time.process_time() - t)
        total += best
        print(f'{name:60s} {best * 1e3:8.1f} ms  sha256 {chars}')
    print(f'{"total":60s} {total * 1e3:8.1f} ms')

if __name__ == '__main__': main()
