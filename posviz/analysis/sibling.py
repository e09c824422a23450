"""What fine-tuning changed between two position tables of one lineage: the sibling diff.

For a reference table ``A`` and a second table ``B`` of the same shape ``(n, d)``:

* per-row relative change ``c_p = ‖B_p − A_p‖ / ‖A_p‖``;
* per-row residual after the row's own best scale ``r_p = min_s ‖B_p − s·A_p‖ / ‖B_p‖``, reached at
  ``s_p = A_p·B_p / ‖A_p‖²``, so ``r_p = sin ∠(A_p, B_p)``: 0 for a row that only changed length;
* a row **only scaled** when ``r_p <`` :data:`ONLY_SCALED` (1 % of its norm), else it **moved**;
* the best single scale over a set of rows ``R`` (least squares in one unknown, closed form):
  ``s* = Σ_R A_p·B_p / Σ_R ‖A_p‖²``, with relative residual ``‖B_R − s*·A_R‖_F / ‖B_R‖_F``.

Both least-squares solutions are the normal equation of a one-column problem, ``aᵀa s = aᵀb``
(Golub & Van Loan, *Matrix Computations*, 4th ed., 2013, §5.3). Where the rows switch between
moved and only scaled is read from the data (:func:`boundaries`), never typed.

Two tables are called **siblings** when at least :data:`MIN_SCALED_ROWS` rows only scaled, those
rows share one scale (its residual below :data:`ONLY_SCALED` too), other rows moved, and the same
statistics on unrelated pairs — ``A`` against a sinusoid of ``A``'s shape and against random
tables with ``B``'s column means and standard deviations — find fewer than
:data:`MIN_SCALED_ROWS` such rows. If a control also passes, the verdict says the test cannot
tell (the control can fail, and then it wins).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from posviz.analysis.headlines import Verdict
from posviz.encodings.sinusoidal import MAX_D_MODEL, MAX_POSITIONS, sinusoidal

#: A row only scaled when what is left after its own best scale is below 1 % of its norm.
#: Fine-tuning noise in float32 is ~1e-4 (MiniLM-L3 vs L6: 1.6e-4); any real move is far larger.
ONLY_SCALED = 0.01
#: Fewer rows than this that only scaled do not make two tables siblings (a few rows of a
#: low-width random table can line up by chance).
MIN_SCALED_ROWS = 8
#: How many random tables the random control draws (its spread is over these).
RANDOM_DRAWS = 20
_RANDOM_STREAM = 20_241_126  # fixed, so the control is the same on every run

Kind = Literal["siblings", "scaled copy", "kept direction", "unrelated"]


@dataclass(frozen=True)
class PairStats:
    """The sibling statistics of one pair ``(A, B)``, every one computed from the rows."""

    change: np.ndarray  # (n,) ‖B_p − A_p‖ / ‖A_p‖
    residual: np.ndarray  # (n,) sin ∠(A_p, B_p): what is left after each row's own best scale
    only_scaled: np.ndarray  # (n,) bool: residual < ONLY_SCALED
    scale: float  # best single scale over the only-scaled rows (nan when there are none)
    scale_residual: float  # its relative residual over those rows (nan when none)
    scale_all: float  # best single scale over every row
    residual_all: float  # its relative residual over every row

    @property
    def scaled_rows(self) -> int:
        return int(self.only_scaled.sum())

    @property
    def kind(self) -> Kind:
        """What the statistics say about the pair, before any control is consulted."""
        n_scaled = self.scaled_rows
        if n_scaled < min(MIN_SCALED_ROWS, len(self.residual)):
            return "unrelated"
        if not self.scale_residual < ONLY_SCALED:
            return "kept direction"
        return "scaled copy" if n_scaled == len(self.residual) else "siblings"


def row_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``‖B_p − A_p‖ / ‖A_p‖`` per row, shape ``(n,)``; ``inf`` where only ``A_p`` is zero."""
    diff = np.linalg.norm(b - a, axis=1)
    norm = np.linalg.norm(a, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norm > 0, diff / np.where(norm > 0, norm, 1), np.where(diff > 0, np.inf, 0))


