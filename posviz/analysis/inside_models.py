"""Real models seen from inside: a RoPE model's frequency usage, its real-q/k decay, and the
attention-by-distance head classes of SmolLM2 (RoPE, causal) and MiniLM-L6 (learned absolute,
bidirectional) on real text, each beside its controls. Run as heavy jobs and cached on disk.

What runs (torch, imported inside the functions): windows of :data:`WINDOW` tokens of the
bundled King James text (:func:`posviz.data.lab_text.lab_text`), :data:`N_WINDOWS` of them, one
batched forward pass with ``output_attentions=True`` for each of three conditions:

* ``trained``: the checkpoint on the text;
* ``shuffled``: the same tokens shuffled within each window (order destroyed; MiniLM keeps its
  ``[CLS]``/``[SEP]`` in place): what a head does because of position, not because of the words;
* ``untrained``: a model of the same config with random initial weights on the text;
* ``ablated``: the trained model with its positions taken away: SmolLM2 with RoPE off (every
  ``position_id`` 0, so no query or key is rotated), MiniLM-L6 with its learned position table
  zeroed (a forward hook returns zeros for it). A head whose class vanishes here attends by
  position; one that keeps it does not need the positions.

And a content control that *can* fail (``moved``), whose scores are kept per window: SmolLM2
reads the same windows after :data:`OFFSET` tokens of other text (the window's first token now
sits at slot :data:`OFFSET`), MiniLM-L6 the same windows with ``[CLS]`` moved from slot 0 to the
middle. A first-token head that follows the *token* keeps its attention on it; one that follows
the *first slot* moves to whatever sits there.

For SmolLM2 hooks on every ``q_proj``/``k_proj`` also take the pre-rotation queries and keys of
the trained run (their means feed :func:`posviz.analysis.rope_usage.decay_curves`), and the
frequency usage is read from the weights (trained and untrained, the untrained one the control).

Results are arrays saved with ``numpy.savez`` (no pickle; loaded with ``allow_pickle=False``)
under ``$HF_HOME/posviz/inside/<key>.npz``, ``key`` the SHA-256 of the weights' hash, the text's,
the window sizes and :data:`ANALYSIS_VERSION`, with a signed manifest checked on every load: a
page drawn from the cache loads no model. Windows are run a few at a time and each layer's maps
are reduced at once (scores, distance profiles), so memory grows with one layer, not all.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posviz.analysis.heads import (
    CLASSES,
    POSITIONAL_PEAK,
    THRESHOLDS,
    attention_by_distance,
    class_counts,
    classify_heads,
    classify_scores,
    head_scores,
    positional_heads,
)
from posviz.analysis.rope_usage import (
    DecayCurves,
    FrequencyUsage,
    decay_curves,
    frequency_usage,
)
from posviz.data.lab_text import SHA256 as TEXT_SHA256
from posviz.data.lab_text import lab_text
from posviz.governor import heavy_work
from posviz.jobs import cached_flight, job_slot
from posviz.models import (
    SMOLLM2,
    LoadedModel,
    gguf_cache_root,
    load_bundled_model,
    load_signed_npz,
    load_smollm2,
    save_signed_npz,
    signed_npz_signature,
    smollm2_dequantised,
)
from posviz.tables.bundled import BUNDLED_WEIGHTS_SHA256

#: Bump when what is computed changes: old cache files are then ignored.
ANALYSIS_VERSION = 3
WINDOW = 32  # tokens per window (MiniLM: incl. [CLS] and [SEP])
#: The window lengths a finding is checked at (it holds only where it holds at every one).
WINDOWS = (32, 64, 128, 256)
N_WINDOWS = 8  # windows per condition (spreads are over these)
TEXT_CHARS = 20_000  # the first characters of the King James text that are tokenised
SHUFFLE_SEED = 0
CONDITIONS = ("trained", "shuffled", "untrained", "ablated")
#: What the ``ablated`` condition does to each model.
ABLATIONS = {
    "smollm2": "RoPE off (every position id 0)",
    "minilm": "position table zeroed",
}
#: What the ``moved`` content control does, and its two scored keys (slot 0, then the token).
MOVED = {
    "smollm2": ("the windows after 16 tokens of other text", "the window's first token"),
    "minilm": ("[CLS] moved to the middle slot", "[CLS]"),
}
OFFSET = 16  # tokens of other text before each window in SmolLM2's moved control
#: Attention cells a chunk of windows may return at once (8 windows of 128 tokens): longer
#: windows run in smaller chunks, so a 256-token run holds about 0.3 GB of maps, not 0.6.
CHUNK_CELLS = 8 * 128 * 128
MODELS = ("smollm2", "minilm")
DECAY_MAX = 256  # distances 0 … DECAY_MAX for the decay curves

OnWait = Callable[[int], None]
ShouldStop = Callable[[], bool]
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class HeadsResult:
    """One model's attention by distance and head scores under the conditions
    (:data:`CONDITIONS`; an older or smaller result may hold fewer)."""

    model: str  # "smollm2" | "minilm"
    label: str  # what the page calls it
    causal: bool
    distances: np.ndarray  # (D,)
    by_distance: np.ndarray  # (conditions, layers, heads, D), mean over windows
    scores: np.ndarray  # (conditions, classes-1, layers, heads, windows): per-window class scores
    maps: np.ndarray | None = None  # (conditions, layers, heads, T, T), mean over windows
    #: (conditions, layers, heads, windows, D): by distance per window, special keys left out
    #: (key 0, the sink; for MiniLM also [SEP]); NaN where no query has such a key
    content: np.ndarray | None = None
    #: (2, layers, heads, windows): the moved control's mean attention on slot 0 and on the
    #: moved token (:data:`MOVED`)
    moved: np.ndarray | None = None

    @property
    def n_heads(self) -> int:
        """Heads in the model (layers × heads)."""
        return int(np.prod(self.scores.shape[2:4]))

    @property
    def window(self) -> int:
        """Tokens per window."""
        return int(self.distances.max()) + 1

    def labels(self, condition: str = "trained") -> np.ndarray:
        """``(layers, heads)`` head classes of the window-mean maps under ``condition``.

        The class scores are means over queries, so the window-mean map's scores are the mean of
        the windows' scores (used when the maps themselves were not kept)."""
        c = CONDITIONS.index(condition)
        if self.maps is not None:
            return classify_heads(self.maps[c], causal=self.causal)
        names = [n for n in CLASSES if n != "broad"]
        mean = self.scores[c].mean(axis=-1)
        return classify_scores(dict(zip(names, mean, strict=True)), causal=self.causal)

    def window_counts(self, condition: str = "trained") -> dict[str, np.ndarray]:
        """Heads per class in each window alone: ``{class: (windows,)}`` (the counts' spread)."""
        names = [c for c in CLASSES if c != "broad"]
        per = self.scores[CONDITIONS.index(condition)]  # (classes-1, layers, heads, windows)
        labels = classify_scores(dict(zip(names, per, strict=True)), causal=self.causal)
        windows = [class_counts(labels[..., w]) for w in range(labels.shape[-1])]
        return {c: np.array([n[c] for n in windows]) for c in CLASSES}

    def positional(self, condition: str = "trained") -> tuple[np.ndarray, np.ndarray]:
        """:func:`posviz.analysis.heads.positional_heads` under ``condition`` (its text windows
        against the shuffled ones; ``ablated``: the ablated windows against themselves, the
        pattern on each text window): ``(positional (layers, heads), peak distance index)``."""
        if self.content is None:
            raise ValueError("This result has no per-window distance profiles; recompute it.")
        text = self.content[CONDITIONS.index(condition)]
        other = self.content[CONDITIONS.index("shuffled")] if condition == "trained" else text
        return positional_heads(text, other)

    def positional_kept(self) -> int:
        """Positional heads (trained) that keep their distance under the ablation: on every
        ablated window at least the positional share at the same ``Δ*``."""
        positional, peak = self.positional("trained")
        if self.content is None:
            return 0
        ablated = np.nan_to_num(self.content[CONDITIONS.index("ablated")], nan=0.0)
        at = np.take_along_axis(ablated, peak[..., None, None], axis=-1)[..., 0]
        return int((positional & (at.min(axis=-1) >= POSITIONAL_PEAK)).sum())

    def moved_counts(self, threshold: float = 0.5) -> tuple[int, int]:
        """Heads with more than ``threshold`` mean attention on slot 0, and on the moved token,
        in the moved control (the first-token class's own threshold)."""
        if self.moved is None:
            raise ValueError("This result has no moved control; recompute it.")
        mean = self.moved.mean(axis=-1)
        return int((mean[0] > threshold).sum()), int((mean[1] > threshold).sum())


