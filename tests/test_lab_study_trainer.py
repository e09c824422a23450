"""A study's own trainer (``engine.run.Unit.train``): the one runner calls it instead of the
engine's ``train_arms``, with the same progress and stop contract, and no existing run id moves."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from posviz.lab.engine import run, store
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.results import LabStopped

CALLS: list[tuple[str, ...]] = []


@dataclass(frozen=True)
class _Member:
    id: str
    config: LabConfig
    model: None = None


def fake_train(members, *, steps, checkpoints, on_step, should_stop):
    """A module-level trainer: each member's "held-out" number is a function of its id only."""
    CALLS.append(tuple(m.id for m in members))
    for step in range(1, steps + 1):
        if should_stop is not None and should_stop():
            raise LabStopped(f"Stopped at step {step - 1} of {steps}.")
        if on_step is not None:
            on_step(step, steps, {m.id: 1.0 / step for m in members})
    marks = tuple(checkpoints)
    return {m.id: SimpleNamespace(heldout=float(len(m.id)), marks=marks) for m in members}


@pytest.fixture(autouse=True)
def _no_torch(monkeypatch) -> None:
    """The runner pins one torch thread per training thread; these units need no torch."""
    monkeypatch.setattr(run, "train_module", lambda: SimpleNamespace(use_one_thread=lambda: None))


def _units() -> list[run.Unit]:
    config = LabConfig(task="kback", min_len=8, max_len=8, steps=5, seeds=2)
    members = tuple(_Member(f"arm{'x' * i}", config) for i in range(4))
    return [run.Unit("fake", members, 5, (2, 5), train=fake_train)]


def test_a_units_own_trainer_replaces_train_arms_with_its_progress_and_outputs() -> None:
    CALLS.clear()
    reports = []
    trained = run.train_units(_units(), reports.append, None)
    # balanced like any unit: one unit of four equal members → two halves, each one call
    assert sorted(len(c) for c in CALLS) == [2, 2]
    outputs = {k: v for part in trained for k, v in part.outputs.items()}
    expected = {f"arm{'x' * i}": 3.0 + i for i in range(4)}
    assert {k: v.heldout for k, v in outputs.items()} == expected
    assert all(v.marks == (2, 5) for v in outputs.values())
    assert reports and reports[-1].step == reports[-1].total_steps == 5
    assert np.isclose(reports[-1].eta_s, 0.0)


def test_stop_reaches_a_studys_own_trainer() -> None:
    with pytest.raises(LabStopped):
        run.train_units(_units(), None, lambda: True)


def test_a_studys_trainer_takes_no_probe() -> None:
    with pytest.raises(ValueError, match="no probe or head scores"):
        run.Unit("fake", (), 5, (5,), probe=("a", 8), train=fake_train)


def test_the_runner_is_not_hashed_into_run_ids() -> None:
    """Adding the extension point changed no stored run id: the runner is not engine source."""
    assert "posviz.lab.engine.run" not in store.ENGINE_MODULES


def _imported(train) -> set[str]:
    """The posviz modules a registered trainer (a lazy wrapper that imports the loop when a run
    trains) imports and that decide a run's numbers beyond the engine's (``ENGINE_MODULES``,
    hashed into every run id) and the families' formulas (hashed by the schemes an arm uses),
    followed through each other."""
    import ast
    import importlib.util
    import inspect
    import textwrap

    seen: set[str] = set()
    todo: list[str] = []
    trees = [ast.parse(textwrap.dedent(inspect.getsource(train)))]
    while trees:
        for node in ast.walk(trees.pop()):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                base = node.module
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for found in names:
                if (
                    not found.startswith("posviz.")
                    or found.startswith(("posviz.lab.engine", "posviz.encodings"))
                    or found in store.ENGINE_MODULES
                ):
                    continue
                try:  # "from posviz.x import name": a module only where x is a package
                    if importlib.util.find_spec(found) is not None:
                        todo.append(found)
                except ModuleNotFoundError:
                    pass
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                path = Path(importlib.util.find_spec(name).origin)
                trees.append(ast.parse(path.read_text(encoding="utf-8")))
    return seen - {"posviz.lab", "posviz.lab.studies"}


def test_every_module_a_studys_own_trainer_reads_is_hashed_into_its_run_id() -> None:
    """A module a study's own loop imports (its task, its attention, the shared loop) decides its
    numbers: it must be in the study's ``source``, or an edit to it would leave a stored answer
    under an id that no longer says what trained it."""
    from posviz.lab.studies import kinds, papers, presets

    owners = [
        (q.id, kinds.study_kind(q.kind).train, q.source)
        for q in presets.QUESTIONS.values()
        if kinds.study_kind(q.kind).train is not None
    ] + [(c.id, c.train, c.source) for c in papers.PAPER_CHECKS.values() if c.train is not None]
    assert {"sinks", "far_context", "gu_2025", "oconnor_2021", "golovneva_2024"} <= {
        owner for owner, _, _ in owners
    }
    for owner, train, source in owners:
        missing = _imported(train) - set(source)
        assert not missing, (owner, missing)
