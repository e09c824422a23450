"""Does the far context need its order? O'Connor & Andreas's ablated information, scaled to the lab.

O'Connor & Andreas, "What Context Features Can Transformer Language Models Use?" (ACL 2021,
https://arxiv.org/abs/2106.08367) ask how much of the *usable* information in a language model's
far context survives an ablation ``f`` of it. Their measure (§2, eq. 9, p. 3)::

    A(f, k) = (inf_θ L(θ, f, k) − inf_θ' L(θ', n)) / (inf_θ'' L(θ'', n − k) − inf_θ' L(θ', n))

is, per condition, ``(L_ablated − L_full) / (L_no-info − L_full)``: the share of what the far
context adds over a model that never sees it (*no information*) that is lost when a model is
*trained and evaluated* on the ablated far context (0: nothing lost; 1: all of it). Their
evaluation (eq. 10, p. 3) puts ``ℓ`` ablated tokens first, a separator, then ordered tokens, and
counts the loss on the ordered ones only, split into a *mid-range* condition (the first half of
them, little ordered context before the target) and a *long-range* one (the second half).

Scaled to the lab's character LM on its KJV text (:mod:`posviz.data.lab_text`; training windows
from the first 90 %, held-out ones from the last 10 %, as the engine's ``lm`` task):

* a window is ``far`` (``ℓ`` characters, ablated or not) + ``SEP`` + ``near`` (``n − 1``
  characters); the targets are the ``n`` characters after the separator (``SEP`` predicts the
  first), so target ``j`` has ``j`` ordered characters before it. Mid-range: ``j < n/2``;
  long-range: ``j ≥ n/2`` (:func:`range_means`).
* *full*: the far context intact; *no information*: ``SEP`` + ``near`` alone (their ``L(θ, 0∼n)``,
  trained without the far context); *ablated*: trained and evaluated with ``f(far)``;
  *evaluation only*: the full model evaluated on ``f(far)`` (their §3.3, Fig. 4, which trained
  that model with random padding instead; here the full model itself).
* the ablations (:data:`ABLATIONS`) act on words (maximal runs of non-space characters; their
  ablations are word-level too, §3 p. 4), keep every separator where it was and so keep the far
  context's length and its multiset of words: ``shuffle_all`` (their "shuffle all"),
  ``within_sentences`` ("shuf. within sent."), ``within_trigrams`` ("shuf. within trigrams"),
  ``sentences`` ("sent. shuf.": sentences in a random order, each intact). A sentence ends at
  ``.``, ``?`` or ``!`` (the text has no verse numbers; its sentences average 142 characters, so
  a far context shorter than that rarely holds two and ``sentences`` then changes nothing:
  :func:`changed_fraction` says how often it did).

The share lost is a ratio of two paired means over seeds; its 95 % interval is Fieller's
(:func:`fieller_ratio`), which is unbounded when the usable information itself is not
distinguishable from 0 — then no share is stated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from posviz.data.lab_text import lab_text
from posviz.lab.engine.results import Published

#: the PDF the published numbers were read in (arXiv version), at one commit of a public
#: repository of paper copies, as the other cards (:mod:`posviz.lab.studies.papers`)
PDF = (
    "https://github.com/viktor-shcherb/msc_thesis/blob/76c5ebcd6ff0977ef824ac57734299a0f7a59db2/"
    "references/2021-08-context-features-transformer-lm/2106.08367.pdf"
)
_SETTING = (
    "GPT-2 architecture trained from scratch on WikiText-103; 512 ablated tokens, a separator, "
    "then 512 ordered tokens; mid-range: loss on the first 256 ordered tokens, long-range: on "
    "tokens 256–512; average of two initialisations"
)

#: Fig. 2 (p. 5): trained-and-evaluated ablations. Labels as printed; values are the bars'
#: labels: ``full``/``no information`` in bits, the others "+Δ bits (share of usable
#: information removed)".
FIGURE_2 = (
    Published(
        table="Figure 2a (p. 5)",
        setting=_SETTING + "; mid-range condition",
        numbers=(
            ("full information", 4.19),
            ("shuf. within trigrams", 0.04),
            ("shuf. within trigrams %", 14.0),
            ("sent. shuf.", 0.04),
            ("sent. shuf. %", 17.0),
            ("shuf. within sent.", 0.07),
            ("shuf. within sent. %", 26.0),
            ("shuffle all", 0.10),
            ("shuffle all %", 41.0),
            ("no information", 4.45),
        ),
        unit="held-out loss in bits per token; ablations as +bits and % of usable information",
        read_at=PDF,
    ),
    Published(
        table="Figure 2b (p. 5)",
        setting=_SETTING + "; long-range condition",
        numbers=(
            ("full information", 4.17),
            ("sent. shuf.", 0.01),
            ("sent. shuf. %", 14.0),
            ("shuf. within trigrams", 0.02),
            ("shuf. within trigrams %", 41.0),
            ("shuf. within sent.", 0.03),
            ("shuf. within sent. %", 55.0),
            ("shuffle all", 0.04),
            ("shuffle all %", 84.0),
            ("no information", 4.22),
        ),
        unit="held-out loss in bits per token; ablations as +bits and % of usable information",
        read_at=PDF,
    ),
)
#: Fig. 4 (p. 7): ablations at evaluation time only (a model trained on intact windows with
#: random padding), "+Δ bits" over its full-information loss; no shares are printed.
FIGURE_4 = (
    Published(
        table="Figure 4a (p. 7)",
        setting=_SETTING + "; mid-range condition; ablated at evaluation time only",
        numbers=(
            ("full information", 4.18),
            ("shuf. within trigrams", 0.06),
            ("sent. shuf.", 0.10),
            ("shuf. within sent.", 0.14),
            ("shuffle all", 0.22),
            ("no information", 4.48),
        ),
        unit="held-out loss in bits per token; ablations as +bits",
        read_at=PDF,
    ),
    Published(
        table="Figure 4b (p. 7)",
        setting=_SETTING + "; long-range condition; ablated at evaluation time only",
        numbers=(
            ("full information", 4.15),
            ("sent. shuf.", 0.00),
            ("shuf. within trigrams", 0.03),
            ("shuf. within sent.", 0.04),
            ("shuffle all", 0.04),
            ("no information", 4.20),
        ),
        unit="held-out loss in bits per token; ablations as +bits",
        read_at=PDF,
    ),
)
PUBLISHED = FIGURE_2 + FIGURE_4

_SPACE = re.compile(r"(\s+)")
_SENTENCE = re.compile(r"((?<=[.?!])\s+)")

Ablation = Callable[[str, np.random.Generator], str]


def _permute_words(text: str, rng: np.random.Generator, group: int = 0) -> str:
    """``text`` with its words permuted uniformly (within consecutive groups of ``group`` words
    when ``group`` > 0), every whitespace run kept in its place."""
    parts = _SPACE.split(text)  # words at even indices (maybe empty at the ends), spaces at odd
    slots = [i for i in range(0, len(parts), 2) if parts[i]]
    size = group or len(slots)
    words = [parts[i] for i in slots]
    out = []
    for start in range(0, len(words), max(size, 1)):
        chunk = words[start : start + size]
        out.extend(chunk[k] for k in rng.permutation(len(chunk)))
    for i, word in zip(slots, out, strict=True):
        parts[i] = word
    return "".join(parts)


def _sentences(text: str) -> list[str]:
    """Sentences (ending at ``.?!``) and the whitespace after each, alternating."""
    return _SENTENCE.split(text)


def shuffle_all(text: str, rng: np.random.Generator) -> str:
    """Every word to a uniformly random slot ("shuffle all", O'Connor & Andreas §3.1, p. 4)."""
    return _permute_words(text, rng)


def within_sentences(text: str, rng: np.random.Generator) -> str:
    """Words permuted within each sentence ("shuf. within sent.", §3.1, p. 5)."""
    parts = _sentences(text)
    return "".join(p if i % 2 else _permute_words(p, rng) for i, p in enumerate(parts))


def within_trigrams(text: str, rng: np.random.Generator) -> str:
    """Words permuted within each non-overlapping trigram of a sentence ("shuf. within
    trigrams", §3.1, p. 5)."""
    parts = _sentences(text)
    return "".join(p if i % 2 else _permute_words(p, rng, group=3) for i, p in enumerate(parts))


def sentences(text: str, rng: np.random.Generator) -> str:
    """Sentences in a uniformly random order, each intact ("sent. shuf.", §3.1, p. 5)."""
    parts = _sentences(text)
    whole = parts[0::2]
    order = rng.permutation(len(whole))
    parts[0::2] = [whole[k] for k in order]
    return "".join(parts)


#: the ablations, by id, in the order their published shares rise (mid-range, Fig. 2a)
ABLATIONS: dict[str, Ablation] = {
    "within_trigrams": within_trigrams,
    "sentences": sentences,
    "within_sentences": within_sentences,
    "shuffle_all": shuffle_all,
}
#: each ablation's label in the paper (the rows of :data:`FIGURE_2`)
PAPER_LABELS = {
    "within_trigrams": "shuf. within trigrams",
    "sentences": "sent. shuf.",
    "within_sentences": "shuf. within sent.",
    "shuffle_all": "shuffle all",
}


def ablation(name: str) -> Ablation:
    """The ablation with this id.

    Raises:
        ValueError: an unknown id (the message lists the known ones).
    """
    if name not in ABLATIONS:
        raise ValueError(f"ablation={name!r} is unknown; choose one of {', '.join(ABLATIONS)}.")
    return ABLATIONS[name]


# --------------------------------------------------------------------------- windows


@cache
def alphabet() -> tuple[str, np.ndarray]:
    """The text's characters (sorted, as the engine's ``lm`` task) and the text as their ids."""
    text = lab_text()
    chars = "".join(sorted(set(text)))
    lookup = np.zeros(max(map(ord, chars)) + 1, dtype=np.int64)
    lookup[[ord(c) for c in chars]] = np.arange(len(chars))
    return chars, lookup[np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)]