@dataclass(frozen=True)
class InsideResult:
    """Everything the inside-models page shows for one model (``rope``/``decay`` only for RoPE)."""

    heads: HeadsResult
    rope: FrequencyUsage | None = None
    rope_control: FrequencyUsage | None = None  # the same shape's random initial weights
    decay: DecayCurves | None = None


# ------------------------------------------------------------------------------ text windows


def text_windows(
    ids: list[int], *, window: int, count: int, cls: int | None = None, sep: int | None = None
) -> np.ndarray:
    """``(count, window)`` consecutive non-overlapping windows of token ids (with ``cls``/``sep``
    around ``window − 2`` text tokens when both are given).

    Raises:
        ValueError: too few tokens.
    """
    inner = window - 2 if cls is not None and sep is not None else window
    if len(ids) < inner * count:
        raise ValueError(f"The text has {len(ids)} tokens; {count} windows need {inner * count}.")
    rows = np.asarray(ids[: inner * count], dtype=np.int64).reshape(count, inner)
    if inner != window:
        rows = np.concatenate(
            [np.full((count, 1), cls), rows, np.full((count, 1), sep)], axis=1
        ).astype(np.int64)
    return rows


def shuffled_windows(rows: np.ndarray, *, keep_ends: bool, seed: int = SHUFFLE_SEED) -> np.ndarray:
    """Each window's tokens in a random order (``keep_ends``: first and last stay in place)."""
    rng = np.random.default_rng(seed)
    out = rows.copy()
    lo, hi = (1, rows.shape[1] - 1) if keep_ends else (0, rows.shape[1])
    for row in out:
        row[lo:hi] = rng.permutation(row[lo:hi])
    return out


