"""Inside real models: which rotary frequencies SmolLM2 uses, its real-q/k decay, and the
positional heads of a RoPE model (SmolLM2) and a learned-absolute one (MiniLM-L6) on real text,
at every window length, beside ablations and controls that can fail."""

import streamlit as st

from posviz.page_models.inside_models import (
    ACTIVATION_WAIT,
    INSTALL,
    MEMORY_NOTE,
    SINKS_LINK,
    SINKS_PAGE,
    THRESHOLD_NOTE,
    WINDOW_OPTIONS,
    activation_view,
    coming_note,
    inside_page,
    shown_window,
    source_usage_view,
    wait_for,
)
from posviz.ui import show_chart, url_radio, url_text, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict, waiting
from posviz.ui.cache import cached_model
from posviz.ui.display import show_charts_side_by_side
from posviz.ui.inside import inside_plan, inside_windows, rope_activation, source_usage
from posviz.ui.routes import page_link

# the answer slot: the verdict and the hero, drawn once both models' results are here
answer = page_top(
    "Inside real models: RoPE frequencies and positional heads",
    "Two real checkpoints, offline: **SmolLM2-135M-Instruct** (Llama architecture, rotary "
    "positions, causal) and the bundled **MiniLM-L6** (BERT, a learned position table added "
    "at the input, bidirectional). Which rotary frequencies does a trained RoPE model use? "
    "Does RoPE's textbook decay with distance hold for its real queries and keys? Which heads "
    "attend by position — to the previous token, to the first token — and does that survive "
    "other window lengths, taking the positions away, and moving the first token?",
)
window = int(
    url_radio(
        "Window length for the charts below (tokens)",
        WINDOW_OPTIONS,
        key="inside_window",
        default=WINDOW_OPTIONS[0],
        help="Every length is computed (the answer above holds only where it holds at all "
        "four); this picks the one the distance and head-class charts show.",
    )
)

# the lengths both models have cached (else the shortest alone) now; the others after drawing
first, coming = inside_plan()
smol = mini = None
with answer:
    with user_errors("SmolLM2"):
        smol = inside_windows("smollm2", wait_for("smollm2", first), first)
    if smol is not None:  # MiniLM-L6 is computed only for the page SmolLM2 can have
        with user_errors("MiniLM-L6"):
            mini = inside_windows("minilm", wait_for("minilm", first), first)
    if smol is None or mini is None:
        st.info(INSTALL)
        st.stop()
    window, note = shown_window(window, list(first), coming=coming)
    if note:
        st.info(note)
    key = "smollm2+minilm@" + ",".join(map(str, first))
    page = cached_model(inside_page, key, (smol, mini), window=window)
    show_verdict(page.verdict)
    if coming:
        st.caption(f":material/hourglass_top: {coming_note(first, coming)}")
    show_hero(page.hero, key="inside_hero", note=page.hero_note)

st.caption(MEMORY_NOTE)
show_chart(page.by_layer, key="inside_by_layer")
st.header(f"Barbero et al.'s measure: frequency use on real queries and keys, {window} tokens")
st.markdown(
    "The chart above reads the weights alone (an upper bound on each pair's part of q·k). "
    "Barbero et al. measured the pairs on the queries and keys the model actually computes: "
    "here, on the same text windows."
)
activation, measuring = None, ACTIVATION_WAIT.format(window=window)
with user_errors("SmolLM2's real queries and keys"):  # a first visit: after the page is drawn
    activation = rope_activation(window, None if coming else measuring)
if activation is None and coming:
    st.caption(f":material/hourglass_top: Computed at the bottom of the page: {measuring}.")
if activation is not None:
    view = cached_model(activation_view, f"rope-activation-{window}", activation)
    show_chart(view.usage, key="inside_act_usage", description=view.usage_note)
    st.caption(view.usage_note)
    show_chart(view.layers, key="inside_act_layers", description=view.layers_note)
    st.caption(view.layers_note)
    show_chart(view.massive, key="inside_act_massive", description=view.massive_note)
    st.caption(view.massive_note)
    with st.expander("How this was measured"):
        st.markdown(view.definitions)
st.header("RoPE's decay with the model's own queries and keys")
show_chart(page.decay, key="inside_decay", description=page.decay_note)
st.markdown(page.decay_note)

st.header("Head classes at every window length")
show_chart(page.across, key="inside_across", description=page.across_note)
st.caption(page.across_note)
page_link(SINKS_PAGE, label=SINKS_LINK, icon=":material/vertical_align_top:")
st.header("Ablations, and a content control that can fail")
st.markdown(page.ablation_note)
st.dataframe(page.ablations, hide_index=True, width="stretch")

st.header(f"Attention by distance on real text, {window} tokens")
for column, figure, key, note in zip(
    st.columns(2),
    page.distance,
    ("inside_dist_smol", "inside_dist_mini"),
    page.distance_notes,
    strict=True,
):
    with column:
        show_chart(figure, key=key, description=note)
        st.caption(note)

st.header(f"Head classes, {window} tokens: RoPE and learned-absolute, side by side")
st.caption(THRESHOLD_NOTE)
show_chart(page.classes, key="inside_classes")
show_charts_side_by_side(
    (page.grids[0], "inside_grid_smol"), (page.grids[1], "inside_grid_mini"), width="content"
)
st.dataframe(page.counts, hide_index=True, width="stretch")
st.markdown(page.story)

st.header("Download the arrays")
st.markdown(
    f"The findings at every length (what `python -m posviz inside MODEL --window N --json` "
    f"prints) and every array behind the {window}-token views, as `.npz` (a zip of `.npy` "
    "files: `np.load(path, allow_pickle=False)`); each chart's own data is in its Export menu."
)
for column, (name, data, mime) in zip(st.columns(3), page.downloads, strict=True):
    with column:
        st.download_button(name, data=lambda d=data: d, file_name=name, mime=mime,
                           key=f"inside_dl_{name}", on_click="ignore",
                           icon=":material/download:")  # fmt: skip

st.header("Any RoPE model: frequency usage from its weights alone")
st.markdown(
    "The frequency usage needs only each layer's `q_proj` and `k_proj` weights and the head "
    "geometry in `config.json`, read by byte range: no model is built, so it works for models "
    "far too large to run here. Type a Llama/Qwen/Mistral-style model id (online, or already "
    "in the Hugging Face cache) or a local model folder."
)
source = url_text(
    "Model id or folder", key="inside_src", default="", max_chars=200,
    placeholder="e.g. Qwen/Qwen2.5-0.5B or HuggingFaceTB/SmolLM2-135M",
).strip()  # fmt: skip
if source:
    with waiting(f"Reading {source}'s q/k weights by byte range …"), user_errors(source):
        usage, layers = source_usage(source)
        figure, caption = source_usage_view(usage, source, layers)
        show_chart(figure, key="inside_src_chart", description=caption)
        st.caption(caption)

next_question("pages/inside_models.py")

# The page is drawn: what it still lacks now, each part cached as it is done, then the page
# again with it (a visitor who leaves cancels; the next one finds the parts done). The page
# reruns only once the cache holds them: a cache folder it cannot write never loops.
if coming and activation is None:
    with user_errors("SmolLM2's real queries and keys"):
        rope_activation(window, measuring)
        if rope_activation(window, None) is not None:
            st.rerun()
if coming:
    with user_errors("The longer windows"):
        for model in ("smollm2", "minilm"):
            inside_windows(model, wait_for(model, coming, later=True), coming)
        if not inside_plan()[1]:
            st.rerun()
