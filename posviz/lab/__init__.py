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

This module re-exports the public names.
"""

from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.results import (
    CardResult,
    Cell,
    Finding,
    LabResult,
    LabStopped,
    Progress,
    SummaryRow,
    grid_frame,
    results_frame,
)
from posviz.lab.engine.store import RunStore, RunSummary, code_version
from posviz.lab.engine.tables import list_lab_tables, load_lab_table
from posviz.lab.studies.cards import run_paper_check, stored_cards
from posviz.lab.studies.presets import QUESTIONS, Question, Variant
from posviz.lab.studies.questions import rejudge, run_question

__all__ = [
    "QUESTIONS",
    "CardResult",
    "Cell",
    "Finding",
    "LabConfig",
    "LabResult",
    "LabStopped",
    "ModelConfig",
    "Progress",
    "Question",
    "RunStore",
    "RunSummary",
    "SummaryRow",
    "Variant",
    "code_version",
    "grid_frame",
    "list_lab_tables",
    "load_lab_table",
    "rejudge",
    "results_frame",
    "run_paper_check",
    "run_question",
    "stored_cards",
]
