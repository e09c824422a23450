"""Turn per-seed metrics into the results table and a plain answer that says only what they show.

Spreads and verdicts come from :mod:`posviz.analysis.evidence` (the experiments' toolkit): mean
± sample std over seeds with a 95 % t-interval; two arms "differ" only when their intervals do not
overlap, otherwise the answer says "no difference within the spread".
"""

from __future__ import annotations

import math

import numpy as np

from posviz.analysis.evidence import Evidence, spread
from posviz.lab.presets import Question
from posviz.lab.results import SummaryRow

NOT_DEFINED = "not defined"
CEILING = 0.99  # accuracy at which two arms can no longer be told apart by accuracy
TRAIN_LOSS = "mean training loss over the run"


def summary_rows(
    question: Question, metrics: dict[str, dict[str, tuple[float, ...]]], notes: dict[str, str]
) -> tuple[SummaryRow, ...]:
    """One :class:`SummaryRow` per variant and metric (NaN rows carry the reason in ``note``)."""
    rows = []
    for variant in question.variants:
        for metric, values in metrics.get(variant.id, {}).items():
            array = np.asarray(values, dtype=np.float64)
            if np.isfinite(array).all():
                s = spread(array)
                rows.append(
                    SummaryRow(
                        variant.id,
                        variant.label,
                        metric,
                        s.mean,
                        s.std,
                        s.n,
                        s.low,
                        s.high,
                        tuple(values),
                    )
                )
            else:
                note = notes.get(f"{variant.id}/{metric}", notes.get(variant.id, NOT_DEFINED))
                nan = math.nan
                rows.append(
                    SummaryRow(
                        variant.id,
                        variant.label,
                        metric,
                        nan,
                        nan,
                        len(values),
                        nan,
                        nan,
                        tuple(values),
                        note,
                    )
                )
    return tuple(rows)


def metric_name(question: Question, eval_lengths: tuple[int, ...]) -> str:
    """The metric that decides ``question``: ``"accuracy_longest"`` becomes ``accuracy@<n>``."""
    if question.metric == "accuracy_longest":
        return f"accuracy@{max(eval_lengths)}"
    return question.metric


def _evidence(
    question: Question, metrics: dict, a: str, b: str, metric: str, *, higher: bool | None = None
) -> Evidence | None:
    values, control = metrics.get(a, {}).get(metric), metrics.get(b, {}).get(metric)
    if values is None or control is None:
        return None
    if not (np.isfinite(values).all() and np.isfinite(control).all()):
        return None
    return Evidence(
        label=question.variant(a).label,
        value=spread(values),
        control=spread(control),
        control_label=question.variant(b).label,
        higher_is_better=question.higher_is_better if higher is None else higher,
    )


def answer_text(
    question: Question,
    metrics: dict[str, dict[str, tuple[float, ...]]],
    eval_lengths: tuple[int, ...],
) -> str:
    """The answer in plain words, one sentence per comparison, each with its numbers.

    First the question's own comparison (``question.compare``), then every other arm against the
    control, then (for questions that probe their tables) each trained table against itself at
    step 0. An arm whose metric is not defined (a learned table past its rows, a diverged run) is
    named as such, never compared.
    """
    a, b = question.compare
    metric = metric_name(question, eval_lengths)
    main = _evidence(question, metrics, a, b, metric)
    if main is None:
        pair = f"{question.variant(a).label} vs {question.variant(b).label}"
        lines = [f"{pair}: {metric} is {NOT_DEFINED} for one of them, so no comparison."]
    else:
        lines = [f"{main.verdict()} [{metric}: {main.text(3)}; {main.value.n} seeds each]"]
    for variant in question.variants:
        if variant.id == question.control or (variant.id in (a, b) and question.control in (a, b)):
            continue
        ev = _evidence(question, metrics, variant.id, question.control, metric)
        if ev is None:
            lines.append(f"{variant.label}: {metric} is {NOT_DEFINED} (see the table's note).")
        else:
            lines.append(f"Against the control: {ev.verdict()} [{metric}: {ev.text(3)}]")
    if main is not None and metric.startswith("accuracy"):
        lines.extend(_ceiling_lines(question, metrics, main))
    if len(eval_lengths) > 1:
        lines.extend(_not_learned_lines(question, metrics))
    if question.probe_tables:
        lines.extend(_movement_lines(question, metrics))
        lines.extend(_probe_lines(question, metrics))
    return "\n".join(lines)


