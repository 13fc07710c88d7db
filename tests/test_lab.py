"""The JupyterLab workbook in a real browser: a notebook using the mask explorer is executed elsewhere (papermill, on the
project's kernel), then opened in JupyterLab (dark theme, loopback) by headless Chromium; its token chips, legend and
PASS/WARN cells must render with their colours (inline, so the sanitiser of an untrusted notebook keeps them).
Skipped where Chromium or JupyterLab is not installed (Debian: apt-get install chromium). LAB_SCREENSHOT=path keeps
the screenshot."""
import json, os, re, shutil, socket, subprocess, sys, time, urllib.request
from pathlib import Path

import pytest

from conftest import ROOT

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser') or shutil.which('google-chrome')

def _port():
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

@pytest.fixture(scope='module')
def executed(qwen_dir, tmp_path_factory):
    if CHROMIUM is None: pytest.skip("no Chromium here (Debian: apt-get install chromium): browser check skipped")
    pytest.importorskip('jupyterlab', reason="JupyterLab not installed (scripts/setup.sh installs the [lab] extra)")
    pytest.importorskip('ipywidgets', reason="ipywidgets not installed (scripts/setup.sh installs the [lab] extra)")
    import nbformat, papermill as pm
    from dflash_nb.tokenize import tokenize_dataset
    from dflash_nb.jobs import project_kernel
    d = tmp_path_factory.mktemp('lab')
    tokenize_dataset(qwen_dir, ROOT/'data'/'samples', d/'ds', progress=False)
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Mask explorer check"),
        nbformat.v4.new_code_cell(f"from dflash_nb.inspect import inspect_dataset\nfrom dflash_nb.explorer import mask_explorer\nrep = inspect_dataset({str(d/'ds')!r})\nrep"),
        nbformat.v4.new_code_cell("rep.dataset.select('shortest_span', n=2)"),
        nbformat.v4.new_code_cell(f"mask_explorer({str(d/'ds')!r}, root={str(d)!r})")])
    nb.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
    nbformat.write(nb, d/'explore.ipynb')
    pm.execute_notebook(str(d/'explore.ipynb'), str(d/'explore.ipynb'), kernel_name=project_kernel(), progress_bar=False)
    return d

def test_chips_render_in_jupyterlab_dark_theme(executed, tmp_path):
    d, port, token = executed, _port(), 'dflash-lab-check'
    settings = tmp_path/'settings'/'@jupyterlab'/'apputils-extension'
    settings.mkdir(parents=True)
    (settings/'themes.jupyterlab-settings').write_text(json.dumps({'theme': 'JupyterLab Dark'}))
    env = {**os.environ, 'JUPYTERLAB_SETTINGS_DIR': str(tmp_path/'settings'), 'JUPYTER_RUNTIME_DIR': str(tmp_path/'rt'),
           'JUPYTER_DATA_DIR': str(tmp_path/'data'),  # a fresh trust database: the notebook was executed elsewhere, untrusted
           'JUPYTERLAB_WORKSPACES_DIR': str(tmp_path/'ws')}
    lab = subprocess.Popen([sys.executable, '-m', 'jupyterlab', '--no-browser', '--ip=127.0.0.1', f'--port={port}',
                            f'--ServerApp.token={token}', f'--notebook-dir={d}', '--ServerApp.disable_check_xsrf=True']
                           + ['--allow-root'] * (os.geteuid() == 0),
                           env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path/'lab.log', 'w'))
    try:
        for _ in range(120):
            try: urllib.request.urlopen(f'http://127.0.0.1:{port}/api/status?token={token}', timeout=2); break
            except OSError: time.sleep(0.5)
        else: pytest.fail(f"JupyterLab did not start: {(tmp_path/'lab.log').read_text()[-2000:]}")
        url = f'http://127.0.0.1:{port}/lab/tree/explore.ipynb?token={token}'
        shot = Path(os.environ.get('LAB_SCREENSHOT') or tmp_path/'lab.png')
        flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run', '--hide-scrollbars', '--window-size=1400,1600', '--virtual-time-budget=40000']
        run = lambda *extra, prof: subprocess.run([CHROMIUM, *flags, f'--user-data-dir={tmp_path/prof}', *extra, url],
                                                  capture_output=True, text=True, timeout=180)
        dom = run('--dump-dom', prof='chrome1').stdout
        run(f'--screenshot={shot}', prof='chrome2')
    finally:
        lab.terminate(); lab.wait(30)
    assert 'jp-Notebook' in dom and 'JupyterLab Dark' in dom, dom[:2000]     # Lab rendered the notebook, in the dark theme
    outputs = dom[dom.index('jp-Notebook'):]
    chips = re.findall(r'<span class="t" style="([^"]*)"', outputs)
    assert len(chips) > 100, f"{len(chips)} token chips in the rendered notebook"
    assert all('background:#' in s and 'color:#' in s for s in chips)        # colours survived the sanitiser, text colour too
    assert {'#a8e6b4', '#cdf2d4'} & {m for s in chips for m in re.findall(r'background:\s*(#[0-9a-f]{6})', s)}  # masked chips
    assert re.search(r'background:\s*#d4edda;\s*color:\s*#111[^>]*>\s*PASS', outputs)  # PASS readable on its light cell
    assert shot.is_file() and shot.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