def row_residual(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``min_s ‖B_p − s·A_p‖ / ‖B_p‖ = sin ∠(A_p, B_p)`` per row, shape ``(n,)``, in ``[0, 1]``.

    A zero row on either side has no direction: its residual is 1 (it cannot count as scaled)
    unless both are zero (0: nothing changed).
    """
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    both = (na > 0) & (nb > 0)
    cos = np.divide((a * b).sum(axis=1), na * nb, out=np.zeros(len(a)), where=both)
    sin = np.sqrt(np.clip(1.0 - cos**2, 0.0, 1.0))
    return np.where(both, sin, np.where((na == 0) & (nb == 0), 0.0, 1.0))


def best_scale(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """``(s*, ‖B − s*·A‖_F / ‖B‖_F)`` with ``s* = ⟨A, B⟩_F / ‖A‖_F²`` (least squares, closed form).

    ``(nan, nan)`` for no rows; ``s* = 0`` when ``A`` is all zeros; residual 0 when ``B`` is.
    """
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a64.size == 0:
        return float("nan"), float("nan")
    aa = float((a64 * a64).sum())
    s = float((a64 * b64).sum()) / aa if aa > 0 else 0.0
    nb = float(np.linalg.norm(b64))
    return s, float(np.linalg.norm(b64 - s * a64)) / nb if nb > 0 else 0.0


def pair_stats(a: np.ndarray, b: np.ndarray) -> PairStats:
    """:class:`PairStats` of ``(A, B)`` (float64 throughout).

    Raises:
        ValueError: the tables' shapes differ.
    """
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a64.shape != b64.shape:
        raise ValueError(
            f"The tables have shapes {a64.shape} and {b64.shape}; a sibling diff compares two "
            "tables of one shape (one architecture). Pick two tables of the same size."
        )
    residual = row_residual(a64, b64)
    kept = residual < ONLY_SCALED
    scale, scale_residual = best_scale(a64[kept], b64[kept])
    scale_all, residual_all = best_scale(a64, b64)
    return PairStats(
        row_change(a64, b64), residual, kept, scale, scale_residual, scale_all, residual_all
    )


def boundaries(mask: np.ndarray) -> list[int]:
    """The positions ``p`` where ``mask[p] != mask[p − 1]``: where a new run of rows starts."""
    flags = np.asarray(mask, dtype=bool)
    return [int(p) for p in np.flatnonzero(flags[1:] != flags[:-1]) + 1]


def runs(mask: np.ndarray) -> list[tuple[int, int, bool]]:
    """The runs of equal ``mask`` values as ``(first, last, value)``, in order."""
    flags = np.asarray(mask, dtype=bool)
    starts = [0, *boundaries(flags)]
    stops = [*(s - 1 for s in starts[1:]), len(flags) - 1]
    return [(s, e, bool(flags[s])) for s, e in zip(starts, stops, strict=True) if len(flags)]


def ranges_text(mask: np.ndarray, value: bool, *, most: int = 3) -> str:
    """The positions where ``mask == value`` as ranges, e.g. ``"0–127"``, ``"0, 5–9 and 12"``."""
    parts = [f"{s}" if s == e else f"{s}–{e}" for s, e, v in runs(mask) if v == value]
    if len(parts) > most:
        return ", ".join(parts[:most]) + f" and {len(parts) - most} more ranges"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


# ----------------------------------------------------------------------------- the controls


def sinusoid_like(shape: tuple[int, int]) -> np.ndarray | None:
    """A sinusoid of ``shape`` (an odd width computed one wider and cut), ``None`` beyond the
    sinusoid's limits."""
    n, d = shape
    if n > MAX_POSITIONS or d + d % 2 > MAX_D_MODEL:
        return None
    return sinusoidal(n, d + d % 2)[:, :d]


def random_like(b: np.ndarray, *, draws: int = RANDOM_DRAWS) -> Iterator[np.ndarray]:
    """``draws`` Gaussian tables with ``B``'s per-column mean and standard deviation, one at a
    time (a big table's draws are never all held at once)."""
    b64 = np.asarray(b, np.float64)
    mean, std = b64.mean(axis=0), b64.std(axis=0)
    rng = np.random.default_rng(_RANDOM_STREAM)
    for _ in range(draws):
        yield mean + std * rng.standard_normal(b64.shape)


@dataclass(frozen=True)
class Controls:
    """The same statistics on unrelated pairs: ``A`` vs a sinusoid, ``A`` vs random tables."""

    sinusoid: PairStats | None  # None when the shape is beyond the sinusoid's limits
    random: tuple[PairStats, ...]

    @property
    def all(self) -> tuple[PairStats, ...]:
        return ((self.sinusoid,) if self.sinusoid is not None else ()) + self.random

    @property
    def passed(self) -> bool:
        """True when no control is called anything but unrelated (the test can tell)."""
        return all(stats.kind == "unrelated" for stats in self.all)


def controls_for(a: np.ndarray, b: np.ndarray) -> Controls:
    """The unrelated pairs' statistics, computed like the pair's own (:func:`pair_stats`)."""
    wave = sinusoid_like(np.shape(a))
    return Controls(
        pair_stats(a, wave) if wave is not None else None,
        tuple(pair_stats(a, other) for other in random_like(b)),
    )


# ------------------------------------------------------------------------ the page's numbers

#: Residuals below this are drawn at this floor on the hero's log axis (float32 resolution).
PLOT_FLOOR = 1e-7
HERO_SERIES = (
    "change ‖B − A‖ / ‖A‖",
    "left after the row's best scale",
    "control: A vs a sinusoid",
    f"control: A vs random (median of {RANDOM_DRAWS})",
)
#: the one grey line drawn when both controls lie on one another (styled as the sinusoid's)
COINCIDING_CONTROLS = "control: A vs a sinusoid, and vs random"


@dataclass(frozen=True)
class SiblingDiff:
    """Everything the sibling-diff page shows about ``(A, B)``, computed once."""

    names: tuple[str, str]
    pair: PairStats
    controls: Controls
    verdict: Verdict
    seams: tuple[int, ...]  # where rows switch between moved and only scaled
    seam_labels: tuple[str, ...]  # what starts at each seam, e.g. "128–511: only scaled × 0.98580"
    margin: tuple[float, float] | None  # (largest r of a scaled row, smallest r of a moved row)
    rows: pd.DataFrame  # the hero's long-form frame: position, series, value
    evidence: pd.DataFrame  # one row per pair: the pair's numbers beside the controls'
    captions: dict[str, str]


def sibling_diff(
    a: np.ndarray,
    b: np.ndarray,
    *,
    names: tuple[str, str] = ("A", "B"),
    controls: Controls | None = None,
) -> SiblingDiff:
    """The sibling diff of ``B`` against ``A`` (shapes ``(n, d)``), with its controls.

    ``controls`` defaults to :func:`controls_for` (a sinusoid and random tables); a test may pass
    others to see the verdict give way when a control passes too.

    Raises:
        ValueError: the shapes differ.
    """
    pair = pair_stats(a, b)
    controls = controls if controls is not None else controls_for(a, b)
    moved, kept = pair.residual[~pair.only_scaled], pair.residual[pair.only_scaled]
    margin = (float(kept.max()), float(moved.min())) if moved.size and kept.size else None
    verdict = sibling_verdict(pair, controls, names=names)
    seams = tuple(boundaries(pair.only_scaled))
    return SiblingDiff(
        names,
        pair,
        controls,
        verdict,
        seams,
        seam_labels(pair),
        margin,
        hero_frame(pair, controls),
        evidence_frame(pair, controls, names=names),
        _captions(pair, controls, names=names, seams=seams, margin=margin),
    )


def seam_labels(pair: PairStats) -> tuple[str, ...]:
    """One label per seam saying what the run starting there did, e.g. "128–511: only scaled
    × 0.98580" or "0–127: moved"."""
    labels = []
    for first, last, scaled in runs(pair.only_scaled)[1:]:
        span = f"{first}–{last}" if last > first else f"{first}"
        labels.append(f"{span}: only scaled × {pair.scale:.5f}" if scaled else f"{span}: moved")
    return tuple(labels)


def _control_counts(controls: Controls, *, names: tuple[str, str]) -> str:
    """Rows only scaled in each control, as words: "0 for A vs a sinusoid of its shape and …"."""
    a, b = names
    parts = []
    if controls.sinusoid is not None:
        parts.append(f"{controls.sinusoid.scaled_rows} for {a} vs a sinusoid of its shape")
    counts = [s.scaled_rows for s in controls.random]
    if counts:
        spread = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}–{max(counts)}"
        parts.append(
            f"{spread} for {a} vs {len(counts)} random tables with {b}'s column means and spreads"
        )
    return " and ".join(parts)


