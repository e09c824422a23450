"""Views of a finished lab run: the answer, the results table, charts with spreads, and "watch
the table form" (a step slider over the learned table's heatmap, cosine similarity, PCA and the
probe score per step).

Everything here reads a stored :class:`~posviz.lab.LabResult`; nothing trains.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from posviz.analysis.probes import MIN_ROWS
from posviz.charts import lab as lab_charts
from posviz.charts.experiments import probe_error_chart
from posviz.charts.figure import Figure
from posviz.lab import LabResult, Question, RunStore, load_lab_table, probe, results_frame
from posviz.lab.answer import metric_name
from posviz.lab.frames import (
    length_frame,
    loss_frame,
    metric_frame,
    position_frame,
    row_movement_frame,
)
from posviz.tables import PositionTable
from posviz.ui.cache import cached_data
from posviz.ui.display import show_chart, user_errors
from posviz.ui.learned_views import show_view
from posviz.ui.state import url_select, url_select_slider

# --------------------------------------------------------------------------- the result


def show_answer(result: LabResult, question: Question) -> None:
    """The answer in words, what went wrong (divergence), and the notes that qualify it."""
    st.subheader("Answer")
    # One finding per line; as a list, so Markdown does not run the lines into one paragraph.
    st.markdown("\n".join(f"- {line}" for line in result.answer.splitlines()))
    if result.diverged:
        names = ", ".join(result.label(v) for v in result.diverged)
        st.warning(
            f"Training diverged for {names}: the loss became NaN or infinite, so their metrics "
            "are not defined. Lower **Learning rate** in Settings and run again.",
            icon="⚠️",
        )
    for note in result.notes:
        st.caption(note)


def show_table(result: LabResult) -> None:
    """The results table (the CLI prints the same one)."""
    st.subheader("Results")
    frame = results_frame(result)
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={
            name: st.column_config.NumberColumn(format="%.4f")
            for name in ("mean", "±", "low", "high")
        },
    )
    st.caption(
        "mean and ± (standard deviation) over seeds; low–high is the 95% interval of the mean "
        "(Student's t); each seed trains its own model on its own data and is evaluated on fresh "
        "held-out sequences. Parameters per model: "
        + ", ".join(f"{result.label(v)} {n:,}" for v, n in result.n_params.items())
        + "."
    )


def _extrapolation_start(result: LabResult) -> int | None:
    """The longest training length when the evaluation goes past it (else no rule is drawn)."""
    trained = int(result.config.max_len)
    return trained if max(result.config.eval_lengths) > trained else None


def show_charts(result: LabResult, question: Question, *, key_prefix: str) -> None:
    """The deciding metric per variant, the metric by length, accuracy by position, the loss."""
    name = metric_name(question, result.config.eval_lengths)
    metric = metric_frame(result, question, name)
    left, right = st.columns(2)
    with left:
        if len(metric):
            show_chart(
                Figure(
                    lab_charts.metric_chart(metric, metric=name),
                    metric[["mean", "low", "high"]].to_numpy(),
                    f"lab_{result.run_id}_{name}",
                ),
                key=f"{key_prefix}metric_chart",
            )
        else:
            st.info(f"No variant has a defined {name} in this run.")
    with right:
        lengths, by_length = length_frame(result)
        if lengths["length"].nunique() > 1:
            chart = lab_charts.band_chart(
                lengths,
                x="length",
                x_title="held-out sequence length",
                metric=by_length,
                rule_at=result.config.max_len,
                rule_label="longest training length",
                title=f"{by_length} by length (right of the line: extrapolation)",
            )
            data = lengths[["length", "mean", "low", "high"]].to_numpy()
            show_chart(
                Figure(chart, data, f"lab_{result.run_id}_by_length"), key=f"{key_prefix}len"
            )
        else:
            positions = position_frame(result)
            if len(positions):
                chart = lab_charts.band_chart(
                    positions,
                    x="position",
                    x_title="position in the held-out sequence",
                    metric="token accuracy",
                    rule_at=_extrapolation_start(result),
                    rule_label="longest training length",
                    title="Held-out accuracy by position (± 1 std)",
                )
                data = positions[["position", "mean", "low", "high"]].to_numpy()
                show_chart(
                    Figure(chart, data, f"lab_{result.run_id}_by_position"), key=f"{key_prefix}pos"
                )
    if question.probe_tables:
        _show_row_movement(result, key_prefix=key_prefix)
    losses = loss_frame(result)
    if len(losses):
        show_chart(
            Figure(
                lab_charts.loss_curve_chart(losses, title="Training loss (mean over seeds)"),
                losses[["step", "loss"]].to_numpy(),
                f"lab_{result.run_id}_loss",
            ),
            key=f"{key_prefix}loss_chart",
        )


def _show_row_movement(result: LabResult, *, key_prefix: str) -> None:
    """How far training moved each row from its start, against position (and so frequency)."""
    frame = row_movement_frame(result)
    if not len(frame):
        return
    chart = lab_charts.band_chart(
        frame,
        x="position",
        x_title="row of the learned table (position)",
        metric="row movement ÷ mean early-row movement",
        rule_at=result.config.max_len,
        rule_label="longest training length: rows from here are never used",
        title="How far training moved each row from its start (band: ± 1 std over seeds)",
    )
    data = frame[["position", "seen", "mean", "low", "high"]].to_numpy()
    show_chart(
        Figure(chart, data, f"lab_{result.run_id}_row_movement"), key=f"{key_prefix}movement"
    )
    st.caption(
        "Movement ‖W_trained[p] − W_init[p]‖ of each row, divided by the mean movement of rows "
        "0–7 so both arms share one unit-free axis. How often a row is seen falls with its "
        "position: every training sequence reaches rows 0–3; with mostly short sequences about "
        "1 in 500 reaches row 31 (the exported data's `seen` column gives each row's "
        "probability). Rows past the dashed line were never used: zero gradient, movement "
        "exactly 0 — the control."
    )


def show_run_facts(result: LabResult, *, stored: bool) -> None:
    """Where the numbers come from: run id, code version, seeds, wall time."""
    how = "read from the run store (no training)" if stored else "just trained"
    st.caption(
        f"Run `{result.run_id}` · code version `{result.code_version}` · "
        f"{result.config.seeds} seeds · trained in {result.wall_s:.1f} s · {how}. "
        "The same settings give the same numbers on a CPU; copy this page's address to share it."
    )


# --------------------------------------------------------------------------- watch the table form

#: query parameters that open a ``lab:`` table in the Learned tables and Probing pages' pickers.
LEARNED_LINK = ("lrn_a_src", "lrn_a_lab")
PROBING_LINK = ("prb_t_src", "prb_t_lab")
CONTROL = probe.CONTROL


@cached_data()
def lab_table(root: str, spec: str) -> PositionTable:
    """``load_lab_table(spec)`` from the store at ``root``, cached (runs are write-once)."""
    return load_lab_table(spec, store=RunStore(root))


@cached_data()
def probe_by_step(root: str, run_id: str, variant: str, seed: int) -> pd.DataFrame:
    """:func:`posviz.lab.probe.probe_score_frame` on one stored table's snapshots, cached."""
    result = RunStore(root).load(run_id)
    steps = [int(s) for s in result.snapshot_steps]
    snaps = result.snapshots[variant][seed]  # (n_snapshots, rows, p)
    return probe.probe_score_frame(snaps, steps, label=result.label(variant), seed=seed)


