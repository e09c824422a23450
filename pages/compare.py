"""Compare encoding families on the same axes: similarity, distinguishability, extrapolation."""

import streamlit as st

from posviz.analysis.comparison import (
    SCALINGS,
    CompareSettings,
    compared_families,
    family_label,
)
from posviz.analysis.headlines import compare_verdict, shown_table
from posviz.charts.families import lines_figure
from posviz.encodings.alibi import MAX_HEADS, MIN_HEADS
from posviz.encodings.t5 import MAX_BUCKETS, MAX_DISTANCE, MIN_BUCKETS, MIN_MAX_DISTANCE
from posviz.references import cite
from posviz.ui import (
    show_chart,
    url_multiselect,
    url_number,
    url_select,
    url_slider,
    url_text,
    user_errors,
)
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.families import family_comparison, show_family_errors

st.title("Compare families")
answer = answer_slot()  # the verdict and the hero, drawn once the families below are compared
st.markdown(
    "Every family gives the model a signal for a position (sinusoid, learned: a vector added to "
    "the token) or for a distance (RoPE: rotation angles; ALiBi: a logit penalty; T5: a bucket). "
    "Here they are reduced to the same three questions, over the same distances, with a trained "
    "length *L* marked: how similar is distance *k* to distance 0; can neighbouring positions be "
    "told apart; and how much of the signal beyond *L* was never seen in training."
)

chosen = url_multiselect(
    "Families",
    compared_families(),
    key="cmp_fam",
    default=list(compared_families()),
    format_func=family_label,
)
with st.expander("Settings", expanded=False):
    c1, c2, c3 = st.columns(3)
    with c1:
        trained = url_slider(
            "Trained length L", key="cmp_L", min_value=16, max_value=4096, default=512, step=16
        )
        n = url_slider(
            "Distances / positions shown",
            key="cmp_n",
            min_value=32,
            max_value=4096,
            default=1536,
            step=32,
        )
        d_sin = url_slider(
            "Sinusoid width d", key="cmp_dsin", min_value=8, max_value=1024, default=384, step=8
        )
    with c2:
        head_dim = url_slider(
            "RoPE head dim", key="cmp_hd", min_value=8, max_value=256, default=64, step=8
        )
        base = url_number(
            "RoPE base", key="cmp_base", min_value=2.0, max_value=1e9, default=10000.0, step=1000.0
        )
        scaling = url_select("RoPE scaling", SCALINGS, key="cmp_scal", default="yarn")
        factor = url_number(
            "Scaling factor", key="cmp_fac", min_value=1.0, max_value=64.0, default=4.0, step=1.0
        )
    with c3:
        heads = url_number(
            "ALiBi heads",
            key="cmp_heads",
            min_value=MIN_HEADS,
            max_value=MAX_HEADS,
            default=8,
            step=1,
        )
        buckets = url_number(
            "T5 buckets",
            key="cmp_nb",
            min_value=MIN_BUCKETS,
            max_value=MAX_BUCKETS,
            default=32,
            step=2,
        )
        max_distance = url_number(
            "T5 max_distance",
            key="cmp_md",
            min_value=MIN_MAX_DISTANCE,
            max_value=MAX_DISTANCE,
            default=128,
            step=8,
        )
        t5_model = url_text(
            "T5 model for its learned bias (optional)",
            key="cmp_t5",
            default="",
            placeholder="google-t5/t5-small",
        ).strip()

if not chosen:
    st.info("Pick at least one family.")
    st.stop()

settings = CompareSettings(
    trained_length=trained,
    n_distances=n,
    sinusoid_width=d_sin,
    rope_head_dim=head_dim,
    rope_base=base,
    rope_scaling=scaling,
    rope_factor=factor,
    alibi_heads=heads,
    t5_buckets=buckets,
    t5_max_distance=max_distance,
)
result = None
with user_errors("Comparison"):
    result = family_comparison(chosen, settings=settings, t5_model=t5_model)
if result is None:
    st.stop()
show_family_errors(result.errors)
rule = {"rule_x": trained, "rule_label": f"L = {trained}", "dashed": True}
with answer:
    show_verdict(compare_verdict(result.summary, trained=trained))
    if result.unseen:
        show_hero(
            lines_figure(
                result.distances,
                result.unseen,
                name="compare_unseen",
                x_title="distance / position k",
                y_title="unseen fraction",
                y_domain=(0, 1.02),
                **rule,
            ),
            key="cmp_unseen_chart",
            note="The share of each family's signal at distance k that training up to L never "
            "produced (section 3 below says how each is measured). Each family has its own dash, "
            "so lines lying on top of each other still show.",
        )

st.header("1 · Similarity vs relative distance")
st.markdown(
    "Sinusoid and learned: mean cosine of the vectors at *p* and *p + k*. RoPE: cosine between a "
    "vector rotated to *p* and to *p + k* — the same kernel as the sinusoid for the same "
    "frequencies. ALiBi (and T5 with a model): the factor its bias multiplies a key's attention "
    "weight by, *k* tokens back, averaged over heads. All are 1 at *k* = 0. "
    + (
        "T5 without a model has no fixed shape (its biases are learned); name a T5 model in the "
        "settings to add it."
        if "t5" in chosen and not t5_model
        else ""
    )
)
if result.similarity:
    show_chart(
        lines_figure(
            result.distances,
            result.similarity,
            name="compare_similarity",
            x_title="distance k (tokens)",
            y_title="similarity to k = 0",
            log_x=True,
            **rule,
        ),
        key="cmp_sim_chart",
    )

st.header("2 · Distinguishability")
st.markdown(
    f"For each of the first {result.margin_items.size} positions/distances: 1 − the highest "
    "cosine with any *other* one in the window. 0 means some other position looks identical to "
    "the model's signal. T5's wide buckets give 0 (all distances in a bucket are one signal). "
    "Scaling RoPE lowers its margin — interpolated pairs turn more slowly, so neighbours crowd "
    "together (a little for YaRN/llama3, which keep the fast pairs; most for linear). ALiBi's "
    "signal is one number per head, −m_h·k, so a cosine does not apply: neighbouring distances "
    "always differ by exactly m_h in the logit."
)
if result.margin:
    show_chart(
        lines_figure(
            result.margin_items,
            result.margin,
            name="compare_margin",
            x_title="position / distance",
            y_title="nearest-other margin (symlog)",
            y_scale="symlog",
            log_x=True,
            **rule,
        ),
        key="cmp_margin_chart",
    )

st.header("3 · Beyond the trained length")
st.markdown(
    "Fraction of the signal at *k* that training up to *L* never produced. Sinusoid/RoPE: share of "
    "frequency pairs whose angle lies outside the arc they covered in training (fast pairs turned "
    "full circles and are always familiar; slow ones were not). The learned table simply ends. "
    "ALiBi's penalties grow past anything seen, yet only make far keys weaker — "
    f"{cite('press_2022')} show it extrapolates. T5's last bucket covers every distance beyond "
    "max_distance."
)
st.markdown("The chart at the top of the page shows these fractions.")

if not result.summary.empty:
    st.markdown("**Summary** (numbers from the charts above; blank: not defined for the family)")
    st.dataframe(shown_table(result.summary, first=("family", "beyond L")), hide_index=True)

next_question("pages/compare.py")
