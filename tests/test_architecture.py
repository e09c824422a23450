"""docs/ARCHITECTURE.md's rules, checked: one-way layers, thin pages, no hidden cycles."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from imports_support import imported_modules

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "posviz"
# Entry points may import lazily to keep `--help` and `import posviz` fast; library layers may not.
ENTRY_POINTS = {LIBRARY / "__init__.py", LIBRARY / "__main__.py", LIBRARY / "cli.py"}


def _function_local_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ``import posviz…`` inside a function body that does not say why.

    import-linter sees function-local imports too, so none can hide an upward import or a cycle;
    what remains allowed is a lazy import for start-up speed (torch, transformers behind it), and
    it must say so in a comment with the word "lazy" on its line or the line above.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines), filename=str(path))
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            names = imported_modules(node)
            if not names:
                continue
            said = " ".join(lines[max(0, node.lineno - 2) : node.lineno]).lower()
            found += [
                (node.lineno, n) for n in names if n.startswith("posviz") and "lazy" not in said
            ]
    return sorted(set(found))


def test_import_contracts_hold_with_no_exceptions() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    assert {c["type"] for c in contracts} >= {"layers", "forbidden"}
    assert not [c["name"] for c in contracts if c.get("ignore_imports")], "no exceptions allowed"
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _top_level_modules() -> set[str]:
    """``posviz.<name>`` of every module and package directly under ``posviz/``."""
    return {
        f"posviz.{p.stem if p.is_file() else p.name}"
        for p in LIBRARY.iterdir()
        if (p.suffix == ".py" and not p.name.startswith("__")) or (p / "__init__.py").exists()
    }


def _contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def test_layers_contract_names_every_top_level_module() -> None:
    layers = next(c for c in _contracts() if c["type"] == "layers")
    named = {m.strip() for layer in layers["layers"] for m in layer.split("|")}
    modules = _top_level_modules()
    assert modules <= named, f"not placed in a layer: {sorted(modules - named)}"


def test_every_module_but_ui_is_forbidden_streamlit() -> None:
    """A new library module is checked for streamlit imports from the day it is added."""
    contract = next(c for c in _contracts() if c.get("forbidden_modules") == ["streamlit"])
    missing = _top_level_modules() - {"posviz.ui"} - set(contract["source_modules"])
    assert not missing, f"add to the streamlit contract's source_modules: {sorted(missing)}"


@pytest.mark.parametrize(
    "path",
    sorted(p for p in LIBRARY.rglob("*.py") if p not in ENTRY_POINTS),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_function_local_imports_of_posviz_are_only_lazy_loads(path: Path) -> None:
    assert _function_local_imports(path) == [], "import at module top, or say why it is lazy"


@pytest.mark.parametrize("path", sorted((ROOT / "pages").glob("*.py")), ids=lambda p: p.name)
def test_pages_only_read_widgets_call_posviz_and_show(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {name.split(".")[0] for node in ast.walk(tree) for name in imported_modules(node)}
    assert not imported & {"numpy", "pandas", "torch", "transformers", "sklearn", "scipy"}


# --------------------------------------------------------------------------- ui holds no math

UI = LIBRARY / "ui"
#: libraries whose mere import in posviz/ui means computing there.
UI_FORBIDDEN_IMPORTS = {"torch", "scipy", "sklearn", "threadpoolctl", "transformers"}
#: ``np.<name>(…)`` calls that only inspect or hand over an array; any other numpy call is math.
UI_NUMPY_CALLS = {"asarray", "ascontiguousarray", "shape", "size", "ndim"}
#: ``math.<name>(…)`` calls that only check a number (validating a link's value is layout).
UI_MATH_CALLS = {"isfinite", "isnan", "isinf"}
#: array/frame methods that compute: reductions, elementwise maths, conversions of numbers.
UI_NUMERIC_METHODS = {
    "abs", "argmax", "argmin", "astype", "clip", "corr", "cov", "cumprod", "cumsum", "diff",
    "dot", "idxmax", "idxmin", "max", "mean", "median", "min", "nunique", "percentile", "prod",
    "quantile", "round", "std", "sum", "var",
}  # fmt: skip
#: generic types: ``tuple[int, ...]`` and ``Callable[[int], None]`` are annotations, not arrays.
TYPE_GENERICS = {"tuple", "list", "dict", "set", "frozenset", "type", "Callable", "Sequence"}
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
#: files that still compute (none left: the lab's pages moved theirs into posviz.lab.views); a
#: file listed here must still compute (the test says so), any other may hold no math at all.
UI_MATH_ALLOWED: set[str] = set()


def _module_aliases(tree: ast.Module, module: str) -> set[str]:
    """Names under which ``module`` is imported at the top of ``tree`` (``np`` for numpy)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name == module}
    return names


