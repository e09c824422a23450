"""docs/ARCHITECTURE.md's rules, checked: one-way layers, thin pages, no hidden cycles."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

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
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
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


def test_layers_contract_names_every_top_level_module() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    named = {m.strip() for layer in layers["layers"] for m in layer.split("|")}
    modules = {
        f"posviz.{p.stem if p.is_file() else p.name}"
        for p in LIBRARY.iterdir()
        if (p.suffix == ".py" and not p.name.startswith("__")) or (p / "__init__.py").exists()
    }
    assert modules <= named, f"not placed in a layer: {sorted(modules - named)}"


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
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert not imported & {"numpy", "pandas", "torch", "transformers", "sklearn", "scipy"}