def separator() -> int:
    """The separator's id: one past the characters (the engine's padding id for ``lm``)."""
    return len(alphabet()[0])


@dataclass(frozen=True)
class Windows:
    """``B`` windows of the text: ``far`` ``(B, ℓ)`` and ``near`` ``(B, n)`` character ids."""

    far: np.ndarray
    near: np.ndarray

    def inputs(self, far: np.ndarray | None) -> np.ndarray:
        """``(B, ℓ + n)`` = far + SEP + near[:-1] (``far`` None: SEP + near[:-1], ``(B, n)``)."""
        b = len(self.near)
        sep = np.full((b, 1), separator(), dtype=np.int64)
        head = [sep] if far is None else [far, sep]
        return np.concatenate([*head, self.near[:, :-1]], axis=1)


def sample_windows(
    rng: np.random.Generator, batch: int, far: int, near: int, *, held_out: bool
) -> Windows:
    """``batch`` windows of ``far + near`` consecutive characters (training text, or held-out).

    Raises:
        ValueError: lengths that do not fit the held-out text.
    """
    codes = alphabet()[1]
    cut = int(len(codes) * 0.9)  # the engine's LM_HELD_OUT split
    part = codes[cut:] if held_out else codes[:cut]
    t = far + near
    if near < 1 or far < 0 or t >= len(part):
        raise ValueError(f"far={far}, near={near}: use near ≥ 1 and far + near < {len(part)}.")
    starts = rng.integers(0, len(part) - t, size=batch)
    windows = part[starts[:, None] + np.arange(t)[None, :]]
    return Windows(windows[:, :far], windows[:, far:])