def sibling_verdict(pair: PairStats, controls: Controls, *, names: tuple[str, str]) -> Verdict:
    """The page's answer: a plain first sentence (≤ 15 words), then the numbers behind it."""
    a, b = names
    n = len(pair.residual)
    kind = pair.kind
    numbers: dict[str, float] = {
        "scaled_rows": pair.scaled_rows,
        "scale": pair.scale,
        "scale_residual": pair.scale_residual,
        "median_moved_change": float(np.median(pair.change[~pair.only_scaled]))
        if (~pair.only_scaled).any()
        else float("nan"),
        "control_max_scaled_rows": max((s.scaled_rows for s in controls.all), default=0),
    }
    control = (
        " The same test on unrelated pairs finds such rows: "
        f"{_control_counts(controls, names=names)} (fewer than {MIN_SCALED_ROWS} means unrelated)."
    )
    if kind != "unrelated" and not controls.passed:
        first = "The controls pass this test too, so it cannot tell siblings apart here."
        rest = f" {pair.scaled_rows} of {n} rows of {b} only scaled against {a}."
        return Verdict(first + rest + control, numbers)
    if kind == "unrelated":
        first = f"These are not siblings: fewer than {MIN_SCALED_ROWS} rows only changed in scale."
        rest = (
            f" {pair.scaled_rows} of {n} rows of {b} point within {ONLY_SCALED:.0%} of {a}'s "
            f"direction; the median row leaves {np.median(pair.residual):.2f} of its norm after "
            "its own best scale."
        )
        return Verdict(first + rest + control, numbers)
    fit = (
        f" {b} = {pair.scale:.5f} × {a} on those {pair.scaled_rows} rows (relative residual "
        f"{pair.scale_residual:.1e})"
    )
    if kind == "kept direction":
        first = f"{pair.scaled_rows} rows kept their direction, but they share no single scale."
        return Verdict(first + fit + "." + control, numbers)
    if kind == "scaled copy" and pair.scale_all == 1.0 and pair.residual_all == 0.0:
        return Verdict("The two tables are the same table." + control, numbers)
    if kind == "scaled copy":
        first = f"The two tables are one table times {pair.scale:.4f}."
        return Verdict(first + fit + "." + control, numbers)
    verb = "shrank" if pair.scale < 1 else "grew" if pair.scale > 1 else "stayed"
    if len(runs(pair.only_scaled)) == 2:
        first = (
            f"Positions {ranges_text(pair.only_scaled, False)} moved; positions "
            f"{ranges_text(pair.only_scaled, True)} only {verb} together."
        )
    else:
        first = f"{n - pair.scaled_rows} rows moved; {pair.scaled_rows} rows only {verb} together."
    moved = (
        f"; the rows that moved differ by a median {numbers['median_moved_change']:.0%} of "
        "their norm."
    )
    return Verdict(first + fit + moved + control, numbers)


