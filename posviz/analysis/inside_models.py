"""Real models seen from inside: a RoPE model's frequency usage, its real-q/k decay, and the
attention-by-distance head classes of SmolLM2 (RoPE, causal) and MiniLM-L6 (learned absolute,
bidirectional) on real text, each beside its controls. Run as heavy jobs and cached on disk.

What runs (torch, imported inside the functions): windows of :data:`WINDOW` tokens of the
bundled King James text (:func:`posviz.data.lab_text.lab_text`), :data:`N_WINDOWS` of them, one
batched forward pass with ``output_attentions=True`` for each of three conditions:

* ``trained``: the checkpoint on the text;
* ``shuffled``: the same tokens shuffled within each window (order destroyed; MiniLM keeps its
  ``[CLS]``/``[SEP]`` in place): what a head does because of position, not because of the words;
* ``untrained``: a model of the same config with random initial weights on the text.

For SmolLM2 hooks on every ``q_proj``/``k_proj`` also take the pre-rotation queries and keys of
the trained run (their means feed :func:`posviz.analysis.rope_usage.decay_curves`), and the
frequency usage is read from the weights (trained and untrained, the untrained one the control).

Results are arrays saved with ``numpy.savez`` (no pickle; loaded with ``allow_pickle=False``)
under ``$HF_HOME/posviz/inside/<key>.npz``, ``key`` the SHA-256 of the weights' hash, the text's,
the window sizes and :data:`ANALYSIS_VERSION`: a page drawn from the cache loads no model.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posviz.analysis.heads import (
    CLASSES,
    attention_by_distance,
    class_counts,
    classify_heads,
    classify_scores,
    head_scores,
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
    check_cache,
    gguf_cache_root,
    load_bundled_model,
    load_smollm2,
    sign_cache,
    smollm2_dequantised,
)
from posviz.tables.bundled import BUNDLED_WEIGHTS_SHA256

#: Bump when what is computed changes: old cache files are then ignored.
ANALYSIS_VERSION = 2
WINDOW = 32  # tokens per window (MiniLM: incl. [CLS] and [SEP])
#: The window lengths a finding is checked at (it holds only where it holds at every one).
WINDOWS = (32, 64, 128, 256)
N_WINDOWS = 8  # windows per condition (spreads are over these)
TEXT_CHARS = 20_000  # the first characters of the King James text that are tokenised
SHUFFLE_SEED = 0
CONDITIONS = ("trained", "shuffled", "untrained")
MODELS = ("smollm2", "minilm")
DECAY_MAX = 256  # distances 0 … DECAY_MAX for the decay curves

OnWait = Callable[[int], None]
ShouldStop = Callable[[], bool]
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class HeadsResult:
    """One model's attention by distance and head scores under the three conditions."""

    model: str  # "smollm2" | "minilm"
    label: str  # what the page calls it
    causal: bool
    distances: np.ndarray  # (D,)
    by_distance: np.ndarray  # (conditions, layers, heads, D), mean over windows
    scores: np.ndarray  # (conditions, classes-1, layers, heads, windows): per-window class scores
    maps: np.ndarray  # (conditions, layers, heads, T, T), mean over windows

    def labels(self, condition: str = "trained") -> np.ndarray:
        """``(layers, heads)`` head classes of the window-mean maps under ``condition``."""
        return classify_heads(self.maps[CONDITIONS.index(condition)], causal=self.causal)

    def window_counts(self, condition: str = "trained") -> dict[str, np.ndarray]:
        """Heads per class in each window alone: ``{class: (windows,)}`` (the counts' spread)."""
        names = [c for c in CLASSES if c != "broad"]
        per = self.scores[CONDITIONS.index(condition)]  # (classes-1, layers, heads, windows)
        labels = classify_scores(dict(zip(names, per, strict=True)), causal=self.causal)
        windows = [class_counts(labels[..., w]) for w in range(labels.shape[-1])]
        return {c: np.array([n[c] for n in windows]) for c in CLASSES}


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