def ablate(far: np.ndarray, name: str, rng: np.random.Generator) -> np.ndarray:
    """``(B, ℓ)`` far contexts with ablation ``name`` applied to each (``"none"``: unchanged)."""
    if name == "none":
        return far
    f = ablation(name)
    chars = alphabet()[0]
    lookup = {c: i for i, c in enumerate(chars)}
    out = np.empty_like(far)
    for row, ids in enumerate(far):
        text = f("".join(chars[i] for i in ids), rng)
        out[row] = [lookup[c] for c in text]
    return out


def changed_fraction(far: np.ndarray, ablated: np.ndarray) -> float:
    """The share of far contexts an ablation changed (a sentence shuffle of a context holding
    one sentence, or a shuffle that drew the identity, changes nothing)."""
    return float((far != ablated).any(axis=1).mean())


def range_means(per_target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mid, long)`` means over the last axis's first and second halves (targets ``j < n/2``
    and ``j ≥ n/2``), the paper's mid- and long-range conditions scaled to ``n`` targets."""
    n = per_target.shape[-1]
    return per_target[..., : n // 2].mean(-1), per_target[..., n // 2 :].mean(-1)


# --------------------------------------------------------------------------- the share lost


@dataclass(frozen=True)
class Ratio:
    """``mean(a) / mean(b)`` with its 95 % Fieller interval (``low``/``high`` infinite when
    no share is stated: ``b`` not above 0 by its own interval)."""

    estimate: float
    low: float
    high: float
    n: int

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def percent_text(self) -> str:
        """``"41 % (95 % interval 30 … 52 %)"``, or why no share is stated."""
        if not self.bounded:
            return "no share: the usable information is not above 0"
        return (
            f"{100 * self.estimate:.0f} % (95 % interval {100 * self.low:.0f} … "
            f"{100 * self.high:.0f} %)"
        )


def fieller_ratio(a: np.ndarray, b: np.ndarray, *, confidence: float = 0.95) -> Ratio:
    """Fieller's interval for ``ρ = E[a] / E[b]`` from paired values (one pair per seed).

    Fieller (1954), "Some problems in interval estimation", J. R. Stat. Soc. B 16(2):175–185:
    the set of ``ρ`` for which the paired t-test of ``a − ρ b`` does not reject, i.e. the roots of
    ``(ā − ρ b̄)² = t² (s_aa − 2ρ s_ab + ρ² s_bb) / n`` (``s`` the sample (co)variances,
    ``t = t_{(1+c)/2, n−1}``). Bounded only when ``b̄² > t² s_bb / n`` (``b``'s own t-test
    rejects 0); with ``s_bb = 0`` it is the paired t interval of ``a / b̄``. A share of the
    usable information needs ``b̄ > 0``: with the far context *hurting* (``b̄ < 0``) no share is
    stated either (the interval is returned unbounded).

    Raises:
        ValueError: fewer than 2 pairs, unequal lengths or non-finite values.
    """
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if x.shape != y.shape or x.size < 2 or not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError(f"need ≥ 2 finite pairs of equal length; got {x.size} and {y.size}.")
    from scipy import stats  # lazy, as posviz.analysis.difference

    n = x.size
    t = float(stats.t.ppf((1 + confidence) / 2, n - 1))
    cov = np.cov(x, y, ddof=1)
    saa, sab, sbb = cov[0, 0] / n, cov[0, 1] / n, cov[1, 1] / n
    ma, mb = float(x.mean()), float(y.mean())
    estimate = ma / mb if mb else math.nan
    qa = mb * mb - t * t * sbb  # the quadratic q_a ρ² − 2 q_b ρ + q_c ≤ 0
    qb = ma * mb - t * t * sab
    qc = ma * ma - t * t * saa
    disc = qb * qb - qa * qc
    if qa <= 0 or disc < 0 or mb <= 0:
        return Ratio(estimate, -math.inf, math.inf, n)
    root = math.sqrt(disc)
    return Ratio(estimate, (qb - root) / qa, (qb + root) / qa, n)