def _ceiling_lines(question: Question, metrics: dict, main: Evidence) -> list[str]:
    """When both compared arms sit at the accuracy ceiling, compare how fast they learned."""
    if min(main.value.mean, main.control.mean) < CEILING:
        return []
    a, b = question.compare
    speed = _evidence(question, metrics, a, b, "train_loss_mean", higher=False)
    head = (
        f"Both reach the ceiling (accuracy ≥ {CEILING}), so at this budget the task cannot "
        "separate them by accuracy."
    )
    if speed is None:
        return [head]
    return [f"{head} Speed of learning: {speed.verdict()} [{TRAIN_LOSS}: {speed.text(3)}]"]


def _not_learned_lines(question: Question, metrics: dict) -> list[str]:
    """Arms no better than the control at the training length: their long-length number is moot."""
    lines = []
    for variant in question.variants:
        if variant.id == question.control:
            continue
        ev = _evidence(question, metrics, variant.id, question.control, "accuracy")
        if ev is not None and not ev.better():
            lines.append(
                f"Caution: {variant.label} did not learn the task at the training lengths "
                f"(accuracy {ev.text(3)}), so its accuracy on longer sequences says nothing "
                "about extrapolation."
            )
    return lines


def _movement_lines(question: Question, metrics: dict) -> list[str]:
    """Row movement (late rows ÷ early rows) per arm, the arms compared, and its rank correlation
    with how often each row was seen (:mod:`posviz.lab.rows`)."""
    a, b = question.compare
    lines = []
    ev = _evidence(question, metrics, a, b, "movement_late_ratio")
    if ev is not None:
        side = "less" if ev.value.mean < ev.control.mean else "more"
        said = (
            f"The late rows of the {ev.label} tables moved {side} (relative to their early rows) "
            f"than those of the {ev.control_label} tables (the 95% intervals do not overlap)."
            if ev.differs()
            else f"Late-row movement: no difference between {ev.label} and {ev.control_label} "
            "within the spread."
        )
        lines.append(f"{said} [late ÷ early row movement: {ev.text(2)}]")
    for variant in question.variants:
        by_metric = metrics.get(variant.id, {})
        if "movement_rank_corr" not in by_metric:
            continue
        rho = spread(by_metric["movement_rank_corr"])
        unseen = max(by_metric.get("movement_unseen_max", (0.0,)))
        lines.append(
            f"{variant.label}: rank correlation of a row's movement with how often it was seen "
            f"ρ = {rho.text(2)} (95% interval {rho.low:.2f} … {rho.high:.2f}); rows never seen "
            f"moved {unseen:g} (control: no gradient, no movement)."
        )
    return lines


def _probe_lines(question: Question, metrics: dict) -> list[str]:
    """Probe error on the late rows of each trained table vs the same table before training."""
    lines = []
    for variant in question.variants:
        by_metric = metrics.get(variant.id, {})
        if "probe_error_late" not in by_metric:
            continue
        ev = Evidence(
            label=f"probe error on the late rows, {variant.label}",
            value=spread(by_metric["probe_error_late"]),
            control=spread(by_metric["probe_error_late_at_init"]),
            control_label="the same rows before training",
            higher_is_better=False,
            unit="positions",
        )
        lines.append(f"{ev.verdict()} [{ev.text(2)}]")
    return lines
