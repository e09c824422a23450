"""Position through layers: can a linear probe still read a token's position after each layer?"""

import streamlit as st

from posviz.page_models import layers as model
from posviz.ui import show_chart, url_checkbox, url_select, url_slider, url_text, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict, waiting
from posviz.ui.probing import layer_probe_queued

BUNDLED, HUB, OWN_TEXT = model.BUNDLED, model.HUB, model.OWN_TEXT

# the answer slot: the verdict and the hero, drawn once the probe below has run
answer = page_top("Position through layers", model.INTRO)

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
    text_name = url_select(
        "Text", [model.ALL_TEXTS, *model.TEXTS, OWN_TEXT], key="lay_text", default=model.ALL_TEXTS
    )
    if text_name == OWN_TEXT:
        text = st.text_area(
            "Text (not stored in the link)", key="lay_own", height=140, max_chars=20000
        )
    else:
        text = model.corpus(text_name)
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
        page = model.layers_page(scores, zeroed=zeroed, window=int(window))
        show_verdict(page.verdict)
        show_hero(page.hero, key="lay_r2", note=model.HERO_NOTE)
if scores is None:
    st.stop()

for column, (label, value, help_text) in zip(st.columns(3), page.metrics, strict=True):
    column.metric(label, value, help=help_text)
show_chart(page.errors, key="lay_mae")
st.markdown(page.story)
st.dataframe(page.table, hide_index=True, width="stretch")

next_question("pages/layers.py")
