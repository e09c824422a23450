"""Position through layers: can a linear probe still read a token's position after each layer?"""

import streamlit as st

from posviz.analysis.headlines import layers_verdict, plain_table
from posviz.analysis.layer_views import layer_frames
from posviz.charts.experiments import layer_chart
from posviz.charts.figure import Figure
from posviz.data.texts import ALL_TEXTS, TEXTS, corpus
from posviz.references import cite
from posviz.ui import show_chart, url_checkbox, url_select, url_slider, url_text, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict, waiting
from posviz.ui.probing import layer_probe_queued

BUNDLED = "bundled MiniLM-L6 (offline)"
HUB = "a Hugging Face model (cache or online)"
OWN_TEXT = "paste your own text"

st.title("Position through layers")
answer = answer_slot()  # the verdict and the hero, drawn once the probe below has run
st.markdown(
    "BERT-style models add position embeddings **once**, at the input. Is the position "
    "still in the token's vector after 1, 2, … 6 layers of attention? Run the model on real text, "
    "take every layer's hidden states, fit a linear (ridge) regression from a token's vector to "
    "its position in the window, and score it on held-out text. R² = 1: the position can be read "
    "off exactly; R² ≈ 0: no better than guessing the middle."
)

c1, c2 = st.columns(2)
with c1:
    which = url_select("Model", [BUNDLED, HUB], key="lay_model", default=BUNDLED)
    model_id = "bundled"
    if which == HUB:
        model_id = url_text(
            "Model id",
            key="lay_hub",
            default="",
            max_chars=96,
            placeholder="e.g. google-bert/bert-base-uncased",
        ).strip()
        st.caption(
            "Loaded with `transformers.AutoModel` (never custom code). Offline, only "
            "models already in the Hugging Face cache load; up to ~400 M parameters."
        )
    window = url_slider(
        "Window (tokens per input, incl. special tokens)",
        key="lay_win",
        min_value=16,
        max_value=256,
        default=64,
        step=16,
    )
with c2:
    text_name = url_select("Text", [ALL_TEXTS, *TEXTS, OWN_TEXT], key="lay_text", default=ALL_TEXTS)
    if text_name == OWN_TEXT:
        text = st.text_area(
            "Text (not stored in the link)", key="lay_own", height=140, max_chars=20000
        )
    else:
        text = corpus(text_name)
    ablation = url_checkbox(
        "Also run with the position table zeroed (ablation)",
        key="lay_zero",
        default=False,
        help="A copy of the model with its position table set to zeros, drawn on the same chart: "
        "what is left is order-blind (see the permutation page).",
    )

if not model_id:
    st.info("Type a model id, e.g. `google-bert/bert-base-uncased` or `openai-community/gpt2`.")
    st.stop()
scores = zeroed = None
# Errors are shown as themselves, outside any collapsible box, so their reason is never hidden.
with answer:
    with (
        waiting(
            "Running the model over the text windows, then one ridge probe per layer "
            "(about half a minute the first time, then cached) …"
        ),
        user_errors("Could not probe"),
    ):
        scores = layer_probe_queued(model_id, text, int(window), False)
    if scores is not None and ablation:
        with (
            waiting("Running the ablation (the same model, position table zeroed) …"),
            user_errors("Ablation"),
        ):
            zeroed = layer_probe_queued(model_id, text, int(window), True)
    if scores is not None:
        both = layer_frames(scores, zeroed)
        show_verdict(layers_verdict(scores))
        show_hero(
            Figure(layer_chart(both, metric="r2"), plain_table(both[["layer", "r2", "mae"]]),
                   "layer_probe"),
            key="lay_r2",
            note="R² of a linear probe of the token's position, layer by layer (1 = read "
            "exactly; dashed: 0, where the shuffled-position control sits).",
        )  # fmt: skip
if scores is None:
    st.stop()

first, last = scores.iloc[0], scores.iloc[-1]
best = scores.loc[scores.r2.idxmax()]
m1, m2, m3 = st.columns(3)
m1.metric(
    "R² at the input (layer 0)",
    f"{first.r2:.2f} ± {first.r2_std:.2f}",
    help=f"mean ± std over blocks of held-out windows; control (positions shuffled within each "
    f"window, probed the same way): {first.control_r2:.2f} ± {first.control_r2_std:.2f}",
)
m2.metric(
    f"R² after the last layer ({int(last.layer)})",
    f"{last.r2:.2f} ± {last.r2_std:.2f}",
    help=f"mean ± std over blocks of held-out windows; control (positions shuffled within each "
    f"window): {last.control_r2:.2f} ± {last.control_r2_std:.2f}",
)
if zeroed is None:
    m3.metric(
        "shuffled-position control, every layer",
        f"|R²| ≤ {scores.control_r2.abs().max():.3f}",
        help="The same probe with position labels shuffled within each window: no position to "
        "find, so R² should sit at 0 within its spread.",
    )
else:
    m3.metric("largest |R²| with positions zeroed", f"{zeroed.r2.abs().max():.3f}")
show_chart(
    layer_chart(both, metric="mae"),
    key="lay_mae",
    data=both[["layer", "mae", "chance_mae"]].to_numpy(),
    name="layer_probe_mae",
)
story = (
    f"**What it shows.** {scores.model.iloc[0]}: on {int(first.train_tokens)} training and "
    f"{int(first.test_tokens)} held-out tokens (windows of {window}), the position is readable at "
    f"the input with R² {first.r2:.2f} ± {first.r2_std:.2f} (typical error {first.mae:.1f} "
    f"positions; guessing gives {first.chance_mae:.1f}), best after layer {int(best.layer)} "
    f"(R² {best.r2:.2f} ± {best.r2_std:.2f}), and after the last layer R² {last.r2:.2f} ± "
    f"{last.r2_std:.2f}; with the position labels shuffled within each window (the control) "
    f"R² is {last.control_r2:.2f} ± {last.control_r2_std:.2f}. Spreads are over 5 blocks of "
    "held-out windows; the ridge penalty is chosen by CV grouped over blocks of consecutive "
    "windows (they overlap, so leave-one-token-out would leak). Position is added once and "
    "never re-added, yet later layers still carry it: attention mixes it into every token's "
    "vector, as the answer to the Stack Overflow question "
)
story += cite("so_learnable") + " says (after " + cite("amir_2021") + ", §3.1)."
if zeroed is not None:
    story += (
        f" With the position table zeroed, every layer scores at chance (|R²| ≤ "
        f"{zeroed.r2.abs().max():.3f}): without positions the model cannot tell where a token is."
    )
st.markdown(story)
st.dataframe(plain_table(both), hide_index=True, width="stretch")

next_question("pages/layers.py")
