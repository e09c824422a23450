"""The family comparison: every encoding family reduced to the same three curves over distance.

For each chosen family (see :mod:`posviz.analysis.families` for the measures)::

    similarity(k)  how alike the signal at distance k is to the one at 0   (1 at k = 0)
    margin(k)      1 − max_{j≠k} cos(s_k, s_j)                              (0 = indistinguishable)
    unseen(k)      share of the signal at k that training up to L never produced

plus a summary row per family read off those curves at ``k = L`` and ``k = 2L``. The rows are the
family registry's (:mod:`posviz.encodings.families`): one per family with a
:class:`~posviz.encodings.families.ComparisonSignal`, computed by the signal's kind (angles, a
learned table, a per-head bias, buckets), never by the family's name, so a new family of an
existing kind needs no change here. A family whose settings are invalid is left out and its
``ValueError`` message kept in ``errors``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from posviz.analysis import families as fam
from posviz.encodings.families import ComparisonSignal, compared_families, family
from posviz.encodings.rope import RopeFrequencies, manual_scaling, rope_frequencies, rope_kernel

NO_SCALING = "none"
SCALINGS = (NO_SCALING, "linear", "dynamic", "yarn", "llama3")
SINUSOID_BASE = 10000.0  # Vaswani et al.'s, fixed: the Compare page varies only the width
MAX_MARGIN_ITEMS = 2048  # the margin needs an (m, m) cosine matrix


def __getattr__(name: str) -> tuple[str, ...]:
    """``FAMILIES``: the family ids with a Compare row, in registry order, read from the registry
    when asked (:func:`posviz.encodings.families.compared_families`), never a copy taken at import:
    a family registered later is compared too."""
    if name == "FAMILIES":
        return compared_families()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class CompareSettings:
    """The knobs of the comparison (keyword-only; the defaults are the page's).

    ``rope_scaling`` (one of :data:`SCALINGS`) adds a scaled curve to every family whose signal is
    ``scalable`` (RoPE); ``"none"`` adds none.
    """

    trained_length: int = 512
    n_distances: int = 1536
    sinusoid_width: int = 384
    rope_head_dim: int = 64
    rope_base: float = 10000.0
    rope_scaling: str = "yarn"
    rope_factor: float = 4.0
    alibi_heads: int = 8
    t5_buckets: int = 32
    t5_max_distance: int = 128


@dataclass(frozen=True)
class LearnedTable:
    """A learned absolute table to compare: ``matrix`` ``(n_positions, d_model)`` and its margin
    over the first rows (computed by the caller, which may cache it)."""

    label: str
    matrix: np.ndarray
    margin: np.ndarray


@dataclass
class FamilyComparison:
    """Curves per family on shared axes, and one summary row per family.

    Attributes:
        distances: ``(n,)`` ``k = 0 … n − 1``.
        similarity, unseen: curve label → ``(n,)``.
        margin_items: ``(m,)`` ``0 … m − 1``, ``m = min(n, MAX_MARGIN_ITEMS)``.
        margin: curve label → ``(m,)`` (NaN past a short table).
        summary: one row per curve, in registry order.
        errors: family label (:func:`family_label`) → the ``ValueError`` message that left it out.
    """

    distances: np.ndarray
    margin_items: np.ndarray
    similarity: dict[str, np.ndarray] = field(default_factory=dict)
    margin: dict[str, np.ndarray] = field(default_factory=dict)
    unseen: dict[str, np.ndarray] = field(default_factory=dict)
    facts: list[dict[str, str]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)


MarginOf = Callable[[np.ndarray], np.ndarray]  # signal (m, features) -> margin (m,)


@dataclass(frozen=True)
class _Inputs:
    """What every step may read: the settings and the data the caller supplied."""

    settings: CompareSettings
    margin_of: MarginOf
    learned: LearnedTable | None
    t5_bias: tuple[str, np.ndarray] | None


def family_label(family_id: str) -> str:
    """The Compare row's name of a family (its legend label), e.g. ``"rope"`` → ``"RoPE"``.

    Raises:
        ValueError: unknown id, or a family with no Compare row (the message says why).
    """
    spec = family(family_id)
    if spec.comparison is None:
        why = spec.missing.get("comparison", "it has no comparison signal")
        raise ValueError(f"{spec.label} is not compared: {why}.")
    return spec.comparison.label


def _fact(
    result: FamilyComparison, label: str, signal: ComparisonSignal, *, beyond: str | None = None
) -> None:
    result.facts.append(
        {
            "family": label,
            "signal for": signal.signal_for,
            "acts on": signal.acts_on,
            "beyond L": signal.beyond if beyond is None else beyond,
        }
    )


def _padded(values: np.ndarray, size: int) -> np.ndarray:
    return np.pad(
        np.asarray(values, dtype=np.float64), (0, size - values.size), constant_values=np.nan
    )


def _scaled_rope(s: CompareSettings, n: int) -> RopeFrequencies | None:
    """RoPE's frequencies under the chosen context-extension scaling (None for "none")."""
    if s.rope_scaling == NO_SCALING:
        return None
    scaling = manual_scaling(
        s.rope_scaling, factor=s.rope_factor, original_max_position_embeddings=s.trained_length
    )
    return rope_frequencies(
        s.rope_head_dim,
        base=s.rope_base,
        scaling=scaling,
        max_position_embeddings=s.trained_length,
        seq_len=n,
    )


def _angle_curves(
    result: FamilyComparison,
    label: str,
    theta: np.ndarray,
    inputs: _Inputs,
    *,
    trained_theta: np.ndarray | None = None,
) -> None:
    n, m = result.distances.size, result.margin_items.size
    result.similarity[label] = rope_kernel(result.distances, theta)  # = mean cos, exactly
    result.margin[label] = inputs.margin_of(fam.angle_signal(m, theta))
    result.unseen[label] = fam.unseen_angle_fraction(
        n, theta, trained_length=inputs.settings.trained_length, trained_inv_freq=trained_theta
    )


def _angles(result: FamilyComparison, signal: ComparisonSignal, inputs: _Inputs) -> None:
    """Rotation angles: ``kθ_i`` of a distance (rotary) or ``pθ_i`` of a position (sinusoid)."""
    s = inputs.settings
    if signal.inv_freq is None:
        raise ValueError(f"{signal.label}: an 'angles' signal needs inv_freq.")
    dims, base = (
        (s.sinusoid_width, SINUSOID_BASE) if signal.absolute else (s.rope_head_dim, s.rope_base)
    )
    # a bad scaling leaves the whole family out, before any of its curves is drawn
    scaled = _scaled_rope(s, result.distances.size) if signal.scalable else None
    _angle_curves(result, signal.label, signal.inv_freq(dims, base), inputs)
    _fact(result, signal.label, signal)
    if scaled is not None:
        label = f"{signal.label} + {s.rope_scaling} ×{s.rope_factor:g}"
        _angle_curves(
            result, label, scaled.inv_freq, inputs, trained_theta=scaled.original_inv_freq
        )
        _fact(
            result, label, signal, beyond=f"angles kept inside training up to ~{s.rope_factor:g}·L"
        )


def _table(result: FamilyComparison, signal: ComparisonSignal, inputs: _Inputs) -> None:
    """A learned absolute table (supplied by the caller; left out when there is none)."""
    learned = inputs.learned
    if learned is None:
        return
    n, m = result.distances.size, result.margin_items.size
    rows = learned.matrix.shape[0]
    result.similarity[learned.label] = fam.table_similarity(learned.matrix, n)
    result.margin[learned.label] = _padded(learned.margin[:m], m)
    result.unseen[learned.label] = fam.beyond_length(n, trained_length=rows)
    _fact(result, learned.label, signal, beyond=f"no row past {rows}")


def _bias(result: FamilyComparison, signal: ComparisonSignal, inputs: _Inputs) -> None:
    """A per-head logit penalty: its "similarity" is the attention-weight factor it applies."""
    s = inputs.settings
    if signal.slopes is None:
        raise ValueError(f"{signal.label}: a 'bias' signal needs slopes.")
    slopes = signal.slopes(s.alibi_heads)
    label = f"{signal.label} ({s.alibi_heads} heads)"
    n = result.distances.size
    result.similarity[label] = fam.alibi_similarity(n, slopes)
    result.unseen[label] = fam.beyond_length(n, trained_length=s.trained_length)
    _fact(result, label, signal)


def _buckets(result: FamilyComparison, signal: ComparisonSignal, inputs: _Inputs) -> None:
    """Relative buckets; the similarity needs a model's learned bias (``t5_bias``)."""
    s = inputs.settings
    n, m = result.distances.size, result.margin_items.size
    kw = {"num_buckets": s.t5_buckets, "max_distance": s.t5_max_distance}
    one_hot = fam.bucket_signal(m, **kw)
    unseen = fam.unseen_bucket_fraction(n, trained_length=s.trained_length, **kw)
    result.margin[signal.label] = inputs.margin_of(one_hot)
    result.unseen[signal.label] = unseen
    _fact(result, signal.label, signal)
    if inputs.t5_bias is not None:
        name, table = inputs.t5_bias
        result.similarity[f"T5 ({name})"] = fam.t5_similarity(
            n, table, max_distance=s.t5_max_distance
        )


_STEPS: dict[str, Callable[[FamilyComparison, ComparisonSignal, _Inputs], None]] = {
    "angles": _angles,
    "table": _table,
    "bias": _bias,
    "buckets": _buckets,
}


def _summary(result: FamilyComparison, trained: int) -> pd.DataFrame:
    n = result.distances.size
    at_l, at_2l = min(trained, n - 1), min(2 * trained, n - 1)

    def value(curves: dict[str, np.ndarray], name: str, index: int | None) -> float:
        if name not in curves:
            return np.nan
        return float(np.nanmean(curves[name]) if index is None else curves[name][index])

    rows = [
        {
            "family": row["family"],
            f"similarity at L={trained}": value(result.similarity, row["family"], at_l),
            "mean margin": value(result.margin, row["family"], None),
            f"unseen at k={at_2l}": value(result.unseen, row["family"], at_2l),
            **{key: row[key] for key in ("signal for", "acts on", "beyond L")},
        }
        for row in result.facts
    ]
    return pd.DataFrame(rows)


def compare_families(
    chosen: Sequence[str],
    *,
    settings: CompareSettings,
    learned: LearnedTable | None = None,
    t5_bias: tuple[str, np.ndarray] | None = None,
    margin_of: MarginOf = fam.nearest_margin,
) -> FamilyComparison:
    """Similarity, margin and unseen-fraction curves for the ``chosen`` families, and a summary.

    Args:
        chosen: family ids of ``compared_families()`` (others raise); computed in registry order.
        settings: trained length ``L``, number of distances ``n`` and each family's parameters.
        learned: the table for the learned family (left out when ``None``).
        t5_bias: ``(model name, (num_buckets, n_heads) learned bias)`` to add T5's similarity.
        margin_of: how a signal's margin is computed (a cached wrapper of
            :func:`posviz.analysis.families.nearest_margin`).
    Returns:
        :class:`FamilyComparison`; a family whose settings raise ``ValueError`` is in ``errors``.
    """
    known = compared_families()  # the registry now (a family added at run time)
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise ValueError(f"unknown families {unknown}; choose from {', '.join(known)}.")
    if settings.rope_scaling not in SCALINGS:
        raise ValueError(
            f"rope_scaling={settings.rope_scaling!r} is unknown; choose one of "
            f"{', '.join(SCALINGS)}."
        )
    distances = np.arange(fam.check_distance_count(settings.n_distances))
    m = min(distances.size, MAX_MARGIN_ITEMS)
    result = FamilyComparison(distances=distances, margin_items=np.arange(m))
    inputs = _Inputs(settings, margin_of, learned, t5_bias)
    for family_id in (f for f in known if f in chosen):
        signal = family(family_id).comparison
        if signal is None:  # compared families all have a signal
            continue
        try:
            _STEPS[signal.kind](result, signal, inputs)
        except ValueError as exc:  # one family's bad setting must not hide the others
            result.errors[signal.label] = str(exc)
    result.summary = _summary(result, settings.trained_length)
    return result
