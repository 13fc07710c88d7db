#!/usr/bin/env bash
# All tests: the notebooks and package must agree (nbdev_export and nbdev_clean change nothing), the notebooks'
# own tests (nbdev_test), then pytest (integration, end-to-end, fault and bad-input tests).
# Extra arguments go to pytest, e.g.  scripts/test.sh -k tokenize
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
export DFLASH_NB_CACHE="${DFLASH_NB_CACHE:-$ROOT/.cache}"

echo "== notebooks and package in sync"
snap() { find nbs dflash_nb -type f \( -name '*.ipynb' -o -name '*.py' \) -not -path '*/.ipynb_checkpoints/*' -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum; }
before="$(snap)"
nbdev_export
nbdev_clean
after="$(snap)"
if [[ "$before" != "$after" ]]; then
  echo "FAILED: nbdev_export/nbdev_clean changed these files (the package is out of date with the notebooks, or a notebook was not cleaned):"
  diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{print "  " $3}' | sort -u
  echo "They are now updated: review them (git diff), rerun the tests, and commit."
  exit 1
fi

echo "== lines at most 120 columns"
python scripts/code_figures.py --check

echo "== nbdev_test"
nbdev_test --n_workers 2 --timing

echo "== pytest"
python -m pytest -q -p no:cacheprovider --durations=20 "$@"
