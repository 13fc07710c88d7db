"""The package's import graph follows the stage order (docs/design.md): a module imports only modules of notebooks
before its own, at module level or inside a function, so nothing reaches back up the chain and there is no circle."""
import ast, json
from pathlib import Path

from conftest import ROOT

def stage_order() -> list[str]:
    "The package's modules in the order of their notebooks (`nbs/00_storage.ipynb`, `nbs/00a_config.ipynb`, ...)."
    mods = []
    for nb in sorted((ROOT/'nbs').glob('*.ipynb')):
        for c in json.loads(nb.read_text())['cells']:
            if c['cell_type'] == 'code' and (s := ''.join(c['source'])).startswith('#| default_exp '):
                mods.append(s.split()[2]); break
    return mods

def package_imports(module: str) -> set[str]:
    "The package modules `dflash_nb/<module>.py` imports anywhere in its code (relative or absolute)."
    out = set()
    for n in ast.walk(ast.parse((ROOT/'dflash_nb'/(module.replace('.', '/') + '.py')).read_text())):
        if isinstance(n, ast.ImportFrom) and (n.level or (n.module or '').startswith('dflash_nb')):
            mod = (n.module or '').removeprefix('dflash_nb').lstrip('.')
            out |= {mod} if mod else {a.name for a in n.names}
        elif isinstance(n, ast.Import):
            out |= {a.name.removeprefix('dflash_nb.') for a in n.names if a.name.startswith('dflash_nb.')}
    return out - {'__version__'}

def test_every_import_goes_down_the_stage_order():
    order = stage_order()
    assert order[:3] == ['storage', 'config', 'records'] and order[-1] == 'cli' and 'templates.dflash' in order, order
    ups = [f"{m} imports {d}" for i, m in enumerate(order) for d in sorted(package_imports(m))
           if d in order and order.index(d) >= i]
    assert not ups, ups