def _forward(loaded: LoadedModel, rows: np.ndarray, *, capture_qk: bool = False) -> dict[str, Any]:
    """Attention maps ``(layers, windows, heads, T, T)`` (and mean pre-rotation q, k per layer)."""
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
    try:
        with torch.no_grad():
            ids = torch.as_tensor(rows)
            out = model(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
    finally:
        for h in hooks:
            h.remove()
    maps = np.stack([a.detach().float().numpy() for a in out.attentions])
    return {"maps": maps, "q": captured["q"], "k": captured["k"]}


def _heads_arrays(maps_by_condition: list[np.ndarray], *, causal: bool) -> dict[str, np.ndarray]:
    names = [c for c in CLASSES if c != "broad"]
    by_distance, scores, mean_maps = [], [], []
    distances = None
    for maps in maps_by_condition:  # (layers, windows, heads, T, T)
        maps = np.moveaxis(maps, 1, -3)  # (layers, heads, windows, T, T)
        distances, mass = attention_by_distance(maps, causal=causal)
        by_distance.append(mass.mean(axis=-2))
        per = head_scores(maps)
        scores.append(np.stack([per[n] for n in names]))
        mean_maps.append(maps.mean(axis=-3))
    return {
        "distances": np.asarray(distances),
        "by_distance": np.stack(by_distance),
        "scores": np.stack(scores),
        "maps": np.stack(mean_maps),
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


def compute_smollm2(
    progress: Progress | None = None, *, window: int = WINDOW, **wait: Any
) -> dict[str, np.ndarray]:
    """The arrays of SmolLM2's :class:`InsideResult` (loads the model: a heavy job's body)."""
    step = progress or (lambda _f, _w: None)
    step(0.05, "Loading SmolLM2 from its float32 cache …")
    trained = load_smollm2(**wait)
    text = lab_text()[:TEXT_CHARS]
    rows = text_windows(trained.tokenizer(text)["input_ids"], window=window, count=N_WINDOWS)
    step(0.3, "Running SmolLM2 on the text …")
    real = _forward(trained, rows, capture_qk=True)
    step(0.5, "Running SmolLM2 on the shuffled text …")
    shuffled = _forward(trained, shuffled_windows(rows, keep_ends=False))
    geo = _geometry(trained.model.config)
    usage = frequency_usage(*_weights(trained), **geo)
    del trained  # one 0.55 GB model in memory at a time
    step(0.7, "Running an untrained model of the same shape …")
    untrained = load_smollm2(random_init=True)
    random = _forward(untrained, rows)
    control = frequency_usage(*_weights(untrained), **geo)
    del untrained
    step(0.9, "Measuring the decay with the model's own queries and keys …")
    group = np.arange(geo["n_heads"]) // (geo["n_heads"] // geo["n_kv_heads"])
    mean_q = np.stack(real["q"]).reshape(-1, geo["n_heads"], geo["head_dim"])
    mean_k = np.stack(real["k"]).reshape(-1, geo["n_kv_heads"], geo["head_dim"])[:, group]
    decay = decay_curves(mean_q, mean_k, np.arange(DECAY_MAX + 1), usage.inv_freq)
    arrays = _heads_arrays([real["maps"], shuffled["maps"], random["maps"]], causal=True)
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
    step(0.4, "Running MiniLM-L6 on the text, shuffled text, and untrained …")
    maps = [
        _forward(trained, rows)["maps"],
        _forward(trained, shuffled_windows(rows, keep_ends=True))["maps"],
        _forward(untrained, rows)["maps"],
    ]
    return _heads_arrays(maps, causal=False)


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


def _signature_path(path: Path) -> Path:
    return path.with_name(path.name + ".sig.json")


def _rebuild(path: Path) -> str:
    return (
        f"Delete it (`rm '{path}' '{_signature_path(path)}'`), then open the page again or run "
        "`python -m posviz inside <model>`: the results are computed again from verified weights."
    )


def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write the results and their signed manifest (:func:`posviz.models.sign_cache`, keyed as
    the lab store is); the results count only once the signature is in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".npz", dir=path.parent)
    sig_tmp = None
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
        manifest = sign_cache({path.name: Path(tmp)}, label=f"inside/{path.name}",
                              key_root=path.parent)  # fmt: skip
        sfd, sig_tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".json", dir=path.parent)
        with os.fdopen(sfd, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=1, sort_keys=True)
        os.replace(tmp, path)
        os.replace(sig_tmp, _signature_path(path))
    finally:
        for leftover in (tmp, sig_tmp):
            if leftover is not None and os.path.exists(leftover):
                os.unlink(leftover)


def _load(path: Path) -> dict[str, np.ndarray] | None:
    """The cached results, verified against their signed manifest on every load.

    ``None`` (computed again) when there is no file, or no signature (an older version's cache).

    Raises:
        CacheTampered: the file or its signature was edited (says how to rebuild it).
    """
    sig = _signature_path(path)
    if not path.is_file() or not sig.is_file():
        return None
    try:
        manifest = json.loads(sig.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    check_cache({path.name: path}, manifest, label=f"inside/{path.name}",
                key_root=path.parent, rebuild=_rebuild(path))  # fmt: skip
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None  # signed yet unreadable (a disk error): computed again


def _result(model: str, a: dict[str, np.ndarray]) -> InsideResult:
    heads = HeadsResult(
        model=model,
        label=_LABELS[model],
        causal=model == "smollm2",
        distances=a["distances"],
        by_distance=a["by_distance"],
        scores=a["scores"],
        maps=a["maps"],
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
