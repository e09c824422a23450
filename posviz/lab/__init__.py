"""The position lab: answer "what if" questions about positions by training tiny transformers.

Three packages, importing one way (import-linter contracts in ``pyproject.toml``):

- :mod:`posviz.lab.engine`: what trains and what is stored — configs, the batched model and its
  training, tasks, sweeps, the raw measurements, the runner and the run store. It imports no
  study and no presentation; a run's id hashes its source, never the others' (torch only in the
  model and training modules, imported on first training).
- :mod:`posviz.lab.studies`: the designs — questions (:mod:`~posviz.lab.studies.presets`), paper
  checks as data with named judges (:mod:`~posviz.lab.studies.papers`), and how each kind of
  study is measured, judged and summed up (:mod:`~posviz.lab.studies.kinds`).
- :mod:`posviz.lab.present`: what the lab's pages and the CLI show of stored results.

This module re-exports the public names, each imported on first use (module ``__getattr__``, as
:mod:`posviz` does): the page list reads the study registry without importing the runner or torch.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module that defines it.
_EXPORTS = {
    **dict.fromkeys(("LabConfig", "ModelConfig"), "posviz.lab.engine.config"),
    **dict.fromkeys(
        (
            "CardResult",
            "Cell",
            "Finding",
            "LabResult",
            "LabStopped",
            "Progress",
            "SummaryRow",
            "grid_frame",
            "results_frame",
        ),
        "posviz.lab.engine.results",
    ),
    **dict.fromkeys(("RunStore", "RunSummary", "code_version"), "posviz.lab.engine.store"),
    **dict.fromkeys(("list_lab_tables", "load_lab_table"), "posviz.lab.engine.tables"),
    **dict.fromkeys(("run_paper_check", "stored_cards"), "posviz.lab.studies.cards"),
    **dict.fromkeys(("QUESTIONS", "Question", "Variant"), "posviz.lab.studies.presets"),
    **dict.fromkeys(("rejudge", "run_question"), "posviz.lab.studies.questions"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'posviz.lab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
