"""Probing positions: can a line read the position back out of a table's rows? (Jexus 2020)"""

import streamlit as st

from posviz.analysis.probe_views import interpolation_threshold
from posviz.analysis.probes import MIN_ROWS, with_set_aside_rows
from posviz.encodings.sinusoidal import sinusoidal
from posviz.figures import probe_figures, probe_hero
from posviz.references import cite
from posviz.ui import (
    safe_md,
    show_chart,
    url_checkbox,
    url_multiselect,
    url_number,
    url_select,
    url_slider,
    user_errors,
)
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict, waiting
from posviz.ui.heroes import table_name
from posviz.ui.model_handles import bundled_arrays
from posviz.ui.probing import run_probe_reports, show_probe_results
from posviz.ui.table_source import describe_table, pick_table

PROTOCOLS = {
    "even→odd (Jexus blog)": ("even", "odd"),
    "all→all (in-sample fit, not a held-out score)": ("all", "all"),
    "shuffled k-fold CV, rounded (Wang & Chen 2020)": ("kfold", "all"),
}
FITS = {
    "OLS (ordinary least squares, the papers')": "ols",
    "ridge, α tuned by grouped CV (on training rows only)": "cv",
    "ridge, fixed relative α (advanced)": "relative",
}
ORDER = {
    "held-out positions (leak-free)": "positions",
    "held-out pairs (Wang & Chen's published protocol; leaks positions)": "pairs",
    "off": None,
}
SINUSOID, BUNDLED = "sinusoid, same shape", "bundled MiniLM"

st.title("Probing positions")
answer = answer_slot()  # the verdict and the hero, drawn once the probes below have run
st.markdown(
    "Does a position table *know* positions? Fit a **linear regression** from each row `PE[p]` to "
    "its index `p` and test it on rows it did not see. The Jexus blog post trained on even "
    "positions and tested on odd ones; Wang & Chen (EMNLP 2020, code MiuLab/PE-Study) used "
    "shuffled 5-fold cross-validation with rounded predictions. Every number below is shown with "
    "its spread (over 5 blocks of test positions, or over folds) and beside the same probe run "
    "the same way on a **random table** of the same shape and per-column scale: only a gap "
    "larger than the spread says the table holds position."
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
        "Compare side by side with", [SINUSOID, BUNDLED], key="prb_cmp", default=[SINUSOID]
    )
    fit_name = url_select("Fit", list(FITS), key="prb_fit", default=next(iter(FITS)))
    alpha: float | str = {"ols": 0.0, "cv": "cv"}.get(FITS[fit_name], 0.0)
    if FITS[fit_name] == "relative":
        alpha = url_number(
            "Relative ridge α",
            key="prb_alpha",
            min_value=0.0,
            max_value=100.0,
            default=0.01,
            step=0.001,
            format="%.4f",
            help="Penalty α·mean(s²), with s the singular values of the centred training rows: "
            "relative to the data's scale, so a table ×c gives the same fit.",
        )
    seed = url_number("Seed", key="prb_seed", min_value=0, max_value=9999, default=0)
    keep_padding = url_checkbox(
        "Keep padding/offset rows (stored-tensor order, as Wang & Chen)",
        key="prb_pad",
        default=False,
        help="For RoBERTa/OPT/BART the stored table starts with 2 offset rows.",
    )
    order_name = url_select(
        "Relative-order probe (is j after i?)",
        list(ORDER),
        key="prb_order",
        default=next(iter(ORDER)),
        help="Held-out positions: test pairs use only positions no training pair used. Held-out "
        "pairs is the published protocol: positions are shared, so a random table scores better "
        "than chance by memorising a per-position score.",
    )

if table is None:
    st.stop()

matrices = {}
labels = None
matrix = table.matrix
if keep_padding and any(a.values is not None for a in table.set_aside):
    matrix, labels = with_set_aside_rows(matrix, table.set_aside)
elif keep_padding:
    st.caption("This table has no set-aside rows with values; probing its rows as they are.")
matrices[table_name(table)] = (matrix, labels)
n, d = table.matrix.shape
if n < MIN_ROWS:
    st.error(
        f"{safe_md(table.label, max_len=120)} has {n} positions; a probe needs at least "
        f"{MIN_ROWS} to hold some out. Pick a longer table.",
        icon="⚠️",
    )
    st.stop()
with user_errors("Comparison table"):
    if SINUSOID in compare:
        matrices[f"sinusoid ({n}×{d})"] = (sinusoidal(n, d), None)
    if BUNDLED in compare and table.source != "bundled":
        matrices["bundled MiniLM (512×384)"] = (bundled_arrays()[1], None)

with answer:
    with waiting(
        f"Probing {len(matrices)} table(s), each beside a random table of the same shape "
        "(a few seconds; large tables queue) …"
    ):
        reports = run_probe_reports(
            matrices,
            train=train,
            test=test,
            folds=int(folds),
            alpha=alpha,
            seed=int(seed),
            hold_out=ORDER[order_name],
        )
    if reports:
        verdict, hero = probe_hero(reports)
        show_verdict(verdict)
        show_hero(
            hero,
            key="prb_hero",
            note="Dot: mean absolute error in positions (lower is better); bar: ± one standard "
            "deviation over blocks of test positions or folds. Grey: a random table of the same "
            "shape and per-column scale, probed the same way.",
        )
if not reports:
    st.stop()
st.subheader("Results, each beside a random table probed the same way")
show_probe_results(reports)
if train == "all":
    st.warning(
        "all→all fits and scores the same rows: it measures how well a line *fits* the table, not "
        "whether it can read an unseen position. With as many columns as rows even a random table "
        "fits well (see its column). Use even→odd or k-fold for a held-out score.",
        icon="⚠️",
    )
st.caption(
    "MAE: mean |predicted − actual| in positions (0 = perfect), mean ± std over 5 blocks of "
    "test positions (splits) or over folds (k-fold). R²: 1 = perfect, ≤ 0 = no better than "
    "guessing the mean. Order error: standardised logistic regression on [PE[i], PE[j]] "
    "predicting j > i, as many random pairs as positions, mean ± std over folds; 0.5 is chance. "
    "The verdict says a difference only where the 95% intervals of table and control do not "
    "overlap. **Reported (Jexus blog post, bert-base-cased, even→odd):** BERT's predictions are "
    "poor \"especially for the position > 400\"; RoBERTa's and GPT-2's are better."
)
crowded = interpolation_threshold(reports, matrices)
if crowded:
    st.warning(
        "Some OLS fits have about as many training rows as columns "
        f"({', '.join(safe_md(name) for name in crowded)}): least squares is at its "
        "interpolation threshold and its test error blows up (double descent). Choose "
        '"ridge, α tuned by grouped CV" and compare.'
    )

predictions, errors = probe_figures(reports)
c1, c2 = st.columns(2)
with c1:
    show_chart(predictions, key="prb_pred_chart")
with c2:
    show_chart(errors, key="prb_err_chart")
st.markdown(
    "**Reading the charts.** Points on the dashed diagonal are read back exactly. The sinusoid "
    "sits on it: every row is a fixed function of `p`, and odd rows are interpolations of even "
    "ones. A learned table sits on it only where training gave the rows a consistent direction; "
    "where positions were rarely seen in training (BERT past ~400, per the Jexus blog post) the "
    "error grows."
)
st.markdown("**Sources:** " + "; ".join(cite(k) for k in ("jexus_2020", "wang_chen_2020")))

next_question("pages/probing.py")
