"""Permutation equivariance: without positions, attention cannot tell word order apart."""

import streamlit as st

from posviz.analysis.headlines import plain_table
from posviz.charts.experiments import similarity_chart
from posviz.figures import permutation_hero
from posviz.references import cite
from posviz.ui import safe_md, show_chart, url_checkbox, url_select, url_text, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict, waiting
from posviz.ui.model_experiments import permutation

EXAMPLES = {
    "I do like coding / Do I like coding": ("I do like coding", "Do I like coding"),
    "Tom bit a dog / A dog bit Tom": ("Tom bit a dog", "A dog bit Tom"),
    "your own sentences": ("", ""),
}
DEPTHS = {"first self-attention block": None, "first full layer": 1, "all 6 layers": 6}

st.title("Permutation equivariance")
answer = answer_slot()  # the verdict and the hero, drawn once the sentences below are read
st.markdown(
    "Self-attention treats its input as a *set*: reorder the tokens and the outputs come out "
    "reordered the same way, each vector unchanged (the Stack Overflow answer). So without "
    "position information "
    '"Tom bit a dog" and "A dog bit Tom" get the same vectors (the cnblogs post). Here the bundled '
    "MiniLM's real token embeddings go through its real first attention block, once **without** "
    "and once **with** its position embeddings added."
)

example = url_select("Example", list(EXAMPLES), key="perm_ex", default=list(EXAMPLES)[1])
default_a, default_b = EXAMPLES[example]
c1, c2 = st.columns(2)
with c1:
    sentence_a = url_text(
        "Sentence A",
        key="perm_a",
        default=default_a or "the cat sat",
        max_chars=120,
        disabled=bool(default_a),
    )
with c2:
    sentence_b = url_text(
        "Sentence B (same words, another order)",
        key="perm_b",
        default=default_b or "sat the cat",
        max_chars=120,
        disabled=bool(default_b),
    )
if default_a:
    sentence_a, sentence_b = default_a, default_b
c3, c4 = st.columns(2)
with c3:
    depth = url_select(
        "Run through", list(DEPTHS), key="perm_depth", default="first self-attention block"
    )
with c4:
    special = url_checkbox(
        "Add [CLS] … [SEP] as the model does",
        key="perm_special",
        default=True,
        help="They stay at both ends in A and B.",
    )

result = None
with answer, user_errors():
    with waiting("Running both sentences through MiniLM's attention (loading it the first time) …"):
        result = permutation(sentence_a, sentence_b, DEPTHS[depth], special)
    verdict, hero = permutation_hero(result)
    show_verdict(verdict)
    show_hero(
        hero,
        key="perm_bar",
        note="For each token of B: how far its output lies from the same token's output in A, "
        "without positions (grey, float rounding) and with them (blue). Log scale.",
    )
if result is None:
    st.stop()

st.markdown(
    f"Word pieces — A: {' · '.join(safe_md(t) for t in result.tokens_a)}; "
    f"B: {' · '.join(safe_md(t) for t in result.tokens_b)}."
)
m1, m2, m3 = st.columns(3)
m1.metric(
    "max |out_B − out_A[π]|, no positions",
    f"{result.max_diff_without:.1e}",
    help="The largest absolute element of the difference (not a norm). Control: float32 "
    f"rounding at the outputs' size, ε₃₂·max|out_A| = {result.rounding_scale:.1e}.",
)
m2.metric(
    "max |out_B − out_A[π]|, with positions",
    f"{result.max_diff_with:.3f}",
    help="The same largest absolute element, with MiniLM's position table added.",
)
m3.metric(
    "‖mean out_B − mean out_A‖₂, no / with",
    f"{result.pooled_diff_without:.1e} / {result.pooled_diff_with:.2f}",
    help="Euclidean distance of the mean-pooled sentence vectors.",
)
st.markdown(
    f"Without positions every output of B equals the output of the same token in A to float "
    f"rounding: the largest difference, {result.max_diff_without:.1e}, is "
    f"{result.max_diff_without / result.rounding_scale:.1f}× the float32 rounding step at the "
    f"outputs' size ({result.rounding_scale:.1e}); with positions it is "
    f"{result.max_diff_with / result.rounding_scale:.0e}× that step. The computation is exact "
    "(no sampling), so there is no spread to show: the layer saw the same set, so it produced the "
    "same vectors, permuted. The "
    "mean-pooled sentence vectors — what a sentence-embedding model like MiniLM returns — are "
    "identical: the two sentences would mean the same. With positions added, the same token gets "
    "a different vector in each sentence."
)
h1, h2 = st.columns(2)
with h1:
    show_chart(
        similarity_chart(
            result.similarity_without,
            result.tokens_b,
            result.tokens_a,
            title="cosine(out_B, out_A), no positions",
        ),
        key="perm_sim0",
        data=result.similarity_without,
        name="similarity_no_positions",
    )
with h2:
    show_chart(
        similarity_chart(
            result.similarity_with,
            result.tokens_b,
            result.tokens_a,
            title="cosine(out_B, out_A), with positions",
        ),
        key="perm_sim1",
        data=result.similarity_with,
        name="similarity_with_positions",
    )
st.caption(
    "Left: each output of B has an exact twin (cosine 1.000000) in A — the permutation. Right: "
    "with positions the twins are only similar. Computed by `posviz.analysis.permutation."
    "permutation_test` (token embeddings → embedding LayerNorm → `encoder.layer[0].attention`)."
)
st.dataframe(plain_table(result.per_token), hide_index=True, width="stretch")
st.markdown("**Sources:** " + "; ".join(cite(k) for k in ("so_learnable", "cnblogs_2020")))

next_question("pages/permutation.py")