@cached_data()
def probe_errors(root: str, run_id: str, seed: int) -> pd.DataFrame:
    """:func:`posviz.lab.probe.probe_error_frame` on every learned final table, cached."""
    result = RunStore(root).load(run_id)
    tables = {result.label(v): snaps[seed, -1] for v, snaps in result.snapshots.items()}
    return probe.probe_error_frame(tables, seed=seed)


def _open_links(spec: str) -> None:
    left, right = st.columns(2)
    with left:
        st.page_link(
            "pages/learned.py",
            label="Open this table in Learned tables",
            icon=":material/psychology:",
            query_params={LEARNED_LINK[0]: "lab", LEARNED_LINK[1]: spec},
        )
    with right:
        st.page_link(
            "pages/probing.py",
            label="Probe this table in Probing positions",
            icon=":material/straighten:",
            query_params={PROBING_LINK[0]: "lab", PROBING_LINK[1]: spec},
        )
    st.caption(
        f"Table source: `{spec}` (also on the command line: `python -m posviz info {spec}`)."
    )


def watch_table_form(result: LabResult, store: RunStore, *, key_prefix: str) -> None:
    """Step slider over a learned table's snapshots: heatmap, cosine similarity, PCA, probe."""
    learned = list(result.snapshots)
    if not learned:
        return
    st.subheader("Watch the table form")
    st.markdown(
        "The learned position table (an `nn.Embedding`) was saved at evenly spaced training "
        "steps. Move the slider to see it change from random noise; the probe chart shows how "
        "well a straight line reads each position back from it at every step."
    )
    root, steps = str(store.root), [int(s) for s in result.snapshot_steps]
    cols = st.columns([2, 1, 3])
    with cols[0]:
        variant = url_select(
            "Learned table of",
            learned,
            key=f"{key_prefix}tv",
            default=learned[0],
            format_func=result.label,
        )
    with cols[1]:
        seeds = [str(s) for s in range(result.config.seeds)]
        seed = int(url_select("Seed", seeds, key=f"{key_prefix}ts", default="0"))
    with cols[2]:
        step = url_select_slider("Training step", steps, key=f"{key_prefix}step")
    spec = f"lab:{result.run_id}/{variant}/{seed}/{step}"
    with user_errors("Learned table"):
        table = lab_table(root, spec)
        _open_links(spec)
        _probe_views(result, root, variant, seed, step, key_prefix=key_prefix)
        left, right = st.columns(2)
        with left:
            show_view(table, "heatmap", {}, key_prefix=f"{key_prefix}t_")
        with right:
            show_view(table, "similarity", {}, key_prefix=f"{key_prefix}t_")
        show_view(table, "pca2", {"x": 0, "y": 1}, key_prefix=f"{key_prefix}t_")


