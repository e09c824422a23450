"""What a page shows of each kind of question, one :class:`KindView` each (registry
:data:`VIEWS`, by the kind's name, beside :data:`posviz.lab.studies.kinds.KINDS`).

A view names its words (:mod:`posviz.lab.present.clauses`) and its figures by name (the
builders are :data:`posviz.lab.present.figures.FIGURES`); nothing else branches on a kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from posviz.lab.engine.results import Cell, LabResult
from posviz.lab.present import clauses
from posviz.lab.studies import far_context_question, sinks_question

#: ``(result, cell, arm labels, head) → the cell's verdict in words`` (lower case, no stop).
Clause = Callable[[LabResult, Cell, dict[str, str], bool], str]
#: ``(result, cell, arm labels) → the answer's plain first sentence``.
Plain = Callable[[LabResult, Cell, dict[str, str]], str]


@dataclass(frozen=True)
class KindView:
    """How a lab page shows one kind of question.

    Attributes:
        name: the kind's name (``Question.kind``).
        clause: a cell's verdict in words, with its numbers.
        plain: the answer's plain first sentence for a cell.
        hero: the figure that carries a cell's verdict (a name in ``figures.FIGURES``).
        evidence: the cell's other figures, below the hero (names; a builder may give none).
        longer: where the preset's cell is undecided and a longer budget decides, the sentence
            that says so (``(result, labels) → text``, "" for none), or None.
        late_rows_arm: the arm whose late positions the positions figure marks ("" for none).
        depends: where the verdict depends on a setting, both sides in a few plain words
            (``(preset's cell, the nearest cell that differs, labels) → text``, "" for none),
            for the first line "It depends on …: <text>."; or None.
    """

    name: str
    clause: Clause
    plain: Plain
    hero: str
    evidence: tuple[str, ...]
    longer: Callable[[LabResult, dict[str, str]], str] | None = None
    late_rows_arm: str = ""
    depends: Callable[[Cell, Cell, dict[str, str]], str] | None = None


#: every kind's view, by name (read at call time: a kind registered later is found).
VIEWS: dict[str, KindView] = {
    view.name: view
    for view in (
        KindView(
            "pair",
            lambda result, cell, labels, head: clauses.pair_clause(cell, labels, head=head),
            lambda result, cell, labels: clauses.pair_plain(cell, labels),
            hero="accuracy_or_curves",
            evidence=("accuracy_at_ceiling", "curves_below_ceiling"),
            longer=clauses.decided_with_longer_training,
            depends=clauses.pair_sides,
        ),
        KindView(
            "extrapolation",
            lambda result, cell, labels, head: clauses.extrapolation_clause(cell, result),
            lambda result, cell, labels: clauses.extrapolation_plain(cell, labels),
            hero="ranking",
            evidence=("positions", "curves"),
        ),
        KindView(
            "rare_rows",
            lambda result, cell, labels, head: clauses.rare_rows_clause(cell),
            lambda result, cell, labels: clauses.rare_rows_plain(cell, labels),
            hero="positions",
            evidence=("movement", "curves"),
            late_rows_arm="short",
        ),
        KindView(
            "need_positions",
            lambda result, cell, labels, head: clauses.need_positions_clause(cell),
            lambda result, cell, labels: clauses.need_positions_plain(cell),
            hero="loss",
            evidence=("layers", "curves"),
        ),
        KindView(
            "far_context",
            lambda result, cell, labels, head: far_context_question.clause(cell),
            lambda result, cell, labels: far_context_question.plain(cell),
            hero="loss_mid",
            evidence=("loss_long", "curves"),
            depends=far_context_question.sides,
        ),
        KindView(
            "sinks",
            lambda result, cell, labels, head: sinks_question.clause(cell),
            lambda result, cell, labels: sinks_question.plain(cell),
            hero="alpha_first",
            evidence=("copy_accuracy", "curves"),
            depends=sinks_question.sides,
        ),
    )
}


def kind_view(name: str) -> KindView:
    """The view of the kind with this name.

    Raises:
        ValueError: an unknown kind (lists the known ones).
    """
    if name not in VIEWS:
        raise ValueError(
            f"No view of a kind of question {name!r}; choose one of {', '.join(VIEWS)}."
        )
    return VIEWS[name]