def _coincide(a: np.ndarray, b: np.ndarray, *, within: float = 0.05) -> bool:
    """Whether two lines of the hero's log axis lie on one another: every point within
    ``within`` decades (about 4 px on the hero's 300 px axis)."""
    a, b = np.maximum(a, PLOT_FLOOR), np.maximum(b, PLOT_FLOOR)
    return bool(np.max(np.abs(np.log10(a) - np.log10(b))) < within)


def hero_frame(pair: PairStats, controls: Controls) -> pd.DataFrame:
    """Long form (``position``, ``series``, ``value``) of the hero's lines, floored at
    :data:`PLOT_FLOOR` for the log axis (controls as far as they were computed)."""
    positions = np.arange(len(pair.residual))
    series = [(HERO_SERIES[0], pair.change), (HERO_SERIES[1], pair.residual)]
    if controls.sinusoid is not None:
        series.append((HERO_SERIES[2], controls.sinusoid.residual))
    if controls.random:
        stacked = np.median(np.stack([s.residual for s in controls.random]), axis=0)
        if controls.sinusoid is not None and _coincide(controls.sinusoid.residual, stacked):
            # two grey lines drawn on one another read as one: say so on the one drawn
            series[-1] = (COINCIDING_CONTROLS, series[-1][1])
        else:
            series.append((HERO_SERIES[3], stacked))
    return pd.concat(
        [
            pd.DataFrame(
                {"position": positions, "series": name, "value": np.maximum(values, PLOT_FLOOR)}
            )
            for name, values in series
        ],
        ignore_index=True,
    )


def _number(value: float, fmt: str) -> str:
    return "—" if not np.isfinite(value) else format(value, fmt)


