"""The position lab: answer "what if" questions about positions by training tiny transformers.

Plain torch, one screen per part: :mod:`~posviz.lab.config` (what determines a run),
:mod:`~posviz.lab.model` (a tiny pre-LN transformer with every position scheme),
:mod:`~posviz.lab.tasks` (deterministic offline tasks), :mod:`~posviz.lab.train` (seeds trained
together as one batched model), :mod:`~posviz.lab.presets` (one preset per question),
:mod:`~posviz.lab.run` (train, evaluate, summarise), :mod:`~posviz.lab.store` (JSON + ``.npy``)
and :mod:`~posviz.lab.tables` (trained tables as ``lab:`` sources). torch is imported only by the
model/training modules, so importing this package stays cheap.
"""

from posviz.lab.config import LabConfig, ModelConfig
from posviz.lab.presets import QUESTIONS, Question, Variant
from posviz.lab.results import LabResult, LabStopped, Progress, SummaryRow, results_frame
from posviz.lab.run import run_question
from posviz.lab.store import RunStore, RunSummary, code_version
from posviz.lab.tables import list_lab_tables, load_lab_table

__all__ = [
    "QUESTIONS",
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
    "list_lab_tables",
    "load_lab_table",
    "results_frame",
    "run_question",
]
