#!/usr/bin/env bash
# One GPU check (issue 14): bf16 training with flex attention and with SDPA on the SmolLM2 target and a 5-layer
# drafter (tokens/s, peak memory), the target FSDP-sharded on one rank (torchrun), and a lossless eval; one table.
#   bash benchmarks/gpu_check.sh              # on a GPU machine (under 8 minutes on one H200-class GPU)
#   bash benchmarks/gpu_check.sh --dry-run    # CPU, tiny sizes, same code paths, clearly labelled (about a minute)
# Options: --target DIR, --steps N, --out DIR (logs, runs, gpu_check.json). See benchmarks/gpu_check.py.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || PY=python
exec "$PY" benchmarks/gpu_check.py "$@"
