"""The family comparison: every encoding family reduced to the same three curves over distance.

For each chosen family (see :mod:`posviz.analysis.families` for the measures)::

    similarity(k)  how alike the signal at distance k is to the one at 0   (1 at k = 0)
    margin(k)      1 − max_{j≠k} cos(s_k, s_j)                              (0 = indistinguishable)
    unseen(k)      share of the signal at k that training up to L never produced

plus a summary row per family read off those curves at ``k = L`` and ``k = 2L``. A family whose
settings are invalid is left out and its ``ValueError`` message kept in ``errors``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from posviz.analysis import families as fam
from posviz.encodings.alibi import alibi_slopes
from posviz.encodings.rope import manual_scaling, rope_frequencies, rope_kernel
from posviz.encodings.sinusoidal import sinusoid_frequencies

FAMILIES = ("Sinusoid", "Learned (MiniLM)", "RoPE", "RoPE + scaling", "ALiBi", "T5")
SCALINGS = ("linear", "dynamic", "yarn", "llama3")
MAX_MARGIN_ITEMS = 2048  # the margin needs an (m, m) cosine matrix


@dataclass(frozen=True)
class CompareSettings:
    """The knobs of the comparison (keyword-only; the defaults are the page's)."""

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
        similarity, unseen: family label → ``(n,)``.
        margin_items: ``(m,)`` ``0 … m − 1``, ``m = min(n, MAX_MARGIN_ITEMS)``.
        margin: family label → ``(m,)`` (NaN past a short table).
        summary: one row per family, in the order computed.
        errors: family → the ``ValueError`` message that left it out.
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


def _fact(result: FamilyComparison, label: str, kind: str, where: str, beyond: str) -> None:
    result.facts.append({"family": label, "signal for": kind, "acts on": where, "beyond L": beyond})


def _padded(values: np.ndarray, size: int) -> np.ndarray:
    return np.pad(
        np.asarray(values, dtype=np.float64), (0, size - values.size), constant_values=np.nan
    )


def _sinusoid(result: FamilyComparison, s: CompareSettings, margin_of: MarginOf) -> None:
    omega = sinusoid_frequencies(s.sinusoid_width)
    m = result.margin_items.size
    result.similarity["Sinusoid"] = rope_kernel(result.distances, omega)  # = mean cos, exactly
    result.margin["Sinusoid"] = margin_of(fam.angle_signal(m, omega))
    result.unseen["Sinusoid"] = fam.unseen_angle_fraction(
        result.distances.size, omega, trained_length=s.trained_length
    )
    _fact(result, "Sinusoid", "position p", "added to the input", "defined; slow dims unseen")


def _learned(result: FamilyComparison, learned: LearnedTable) -> None:
    n, m = result.distances.size, result.margin_items.size
    rows = learned.matrix.shape[0]
    result.similarity[learned.label] = fam.table_similarity(learned.matrix, n)
    result.margin[learned.label] = _padded(learned.margin[:m], m)
    result.unseen[learned.label] = fam.beyond_length(n, trained_length=rows)
    _fact(result, learned.label, "position p", "added to the input", f"no row past {rows}")


def _rope(
    result: FamilyComparison, s: CompareSettings, chosen: Sequence[str], margin_of: MarginOf
) -> None:
    n, m = result.distances.size, result.margin_items.size
    scaling = manual_scaling(
        s.rope_scaling, factor=s.rope_factor, original_max_position_embeddings=s.trained_length
    )
    rope = rope_frequencies(
        s.rope_head_dim,
        base=s.rope_base,
        scaling=scaling,
        max_position_embeddings=s.trained_length,
        seq_len=n,
    )
    if "RoPE" in chosen:
        result.similarity["RoPE"] = rope_kernel(result.distances, rope.original_inv_freq)
        result.margin["RoPE"] = margin_of(fam.angle_signal(m, rope.original_inv_freq))
        result.unseen["RoPE"] = fam.unseen_angle_fraction(
            n, rope.original_inv_freq, trained_length=s.trained_length
        )
        _fact(result, "RoPE", "distance k", "rotates q and k", "defined; slow pairs unseen")
    if "RoPE + scaling" in chosen:
        label = f"RoPE + {s.rope_scaling} ×{s.rope_factor:g}"
        result.similarity[label] = rope_kernel(result.distances, rope.inv_freq)
        result.margin[label] = margin_of(fam.angle_signal(m, rope.inv_freq))
        result.unseen[label] = fam.unseen_angle_fraction(
            n,
            rope.inv_freq,
            trained_length=s.trained_length,
            trained_inv_freq=rope.original_inv_freq,
        )
        beyond = f"angles kept inside training up to ~{s.rope_factor:g}·L"
        _fact(result, label, "distance k", "rotates q and k", beyond)


def _alibi(result: FamilyComparison, s: CompareSettings) -> None:
    n = result.distances.size
    slopes = alibi_slopes(s.alibi_heads)
    label = f"ALiBi ({s.alibi_heads} heads)"
    result.similarity[label] = fam.alibi_similarity(n, slopes)
    result.unseen[label] = fam.beyond_length(n, trained_length=s.trained_length)
    beyond = "larger penalties than seen; far keys only weaker"
    _fact(result, label, "distance k", "logit bias −m·k", beyond)


def _t5(
    result: FamilyComparison,
    s: CompareSettings,
    margin_of: MarginOf,
    t5_bias: tuple[str, np.ndarray] | None,
) -> None:
    n, m = result.distances.size, result.margin_items.size
    kw = {"num_buckets": s.t5_buckets, "max_distance": s.t5_max_distance}
    signal = fam.bucket_signal(m, **kw)
    unseen = fam.unseen_bucket_fraction(n, trained_length=s.trained_length, **kw)
    result.margin["T5 buckets"] = margin_of(signal)
    result.unseen["T5 buckets"] = unseen
    beyond = "last bucket shared: nothing new"
    _fact(result, "T5 buckets", "distance k (bucketed)", "learned logit bias per bucket", beyond)
    if t5_bias is not None:
        name, table = t5_bias
        result.similarity[f"T5 ({name})"] = fam.t5_similarity(
            n, table, max_distance=s.t5_max_distance
        )


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
        chosen: names from :data:`FAMILIES` (others raise).
        settings: trained length ``L``, number of distances ``n`` and each family's parameters.
        learned: the learned table for "Learned (MiniLM)" (left out when ``None``).
        t5_bias: ``(model name, (num_buckets, n_heads) learned bias)`` to add T5's similarity.
        margin_of: how a signal's margin is computed (a cached wrapper of
            :func:`posviz.analysis.families.nearest_margin`).
    Returns:
        :class:`FamilyComparison`; a family whose settings raise ``ValueError`` is in ``errors``.
    """
    unknown = [name for name in chosen if name not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; choose from {', '.join(FAMILIES)}.")
    distances = np.arange(fam.check_distance_count(settings.n_distances))
    m = min(distances.size, MAX_MARGIN_ITEMS)
    result = FamilyComparison(distances=distances, margin_items=np.arange(m))
    steps: list[tuple[str, Callable[[], None]]] = [
        ("Sinusoid", lambda: _sinusoid(result, settings, margin_of)),
        ("Learned (MiniLM)", lambda: _learned(result, learned) if learned else None),
        ("RoPE", lambda: _rope(result, settings, chosen, margin_of)),
        ("ALiBi", lambda: _alibi(result, settings)),
        ("T5", lambda: _t5(result, settings, margin_of, t5_bias)),
    ]
    for family, step in steps:
        wanted = family in chosen or (family == "RoPE" and "RoPE + scaling" in chosen)
        if not wanted:
            continue
        try:
            step()
        except ValueError as exc:  # one family's bad setting must not hide the others
            result.errors[family] = str(exc)
    result.summary = _summary(result, settings.trained_length)
    return result
