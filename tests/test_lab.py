"""The JupyterLab workbook in a real browser, driven as a person drives it: JupyterLab (loopback, a conflicting
user-level
`python3` kernelspec that lacks the project's packages) opens `nbs/05b_explorer.ipynb`, which must start on the
project's kernel; Run All; then the mask explorer widget is used by its controls (a dataset picked from the list, a
tokenizer typed for a dataset another tool wrote, id, filter, source, failing gate, random, a bad id, a bad path, a
second dataset to compare with, the dark theme) and after each step what is visible is asserted (status text, sample
ids, chip colours). Also: a notebook executed elsewhere (untrusted) keeps its chips' colours in the dark theme.
Headless Chromium from Debian (`apt-get install chromium`; scripts/setup.sh installs it) driven by Playwright for
Python; skipped only where Chromium is not installed. Screenshots of every step are kept in
$DFLASH_NB_TEST_ARTEFACTS/lab (default outputs/test-artefacts/lab), with the datasets the test picks (under the
project's outputs/, where the explorer lists them)."""
import hashlib, json, os, re, shutil, socket, subprocess, sys, time, urllib.request
from pathlib import Path

import pytest

from conftest import ROOT

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser') or shutil.which('google-chrome')
ARTEFACTS = Path(os.environ.get('DFLASH_NB_TEST_ARTEFACTS') or ROOT/'outputs'/'test-artefacts')/'lab'
NOTEBOOK = 'nbs/05b_explorer.ipynb'
TOKEN = 'dflash-lab-check'

def _port():
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def test_notebooks_name_the_project_kernel():
    """Every notebook's metadata names the project's kernel (the one scripts/setup.sh and scripts/lab.sh register), not
    `python3`, which resolves to whichever python3 kernelspec comes first (a user-level one: No module named
    'fastcore'); nbdev_clean (as settings.ini configures it) keeps it."""
    from nbdev.clean import clean_nb
    from dflash_nb.jobs import KERNEL_NAME
    nbs = [p for p in sorted((ROOT/'nbs').rglob('*.ipynb')) if '.ipynb_checkpoints' not in p.parts]
    names = {str(p.relative_to(ROOT)): json.loads(p.read_text())['metadata'].get('kernelspec', {}).get('name') for p
             in nbs}
    assert len(nbs) > 20 and set(names.values()) == {KERNEL_NAME}, {k: v for k, v in names.items() if v != KERNEL_NAME}
    nb = json.loads((ROOT/NOTEBOOK).read_text())
    clean_nb(nb, allowed_metadata_keys=[], allowed_cell_metadata_keys=['tags'])
    assert nb['metadata']['kernelspec']['name'] == KERNEL_NAME
    for script in ('setup.sh', 'lab.sh'): assert f'--name {KERNEL_NAME} ' in (ROOT/'scripts'/script).read_text(), script
    assert f'default_kernel_name={KERNEL_NAME}' in (ROOT/'scripts'/'lab.sh').read_text()

@pytest.fixture(scope='module')
def datasets(qwen_dir):
    """Under the project's outputs/: the shipped samples tokenized, and the same rows as another tool writes them (no
    manifest, prompt starts masked)."""
    if CHROMIUM is None: pytest.skip(
        "no Chromium here (Debian: apt-get install chromium; scripts/setup.sh installs it as root): browser test "
        "skipped")
    for m in ('jupyterlab', 'ipywidgets', 'playwright'):
        pytest.importorskip(m, reason=f"{m} not installed (scripts/setup.sh installs the [dev,lab] extras)")
    import datasets as hf
    from dflash_nb.tokenize import tokenize_dataset
    shutil.rmtree(ARTEFACTS, ignore_errors=True)
    d = ARTEFACTS/'datasets'
    tokenize_dataset(qwen_dir, ROOT/'data'/'samples', d/'samples', progress=False)
    rows = hf.load_from_disk(str(d/'samples')).select_columns(['input_ids', 'loss_mask', 'sample_id', 'source'])
    rows.map(lambda r: {'loss_mask': [1] * 4 + [int(x) for x in r['loss_mask'][4:]]}).save_to_disk(str(d/'other-tool'))
    return {'samples': d/'samples', 'other': d/'other-tool', 'qwen': qwen_dir}