def _probe_views(
    result: LabResult, root: str, variant: str, seed: int, step: int, *, key_prefix: str
) -> None:
    rows = result.snapshots[variant].shape[2]
    if rows < MIN_ROWS:
        st.info(f"The table has {rows} rows; the probe needs at least {MIN_ROWS}.")
        return
    left, right = st.columns(2)
    with left:
        scores = probe_by_step(root, result.run_id, variant, seed)
        chart = lab_charts.step_score_chart(
            scores,
            score="probe R² (held-out rows)",
            current=step,
            best=1.0,
            title="Probe R² per step (1 = positions read back)",
        )
        show_chart(
            Figure(chart, scores[["step", "score"]].to_numpy(), f"lab_{result.run_id}_probe"),
            key=f"{key_prefix}probe_chart",
        )
    with right:
        errors = probe_errors(root, result.run_id, seed)
        show_chart(
            Figure(
                probe_error_chart(errors),
                errors[["position", "abs_error"]].to_numpy(),
                f"lab_{result.run_id}_probe_errors",
            ),
            key=f"{key_prefix}probe_err_chart",
        )
    st.caption(
        "A linear (ridge) probe reads each row's position, predicting every row with a model "
        "that never saw it (5-fold CV as in Wang & Chen 2020; the penalty chosen inside each "
        "training fold, relative to the table's scale). Right: error by position on the final "
        "tables of every learned variant (this seed), as on the Probing page. Control: a random "
        "table of the same shape and scale, probed the same way. Rows past the "
        "longest training sequence were never used in training and keep their random start. "
        "R² below 0 means worse than guessing the mean position: the rows are not ordered "
        "along a line. A model can still be 100% accurate with such a table, since it needs "
        "the rows distinct, not ordered."
    )
