"""Kinds of question are objects: no module branches on a kind's name outside the kind objects
(``posviz.lab.studies.kinds`` and ``posviz.lab.present.kinds``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

from posviz.lab.present.kinds import VIEWS
from posviz.lab.studies.kinds import KINDS, study_kind
from posviz.lab.studies.presets import QUESTIONS

#: the only homes of per-kind code
KIND_HOMES = {"posviz/lab/studies/kinds.py", "posviz/lab/present/kinds.py"}
SOURCES = sorted(
    p for p in (ROOT / "posviz").rglob("*.py") if p.relative_to(ROOT).as_posix() not in KIND_HOMES
)


def _names(node: ast.AST) -> set[str]:
    """The string constants of ``node`` (one, or a tuple/list/set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {v for e in node.elts for v in _names(e)}
    return set()


def _is_kind(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "kind") or (
        isinstance(node, ast.Name) and node.id == "kind"
    )


def _is_question_kind(node: ast.AST) -> bool:
    """``q.kind``, ``question.kind``, ``self.question.kind``: a question's kind, not a model's."""
    if not (isinstance(node, ast.Attribute) and node.attr == "kind"):
        return False
    owner = node.value
    return (isinstance(owner, ast.Name) and owner.id in ("q", "question")) or (
        isinstance(owner, ast.Attribute) and owner.attr == "question"
    )


def kind_branches(source: str, kinds: set[str]) -> list[int]:
    """Lines that compare a ``kind`` with a kind's name, or look a kind up in a dict of their own
    (``JUDGES[q.kind]``, ``TABLE.get(q.kind)``) instead of the kind registries."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_kind(s) for s in sides) and any(_names(s) & kinds for s in sides):
                found.append(node.lineno)
        elif (isinstance(node, ast.Subscript) and _is_question_kind(node.slice)) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and _is_question_kind(node.args[0])
        ):
            found.append(node.lineno)
    return found


def test_the_checker_finds_each_form_of_kind_branch() -> None:
    kinds = {"pair", "rare_rows"}
    assert kind_branches('if q.kind == "pair":\n    pass\n', kinds) == [1]
    assert kind_branches('x = kind in ("rare_rows", "x")\n', kinds) == [1]
    assert kind_branches("f = JUDGES[q.kind]\n", kinds) == [1]
    assert kind_branches("f = TABLE.get(q.kind, ())\n", kinds) == [1]
    assert kind_branches('m = config.kind == "encoder"\nk = study_kind(q.kind)\n', kinds) == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_branches_on_a_question_kind(path: Path) -> None:
    lines = kind_branches(path.read_text(encoding="utf-8"), set(KINDS))
    assert lines == [], f"branch on a kind's name at lines {lines}: give the kind object a hook"


def test_every_kind_has_its_view_and_every_question_a_known_kind() -> None:
    assert set(KINDS) == set(VIEWS)
    assert all(study_kind(q.kind).name == q.kind for q in QUESTIONS.values())
    with pytest.raises(ValueError, match="No kind of question 'nope'; choose one of pair"):
        study_kind("nope")