# ------------------------------------------------------------------------------ forward passes


def _chunks(rows: np.ndarray) -> list[np.ndarray]:
    """``rows`` split into equal chunks of at most :data:`CHUNK_CELLS` attention cells."""
    size = rows.shape[0]
    while size > 1 and size * rows.shape[1] ** 2 > CHUNK_CELLS and rows.shape[0] % (size // 2) == 0:
        size //= 2
    return [rows[i : i + size] for i in range(0, rows.shape[0], size)]


def _attentions(
    loaded: LoadedModel,
    rows: np.ndarray,
    *,
    positions: np.ndarray | None = None,
    zero_positions: bool = False,
    capture_qk: bool = False,
) -> Any:
    """Yield, chunk by chunk, an iterator over each layer's attention maps ``(windows, heads, T,
    T)`` (float64, converted as it is read).

    ``positions``: the ``position_ids`` to pass (RoPE off: all zeros); ``zero_positions``: a
    forward hook makes BERT's position-embedding lookup return zeros (the table zeroed, without
    touching the weights); ``capture_qk``: hooks on every ``q_proj``/``k_proj`` keep their
    pre-rotation outputs' mean, put in ``loaded``-independent lists yielded last as
    ``{"q": [...], "k": [...]}`` (one mean per layer over every token of every window).
    """
    import torch  # heavy: only here

    model = loaded.model
    captured: dict[str, list[np.ndarray]] = {"q": [], "k": []}
    hooks = []
    if capture_qk:
        for layer in model.model.layers:
            for name in ("q", "k"):
                proj = getattr(layer.self_attn, f"{name}_proj")

                def hook(_m: Any, _i: Any, out: Any, name: str = name) -> None:
                    captured[name].append(out.detach().double().mean(dim=(0, 1)).numpy())

                hooks.append(proj.register_forward_hook(hook))
    if zero_positions:
        table = model.embeddings.position_embeddings
        hooks.append(table.register_forward_hook(lambda _m, _i, out: torch.zeros_like(out)))
    try:
        chunks = _chunks(rows)
        for chunk_index, chunk in enumerate(chunks):
            ids = torch.as_tensor(chunk)
            extra = {}
            if positions is not None:
                at = positions[chunk_index * len(chunk) : (chunk_index + 1) * len(chunk)]
                extra["position_ids"] = torch.as_tensor(at)
            with torch.no_grad():
                out = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                            output_attentions=True, **extra)  # fmt: skip
            # one layer at a time in float64 (the reducers' precision), the rest left in torch
            yield (a.detach().double().numpy() for a in out.attentions)
            del out
    finally:
        for h in hooks:
            h.remove()
    if capture_qk:
        n = len(chunks)
        layers = len(captured["q"]) // n
        yield {
            name: [np.mean(captured[name][li::layers], axis=0) for li in range(layers)]
            for name in ("q", "k")
        }


