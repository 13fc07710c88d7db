#!/usr/bin/env bash
# Digest of what the data commands write for the same inputs, for refactors that must leave outputs byte-identical:
# tokenize (shards, manifest, stats.json), stats, inspect, merge and export on the shipped samples, with the volatile
# fields (times, durations, absolute paths, hostnames) left out of the JSON. Compare two digests with diff.
#   scripts/outputs_digest.sh OUT_DIR > digest.txt
set -euo pipefail
OUT="${1:?usage: outputs_digest.sh OUT_DIR}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rm -rf "$OUT"; mkdir -p "$OUT"
q() { "$@" > "$OUT/log.txt" 2>&1 || { echo "FAILED: $* (see $OUT/log.txt)" >&2; cat "$OUT/log.txt" >&2; exit 1; }; }
q dflash-nb build-tokenizer "$OUT/tok"
q dflash-nb tokenize --model-path "$OUT/tok" --completions "$ROOT/data/samples" --output-dir "$OUT/ds" --workers 2 --quiet
q dflash-nb stats "$OUT/ds" --output "$OUT/stats.json" --quiet
dflash-nb inspect "$OUT/ds" --json "$OUT/inspect.json" --color never > "$OUT/inspect.txt" 2>&1 || true
head -n 40 "$ROOT/data/samples/"*.jsonl 2>/dev/null | grep '^{' > "$OUT/new.jsonl" || true
q dflash-nb merge --existing "$OUT/ds" --new "$OUT/new.jsonl" --model-path "$OUT/tok" --output-dir "$OUT/merged" --quiet
q dflash-nb export "$OUT/ds" --format speculators --output-dir "$OUT/export"
python - "$OUT" "$ROOT" <<'PY'
import hashlib, json, sys
from pathlib import Path
out, root = Path(sys.argv[1]).resolve(), str(Path(sys.argv[2]).resolve())
VOLATILE = {'created', 'created_utc', 'time', 'timing', 'seconds', 'host', 'hostname', 'pid', 'python', 'versions',
            'version', 'encoder', 'encoder_reason', 'size_on_disk_bytes'}   # the encoder is picked by input size and a cache (same ids); the size follows the manifest's times
def volatile(k): return k in VOLATILE or k.endswith(('_seconds', '_utc', '_per_second', '_s', '_ns'))
def clean(x):
    if isinstance(x, dict): return {k: clean(v) for k, v in x.items() if not volatile(k)}
    if isinstance(x, list): return [clean(v) for v in x]
    if isinstance(x, str): return x.replace(str(out), 'OUT').replace(root, 'ROOT')
    return x
for f in sorted(p for p in out.rglob('*') if p.is_file() and p.name not in ('log.txt',) and '/tok/' not in str(p)):
    b = f.read_bytes()
    if f.suffix == '.json': b = json.dumps(clean(json.loads(b)), sort_keys=True).encode()
    elif f.suffix == '.jsonl' and f.name != 'new.jsonl':
        b = b''.join(json.dumps(clean(json.loads(l)), sort_keys=True).encode() + b'\n' for l in b.splitlines())
    elif f.suffix in ('.txt', '.html', '.md', '.png', '.svg'): continue    # rendered views: compared by eye, not bytes
    print(hashlib.sha256(b).hexdigest()[:16], f.relative_to(out))
PY
