"""The position lab: answer "what if" questions about positions by training tiny transformers.

Plain torch, one screen per part: :mod:`~posviz.lab.config` (what determines a run),
:mod:`~posviz.lab.model` and :mod:`~posviz.lab.train` (many tiny transformers as one batched
model), :mod:`~posviz.lab.tasks` (deterministic offline tasks), :mod:`~posviz.lab.presets` (one
question per preset, each with its :mod:`~posviz.lab.sweep` of settings), :mod:`~posviz.lab.run`
(train the sweep, measure each cell with :mod:`~posviz.lab.measure`, judge it with
:mod:`~posviz.lab.answer`, sum up with :mod:`~posviz.lab.summarise`),
:mod:`~posviz.lab.cards` (paper checks of :mod:`~posviz.lab.papers`), :mod:`~posviz.lab.store`
(JSON + ``.npy``, checksummed by :mod:`posviz.labfiles`) and :mod:`~posviz.lab.tables` (trained
tables as ``lab:`` sources). torch is imported only by the model/training modules, so importing
this package stays cheap.
"""

from posviz.lab.cards import run_paper_check, stored_cards
from posviz.lab.config import LabConfig, ModelConfig
from posviz.lab.presets import QUESTIONS, Question, Variant
from posviz.lab.results import (
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
from posviz.lab.run import rejudge, run_question
from posviz.lab.store import RunStore, RunSummary, code_version
from posviz.lab.tables import list_lab_tables, load_lab_table

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
