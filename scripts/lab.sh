#!/usr/bin/env bash
# Open the workbook: JupyterLab on the project's venv and kernel (`dflash_nb (.venv)`), serving the repo's notebooks.
# Prints the URL to open (with its token). Extra arguments go to `jupyter lab`, e.g.  scripts/lab.sh --port 8890
#   LAB_IP=0.0.0.0 scripts/lab.sh   to listen beyond loopback (e.g. on a remote machine behind an SSH tunnel)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
export DFLASH_NB_CACHE="${DFLASH_NB_CACHE:-$HOME/.cache/dflash_nb}"
export JUPYTER_PREFER_ENV_PATH=1   # this venv's kernelspecs before user-level ones of the same name
python -m ipykernel install --sys-prefix --name dflash-nb --display-name "dflash_nb (.venv)" >/dev/null
# the notebooks name this kernel: say so if another of that name (JUPYTER_PATH, another checkout's) is found first
python -c 'import sys; from pathlib import Path; from jupyter_client.kernelspec import KernelSpecManager as M
s = M().get_kernel_spec("dflash-nb")
if Path(s.argv[0]).resolve() != Path(sys.executable).resolve():
    print(f"warning: the dflash-nb kernel JupyterLab finds first is {s.resource_dir} (it runs {s.argv[0]}, not {sys.executable}): "
          "remove it (jupyter kernelspec remove dflash-nb) and start scripts/lab.sh again")'
echo "== JupyterLab on the dflash-nb kernel; open the URL below (nbs/05b_explorer.ipynb has the mask explorer). Ctrl-C stops it."
exec jupyter lab --no-browser --ip="${LAB_IP:-127.0.0.1}" --notebook-dir="$ROOT" \
  --MultiKernelManager.default_kernel_name=dflash-nb $([[ $EUID -eq 0 ]] && echo --allow-root) "$@"