@pytest.fixture(scope='module')
def lab(datasets, tmp_path_factory):
    """JupyterLab on the repository (as scripts/lab.sh serves it) with fresh user dirs, one user-level `python3`
    kernelspec that cannot run the project, autosave off."""
    from dflash_nb.jobs import project_kernel
    project_kernel()
    t = tmp_path_factory.mktemp('lab')
    # a user-level python3 (as `pip install --user ipykernel` leaves): no site-packages, no fastcore
    conflict = t/'data'/'kernels'/'python3'
    conflict.mkdir(parents=True)
    (conflict/'kernel.json').write_text(json.dumps({'argv': [sys.executable, '-S', '-m', 'ipykernel_launcher', '-f',
                                                             '{connection_file}'],
                                                    'display_name': 'Python 3 (ipykernel)', 'language': 'python'}))
    for plugin, values in {'docmanager-extension/plugin': {'autosave': False},  # the source notebook is never written
                           'apputils-extension/notification': {'fetchNews': 'false', 'checkForUpdates': False}}.items():
        f = t/'settings'/'@jupyterlab'/f'{plugin}.jupyterlab-settings'
        f.parent.mkdir(parents=True, exist_ok=True); f.write_text(json.dumps(values))
    env = {**os.environ, 'JUPYTERLAB_SETTINGS_DIR': str(t/'settings'), 'JUPYTER_RUNTIME_DIR': str(t/'rt'),
           'JUPYTER_DATA_DIR': str(t/'data'),
           'JUPYTER_CONFIG_DIR': str(t/'config'), 'JUPYTERLAB_WORKSPACES_DIR': str(t/'ws'),
           # user-level kernelspecs first (as outside a venv): the user's python3 is what `python3` means
           'JUPYTER_PREFER_ENV_PATH': '0'}
    port = _port()
    log = open(t/'lab.log', 'w')
    p = subprocess.Popen([sys.executable, '-m', 'jupyterlab', '--no-browser', '--ip=127.0.0.1', f'--port={port}',
                          f'--ServerApp.token={TOKEN}',
                          f'--notebook-dir={ROOT}', '--MultiKernelManager.default_kernel_name=dflash-nb']
                         + ['--allow-root'] * (os.geteuid() == 0), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(120):
            try: urllib.request.urlopen(f'http://127.0.0.1:{port}/api/status?token={TOKEN}', timeout=2); break
            except OSError: time.sleep(0.5)
        else: pytest.fail(f"JupyterLab did not start: {(t/'lab.log').read_text()[-2000:]}")
        yield f'http://127.0.0.1:{port}', t
    finally:
        p.terminate(); p.wait(30)

@pytest.fixture(scope='module')
def browser(lab):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM,
                               args=['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'])
        try: yield b
        finally: b.close()

def _rgb(hexcol): return 'rgb({}, {}, {})'.format(*(int(hexcol[i:i + 2], 16) for i in (1, 3, 5)))
MASKED = {_rgb('#a8e6b4'), _rgb('#cdf2d4')}

