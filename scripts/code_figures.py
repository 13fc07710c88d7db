"""The figures a reviewer reads the code by: notebook cells, exported lines between demos, long lines, module sizes.

  python scripts/code_figures.py            # the table
  python scripts/code_figures.py --check    # exit 1 (naming each line) when a line is over 120 columns

A *demo* is any code cell of a notebook that is not exported (`#| export`/`#| exports`): a call, a `test_eq`, a plot.
A *stretch* is the exported lines between two demos; the house rule is at most 60 (docs/design.md).
Long lines are counted in the package (but the `__all__` lists nbdev writes), the notebooks' code cells, tests/,
benchmarks/, scripts/ and data/*.py.
"""
import argparse, ast, json, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_COLS, MAX_STRETCH = 120, 60


def code_cells(nb: Path):
    for c in json.loads(nb.read_text())['cells']:
        if c['cell_type'] == 'code': yield ''.join(c['source'])


def is_exported(src: str) -> bool:
    "An nbdev export cell: `#| export`, `#| exports`, or either with a target module (`#| export templates.dflash`)."
    return any(l.strip().replace('#|', '#| ').split()[:2] in (['#|', 'export'], ['#|', 'exports'])
               for l in src.splitlines()[:3])


def stretches(nb: Path) -> list[int]:
    "Exported lines between consecutive demos, in order."
    out, run = [], 0
    for src in code_cells(nb):
        if is_exported(src): run += len(src.splitlines())
        elif src.strip():
            if run: out.append(run)
            run = 0
    if run: out.append(run)
    return out


def long_lines():
    files = [*ROOT.glob('dflash_nb/*.py'), *ROOT.glob('tests/*.py'), *ROOT.glob('benchmarks/*.py'),
             *ROOT.glob('scripts/*.py'), *ROOT.glob('data/*.py'), ROOT/'setup.py']
    for f in sorted(files):
        if f.name == '_modidx.py': continue
        in_all = False
        for i, l in enumerate(f.read_text().splitlines(), 1):
            in_all = l.startswith('__all__ = [') or (in_all and l.startswith(' '))   # nbdev writes __all__
            if len(l) > MAX_COLS and not in_all: yield f"{f.relative_to(ROOT)}:{i}"
    for nb in sorted(ROOT.glob('nbs/**/*.ipynb')):
        for k, src in enumerate(code_cells(nb)):
            for i, l in enumerate(src.splitlines(), 1):
                if len(l) > MAX_COLS: yield f"{nb.relative_to(ROOT)}: code cell {k}, line {i}"


def code_lines(py: Path) -> int:
    "Lines that are neither blank, comments nor docstrings."
    src = py.read_text(); doc = set()
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, 'body', None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(getattr(first, 'value', None), ast.Constant) \
                and isinstance(first.value.value, str):
            doc.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for i, l in enumerate(src.splitlines(), 1)
               if l.strip() and not l.strip().startswith('#') and i not in doc)


def statements(py: Path) -> int:
    "Statements (the AST's, docstrings left out): the size of the code whatever its line wrapping."
    tree = ast.parse(py.read_text())
    return sum(isinstance(n, ast.stmt) and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
               for n in ast.walk(tree))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--check', action='store_true', help=f'fail on lines over {MAX_COLS} columns')
    a = p.parse_args()
    bad = list(long_lines())
    if a.check:
        for b in bad: print(f"{b}: over {MAX_COLS} columns")
        if bad: print(f"{len(bad)} line(s) over {MAX_COLS} columns: wrap them"); sys.exit(1)
        return
    nbs = sorted(n for n in ROOT.glob('nbs/*.ipynb'))
    cells = [len(s.splitlines()) for nb in nbs for s in code_cells(nb) if is_exported(s)]
    demos = sum(1 for nb in nbs for s in code_cells(nb) if s.strip() and not is_exported(s))
    st = {nb.stem: stretches(nb) for nb in nbs}
    over = sorted(((x, k) for k, v in st.items() for x in v if x > MAX_STRETCH), reverse=True)
    pys = [py for py in sorted(ROOT.glob('dflash_nb/**/*.py')) if py.name != '_modidx.py']
    mods = {str(py.relative_to(ROOT/'dflash_nb')): code_lines(py) for py in pys}
    stmts = {str(py.relative_to(ROOT/'dflash_nb')): statements(py) for py in pys}
    cells.sort()
    print(f"notebooks {len(nbs)}, exported cells {len(cells)} (median {cells[len(cells)//2]} lines, max {cells[-1]}), "
          f"demo cells {demos}")
    print(f"stretches of exported lines without a demo over {MAX_STRETCH}: {len(over)} "
          f"(over 100: {sum(x > 100 for x, _ in over)}; longest {over[0] if over else '-'})")
    print(f"lines over {MAX_COLS} columns: {len(bad)}")
    print(f"package code lines (no blanks, comments, docstrings): {sum(mods.values())}, statements "
          f"{sum(stmts.values())}, in {len(mods)} modules (code lines, statements):")
    for k, v in sorted(mods.items(), key=lambda kv: -kv[1]): print(f"  {k:22s} {v:5d} {stmts[k]:5d}")
    for x, k in over: print(f"  stretch {x:4d} lines in {k}")


if __name__ == '__main__': main()