def _reduce(
    loaded: LoadedModel, rows: np.ndarray, *, causal: bool, skip: tuple[int, ...], **run: Any
) -> dict[str, Any]:
    """One condition's per-window scores ``(classes-1, layers, heads, windows)``, attention by
    distance ``(layers, heads, windows, D)`` with and without the ``skip`` keys, and (with
    ``capture_qk``) the mean q and k per layer, each layer's maps reduced as they come."""
    names = [c for c in CLASSES if c != "broad"]
    scores, full, content, extra = [], [], [], {}
    for chunk in _attentions(loaded, rows, **run):
        if isinstance(chunk, dict):
            extra = chunk
            continue
        s_layers, f_layers, c_layers = [], [], []
        for a in chunk:  # (windows, heads, T, T)
            a = np.moveaxis(a, 0, 1)  # (heads, windows, T, T)
            per = head_scores(a)
            s_layers.append(np.stack([per[n] for n in names]))
            distances, mass = attention_by_distance(a, causal=causal)
            f_layers.append(mass)
            c_layers.append(attention_by_distance(a, causal=causal, skip_keys=skip)[1])
        scores.append(np.stack(s_layers, axis=1))  # (classes-1, layers, heads, w)
        full.append(np.stack(f_layers))  # (layers, heads, w, D)
        content.append(np.stack(c_layers))
    return {
        "distances": distances,
        "scores": np.concatenate(scores, axis=-1),
        "by_distance": np.concatenate(full, axis=-2),
        "content": np.concatenate(content, axis=-2),
        **extra,
    }


def _key_scores(
    loaded: LoadedModel, rows: np.ndarray, *, keys: tuple[int, int], queries: np.ndarray
) -> np.ndarray:
    """``(2, layers, heads, windows)``: mean attention of the ``queries`` on each of ``keys``."""
    out = []
    for chunk in _attentions(loaded, rows):
        per_layer = [
            np.stack([a[:, :, queries, k].mean(axis=-1).T for k in keys]) for a in chunk
        ]  # each (2, heads, w)
        out.append(np.stack(per_layer, axis=1))
    return np.concatenate(out, axis=-1)


