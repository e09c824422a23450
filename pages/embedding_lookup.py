"""nn.Embedding is a table: a lookup is a one-hot vector times a matrix (Stack Overflow)."""

import streamlit as st

from posviz.analysis.headlines import lookup_verdict
from posviz.analysis.lookup_views import lookup_frame
from posviz.charts.experiments import training_change_chart
from posviz.charts.figure import Figure
from posviz.references import cite
from posviz.ui import url_int_list, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.model_experiments import lookup_check

LEARNED, SINUSOID = "MiniLM's learned position table (512 × 384)", "sinusoid (512 × 384)"

st.title("nn.Embedding is a table")
answer = answer_slot()  # the verdict and the hero, drawn once both checks below have run
st.markdown(
    '`nn.Embedding` is "just a table of vectors": its input is a row index, its output is that '
    "row — the same as multiplying a one-hot vector by the matrix. BERT's learned "
    "positions and the Transformer's sinusoid are both such a table; they differ only in whether "
    "training may change the rows."
)

st.subheader("Lookup = one-hot × matrix, on a real table")
c1, c2 = st.columns(2)
with c1:
    which = url_select("Table", [LEARNED, SINUSOID], key="emb_table", default=LEARNED)
with c2:
    ids = url_int_list(
        "Positions to look up",
        key="emb_ids",
        default=[0, 1, 7, 511],
        min_value=0,
        max_value=511,
        max_items=8,
    )
check = None
with user_errors():
    check = lookup_check("learned" if which == LEARNED else "sinusoid", tuple(ids))
if check is not None:
    st.metric(
        "max |nn.Embedding(ids) − one_hot(ids) @ W|",
        "0 (bit for bit)" if check.max_abs_diff == 0 else f"{check.max_abs_diff:.1e}",
        help="The largest absolute element of the difference (not a norm).",
    )
    shown = 6
    st.dataframe(lookup_frame(check, shown=shown), hide_index=True, width="stretch")
    rows, width = check.onehot.shape[1], check.lookup.shape[1]
    st.caption(
        f"Each one-hot row has a single 1 among {rows} columns; multiplying it by the "
        f"{rows} × {width} matrix adds up one row and zeros, so the result is "
        f"the looked-up row bit for bit (first {shown} of {width} dimensions shown). A "
        "lookup just skips the multiplications by zero."
    )

st.subheader('What "trained" changes')
st.markdown(
    "A learned table is an `nn.Embedding` with `requires_grad=True`; the static sinusoid is "
    "`nn.Embedding.from_pretrained(PE, freeze=True)`. Both feed one shared linear read-out that "
    "must predict `p / n` from the row; a few SGD steps run on the chosen positions only."
)
c1, c2 = st.columns(2)
with c1:
    steps = url_slider("SGD steps", key="emb_steps", min_value=1, max_value=50, default=5)
with c2:
    used = url_int_list(
        "Positions seen in training",
        key="emb_used",
        default=[0, 1, 2, 3, 4, 5],
        min_value=0,
        max_value=15,
        max_items=16,
    )
demo = None
with user_errors():
    from posviz.analysis.embedding_lookup import train_a_few_steps

    demo = train_a_few_steps(16, 8, steps=int(steps), used=tuple(used))
if demo is not None:
    m1, m2, m3 = st.columns(3)
    m1.metric(
        "requires_grad: learned / sinusoid",
        f"{demo.requires_grad['learned']} / {demo.requires_grad['sinusoid']}",
    )
    m2.metric(
        "trainable table parameters",
        f"{demo.trainable_parameters['learned']} / {demo.trainable_parameters['sinusoid']}",
    )
    m3.metric("toy loss, first → last step", f"{demo.losses[0]:.3f} → {demo.losses[-1]:.3f}")
    with answer:
        if check is not None:
            show_verdict(lookup_verdict(check.max_abs_diff, demo.changes))
        show_hero(
            Figure(
                training_change_chart(demo.changes),
                demo.changes[["learned_change", "sinusoid_change"]].to_numpy(),
                "rows_changed_by_training",
            ),
            key="emb_train",
            note="How far each row of a 16-row table moved in a few SGD steps. Solid: rows looked "
            "up in training; faded: rows never looked up (they stay exactly where they were).",
        )
    st.markdown(
        "Only the learned rows that were looked up moved; the rows not looked up are the "
        "control and changed by exactly 0. A row gets a gradient only when its position occurs "
        "in the batch (each step moves it by −lr × its gradient, which the tests check against "
        "the closed form), so each row is trained independently — why BERT's rarely used rows "
        "past ~400 stay poorly trained, per the Jexus blog post. The frozen sinusoid has "
        "`requires_grad=False` and no trainable parameters; it needs no storage beyond its "
        "formula, which is what the Transformer authors gained."
    )
st.markdown(
    "**Sources:** " + "; ".join(cite(k) for k in ("so_nn_embedding", "jexus_2020", "vaswani_2017"))
)

next_question("pages/embedding_lookup.py")
