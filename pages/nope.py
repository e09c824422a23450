"""NoPE: what a transformer knows about position when nothing encodes it."""

import streamlit as st

from posviz.analysis.headlines import nope_verdict
from posviz.charts.families import lines_figure
from posviz.references import cite
from posviz.ui import show_chart, url_number, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.families import cached_nope_demo

st.title("NoPE: no position encoding")
answer = answer_slot()  # the verdict and the hero, drawn once the settings below are read
st.markdown(
    "Take the position encoding away. Self-attention without a mask is **permutation "
    "equivariant**: shuffle the input tokens and the outputs are shuffled the same way, so the "
    "model cannot know the order (see the permutation page). A **causal** mask changes that: token "
    "*i* can only attend to tokens 0…*i*, so how many tokens it sees — and hence its position — "
    "leaks into its output. Decoder-only models trained with no encoding at all (NoPE) still learn "
    "position this way and can match learned or rotary encodings."
)
st.page_link(
    "pages/permutation.py", label="Permutation equivariance, measured on a model", icon="🔀"
)

st.header("The simplest case: uniform causal attention")
st.markdown(
    "If a head attends equally to everything it can see, its output at position *i* is the mean "
    "of *i + 1* token vectors. For random tokens with unit-variance entries, "
    "E‖hᵢ‖² = d/(i + 1): the norm shrinks like 1/√(i+1), so position is readable from the output "
    f"alone — the mechanism {cite('haviv_2022')} propose. Without the mask every output is the "
    "mean of all *n* tokens: one vector, no position at all."
)
c1, c2, c3, c4 = st.columns(4)
with c1:
    n = url_slider("Positions", key="nope_n", min_value=8, max_value=1024, default=256)
with c2:
    d = url_slider("Width d", key="nope_d", min_value=8, max_value=1024, default=64)
with c3:
    samples = url_slider("Random sequences", key="nope_s", min_value=1, max_value=256, default=32)
with c4:
    seed = url_number("Seed", key="nope_seed", min_value=0, max_value=10_000, default=0)

with user_errors("NoPE demo"):
    demo = cached_nope_demo(n, d, samples, seed)
    with answer:
        show_verdict(nope_verdict(demo.positions, demo.norms))
        show_hero(
            lines_figure(
                demo.positions,
                demo.norms,
                name="nope_norms",
                x_title="position i",
                y_title="output norm ‖hᵢ‖",
                log_x=True,
            ),
            key="nope_norm_chart",
            note="Uniform causal attention over random tokens: the output norm at each position, "
            "measured and in theory, against the same attention without a mask.",
        )
    st.markdown("The chart at the top of the page shows these norms for the settings above.")

    st.subheader("Reading the position back")
    st.markdown(
        "Invert the relation: p̂ = d/‖hᵢ‖² − 1. From one sequence the read-out tracks the true "
        "position for early tokens and grows noisy later (the norm changes ever more slowly); "
        "averaged over sequences it is close. NoPE's positional signal is strong near the start "
        "and fades with length, one reason its extrapolation is debated."
    )
    show_chart(
        lines_figure(
            demo.positions,
            demo.readout,
            name="nope_readout",
            x_title="true position i",
            y_title="position read from the norm",
        ),
        key="nope_read_chart",
    )

st.header("Literature")
st.markdown(
    f"- {cite('haviv_2022')}, Findings of EMNLP — causal NoPE models are competitive, "
    "bidirectional (masked LM) ones are not; probes recover position from the activations.\n"
    "- Kazemnejad, Padhi, Natesan Ramamurthy, Das & Reddy (2023), *The Impact of Positional "
    "Encoding on Length Generalization in Transformers*, NeurIPS — NoPE can represent absolute and "
    "relative position in theory and length-generalizes better than RoPE/ALiBi/T5 on their "
    "reasoning tasks.\n"
    "- The other pages: the **ALiBi**, **T5** and **RoPE** pages show what each encoding adds on "
    "top of this mask-only signal; **Compare families** puts them on the same axes."
)

next_question("pages/nope.py")