class Person:
    """The explorer as a person sees and uses it: its controls by name (`dfk-x-<name>`), the status line, the views; a
    screenshot per step."""
    def __init__(self, page, shots: Path):
        from playwright.sync_api import expect
        self.page, self.shots, self.expect, self.n = page, shots, expect, 0
        self.ui = page.locator('.dfk-explorer')
    def c(self, name): return self.ui.locator(f'.dfk-x-{name}')
    @property
    def status(self): return self.c('status')
    def sees(self, *texts, timeout=30_000):
        for t in texts: self.expect(self.status).to_contain_text(t, timeout=timeout)
        return self.status.inner_text()
    def type(self, name, text):
        box = self.c(name).locator('input')
        box.fill(text); box.press('Enter')
    def selected(self, name):
        "The text of the choice a list shows (ipywidgets writes spaces as no-break spaces)."
        t = self.c(name).locator('select').evaluate('s => s.selectedIndex < 0 ? null : s.options[s.selectedIndex].text')
        return t and t.replace('\xa0', ' ')
    def mode(self, name): self.c('mode').get_by_role('button', name=name, exact=True).click()
    def shot(self, what):
        self.n += 1
        self.ui.screenshot(path=self.shots/f'{self.n:02d}-{what}.png')
    def views(self): return self.c('output').locator('.dfk-view')
    def headers(self): return [h.inner_text() for h in self.c('output').locator('.dfk-head').all()]
    def chips(self):
        "`[text, background, colour]` of the token chips shown (once they are all in the page)."
        for _ in range(50):
            got = self.c('output').locator('span.t').evaluate_all(
                "els => els.map(e => [e.textContent, getComputedStyle(e).backgroundColor, getComputedStyle(e).color])")
            if got and all(bg for _, bg, _ in got): return got
            self.page.wait_for_timeout(100)
        return got
    def visible_controls(self): return [k for k in ('id', 'filter', 'source', 'gate', 'seed') if self.c(k).is_visible()]
    def only(self, *names, timeout=15):
        "Only the controls `names` of the selection are visible (they change when the kernel has answered)."
        t0 = time.monotonic()
        while (seen := self.visible_controls()) != list(
            names) and time.monotonic() - t0 < timeout: self.page.wait_for_timeout(100)
        return seen == list(names) or seen

def _menu(page, top, *items):
    page.locator('.lm-MenuBar-itemLabel', has_text=re.compile(f'^{top}$')).click()
    for i, it in enumerate(items):
        item = page.locator('.lm-Menu-itemLabel', has_text=re.compile(f'^{re.escape(it)}$')).last
        item.hover() if i < len(items) - 1 else item.click()