def _evidence_row(label: str, stats: list[PairStats]) -> dict[str, str]:
    """One pair (or a set of draws, shown as min–max) as the evidence table's strings."""

    def cell(values: list[float], fmt: str) -> str:
        shown = [_number(v, fmt) for v in values]
        return (
            shown[0] if min(shown) == max(shown) else f"{min(values):{fmt}} – {max(values):{fmt}}"
        )

    return {
        "Pair": label,
        "Rows only scaled": cell([float(s.scaled_rows) for s in stats], ".0f"),
        "Median sin∠ (left after row scale)": cell(
            [float(np.median(s.residual)) for s in stats], ".2g"
        ),
        "Scale s (those rows)": cell([s.scale for s in stats], ".5f"),
        "Residual": cell([s.scale_residual for s in stats], ".1e"),
        "Scale s (all rows)": cell([s.scale_all for s in stats], ".4f"),
        "Residual (all)": cell([s.residual_all for s in stats], ".2f"),
    }


def evidence_frame(pair: PairStats, controls: Controls, *, names: tuple[str, str]) -> pd.DataFrame:
    """The pair's numbers with the controls' beside them (random draws as min – max)."""
    rows = [_evidence_row(f"{names[1]} vs {names[0]}", [pair])]
    if controls.sinusoid is not None:
        rows.append(_evidence_row("control: sinusoid", [controls.sinusoid]))
    if controls.random:
        rows.append(_evidence_row(f"control: {len(controls.random)} random", list(controls.random)))
    return pd.DataFrame(rows)


def _captions(
    pair: PairStats,
    controls: Controls,
    *,
    names: tuple[str, str],
    seams: tuple[int, ...],
    margin: tuple[float, float] | None,
) -> dict[str, str]:
    a, b = names
    where = ", ".join(str(p) for p in seams[:6]) if seams else "nowhere"
    hero = (
        f"A = {a}, B = {b}. Blue: how much each row changed, ‖B_p − A_p‖ / ‖A_p‖. Red: what is "
        "left after scaling the row on its own, sin ∠(A_p, B_p); below the dashed 1 % line the "
        f"row only changed length. Grey: the same on unrelated pairs. The rows switch at "
        f"{where}. Log axis; values below {PLOT_FLOOR:.0e} are drawn at it."
    )
    evidence = (
        f"A row only scaled when less than {ONLY_SCALED:.0%} of its norm is left after its own "
        f"best scale; the best single scale s = ΣA·B / Σ‖A‖² (least squares) is fitted over those "
        f"rows. Pairs with fewer than {MIN_SCALED_ROWS} such rows are called unrelated."
    )
    if margin is not None:
        evidence += (
            f" Here the largest residual of a scaled row is {margin[0]:.1e} and the smallest of "
            f"a moved row {margin[1]:.2f}: any threshold between them splits the rows the same way."
        )
    return {"hero": hero, "evidence": evidence}


# ------------------------------------------------ the global-scale explanation and its direction

#: Two fitted scales are "the same factor" when they differ by less than this, relatively (the
#: positions' own fit leaves 1.6e-4 of the rows; a different factor is a different mechanism).
SAME_SCALE = 1e-3
#: Rows "on the float16 grid" when more than this share of their entries is; "off" below
#: :data:`OFF_GRID` (a float32 matrix's chance level is ~1e-4).
ON_GRID, OFF_GRID = 0.9, 0.1
_SHUFFLE_STREAM = 20_251_128  # the shuffled-pairing control's fixed stream


@dataclass(frozen=True)
class ScaleFit:
    """One matrix of ``A`` against the same matrix of ``B``: which rows only scaled
    (:func:`pair_stats`), their best single scale, and the same count with the pairing
    shuffled (the control that can fail: unrelated rows should almost never line up)."""

    name: str
    rows: int
    scaled_rows: int
    scale: float  # over the only-scaled rows (nan when none)
    residual: float  # its relative residual over those rows
    control_rows: int  # only-scaled rows with the rows (one row: its entries) shuffled
    only_scaled: np.ndarray  # (rows,) bool: which rows only scaled
    median_left: float  # median over the rows of sin ∠(A_p, B_p): left after each row's scale

    def same_factor(self, factor: float, *, within: float = SAME_SCALE) -> bool:
        """Whether this matrix's only-scaled rows share ``factor`` (relative difference below
        ``within``, the rows' own fit residual below :data:`ONLY_SCALED`)."""
        return (
            self.scaled_rows > 0
            and abs(self.scale - factor) < within * abs(factor)
            and self.residual < ONLY_SCALED
        )