def _is_range(node: ast.expr) -> bool:
    """``range(…)`` or ``enumerate(range(…))``: a loop over numbers."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "range":
            return True
        return node.func.id == "enumerate" and bool(node.args) and _is_range(node.args[0])
    return False


def _array_index(node: ast.Subscript) -> bool:
    """``a[:, j]``, ``a[..., 0]``, ``a[:, None]``, ``a[i, -1]`` or ``a[::k]``: indexing that only
    an array takes (a dict key tuple holds no slice, ``...``, ``None`` or negative number)."""
    index = node.slice
    generic = node.value.id if isinstance(node.value, ast.Name) else None
    if generic in TYPE_GENERICS:
        return False
    if isinstance(index, ast.Slice):
        return index.step is not None
    if not isinstance(index, ast.Tuple):
        return False
    for item in index.elts:
        if isinstance(item, ast.Slice) or (
            isinstance(item, ast.Constant) and item.value in (None, Ellipsis)
        ):
            return True
        if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub):
            return True
    return False


def _builds_sequence(node: ast.expr) -> bool:
    """A list, tuple or text (``[…]``, ``list(…)[:k]``, an f-string): ``+=`` of it collects
    widgets or words, not numbers."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in ("list", "tuple", "str")
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.List | ast.ListComp | ast.Tuple | ast.JoinedStr)


def _call_offence(node: ast.Call, aliases: dict[str, set[str]]) -> str | None:
    func = node.func
    if not isinstance(func, ast.Attribute):
        return None
    base = func.value
    root = base
    while isinstance(root, ast.Attribute):
        root = root.value
    module = next((m for m, names in aliases.items() if getattr(root, "id", None) in names), None)
    if module == "numpy" and not (base is root and func.attr in UI_NUMPY_CALLS):
        return "numpy call"
    if module == "pandas":
        return "pandas call (frames are built by the library)"
    if module == "math" and func.attr not in UI_MATH_CALLS:
        return "math call"
    if module is None and func.attr in UI_NUMERIC_METHODS:
        return f"numeric method .{func.attr}()"
    return None


