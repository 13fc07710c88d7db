#!/usr/bin/env bash
# Open the workbook: JupyterLab on the project's venv and kernel (`dflash_nb (.venv)`), serving the repo's notebooks.
# Prints the URL to open (with its token). Extra arguments go to `jupyter lab`, e.g.  scripts/lab.sh --port 8890
#   LAB_IP=0.0.0.0 scripts/lab.sh   to listen beyond loopback (e.g. on a remote machine behind an SSH tunnel)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
export DFLASH_NB_CACHE="${DFLASH_NB_CACHE:-$HOME/.cache/dflash_nb}"
python -m ipykernel install --sys-prefix --name dflash-nb --display-name "dflash_nb (.venv)" >/dev/null
echo "== JupyterLab on the dflash-nb kernel; open the URL below (nbs/05b_explorer.ipynb has the mask explorer). Ctrl-C stops it."
exec jupyter lab --no-browser --ip="${LAB_IP:-127.0.0.1}" --notebook-dir="$ROOT" \
  --MultiKernelManager.default_kernel_name=dflash-nb $([[ $EUID -eq 0 ]] && echo --allow-root) "$@"