def test_mask_explorer_driven_in_jupyterlab(lab, datasets, browser):
    url, t = lab
    src = (ROOT/NOTEBOOK).read_bytes()
    shots = ARTEFACTS; shots.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={'width': 1400, 'height': 1800})
    errors = []; page.on('pageerror', lambda e: errors.append(str(e)))
    page.goto(f'{url}/lab/tree/{NOTEBOOK}?token={TOKEN}')
    # 1. the notebook opens on the project's kernel although a user-level python3 kernelspec exists
    kname = page.locator('.jp-NotebookPanel-toolbar .jp-Toolbar-kernelName')
    from playwright.sync_api import expect
    expect(kname).to_contain_text('dflash_nb', timeout=60_000)
    expect(page.locator('.jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator[data-status="idle"]')).to_have_count(
        1, timeout=60_000)
    _menu(page, 'Run', 'Run All Cells')
    me = Person(page, shots)
    expect(me.ui).to_be_visible(timeout=120_000)
    out = page.locator('.jp-OutputArea-output').all_inner_texts()
    assert not [o for o in out if 'Error' in o or 'Traceback' in o], [o[:300] for o in out if 'Error' in o][:3]
    # 2. the list: the project's outputs/ found from nbs/, newest first (other-tool was written after samples)
    opts = me.c('datasets').locator('option').all_inner_texts()
    listed = [o.replace('\xa0', ' ').split('  ·  ')[0] for o in opts]   # (ipywidgets shows spaces as no-break spaces)
    assert str(datasets['other']) in listed and str(datasets['samples']) in listed, opts
    assert listed.index(str(datasets['other'])) < listed.index(str(datasets['samples']))
    # 4. the newest (another tool's: no manifest) opens first, as bare ids; the tokenizer box decodes it, and the view
    # says with what
    st = me.sees(str(datasets['other']), 'decoded with: no tokenizer', 'type a model or tokenizer folder')
    assert all(re.fullmatch(r'\d+', x) for x, _, _ in me.chips()[:50]), me.chips()[:5]
    me.shot('another-tools-dataset-token-ids')
    me.type('tokenizer', str(datasets['qwen']))
    me.sees(f"decoded with: tokenizer {datasets['qwen']}")
    assert any(not re.fullmatch(r'\d+', x) for x, _, _ in me.chips()[:50])
    me.shot('tokenizer-typed-text')
    me.type('tokenizer', '')
    me.sees('decoded with: no tokenizer')
    # 3. a dataset picked from the list; each mode shows only its controls, its list preselected
    me.c('datasets').locator('select').select_option(label=opts[listed.index(str(datasets['samples']))])
    me.sees(f"{datasets['samples']}:", 'matches the manifest', 'shortest masked span: 3 sample(s)')
    assert me.only('filter') is True and me.views().count() == 3
    chips = me.chips()
    assert len(chips) > 20 and {bg for _, bg, _ in chips} & MASKED and all(c == _rgb('#111111') or c == _rgb('#6a1b9a')
                                                                           for _, _, c in chips)
    me.shot('filter-shortest-span')
    me.mode('id'); assert me.only('id') is True
    me.type('id', 'agent-00001')
    me.sees("id 'agent-00001'")
    assert me.views().count() == 1 and 'agent-00001' in me.headers()[0]
    me.shot('by-id')
    me.mode('source'); assert me.only('source', 'seed') is True
    chosen = me.selected('source')
    assert chosen and not chosen.startswith('(no source)'), chosen             # preselected: the largest real source
    name = chosen.rsplit(' (', 1)[0]
    me.sees(f"source {name}: 3 sample(s) drawn with seed 0")
    assert all(f'source {name}' in h for h in me.headers())
    none = [o for o in me.c('source').locator('option').all_inner_texts()
            if o.replace('\xa0', ' ').startswith('(no source)')]
    me.c('source').locator('select').select_option(label=none[0])
    me.sees('source (no source):')
    assert me.headers() and all('source (none)' in h for h in me.headers())
    me.shot('by-source-none')
    me.mode('failing gate'); assert me.only('gate') is True
    gate = me.selected('gate')
    # preselected: a gate that fails or warns
    assert gate and re.search(r'\((FAIL|WARN)\)$', gate), gate
    me.sees(f"gate {gate.split(' ')[0]} ({gate.split('(')[1][:-1]}):")
    assert me.views().count() >= 1
    me.shot('failing-gate')
    me.mode('random'); assert me.only('seed') is True
    me.type('seed', '7')
    me.sees('3 random sample(s), seed 7'); assert me.views().count() == 3
    me.shot('random-seed-7')
    # errors: in the status line, and the previous views are gone
    me.mode('id'); me.type('id', 'no-such-id')
    me.sees("id 'no-such-id': no such sample id"); assert me.views().count() == 0
    me.shot('bad-id')
    me.type('path', '/nonexistent/dataset')
    me.sees('cannot open /nonexistent/dataset: no such dataset directory')
    assert me.c('status').locator('div[style*="b00020"]').count() == 1                          # the error, in red
    expect(me.c('output')).to_have_text('')                                                    # nothing stale below it
    me.shot('bad-path')
    # 5. the side-by-side diff against the other tool's copy (its prompt starts masked)
    me.c('datasets').locator('select').select_option(label=opts[listed.index(str(datasets['samples']))])
    me.type('id', 'agent-00001')
    me.sees("id 'agent-00001'")
    me.type('compare', str(datasets['other']))
    me.sees(f"compared with: {datasets['other']}")
    expect(me.c('output').locator('table th')).to_have_count(2)
    def diff_checks():
        th = me.c('output').locator('table th').first.evaluate(
            "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor, "
            "getComputedStyle(e.parentElement).backgroundColor, e.innerText]")
        assert th[0] == _rgb('#111111') and th[1] == _rgb('#ffffff') and th[2] == _rgb('#ffffff') and str(
            datasets['samples']) in th[3], th
        aligns = me.c('output').locator('table td').evaluate_all(
            "els => [...new Set(els.map(e => getComputedStyle(e).textAlign))]")
        # chips start at the left, not right-aligned
        assert set(aligns) <= {'left', 'center', 'start'}, aligns
        lines = me.c('output').locator('span', has_text=re.compile('^masked$')).evaluate_all(
            "els => els.map(e => e.getClientRects().length)")
        # "masked" on one line, never "maske/d"
        assert lines and set(lines) == {1}, lines
        assert '4 token(s) masked differently' in me.c('output').inner_text()
    diff_checks()
    me.shot('diff-light')
    # dark theme: the widget and the views stay readable
    _menu(page, 'Settings', 'Theme', 'JupyterLab Dark')
    expect(page.locator('body[data-jp-theme-name="JupyterLab Dark"]')).to_have_count(1, timeout=30_000)
    page.wait_for_timeout(500)
    diff_checks()
    assert me.status.locator('.dfk-status').evaluate("e => getComputedStyle(e).color") == _rgb('#111111')
    me.shot('diff-dark')
    me.type('compare', ''); me.mode('filter')
    me.sees('shortest masked span: 3 sample(s)')
    chips = me.chips()
    assert {bg for _, bg, _ in chips} & MASKED and all(c in (_rgb('#111111'), _rgb('#6a1b9a')) for _, _, c in chips)
    me.shot('filter-dark')
    assert not errors, errors
    page.close()
    assert (ROOT/NOTEBOOK).read_bytes() == src, f"{NOTEBOOK} was changed by the browser session"