def ui_math(path: Path) -> list[str]:
    """Every place in ``path`` (a posviz/ui module) that computes instead of laying out.

    Math, precisely: (1) importing torch, scipy, sklearn, threadpoolctl or transformers; (2) any
    numpy call but ``np.asarray/ascontiguousarray/shape/size/ndim``, any pandas call, any
    ``math`` call but ``isfinite/isnan/isinf``; (3) a numeric method call (``.sum()``,
    ``.mean()``, ``.astype()``, ``.quantile()`` … :data:`UI_NUMERIC_METHODS`); (4) the ``@``
    operator; (5) array indexing (a slice with a step, or an index tuple holding a slice,
    ``...``, ``None`` or a negative number); (6) a loop or comprehension over ``range(…)``;
    (7) an augmented arithmetic assignment (``x += …``) inside a loop, unless it adds a list,
    tuple or text.
    Arithmetic on plain Python numbers (``n - 1``, ``min(n, 16)``, a cache's byte count with
    builtin ``sum``) is layout or bookkeeping and allowed.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    aliases = {m: _module_aliases(tree, m) for m in ("numpy", "pandas", "math")}
    found: list[str] = []

    def offend(node: ast.AST, why: str) -> None:
        found.append(f"{path.name}:{node.lineno}: {why}: {ast.unparse(node)[:80]}")

    loops = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n.split(".")[0] in UI_FORBIDDEN_IMPORTS for n in names):
                offend(node, "imports a numerics library")
        elif isinstance(node, ast.Call) and (why := _call_offence(node, aliases)):
            offend(node, why)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            offend(node, "matrix product")
        elif isinstance(node, ast.Subscript) and _array_index(node):
            offend(node, "array indexing")
        elif isinstance(node, ast.For | ast.comprehension) and _is_range(node.iter):
            offend(node.iter, "loop over numbers")
        if isinstance(node, loops):
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.AugAssign)
                    and isinstance(inner.op, ARITHMETIC)
                    and not _builds_sequence(inner.value)
                ):
                    offend(inner, "accumulates in a loop")
    return sorted(set(found))


@pytest.mark.parametrize("path", sorted(UI.glob("*.py")), ids=lambda p: p.name)
def test_ui_holds_no_math(path: Path) -> None:
    found = ui_math(path)
    if path.name in UI_MATH_ALLOWED:
        assert found, f"{path.name} holds no math any more: remove it from UI_MATH_ALLOWED"
    else:
        assert found == [], "move the computation to posviz.analysis/charts/tables, tested"


def test_ui_math_check_finds_each_kind_of_math(tmp_path: Path) -> None:
    """The check itself: each rule catches its example, and layout code passes."""
    offending = {
        "import torch": "numerics library",
        "import numpy as np\nx = np.linalg.norm(a)": "numpy call",
        "import numpy as np\nx = np.log10(a)": "numpy call",
        "import pandas as pd\nf = pd.DataFrame(rows)": "pandas call",
        "import math\nx = math.floor(a)": "math call",
        "x = table.matrix.mean()": "numeric method",
        "x = frame.r2.abs().max()": "numeric method",
        "x = a @ b": "matrix product",
        "x = a[:, 0]": "array indexing",
        "x = a[::2]": "array indexing",
        "x = a[i, -1]": "array indexing",
        "x = a[..., 0]": "array indexing",
        "x = [f(i) for i in range(n)]": "loop over numbers",
        "for i, _ in enumerate(range(n)):\n    pass": "loop over numbers",
        "for v in values:\n    total += v": "accumulates in a loop",
    }
    for source, why in offending.items():
        path = tmp_path / "m.py"
        path.write_text(source + "\n")
        assert any(why in f for f in ui_math(path)), source
    layout = (
        "import math\nimport numpy as np\nn, d = np.shape(m)\nk = min(n - 1, 16)\n"
        "ok = math.isfinite(k)\nrows = jobs[(root, run_id)]\nfirst = m[:rows]\n"
        "f: Callable[[int], None] = g\nt: tuple[int, ...] = ()\n"
        "for i, item in enumerate(items):\n    st.write(item)\n"
        "for row in rows:\n    cells += list(st.columns(3))[: len(row)]\n    text += f'{row}'\n"
    )
    path = tmp_path / "layout.py"
    path.write_text(layout)
    assert ui_math(path) == []


# --------------------------------------------------------------------------- ui stays small

#: posviz/ui lays out; a file or a total over these limits holds what belongs in the library
#: (what a page shows is its page model's: posviz/page_models/).
UI_MAX_TOTAL_LINES = 3000
UI_MAX_FILE_LINES = 400


def _ui_lines() -> dict[str, int]:
    return {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in UI.glob("*.py")}


def test_ui_files_stay_small() -> None:
    over = {name: n for name, n in _ui_lines().items() if n > UI_MAX_FILE_LINES}
    assert not over, f"over {UI_MAX_FILE_LINES} lines: {over}; move what computes to the library"


def test_ui_stays_under_its_line_budget() -> None:
    lines = _ui_lines()
    total = sum(lines.values())
    biggest = sorted(lines.items(), key=lambda item: -item[1])[:5]
    assert total < UI_MAX_TOTAL_LINES, f"posviz/ui has {total} lines; the largest: {biggest}"


def test_the_compared_families_are_read_from_the_registry_when_asked(monkeypatch) -> None:
    """``comparison.FAMILIES`` is no copy taken at import: a family registered later is in it."""
    from posviz.analysis import comparison

    monkeypatch.setattr(comparison, "compared_families", lambda: ("sinusoidal", "added"))
    assert comparison.FAMILIES == ("sinusoidal", "added")


def test_the_page_list_imports_neither_torch_nor_the_lab_runner() -> None:
    code = (
        "import sys, posviz.navigation as n; n.sections(); "
        "print(sorted(m for m in ('torch', 'posviz.lab.engine.run', 'posviz.lab.run', "
        "'posviz.lab.studies.questions') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
