"""Probing positions: can a line read the position back out of a table's rows? (Jexus 2020)"""

import numpy as np
import pandas as pd
import streamlit as st

from posviz.analysis.probes import MIN_ROWS
from posviz.charts.experiments import predicted_vs_actual_chart, probe_error_chart
from posviz.references import cite
from posviz.ui import (
    show_chart,
    url_checkbox,
    url_multiselect,
    url_number,
    url_select,
    url_slider,
    user_errors,
)
from posviz.ui.experiments import bundled_arrays, probe_table, relative_probe
from posviz.ui.tables import describe_table, pick_table

PROTOCOLS = {
    "even→odd (Jexus blog)": ("even", "odd"),
    "all→all (fit, not generalisation)": ("all", "all"),
    "shuffled k-fold CV, rounded (Wang & Chen 2020)": ("kfold", "all"),
}
SINUSOID, RANDOM, BUNDLED = "sinusoid, same shape", "random Gaussian, same shape", "bundled MiniLM"
MAX_CHART_POINTS = 1500  # per table, so big tables keep a light chart

st.title("Probing positions")
st.markdown(
    "Does a position table *know* positions? Fit a **linear regression** from each row `PE[p]` to "
    "its index `p` and test it on rows it did not see. The Jexus blog post trained on even "
    "positions and tested on odd ones; Wang & Chen (EMNLP 2020, code MiuLab/PE-Study) used "
    "shuffled 5-fold cross-validation with rounded predictions. A sinusoid is read back exactly; a "
    "learned table only as well as training shaped it. Random vectors of the same shape are the "
    "control."
)

left, right = st.columns(2)
with left:
    table = pick_table("Table to probe", key="prb_t")
    if table is not None:
        describe_table(table)
with right:
    protocol_name = url_select(
        "Protocol", list(PROTOCOLS), key="prb_proto", default="even→odd (Jexus blog)"
    )
    train, test = PROTOCOLS[protocol_name]
    folds = url_slider(
        "Folds (k-fold and relative probe)", key="prb_folds", min_value=2, max_value=10, default=5
    )
    compare = url_multiselect(
        "Compare side by side with",
        [SINUSOID, RANDOM, BUNDLED],
        key="prb_cmp",
        default=[SINUSOID, RANDOM],
    )
    c1, c2 = st.columns(2)
    with c1:
        seed = url_number("Seed", key="prb_seed", min_value=0, max_value=9999, default=0)
    with c2:
        alpha = url_number(
            "Ridge α (0 = OLS)",
            key="prb_alpha",
            min_value=0.0,
            max_value=10000.0,
            default=0.0,
            step=0.1,
            help="0 is ordinary least squares with intercept (the papers').",
        )
    keep_padding = url_checkbox(
        "Keep padding/offset rows (stored-tensor order, as Wang & Chen)",
        key="prb_pad",
        default=False,
        help="For RoBERTa/OPT/BART the stored table starts with 2 offset rows.",
    )
    relative = url_checkbox(
        "Also run the relative-order probe (is j after i?)", key="prb_rel", default=True
    )

if table is None:
    st.stop()

matrices: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
labels = None
matrix = np.asarray(table.matrix, dtype=np.float64)
if keep_padding and any(a.values is not None for a in table.set_aside):
    from posviz.analysis.probes import with_set_aside_rows

    matrix, labels = with_set_aside_rows(matrix, table.set_aside)
elif keep_padding:
    st.caption("This table has no set-aside rows with values; probing its rows as they are.")
matrices[table.label] = (matrix, labels)
n, d = matrix.shape
if n < MIN_ROWS:
    st.error(
        f"{table.label} has {n} positions; a probe needs at least {MIN_ROWS} to hold some out. "
        "Pick a longer table.",
        icon="⚠️",
    )
    st.stop()