def test_untrusted_notebook_keeps_colours_in_dark_theme(lab, datasets, browser):
    """A notebook executed elsewhere, opened untrusted (JupyterLab then drops <style>): chips, legend and PASS keep
    their colours, inline. Its outputs are the mime bundles a kernel sends for `rep` and `rep.select(...)`, made
    here."""
    import nbformat
    from dflash_nb.inspect import inspect_dataset
    url, t = lab
    nb_path = ARTEFACTS/'untrusted.ipynb'
    rep = inspect_dataset(datasets['samples'])
    cells = [(f"rep = inspect_dataset({str(datasets['samples'])!r})\nrep", rep),
             ("rep.select('shortest_span', n=2)", rep.select('shortest_span', n=2))]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src, execution_count=i,
                                                                   outputs=[nbformat.v4.new_output(
 'execute_result', {'text/html': obj._repr_html_(), 'text/plain': repr(obj)[:200]}, execution_count=i)])
                                         for i, (src, obj) in enumerate(cells, 1)])
    nb.metadata['kernelspec'] = {'name': 'dflash-nb', 'display_name': 'dflash-nb', 'language': 'python'}
    nbformat.write(nb, nb_path)
    page = browser.new_page(viewport={'width': 1400, 'height': 1400})
    page.goto(f"{url}/lab/tree/{nb_path.relative_to(ROOT)}?token={TOKEN}")
    from playwright.sync_api import expect
    expect(page.locator('span.t').first).to_be_visible(timeout=60_000)
    if page.locator('body[data-jp-theme-name="JupyterLab Dark"]').count() == 0: _menu(page, 'Settings', 'Theme',
                                                                                      'JupyterLab Dark')
    expect(page.locator('body[data-jp-theme-name="JupyterLab Dark"]')).to_have_count(1, timeout=30_000)
    # untrusted: JupyterLab dropped the <style> blocks
    assert page.locator('.jp-OutputArea-output style').count() == 0
    chips = page.locator('span.t').evaluate_all(
        "els => els.map(e => [e.getAttribute('style'), getComputedStyle(e).backgroundColor])")
    # colours survived the sanitiser
    assert len(chips) > 100 and all('background:#' in s and 'color:#' in s for s, _ in chips)
    assert {bg for _, bg in chips} & MASKED
    passed = page.locator('td', has_text=re.compile('^PASS$')).first.evaluate(
        "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]")
    assert passed == [_rgb('#d4edda'), _rgb('#111111')], passed                 # PASS readable on its light cell
    page.screenshot(path=ARTEFACTS/'13-untrusted-notebook-dark.png')
    page.close()