def shuffled_pairing(b: np.ndarray, *, seed: int = _SHUFFLE_STREAM) -> np.ndarray:
    """``B`` with its rows in a random order that moves every row (a random cycle, so no row
    keeps its place; a one-row ``B``: its entries), so row ``p`` of ``A`` is compared with
    another row of ``B``."""
    rng = np.random.default_rng(seed)
    b = np.asarray(b)
    n = len(b) if len(b) > 1 else b.shape[1]
    order = rng.permutation(n)
    index = np.empty(n, dtype=int)
    index[order] = np.roll(order, -1)  # each place takes the next one's entry along the cycle
    return b[index] if len(b) > 1 else b[:, index]


def scale_fit(a: np.ndarray, b: np.ndarray, *, name: str) -> ScaleFit:
    """:class:`ScaleFit` of one matrix pair (``(n, d)``, or ``(d,)`` taken as one row): the
    rows' own scale test and the best single scale ``s* = ΣA·B / Σ‖A‖²`` over the rows that
    pass it (Golub & Van Loan 2013, §5.3; as :func:`pair_stats`).

    Raises:
        ValueError: the shapes differ.
    """
    a2, b2 = np.atleast_2d(np.asarray(a, np.float64)), np.atleast_2d(np.asarray(b, np.float64))
    stats = pair_stats(a2, b2)
    control = pair_stats(a2, shuffled_pairing(b2))
    return ScaleFit(name, len(a2), stats.scaled_rows, stats.scale, stats.scale_residual,
                    control.scaled_rows, stats.only_scaled,
                    float(np.median(stats.residual)))  # fmt: skip


def fp16_exact(x: np.ndarray) -> np.ndarray:
    """Elementwise: ``x`` is exactly a finite IEEE 754 binary16 number (converting it to float16
    and back gives it unchanged). A float32 value drawn at random passes with probability about
    2⁻¹³ (its 13 lowest mantissa bits all zero), so a matrix saved from float16 shows ~100 %
    and one computed in float32 ~0.01 % (IEEE 754-2008, §3.6: binary16 keeps 10 fraction bits,
    binary32 23)."""
    x32 = np.asarray(x, dtype=np.float32)
    with np.errstate(over="ignore"):
        back = x32.astype(np.float16).astype(np.float32)
    return np.isfinite(back) & (back == x32)


def fp16_share(x: np.ndarray) -> float:
    """The fraction of ``x``'s entries that are exactly float16 (:func:`fp16_exact`); nan for
    no entries."""
    flags = fp16_exact(x)
    return float(flags.mean()) if flags.size else float("nan")


@dataclass(frozen=True)
class Direction:
    """Which side of a scaled pair moved, read from the float16 grid: the rows that only scaled
    are on the grid in one model and off it in the other, and scaling a grid value by the factor
    leaves the grid (measured on the same rows: the premise's check)."""

    a_scaled: float  # share of A's only-scaled entries on the float16 grid
    b_scaled: float  # the same entries of B
    a_moved: float  # A's moved rows (nan when none)
    scaled_again: float  # A's only-scaled entries × the factor, in float32, on the grid
    unrelated: float  # an unrelated float32 matrix of A's model (the chance level)

    @property
    def shrunk(self) -> str | None:
        """``"B"`` when A sits on the grid and B does not (B = factor × A was computed), ``"A"``
        the other way round, ``None`` when neither (or both) side is on the grid."""
        on = {side: share > ON_GRID for side, share in (("A", self.a_scaled), ("B", self.b_scaled))}
        off = {
            side: share < OFF_GRID for side, share in (("A", self.a_scaled), ("B", self.b_scaled))
        }
        if self.scaled_again >= OFF_GRID:  # the premise failed: scaling stays on the grid
            return None
        if on["A"] and off["B"]:
            return "B"
        return "A" if on["B"] and off["A"] else None


def direction(
    a: np.ndarray, b: np.ndarray, scaled: np.ndarray, *, factor: float, unrelated: np.ndarray
) -> Direction:
    """:class:`Direction` of the rows ``scaled`` (bool ``(n,)``) of ``A``/``B`` (``(n, d)``),
    with ``unrelated`` as the chance-level control."""
    scaled = np.asarray(scaled, dtype=bool)
    a32 = np.asarray(a, np.float32)
    moved = a32[~scaled]
    return Direction(
        a_scaled=fp16_share(a32[scaled]),
        b_scaled=fp16_share(np.asarray(b, np.float32)[scaled]),
        a_moved=fp16_share(moved) if moved.size else float("nan"),
        scaled_again=fp16_share(np.float32(factor) * a32[scaled]),
        unrelated=fp16_share(unrelated),
    )
