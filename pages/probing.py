"""Probing positions: can a line read the position back out of a table's rows? (Jexus 2020)"""

import streamlit as st

from posviz.page_models import probing as model
from posviz.ui import (
    safe_md,
    url_checkbox,
    url_multiselect,
    url_number,
    url_select,
    url_slider,
    user_errors,
)
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict, waiting
from posviz.ui.display import bullets, show_charts_side_by_side
from posviz.ui.heroes import table_name
from posviz.ui.model_handles import bundled_arrays
from posviz.ui.probing import run_probe_reports
from posviz.ui.table_source import describe_table, pick_table

PROTOCOLS, FITS, ORDER = model.PROTOCOLS, model.FITS, model.ORDER
SINUSOID, BUNDLED = model.SINUSOID, model.BUNDLED

# the answer slot: the verdict and the hero, drawn once the probes below have run
answer = page_top("Probing positions", model.INTRO)

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
with user_errors("Table to probe"):
    bundled = bundled_arrays()[1] if BUNDLED in compare and table.source != "bundled" else None
    matrices, note = model.probe_tables(
        table, name=table_name(table), keep_padding=keep_padding, compare=compare, bundled=bundled
    )
    if note:
        st.caption(note)
if not matrices:
    st.stop()

page = None
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
        page = model.probing_page(reports, matrices=matrices)
        show_verdict(page.verdict)
        show_hero(page.hero, key="prb_hero", note=model.HERO_NOTE)
if page is None:
    st.stop()
st.header("Results, each beside a random table probed the same way")
st.dataframe(page.results, hide_index=True, width="stretch")
bullets(page.verdicts, max_len=400)
if train == "all":
    st.warning(model.IN_SAMPLE, icon="⚠️")
st.caption(model.RESULTS_NOTE)
if page.crowded:
    st.warning(safe_md(page.crowded_warning(), max_len=900))

show_charts_side_by_side((page.predictions, "prb_pred_chart"), (page.errors, "prb_err_chart"))
st.markdown(model.READING)
st.markdown(model.SOURCES)

next_question("pages/probing.py")