def _heads_arrays(by_condition: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The cached arrays from each condition's :func:`_reduce` (in :data:`CONDITIONS` order)."""
    return {
        "distances": np.asarray(by_condition[0]["distances"]),
        "by_distance": np.stack([c["by_distance"].mean(axis=-2) for c in by_condition]),
        "scores": np.stack([c["scores"] for c in by_condition]),
        "content": np.stack([c["content"] for c in by_condition]).astype(np.float32),
    }


def _weights(loaded: LoadedModel) -> tuple[list[np.ndarray], list[np.ndarray]]:
    layers = loaded.model.model.layers
    q = [layer.self_attn.q_proj.weight.detach().double().numpy() for layer in layers]
    k = [layer.self_attn.k_proj.weight.detach().double().numpy() for layer in layers]
    return q, k


def _geometry(config: Any) -> dict[str, Any]:
    n_heads = int(config.num_attention_heads)
    head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // n_heads)
    params = getattr(config, "rope_parameters", None) or {}
    base = float(getattr(config, "rope_theta", None) or params.get("rope_theta", 10000.0))
    return {
        "n_heads": n_heads,
        "n_kv_heads": int(getattr(config, "num_key_value_heads", None) or n_heads),
        "head_dim": head_dim,
        "base": base,
    }


def smollm2_conditions(
    trained: LoadedModel,
    untrained: Callable[[], LoadedModel],
    rows: np.ndarray,
    prefix: np.ndarray,
    step: Progress,
) -> dict[str, Any]:
    """A causal RoPE model's four conditions and its moved control on ``rows`` (the windows)
    and ``prefix`` (:data:`OFFSET` other tokens); ``untrained`` builds the control model once
    the trained one's runs are done. Works on any Llama-style ``transformers`` model."""
    n, t = rows.shape
    step(0.3, f"Running SmolLM2 on {n} windows of {t} tokens …")
    real = _reduce(trained, rows, causal=True, skip=(0,), capture_qk=True)
    step(0.45, "Running SmolLM2 on the shuffled windows …")
    shuffled = _reduce(trained, shuffled_windows(rows, keep_ends=False), causal=True, skip=(0,))
    step(0.55, "Running SmolLM2 with RoPE off (every position id 0) …")
    ablated = _reduce(trained, rows, causal=True, skip=(0,), positions=np.zeros_like(rows))
    step(0.65, f"Running SmolLM2 on the windows after {prefix.size} other tokens …")
    shifted = np.concatenate([np.tile(prefix, (n, 1)), rows], axis=1)
    moved = _key_scores(trained, shifted, keys=(0, prefix.size),
                        queries=np.arange(prefix.size + 1, prefix.size + t))  # fmt: skip
    step(0.75, "Running an untrained model of the same shape …")
    model = untrained()
    random = _reduce(model, rows, causal=True, skip=(0,))
    del model
    arrays = _heads_arrays([real, shuffled, random, ablated])
    arrays["moved"] = moved
    return arrays | {"q": real["q"], "k": real["k"]}


def compute_smollm2(
    progress: Progress | None = None, *, window: int = WINDOW, **wait: Any
) -> dict[str, np.ndarray]:
    """The arrays of SmolLM2's :class:`InsideResult` (loads the model: a heavy job's body)."""
    step = progress or (lambda _f, _w: None)
    step(0.05, "Loading SmolLM2 from its float32 cache …")
    trained = load_smollm2(**wait)
    text = lab_text()[:TEXT_CHARS]
    ids = trained.tokenizer(text)["input_ids"]
    rows = text_windows(ids, window=window, count=N_WINDOWS)
    prefix = np.asarray(ids[window * N_WINDOWS : window * N_WINDOWS + OFFSET], dtype=np.int64)
    geo = _geometry(trained.model.config)
    usage = frequency_usage(*_weights(trained), **geo)
    controls: list[FrequencyUsage] = []

    def untrained() -> LoadedModel:
        model = load_smollm2(random_init=True)
        controls.append(frequency_usage(*_weights(model), **geo))
        return model

    arrays = smollm2_conditions(trained, untrained, rows, prefix, step)
    del trained  # one 0.55 GB model in memory at a time
    control = controls[0]
    step(0.9, "Measuring the decay with the model's own queries and keys …")
    group = np.arange(geo["n_heads"]) // (geo["n_heads"] // geo["n_kv_heads"])
    mean_q = np.stack(arrays.pop("q")).reshape(-1, geo["n_heads"], geo["head_dim"])
    mean_k = np.stack(arrays.pop("k")).reshape(-1, geo["n_kv_heads"], geo["head_dim"])[:, group]
    decay = decay_curves(mean_q, mean_k, np.arange(DECAY_MAX + 1), usage.inv_freq)
    arrays |= {
        "q_norms": usage.q_norms,
        "k_norms": usage.k_norms,
        "share": usage.share,
        "inv_freq": usage.inv_freq,
        "threshold": np.float64(usage.threshold),
        "control_q_norms": control.q_norms,
        "control_k_norms": control.k_norms,
        "control_share": control.share,
        "decay_distances": decay.distances,
        "decay_real": decay.real,
        "decay_ones": decay.ones,
        "decay_gauss_mean": decay.gaussian_mean,
        "decay_gauss_std": decay.gaussian_std,
    }
    return arrays


def minilm_conditions(
    trained: LoadedModel, untrained: LoadedModel, rows: np.ndarray, step: Progress
) -> dict[str, np.ndarray]:
    """A BERT-style model's four conditions and its moved control on ``rows`` (``[CLS]`` first,
    ``[SEP]`` last); works on any ``transformers`` BERT with eager attention."""
    t = rows.shape[1]
    skip = (0, t - 1)
    step(0.4, "Running MiniLM-L6 on the text, shuffled, untrained and position-zeroed …")
    conditions = [
        _reduce(trained, rows, causal=False, skip=skip),
        _reduce(trained, shuffled_windows(rows, keep_ends=True), causal=False, skip=skip),
        _reduce(untrained, rows, causal=False, skip=skip),
        _reduce(trained, rows, causal=False, skip=skip, zero_positions=True),
    ]
    step(0.8, "Running MiniLM-L6 with [CLS] moved to the middle …")
    middle = t // 2
    moved_rows = np.concatenate([rows[:, 1 : middle + 1], rows[:, :1], rows[:, middle + 1 :]],
                                axis=1)  # fmt: skip
    queries = np.array([i for i in range(t) if i not in (0, middle)])
    arrays = _heads_arrays(conditions)
    arrays["moved"] = _key_scores(trained, moved_rows, keys=(0, middle), queries=queries)
    return arrays


def compute_minilm(
    progress: Progress | None = None, *, window: int = WINDOW, **_wait: Any
) -> dict[str, np.ndarray]:
    """The arrays of MiniLM-L6's :class:`InsideResult` (attention only: it has no rotary pairs)."""
    import torch  # heavy: only here
    from transformers import AutoModel

    step = progress or (lambda _f, _w: None)
    step(0.1, "Loading the bundled MiniLM-L6 …")
    trained = load_bundled_model()
    if getattr(trained.model.config, "_attn_implementation", "eager") != "eager":
        trained.model.set_attn_implementation("eager")  # output_attentions needs eager
    torch.manual_seed(0)
    untrained = LoadedModel(
        AutoModel.from_config(trained.model.config, attn_implementation="eager").eval(),
        trained.tokenizer, "MiniLM-L6, untrained", "bert", trained.n_layers, trained.d_model,
    )  # fmt: skip
    tok = trained.tokenizer
    text = lab_text()[:TEXT_CHARS]
    ids = tok(text, add_special_tokens=False)["input_ids"]
    rows = text_windows(
        ids, window=window, count=N_WINDOWS, cls=tok.cls_token_id, sep=tok.sep_token_id
    )
    return minilm_conditions(trained, untrained, rows, step)


# ---------------------------------------------------------------------------- cache and job

_WEIGHTS_SHA = {"smollm2": SMOLLM2.sha256, "minilm": BUNDLED_WEIGHTS_SHA256}
_LABELS = {"smollm2": "SmolLM2-135M-Instruct (RoPE)", "minilm": "MiniLM-L6 (learned absolute)"}
_COMPUTE = {"smollm2": compute_smollm2, "minilm": compute_minilm}


def check_window(window: int) -> int:
    """``window`` if it is one of :data:`WINDOWS`, else a ValueError naming them."""
    if window not in WINDOWS:
        raise ValueError(
            f"No {window}-token windows; choose one of {', '.join(map(str, WINDOWS))}."
        )
    return window


def cache_key(model: str, window: int = WINDOW) -> str:
    """SHA-256 naming this model's results: weights, text, windows and code version."""
    record = {
        "weights": _WEIGHTS_SHA[model],
        "text": TEXT_SHA256,
        "chars": TEXT_CHARS,
        "window": check_window(window),
        "windows": N_WINDOWS,
        "seed": SHUFFLE_SEED,
        "version": ANALYSIS_VERSION,
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def results_path(model: str, *, root: Path | None = None, window: int = WINDOW) -> Path:
    """Where ``model``'s results are cached (next to the dequantised checkpoints)."""
    name = f"{model}-{cache_key(model, window)[:24]}.npz"
    return (root or gguf_cache_root().parent / "inside") / name


def _rebuild(path: Path) -> str:
    return (
        f"Delete it (`rm '{path}' '{signed_npz_signature(path)}'`), then open the page again or "
        "run `python -m posviz inside <model>`: the results are computed again from verified "
        "weights."
    )


def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write the results and their signed manifest (:func:`posviz.models.save_signed_npz`)."""
    save_signed_npz(path, arrays, label=f"inside/{path.name}")


def _load(path: Path) -> dict[str, np.ndarray] | None:
    """The cached results, verified on every load (:func:`posviz.models.load_signed_npz`)."""
    return load_signed_npz(path, label=f"inside/{path.name}", rebuild=_rebuild(path))


def _result(model: str, a: dict[str, np.ndarray]) -> InsideResult:
    heads = HeadsResult(
        model=model,
        label=_LABELS[model],
        causal=model == "smollm2",
        distances=a["distances"],
        by_distance=a["by_distance"],
        scores=a["scores"],
        maps=a.get("maps"),
        content=a.get("content"),
        moved=a.get("moved"),
    )
    if "share" not in a:
        return InsideResult(heads)
    threshold = float(a["threshold"])
    rope = FrequencyUsage(a["q_norms"], a["k_norms"], a["share"], a["inv_freq"], threshold)
    control = FrequencyUsage(
        a["control_q_norms"], a["control_k_norms"], a["control_share"], a["inv_freq"], threshold
    )
    decay = DecayCurves(
        a["decay_distances"], a["decay_real"], a["decay_ones"],
        a["decay_gauss_mean"], a["decay_gauss_std"],
    )  # fmt: skip
    return InsideResult(heads, rope, control, decay)


def cached_inside(
    model: str, *, root: Path | None = None, window: int = WINDOW
) -> InsideResult | None:
    """``model``'s results if they are in the disk cache (no model is loaded), else ``None``."""
    if model not in MODELS:
        raise ValueError(f"No inside view of {model!r}; known: {', '.join(MODELS)}.")
    arrays = _load(results_path(model, root=root, window=window))
    return None if arrays is None else _result(model, arrays)


def inside_results(
    model: str,
    *,
    root: Path | None = None,
    on_wait: OnWait | None = None,
    should_stop: ShouldStop | None = None,
    progress: Progress | None = None,
    window: int = WINDOW,
) -> InsideResult:
    """``model``'s :class:`InsideResult`: from the disk cache, else computed once as a heavy job
    (one per model at a time in a process; a ``job_slot("probe")``, governed threads).

    Raises:
        ValueError: unknown model, packages missing (says how to install them), bad files.
        posviz.jobs.JobCancelled: ``should_stop()`` turned true while queued.
    """

    def compute() -> InsideResult:
        if model == "smollm2":  # its own job slot first: slots do not nest
            if progress is not None:
                progress(0.02, "Checking SmolLM2's file and dequantising it (once) …")
            smollm2_dequantised(on_wait=on_wait, should_stop=should_stop)
        with job_slot("probe", on_wait=on_wait, should_stop=should_stop), heavy_work():
            arrays = _COMPUTE[model](progress, window=window)
        try:
            _save(results_path(model, root=root, window=window), arrays)
        except OSError as exc:  # a cache folder it cannot write: the answer is still shown
            logging.getLogger(__name__).warning(
                "could not cache %s's results (computed again next time): %s", model, exc
            )
        return _result(model, arrays)

    return cached_flight(
        ("inside", model, check_window(window)),
        lambda: cached_inside(model, root=root, window=window),
        compute,
        on_wait=on_wait,
        should_stop=should_stop,
    )


def tails(h: HeadsResult) -> dict[str, float]:
    """What the distance chart's ends are, in mean attention over the heads (trained): the
    causal chart's ``Δ = T−1`` is ``A[T−1, 0]`` alone, the last query on the sink; the
    bidirectional one's ``±(T−1)`` are ``[SEP]`` → ``[CLS]`` and ``[CLS]`` → ``[SEP]``."""
    flat = h.by_distance[0].reshape(-1, h.distances.size).mean(axis=0)
    out = {"distance": int(h.distances[-1]), "last_on_first": float(flat[-1])}
    if not h.causal:
        out["first_on_last"] = float(flat[0])
    return out


def results_npz(result: InsideResult) -> bytes:
    """Every array behind one window length's views as a ``.npz`` (a zip of ``.npy`` files, no
    pickle: ``np.load(path, allow_pickle=False)``), names as in the cache plus ``conditions``."""
    import io

    h = result.heads
    arrays: dict[str, np.ndarray] = {
        "conditions": np.asarray(CONDITIONS[: h.scores.shape[0]]),
        "classes": np.asarray([c for c in CLASSES if c != "broad"]),
        "distances": h.distances,
        "by_distance": h.by_distance,
        "scores": h.scores,
    }
    for name in ("content", "moved", "maps"):
        if getattr(h, name) is not None:
            arrays[name] = getattr(h, name)
    if result.rope is not None:
        arrays |= {"share": result.rope.share, "inv_freq": result.rope.inv_freq}
    if result.rope_control is not None:
        arrays["control_share"] = result.rope_control.share
    if result.decay is not None:
        arrays |= {"decay_distances": result.decay.distances, "decay_real": result.decay.real}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def windows_up_to(longest: int) -> tuple[int, ...]:
    """The lengths of :data:`WINDOWS` a server computes: those up to ``longest`` tokens
    (``POSVIZ_INSIDE_MAX_WINDOW``: a 256-token window of SmolLM2 needs about 2 GB), never none."""
    return tuple(w for w in WINDOWS if w <= longest) or WINDOWS[:1]


def cached_windows(model: str, *, root: Path | None = None) -> dict[int, InsideResult]:
    """The window lengths whose results are in the disk cache (no model is loaded)."""
    found = {w: cached_inside(model, root=root, window=w) for w in WINDOWS}
    return {w: r for w, r in found.items() if r is not None}


def inside_all_windows(
    model: str,
    *,
    root: Path | None = None,
    on_wait: OnWait | None = None,
    should_stop: ShouldStop | None = None,
    progress: Progress | None = None,
    windows: tuple[int, ...] = WINDOWS,
) -> dict[int, InsideResult]:
    """``model``'s results at every window length: the cached ones loaded, the others computed
    one after another (each cached as soon as it is done, so an interrupted run keeps what it
    finished); ``progress`` is told the window and its place (the page adds the time elapsed)."""
    out: dict[int, InsideResult] = {}
    for place, window in enumerate(windows):

        def step(fraction: float, what: str, place: int = place, window: int = window) -> None:
            if progress is not None:
                progress(
                    (place + fraction) / len(windows),
                    f"{window}-token windows ({place + 1} of {len(windows)}): {what}",
                )

        out[window] = inside_results(model, root=root, on_wait=on_wait, should_stop=should_stop,
                                     progress=step, window=window)  # fmt: skip
    return out


def findings(result: InsideResult) -> dict[str, Any]:
    """One window length's findings as plain JSON-able numbers: head classes of the window-mean
    maps under each condition and in each window alone (the spread: min … max over the
    :data:`N_WINDOWS` windows), positional heads (:func:`posviz.analysis.heads.positional_heads`)
    trained and ablated, the moved content control, the sink's share of the distance chart's last
    point and, for RoPE, the weight-norm proxy's quarter shares."""
    h = result.heads
    out: dict[str, Any] = {"model": h.model, "label": h.label, "window": h.window,
                           "windows": int(h.scores.shape[-1]), "heads": h.n_heads}  # fmt: skip
    for condition in CONDITIONS[: h.scores.shape[0]]:
        per = h.window_counts(condition)
        block: dict[str, Any] = {
            "pooled": class_counts(h.labels(condition)),
            "per_window": {name: [int(v) for v in per[name]] for name in per},
            "per_window_range": {
                name: [int(per[name].min()), int(per[name].max())] for name in per
            },
        }
        if h.content is not None and condition in ("trained", "ablated"):
            positional, peak = h.positional(condition)
            distances = h.distances[peak[positional]]
            block["positional"] = int(positional.sum())
            block["positional_at"] = {int(d): int((distances == d).sum())
                                      for d in np.unique(distances)}  # fmt: skip
            if condition == "ablated":
                block["positional_kept"] = h.positional_kept()
        if condition == "ablated":
            block["what"] = ABLATIONS[h.model]
        out[condition] = block
    if h.moved is not None:
        slot0, token = h.moved_counts()
        what, name = MOVED[h.model]
        out["moved"] = {"what": what, "on_slot_0": slot0, "on_the_token": token,
                        "token": name, "threshold": THRESHOLDS["first-token (sink)"]}  # fmt: skip
    out["tails"] = tails(h)
    rope = result.rope
    if rope is not None:
        out["frequency_proxy"] = {
            "fastest_quarter_share": float(rope.band_share(slow=False)),
            "slowest_quarter_share": float(rope.band_share(slow=True)),
            "unused_fraction": float(rope.unused.mean()),
            "threshold": float(rope.threshold),
        }
    return out
