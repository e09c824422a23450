"""p-RoPE: RoPE with only its fastest frequencies kept (Barbero et al. 2025)."""

import streamlit as st

from posviz.analysis import p_rope_views as views
from posviz.analysis.rope_views import MAX_SCORE_DISTANCE, probe_vectors, score_distances
from posviz.charts.families import lines_figure
from posviz.encodings.families import parse_config
from posviz.encodings.p_rope import MAX_FRACTION, MIN_FRACTION, PRopeConfig
from posviz.encodings.rope import HEAD_DIM_STEP, MAX_HEAD_DIM, MIN_HEAD_DIM
from posviz.references import cite
from posviz.ui import show_chart, url_number, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.families import pick_config
from posviz.ui.text import safe_md

GEMMA4 = "Gemma 4 full-attention layers (p = 0.25, θ = 10⁶; transformers' Gemma4TextConfig)"

st.title("p-RoPE: RoPE without its slowest frequencies")
answer = answer_slot()  # the verdict and the hero, drawn once the settings below are read
st.markdown(
    "RoPE turns pair *i* of every query and key by *m·θᵢ* at position *m*. "
    f"{cite('barbero_2025')} find that Gemma builds its positional attention patterns on the "
    "fastest pairs and uses the slowest ones as semantic channels, which drift once a context is "
    "long enough for them to turn. **p-RoPE** keeps the fastest share *p* of RoPE's pairs, "
    "unchanged, and never rotates the rest (θᵢ = 0). Gemma 4's full-attention layers use it "
    "with p = 0.25 (`rope_type: proportional` in transformers). Unlike a partial rotary factor "
    "(GPT-NeoX, Phi), which spreads all of RoPE's frequencies over fewer dims, p-RoPE keeps the "
    f"fast frequencies exactly as RoPE has them ({cite('su_2021')})."
)


def manual_config() -> PRopeConfig:
    c1, c2, c3 = st.columns(3)
    with c1:
        head_dim = url_number(
            "Head dimension",
            key="prope_hd",
            min_value=MIN_HEAD_DIM,
            max_value=MAX_HEAD_DIM,
            default=256,
            step=HEAD_DIM_STEP,
            help="Even: pairs of dimensions rotate together.",
        )
    with c2:
        base = url_number(
            "Base (rope_theta)",
            key="prope_base",
            min_value=2.0,
            max_value=1e9,
            default=10000.0,
            step=1000.0,
        )
    with c3:
        fraction = url_slider(
            "p (share of pairs rotated)",
            key="prope_p",
            min_value=MIN_FRACTION,
            max_value=MAX_FRACTION,
            default=0.25,
            step=0.05,
        )
    return views.manual_p_rope_config(head_dim=head_dim, base=base, fraction=fraction)


config = None
with user_errors("p-RoPE parameters"):
    raw, label = pick_config("p_rope", key="prope", default_preset=GEMMA4)
    if label == "":
        st.stop()
    config = manual_config() if raw is None else parse_config("p_rope", raw)
if config is None:
    st.stop()
st.caption(f"**{safe_md(label, max_len=120)}** · {views.describe(config)}")
for note in config.notes:
    st.caption(f"Note: {safe_md(note, max_len=300)}.")

context = views.context_length(config)
max_dist = url_slider(
    "Distances up to",
    key="prope_maxd",
    min_value=16,
    max_value=MAX_SCORE_DISTANCE,
    step=16,
    default=min(2 * context, MAX_SCORE_DISTANCE),
)
distances = score_distances(max_dist)
with answer:
    show_verdict(views.answer(config))
    show_hero(
        lines_figure(
            distances,
            views.band_similarity(config, distances),
            name="p_rope_bands",
            x_title="distance m between query and key (tokens)",
            y_title="cosine of a pair band with itself",
            rule_x=context,
            rule_label="context",
            log_x=True,
        ),
        key="prope_band_chart",
        note=(
            "Mean cos(m·θᵢ) over a band of pairs: how alike a query and a key with the same "
            "content in those pairs still look *m* tokens apart. The pairs p-RoPE leaves "
            "unrotated stay at 1."
        ),
    )

st.header("Score between a fixed query and key vs their distance")
vectors = url_select(
    "q and k", ["q = k = all ones", "random q, k"], key="prope_qk", default="q = k = all ones"
)
seed = 0
if vectors.startswith("random"):
    seed = url_number("Seed", key="prope_seed", min_value=0, max_value=10_000, default=0)
q, k = probe_vectors(config.head_dim, random=vectors.startswith("random"), seed=seed)
st.markdown(
    "⟨R_m q, R_0 k⟩ for a query *m* tokens after the key (rotate_half pairs, as Gemma and "
    "Llama). p-RoPE's score is RoPE's fast-pair part plus a constant: what the unrotated pairs "
    "add, the same at every distance."
)
show_chart(
    lines_figure(
        distances,
        views.score_curves(config, distances, q=q, k=k),
        name="p_rope_scores",
        x_title="distance m = query − key (tokens)",
        y_title="score q·k after rotation",
        rule_x=context,
        rule_label="context",
        log_x=True,
    ),
    key="prope_score_chart",
)

st.header("Every pair")
st.dataframe(views.pair_table(config), hide_index=True, height=300)

next_question("pages/p_rope.py")
