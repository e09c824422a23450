"""Kinds of question, one :class:`StudyKind` object each: what a kind measures, how it judges a
cell, which findings it states and what it adds to its answer (registry :data:`KINDS`, by name).

A question names its kind (``Question.kind``); nothing outside the kind objects branches on it
(``tests/test_lab_kinds.py`` holds every module to that). What a page shows of a kind is its
:class:`posviz.lab.present.kinds.KindView` (same name). A new kind is one entry here and one
there, nothing else (``tests/test_fake_study_kind.py`` adds one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.measure import Extra, extrapolation, rare_rows
from posviz.lab.engine.results import Bound, Cell, Finding
from posviz.lab.engine.run import Trainer
from posviz.lab.studies import far_context_question, judging, sinks_question, topics
from posviz.lab.studies.presets import Question

#: ``(question, cells, bounds by task, base config) → findings``, the question's own first.
Findings = Callable[[Question, tuple[Cell, ...], dict[str, Bound | None], LabConfig], list[Finding]]
#: ``(question, cells, arm labels, base config) → lines`` a kind adds to its answer.
Lines = Callable[[Question, tuple[Cell, ...], dict[str, str], LabConfig], list[str]]


def _no_lines(q: Question, cells: tuple[Cell, ...], labels: dict[str, str], c: LabConfig) -> list:
    return []


@dataclass(frozen=True)
class StudyKind:
    """One kind of question.

    Attributes:
        name: the kind's name (``Question.kind``).
        judge: a cell's verdict from its arms' numbers (:mod:`posviz.lab.studies.judging`).
        findings: the topics of its findings across the sweep (:mod:`posviz.lab.studies.topics`).
        lines: the computed lines it adds to its answer after the findings.
        measures: the engine's extra readings of each trained instance
            (:func:`posviz.lab.engine.measure.measure`); its run ids hash them as engine code.
        measured_as_it_stands: arms judged as they stand at each budget, trained or not (their
            lag *is* the finding), never left out as untrained.
        train: the kind's own trainer (:class:`posviz.lab.engine.run.Trainer`) for a task the
            engine does not draw; its members carry their variant's ``condition``
            (:class:`posviz.lab.studies.questions.Conditioned`). Its question lists the trainer's
            modules in ``Question.source`` (hashed into its run ids). None: the engine's.
        calls: how that trainer's members of one task are cut into training calls (members
            that share their training stay in one call, so it runs once); None: one call,
            which the runner may split (:func:`posviz.lab.engine.run.balance`); calls it cuts
            are never split.
        train_length: tokens a sequence of a member with this ``condition`` and config trains
            on, where that is not the config's ``max_len`` (0: it trains nothing, its call's
            model is read for it); None: the config's. The work model reads it
            (:meth:`posviz.lab.engine.run.Unit.member_cost`).
    """

    name: str
    judge: Callable[[judging.CellInput], judging.Judged]
    findings: Findings
    lines: Lines = _no_lines
    measures: tuple[Extra, ...] = ()
    measured_as_it_stands: tuple[str, ...] = ()
    train: Trainer | None = None
    calls: Callable[[tuple[Any, ...]], tuple[tuple[Any, ...], ...]] | None = None
    train_length: Callable[[str, Any], int | None] | None = None


def _pair(q: Question, cells: tuple[Cell, ...], bounds: dict, config: LabConfig) -> list:
    return topics.pair_findings(q, cells, bounds)


def _extrapolation(q: Question, cells: tuple[Cell, ...], bounds: dict, config: LabConfig) -> list:
    return topics.extrapolation_findings(q, cells)


def _extrapolation_lines(
    q: Question, cells: tuple[Cell, ...], labels: dict[str, str], config: LabConfig
) -> list[str]:
    default = next(c for c in cells if c.default)
    order = topics.order_line(q, cells, labels)
    return [*topics.ranking_lines(q, default), *([order] if order else [])]


def _rare_rows(q: Question, cells: tuple[Cell, ...], bounds: dict, config: LabConfig) -> list:
    return topics.rare_rows_findings(q, cells, config)


def _rare_rows_lines(
    q: Question, cells: tuple[Cell, ...], labels: dict[str, str], config: LabConfig
) -> list[str]:
    return topics.rare_rows_lines(q, cells, config)


def _need_positions(q: Question, cells: tuple[Cell, ...], bounds: dict, config: LabConfig) -> list:
    return topics.need_positions_findings(q, cells, bounds)


#: every kind of question, by name (read at call time: a kind registered later is found).
KINDS: dict[str, StudyKind] = {
    kind.name: kind
    for kind in (
        StudyKind("pair", judging.judge_pair, _pair),
        StudyKind(
            "extrapolation", judging.judge_extrapolation, _extrapolation,
            lines=_extrapolation_lines, measures=(extrapolation,),
        ),
        StudyKind(
            "rare_rows", judging.judge_rare_rows, _rare_rows, lines=_rare_rows_lines,
            measures=(rare_rows,), measured_as_it_stands=("short",),
        ),
        StudyKind("need_positions", judging.judge_need_positions, _need_positions),
        StudyKind(
            "far_context", far_context_question.judge_far_context,
            far_context_question.far_context_findings, lines=far_context_question.far_context_lines,
            measures=(far_context_question.far_context_losses,),
            measured_as_it_stands=far_context_question.AS_IT_STANDS,
            train=far_context_question.train_question_arms,
            calls=far_context_question.training_calls,
            train_length=far_context_question.train_length,
        ),
        StudyKind(
            "sinks", sinks_question.judge_sinks, sinks_question.sinks_findings,
            lines=sinks_question.sinks_lines, measures=(sinks_question.sink_readings,),
            measured_as_it_stands=sinks_question.AS_IT_STANDS,
            train=sinks_question.train_question_arms,
        ),
    )
}  # fmt: skip


def study_kind(name: str) -> StudyKind:
    """The kind with this name.

    Raises:
        ValueError: an unknown kind (lists the known ones).
    """
    if name not in KINDS:
        raise ValueError(f"No kind of question {name!r}; choose one of {', '.join(KINDS)}.")
    return KINDS[name]
