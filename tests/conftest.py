import os, subprocess, sys
from contextlib import contextmanager
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent/'shared'
REFERENCE_TEMPLATE = SHARED/'reference'/'qwen3_6_chat_template.jinja'

@pytest.fixture(scope='session')
def qwen_dir():
    "The embedded Qwen3.6 tokenizer directory (built once, cached under DFLASH_NB_CACHE)."
    from dflash_nb.qwen import default_model_path
    return default_model_path()

@pytest.fixture(scope='session')
def official_qwen_dir(qwen_dir, tmp_path_factory):
    "The embedded tokenizer with the OFFICIAL Qwen3.6 chat template (from ../shared), as a real model dir has."
    if not REFERENCE_TEMPLATE.is_file(): pytest.skip(f"{REFERENCE_TEMPLATE} not present")
    d = tmp_path_factory.mktemp('official')/'qwen3_6'
    d.mkdir()
    for f in qwen_dir.iterdir():
        if f.is_file() and f.name != 'chat_template.jinja': (d/f.name).write_bytes(f.read_bytes())
    (d/'chat_template.jinja').write_bytes(REFERENCE_TEMPLATE.read_bytes())
    return d

@pytest.fixture(scope='module')
def server():
    "A moto S3 server for the tests of one module."
    from dflash_nb.testing import MotoServer
    with MotoServer() as srv: yield srv

@pytest.fixture
def env(server, tmp_path, monkeypatch):
    "This test's environment pointed at `server`, with its own cache (for in-process calls and `cli(..., env=env)`)."
    from dflash_nb.testing import moto_env
    return moto_env(monkeypatch, server, tmp_path/'cache')

def cli(*args, check=True, **kw):
    "Run the installed `dflash-nb` console script."
    exe = Path(sys.executable).with_name('dflash-nb')
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise AssertionError(
            f"dflash-nb {' '.join(map(str, args))} exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r

@contextmanager
def mounted_tmpfs(d: Path, options: str):
    """A real tmpfs mounted at `d` with mount `options` (e.g. 'size=1m', 'ro,size=1m'); root only: the test is skipped
    where mount is not permitted."""
    d.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', options, 'tmpfs', str(d)], capture_output=True, text=True)
    if r.returncode != 0: pytest.skip(f"cannot mount a tmpfs ({options}) here ({r.stderr.strip()})")
    try: yield d
    finally: subprocess.run(['umount', '-l', str(d)], check=False)
