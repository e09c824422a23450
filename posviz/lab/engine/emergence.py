"""Where position appears inside a trained model: a position probe on every layer's hidden states.

For each layer (the input embeddings included), each token's position ``t`` is predicted from its
hidden state by the cross-validated ridge probe posviz uses for lab tables
(:func:`posviz.analysis.evidence.nested_ridge_predictions`: the penalty chosen by an inner CV
inside each outer training fold, relative to the data's own scale, so the score does not depend
on the hidden states' units). Folds are grouped by sequence: the tokens of one held-out sequence
are all in the test fold together, so nothing a probe learns about one sequence's states can
leak into its score on that sequence. Haviv et al. (2022, §5) probe a causal LM without
positions the same way, layer by layer, and find absolute position appearing within a few
layers, from the causal mask alone.

A linear probe reads a position code that is linear in the state. A causal model without
positions may hold position in a state's *magnitude* instead: attention at position ``t`` averages
``t + 1`` values, so the spread of that average shrinks as ``t`` grows. ``features="quadratic"``
appends the squares of the (per-layer standardised) coordinates, so the same ridge probe can read
a code held in squared magnitudes too; the control goes through the same features.

Each layer is scored as R² (``1 − SSE/SST`` of the out-of-fold predictions) and mean absolute
error (in positions), per seed, summarised as mean ± spread over seeds
(:func:`posviz.analysis.evidence.spread`), beside a control computed the same way on the same
states with the position labels shuffled within each sequence (every sequence keeps the labels
``0 … T−1``, in an order unrelated to its states): a probe or a split that leaked would score
above chance there too, so the control can fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis.evidence import Evidence, Spread, nested_ridge_predictions, spread

#: Label shuffles are drawn from this stream, apart from the folds' seeds.
CONTROL_STREAM = 7
FEATURES: tuple[str, ...] = ("linear", "quadratic")


@dataclass(frozen=True)
class LayerProbe:
    """One layer's position probe and its shuffled-label control, per seed and summarised.

    ``*_per_seed`` arrays are ``(E,)``: one probe per seed's model (the seeds are independent
    models, so their spread is the spread a re-run would show).
    """

    layer: int
    r2_per_seed: np.ndarray
    mae_per_seed: np.ndarray
    control_r2_per_seed: np.ndarray
    control_mae_per_seed: np.ndarray

    @property
    def r2(self) -> Spread:
        return spread(self.r2_per_seed)

    @property
    def mae(self) -> Spread:
        return spread(self.mae_per_seed)

    @property
    def control_r2(self) -> Spread:
        return spread(self.control_r2_per_seed)

    @property
    def control_mae(self) -> Spread:
        return spread(self.control_mae_per_seed)

    def evidence(self) -> Evidence:
        """R² beside the shuffled-position control (higher is better)."""
        return Evidence(
            label=f"layer {self.layer} position R²",
            value=self.r2,
            control=self.control_r2,
            control_label="positions shuffled within each sequence",
            higher_is_better=True,
        )


@dataclass(frozen=True)
class Emergence:
    """The position probe of every layer (``layers[0]`` is the input to the first block)."""

    layers: tuple[LayerProbe, ...]
    length: int
    n_sequences: int
    n_folds: int
    features: str = "linear"

    def frame(self) -> pd.DataFrame:
        """One row per layer and metric (``r2``, ``mae``): mean, std, 95% interval, control."""
        rows = []
        for probe in self.layers:
            for metric, value, control in (
                ("r2", probe.r2, probe.control_r2),
                ("mae", probe.mae, probe.control_mae),
            ):
                rows.append(
                    {
                        "layer": probe.layer,
                        "metric": metric,
                        "mean": value.mean,
                        "std": value.std,
                        "low": value.low,
                        "high": value.high,
                        "control_mean": control.mean,
                        "control_std": control.std,
                        "seeds": value.n,
                    }
                )
        return pd.DataFrame(rows)


def shuffled_positions(n_sequences: int, length: int, *, seed: int) -> np.ndarray:
    """``(B, T)``: each row a random permutation of ``0 … T−1`` (the control's labels)."""
    generator = np.random.default_rng([int(seed), CONTROL_STREAM])
    return np.argsort(generator.random((n_sequences, length)), axis=1)


def probe_features(states: np.ndarray, features: str) -> np.ndarray:
    """``(B·T, d)`` rows of ``states (B, T, d)``; with ``"quadratic"`` also their squares.

    The squares are taken after standardising each coordinate over the layer's rows (no labels
    are used, so nothing leaks), so a constant offset does not turn into a linear term and the
    result does not depend on units.
    """
    b, t, d = states.shape
    x = states.reshape(b * t, d)
    if features == "linear":
        return x
    scale = x.std(axis=0)
    z = (x - x.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    return np.concatenate([z, z**2], axis=1)


def _scores(
    states: np.ndarray, labels: np.ndarray, *, n_folds: int, seed: int, features: str
) -> tuple[float, float]:
    """Out-of-fold R² and MAE of the ridge probe ``states (B, T, d) → labels (B, T)``."""
    b, t, _ = states.shape
    x = probe_features(states, features)
    y = labels.reshape(b * t).astype(np.float64)
    groups = np.repeat(np.arange(b), t)  # one group per sequence: never split across folds
    predicted, _, _ = nested_ridge_predictions(x, y, groups, n_folds=n_folds, seed=seed)
    residual = np.asarray(predicted, dtype=np.float64).reshape(-1) - y
    r2 = 1.0 - float(np.sum(residual**2)) / float(np.sum((y - y.mean()) ** 2))
    return r2, float(np.mean(np.abs(residual)))


def probe_layer(
    states: np.ndarray,
    *,
    layer: int = 0,
    n_folds: int = 5,
    seed: int = 0,
    features: str = "linear",
) -> LayerProbe:
    """Position probe of one layer's hidden states ``(E, B, T, d)`` and its shuffled control.

    Raises:
        ValueError: not 4-D, non-finite values, fewer sequences than folds, ``T < 2``, or
            unknown ``features``.
    """
    if features not in FEATURES:
        raise ValueError(f"features={features!r} is unknown; choose one of {', '.join(FEATURES)}.")
    array = np.asarray(states, dtype=np.float64)
    if array.ndim != 4:
        raise ValueError(
            f"hidden states must be (seeds, sequences, positions, width); got shape {array.shape}."
        )
    e, b, t, _ = array.shape
    if t < 2:
        raise ValueError(f"a position probe needs at least 2 positions; got T={t}.")
    if b < n_folds:
        raise ValueError(
            f"{b} sequence(s) cannot fill {n_folds} folds grouped by sequence; pass at least "
            f"{n_folds} sequences or fewer folds."
        )
    if not np.isfinite(array).all():
        raise ValueError(f"layer {layer} has non-finite hidden states; check the trained model.")
    positions = np.broadcast_to(np.arange(t), (b, t))
    scores, control = [], []
    for member in range(e):
        fold_seed = seed + member
        options = {"n_folds": n_folds, "seed": fold_seed, "features": features}
        scores.append(_scores(array[member], positions, **options))
        shuffled = shuffled_positions(b, t, seed=fold_seed)
        control.append(_scores(array[member], shuffled, **options))
    s, c = np.array(scores), np.array(control)
    return LayerProbe(layer, s[:, 0], s[:, 1], c[:, 0], c[:, 1])


def position_probe_by_layer(
    hidden_states: Sequence[np.ndarray],
    *,
    n_folds: int = 5,
    seed: int = 0,
    features: str = "linear",
) -> Emergence:
    """:func:`probe_layer` on every layer, e.g. the lab engine's ``hidden_states(...)`` list.

    Args:
        hidden_states: one ``(E, B, T, d)`` array per layer, the input embeddings first, all
            of the same ``E``, ``B``, ``T`` (held-out sequences of one length, no padding).
        n_folds: outer (and inner) folds of the grouped nested CV.
        seed: folds and control shuffles; seed ``s`` of the model uses ``seed + s``.
        features: ``"linear"`` (the states) or ``"quadratic"`` (also their squares).
    Raises:
        ValueError: no layers, or layers of different ``(E, B, T)``.
    """
    if not hidden_states:
        raise ValueError("position_probe_by_layer got no layers; pass one array per layer.")
    shapes = {np.shape(h)[:3] for h in hidden_states}
    if len(shapes) != 1:
        raise ValueError(
            f"every layer must have the same (seeds, sequences, positions); got {sorted(shapes)}."
        )
    layers = tuple(
        probe_layer(h, layer=i, n_folds=n_folds, seed=seed, features=features)
        for i, h in enumerate(hidden_states)
    )
    _, b, t = shapes.pop()
    return Emergence(
        layers=layers, length=int(t), n_sequences=int(b), n_folds=n_folds, features=features
    )
