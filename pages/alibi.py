"""ALiBi: per-head linear biases on the attention logits (Press et al. 2022)."""

import streamlit as st

from posviz.analysis import alibi_views as views
from posviz.analysis.headlines import alibi_verdict
from posviz.charts.families import alibi_decay_figure, alibi_slopes_figure, heatmap_figure
from posviz.encodings.alibi import MAX_HEADS, MIN_HEADS, alibi_slopes
from posviz.encodings.families import parse_config
from posviz.references import cite
from posviz.ui import show_chart, url_number, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.families import pick_config

st.title("ALiBi: attention with linear biases")
answer = answer_slot()  # the verdict and the hero, drawn once the head count below is read
st.markdown(
    "BLOOM and MPT add no position vectors at all. Each head *h* adds −m_h·(i − j) to the logit "
    "of query *i* and key *j*: a penalty growing linearly with distance, steep for some heads "
    "(local) and gentle for others (long range). The slopes are fixed, not learned, and follow "
    f"from the head count ({cite('press_2022')}, ICLR)."
)

slopes = None
n_heads = 0
with user_errors("ALiBi parameters"):
    raw, label = pick_config("alibi", key="alb", default_preset="BLOOM-560m (ALiBi, 16 heads)")
    if label == "":
        st.stop()
    if raw is None:
        n_heads = url_number(
            "Number of heads",
            key="alb_heads",
            min_value=MIN_HEADS,
            max_value=MAX_HEADS,
            default=12,
            step=1,
            help="Any count; non-powers of two interleave.",
        )
    else:
        n_heads = parse_config("alibi", raw).n_heads
    slopes = alibi_slopes(n_heads)
if slopes is None:
    st.stop()

with answer:
    show_verdict(alibi_verdict(slopes))
    near, weights = views.decay_factors(slopes, 256)
    show_hero(
        alibi_decay_figure(near, weights, slopes, views.shown_heads(n_heads)),
        key="alb_hero_chart",
        note="How much each head still attends to a key k tokens back, relative to one at "
        "distance 0 (equal content): exp(−m·k). Dark: steep heads that look only nearby; light: "
        "gentle heads with a long view.",
    )

st.header("1 · The slopes")
closest, extra = views.slope_split(n_heads)
st.markdown(
    f"{n_heads} heads. For a power of two *n* the slopes are 2^(−8h/n), h = 1…n (8 heads: 1/2, "
    "1/4, …, 1/256). Otherwise the paper takes the 2^⌊log₂n⌋ slopes of the nearest smaller power "
    "of two and fills the rest with every other slope of twice that count"
    + (f" — here {closest} + {extra}." if extra else ".")
)
table = views.slope_table(n_heads)
show_chart(alibi_slopes_figure(slopes), key="alb_slopes_chart")
st.dataframe(table, hide_index=True, height=min(300, 38 + 35 * n_heads))

st.header("2 · The bias matrix of one head")
c1, c2, c3 = st.columns(3)
with c1:
    head = url_slider("Head", key="alb_head", min_value=0, max_value=max(n_heads - 1, 1), default=0)
    head = min(head, n_heads - 1)
with c2:
    n_pos = url_slider("Sequence length", key="alb_n", min_value=4, max_value=128, default=32)
with c3:
    variant = url_select(
        "Variant",
        ["causal", "symmetric"],
        key="alb_var",
        default="causal",
        radio=True,
        help="causal: decoder (BLOOM, MPT); symmetric: −m·|i − j| "
        "both ways, for bidirectional encoders.",
    )
causal = variant == "causal"
st.markdown(
    f"Row = query *i*, column = key *j*; colour = bias added to the logit "
    f"(slope {slopes[head]:.5g})."
    + (" Blank cells are masked (future keys)." if causal else "")
    + " BLOOM's code adds m_h·j instead of −m_h·(i − j): a constant per row, same softmax."
)
show_chart(
    heatmap_figure(
        views.head_bias(n_pos, slopes[head], causal=causal),
        name=f"alibi_bias_head{head}",
        x_title="key position j",
        y_title="query position i",
        color_title="bias",
        scheme="blues",
        height=420,
    ),
    key="alb_bias_chart",
)

st.header("3 · Where each head can look")
max_d = url_slider("Distances up to", key="alb_maxd", min_value=8, max_value=4096, default=256)
distances, factors = views.decay_factors(slopes, max_d)
shown = views.shown_heads(n_heads)
st.markdown(
    "exp(−m_h·k): the factor ALiBi multiplies a key's attention weight by when it sits *k* tokens "
    "back, relative to a key at distance 0 (equal content). Steep heads only see a few neighbours; "
    "the gentlest keep a long view. Nothing here depends on the training length, which is why "
    "ALiBi extrapolates: far keys only get weaker."
    + (f" Showing {shown.size} of {n_heads} heads." if shown.size < n_heads else "")
)
show_chart(alibi_decay_figure(distances, factors, slopes, shown), key="alb_decay_chart")

next_question("pages/alibi.py")