with user_errors("Comparison table"):
    if SINUSOID in compare:
        from posviz.encodings.sinusoidal import sinusoidal

        matrices[f"sinusoid ({n}×{d})"] = (sinusoidal(n, d), None)
    if RANDOM in compare:
        rng = np.random.default_rng(seed)
        matrices[f"random Gaussian ({n}×{d})"] = (rng.normal(0, matrix.std(), (n, d)), None)
    if BUNDLED in compare and table.source != "bundled":
        matrices["bundled MiniLM (512×384)"] = (bundled_arrays()[1].astype(np.float64), None)

rows, frames = [], []
with st.status("Probing…", expanded=False) as status:
    for name, (m, lab) in matrices.items():
        with user_errors(name):
            frame, mae, r2, protocol, n_train = probe_table(
                m, train, test, folds, float(alpha), int(seed), lab
            )
            row = {
                "table": name,
                "positions": m.shape[0],
                "d_model": m.shape[1],
                "protocol": protocol,
                "train rows": n_train,
                "MAE (this run)": mae,
                "R² (this run)": r2,
            }
            if relative:
                row["order error (this run)"] = relative_probe(m, folds, int(seed), None)
            rows.append(row)
            frame["table"] = name
            if len(frame) > MAX_CHART_POINTS:
                frame = frame.iloc[np.linspace(0, len(frame) - 1, MAX_CHART_POINTS).astype(int)]
            frames.append(frame)
    status.update(label=f"Probed {len(rows)} table(s)", state="complete")

if not rows:
    st.stop()
results = pd.DataFrame(rows)
st.subheader("Results, side by side")
st.dataframe(
    results,
    hide_index=True,
    width="stretch",
    column_config={
        "MAE (this run)": st.column_config.NumberColumn(format="%.3f"),
        "R² (this run)": st.column_config.NumberColumn(format="%.4f"),
        "order error (this run)": st.column_config.NumberColumn(format="%.3f"),
    },
)
st.caption(
    "MAE: mean |predicted − actual| in positions (0 = perfect). R²: 1 = perfect, ≤ 0 = no better "
    "than guessing the mean. Order error rate: logistic regression on [PE[i], PE[j]] predicting "
    "j > i with as many random pairs as positions (Wang & Chen's protocol); 0.5 is chance. "
    "**Reported (Jexus blog post, bert-base-cased, even→odd):** BERT's predictions are poor "
    "\"especially for the position > 400\"; RoBERTa's and GPT-2's are better. Numeric values from "
    "Wang & Chen's Table 1 are not shown because they could not be checked against the paper here."
)
thresholds = [r for r in rows if 0.8 * r["d_model"] <= r["train rows"] <= 1.25 * r["d_model"]]
if thresholds and alpha == 0:
    st.warning(
        "Some fits have about as many training rows as dimensions "
        f"({', '.join(r['table'] for r in thresholds)}): ordinary least squares is at its "
        "interpolation threshold and its test error blows up (double descent). Try a ridge α > 0 "
        "(e.g. 1) or the even→odd protocol, and compare."
    )

both = pd.concat(frames, ignore_index=True)
c1, c2 = st.columns(2)
with c1:
    show_chart(
        predicted_vs_actual_chart(both),
        key="prb_pred_chart",
        data=both[["position", "predicted"]].to_numpy(),
        name="probe_predictions",
    )
with c2:
    show_chart(
        probe_error_chart(both),
        key="prb_err_chart",
        data=both[["position", "abs_error"]].to_numpy(),
        name="probe_errors",
    )
st.markdown(
    "**Reading the charts.** Points on the dashed diagonal are read back exactly. The sinusoid "
    "sits on it: every row is a fixed function of `p`, and odd rows are interpolations of even "
    "ones. A learned table sits on it only where training gave the rows a consistent direction; "
    "where positions were rarely seen in training (BERT past ~400, per the Jexus blog post) the "
    "error grows."
)
st.markdown("**Sources:** " + "; ".join(cite(k) for k in ("jexus_2020", "wang_chen_2020")))
