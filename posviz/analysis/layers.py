"""Is the token's position still readable after each layer? A linear probe per layer.

The Stack Overflow question "The essence of learnable positional embedding?" asks whether BERT,
which adds its position embeddings once at the input, loses position information in later layers
(its answer points to Amir et al. 2021, §3.1); the cnblogs post "Transformer Position Encoding"
(shendawei, 2020) asks how positions "survive" through layers. The
experiment: run a model on real text cut into windows, take every layer's hidden states
(``output_hidden_states``: index 0 is the embedding output, ``i`` the output of layer ``i``), and
fit a ridge regression from a token's hidden state to its position in the window. The probe is
scored on held-out text (the last part of the token stream, never seen in training): R² (1 = exact,
0 = no better than the mean) and mean absolute error in positions.

The ridge penalty is chosen by cross-validation *grouped by blocks of consecutive windows*:
windows overlap (stride ≈ window/4), so leave-one-token-out CV sees near-copies of every held-out
token's context in training and favours a tiny penalty. Each layer's score is
shown with its spread over blocks of held-out windows and beside a same-procedure control: the
position labels shuffled within each window (no position to find).

Special tokens ([CLS], [SEP]) are left out of the probe: they always sit at the ends, so their
identity alone would give their position away.

Probing method: linear probes as in Hewitt & Manning (2019) and, for position, Wang & Chen (EMNLP
2020); hidden states as returned by ``transformers`` (``BaseModelOutput.hidden_states``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from posviz.analysis.evidence import (
    DEFAULT_ALPHAS,
    Evidence,
    choose_ridge_alphas,
    ridge_path,
    rng,
    spread,
)
from posviz.analysis.probes import r2_score

N_TEST_BLOCKS = 5  # blocks of held-out windows: the spread of each layer's score
WINDOWS_PER_GROUP = 8  # consecutive training windows that form one CV group (overlap ≈ 4)
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Windows:
    """Model inputs cut from one token stream: each row is one window with its special tokens.

    Attributes:
        input_ids: ``(n_windows, window)`` token ids.
        content: ``(n_windows, window)`` True where the token is text (not [CLS]/[SEP]/...).
        is_test: ``(n_windows,)`` True for windows cut from the held-out part of the text.
    """

    input_ids: np.ndarray
    content: np.ndarray
    is_test: np.ndarray


@dataclass(frozen=True)
class LayerProbeResult:
    """Per-layer probe scores.

    ``scores`` has one row per layer: ``layer`` (0 = embeddings), ``r2``, ``mae``, ``chance_mae``
    (MAE of always predicting the mean training position), ``alpha`` (chosen relative ridge
    penalty), ``r2_std`` (std of R² over blocks of held-out windows), ``control_r2`` and
    ``control_r2_std`` (the same with position labels shuffled within each window).
    ``evidence`` holds one :class:`Evidence` per layer (R² vs the shuffled-label control).
    """

    scores: pd.DataFrame
    n_train_tokens: int
    n_test_tokens: int
    window: int
    evidence: tuple[Evidence, ...] = ()


def _windows_from(ids: list[int], *, content_len: int, stride: int, limit: int) -> list[list[int]]:
    starts = range(0, max(len(ids) - content_len, 0) + 1, stride)
    return [ids[s : s + content_len] for s in starts][:limit]


def special_affixes(tokenizer: Any) -> tuple[list[int], list[int]]:
    """Ids the tokenizer puts before and after a text (BERT: [CLS] … [SEP]; GPT-2: none)."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return list(full[:start]), list(full[start + len(plain) :])
    return [], []


def cut_windows(
    token_ids: list[int],
    tokenizer: Any,
    *,
    window: int = 64,
    stride: int | None = None,
    test_fraction: float = 0.25,
    max_windows: int = 96,
) -> Windows:
    """Cut a token stream into model inputs: train windows from the start, test windows from the
    end.

    Each window holds ``window`` tokens including the tokenizer's special tokens
    (see :func:`special_affixes`); windows overlap by ``window − stride`` so the same word
    appears at many positions. Train and test windows never share a token.

    Raises:
        ValueError: the text is too short for one train and one test window, or bad sizes.
    """
    if not 0.05 <= test_fraction <= 0.5:
        raise ValueError(f"test_fraction={test_fraction} must be between 0.05 and 0.5.")
    prefix, suffix = special_affixes(tokenizer)
    content_len = window - len(prefix) - len(suffix)
    if content_len < 4:
        raise ValueError(f"window={window} leaves {content_len} text tokens; use a window ≥ 8.")
    stride = stride or max(1, content_len // 4)
    split = int(len(token_ids) * (1 - test_fraction))
    parts = (token_ids[:split], token_ids[split:])
    if min(len(p) for p in parts) < content_len:
        need = int(np.ceil(content_len / test_fraction))
        raise ValueError(
            f"The text has {len(token_ids)} tokens; with window={window} it needs about {need} "
            "so that both the training part and the held-out part fill a window. Paste more text "
            "or use a smaller window."
        )
    limit = max(2, max_windows // 2)
    train = _windows_from(parts[0], content_len=content_len, stride=stride, limit=max_windows)
    test = _windows_from(parts[1], content_len=content_len, stride=stride, limit=limit)
    rows = [prefix + list(chunk) + suffix for chunk in train + test]
    content = [0] * len(prefix) + [1] * content_len + [0] * len(suffix)
    return Windows(
        input_ids=np.asarray(rows, dtype=np.int64),
        content=np.tile(np.asarray(content, dtype=bool), (len(rows), 1)),
        is_test=np.arange(len(rows)) >= len(train),
    )


def hidden_states(
    model: Any, windows: Windows, *, batch_size: int = 16, progress: Progress | None = None
) -> np.ndarray:
    """Every layer's hidden states for every window: ``(n_layers + 1, n_windows, window, d_model)``.

    Runs ``model(input_ids, attention_mask, output_hidden_states=True)`` in batches (no grad).
    """
    import torch

    chunks = []
    n = windows.input_ids.shape[0]
    with torch.inference_mode():
        for start in range(0, n, batch_size):
            ids = torch.from_numpy(windows.input_ids[start : start + batch_size])
            out = model(
                input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True
            )
            chunks.append(np.stack([h.float().numpy() for h in out.hidden_states]))
            if progress is not None:
                progress(
                    min(1.0, (start + batch_size) / n), f"ran {min(n, start + batch_size)}/{n}"
                )
    return np.concatenate(chunks, axis=1)


def train_groups(windows: Windows, *, per_group: int = WINDOWS_PER_GROUP) -> np.ndarray:
    """CV group of each training window: blocks of ``per_group`` consecutive windows.

    Consecutive windows share most of their tokens; keeping them in one group means a validation
    fold never has a near-copy of its context in training (only the block borders touch).
    """
    n_train = int((~windows.is_test).sum())
    return np.arange(n_train) // per_group


def _shuffled_positions(n_windows: int, window: int, *, seed: int) -> np.ndarray:
    """Position labels permuted independently within each window (the no-position control)."""
    generator = rng(seed)
    return np.stack([generator.permutation(window) for _ in range(n_windows)])


def _score_layer(
    layer_states: np.ndarray,
    labels: np.ndarray,
    masks: tuple[np.ndarray, np.ndarray],
    groups: np.ndarray,
    test_blocks: np.ndarray,
) -> tuple[np.ndarray, list[float], list[list[float]]]:
    """Predicted test labels, chosen α and R² per block of test windows for one layer.

    ``labels``: ``(t, n_windows, window)``, e.g. the positions and the shuffled control; each
    target gets its own α by the same grouped CV (one decomposition per fold serves all).

    Returns:
        ``(predictions (n_test, t), [α per target], [[R² per block] per target])``.
    """
    train, test = masks
    train_windows = np.nonzero(train.any(axis=1))[0]
    row_groups = np.repeat(groups[: train_windows.size], train[train_windows].sum(axis=1))
    # Lazy: scikit-learn is slow to import.
    from sklearn.preprocessing import StandardScaler

    x_train = layer_states[train].astype(np.float64)
    x_test = layer_states[test].astype(np.float64)
    # A column whose spread is below one rounding step of the layer's largest value is constant
    # (MiniLM's last layer has three, std ≤ 6e-9); standardising would blow its rounding noise up
    # to unit variance, a feature like any other, so it is left out.
    step = np.finfo(layer_states.dtype).eps * float(np.abs(x_train).max(initial=0.0))
    varying = x_train.std(axis=0) > step
    if varying.any():
        x_train, x_test = x_train[:, varying], x_test[:, varying]
    # Standardised with the training tokens' statistics only: no held-out token shapes them.
    scaler = StandardScaler().fit(x_train)
    x_train, x_test = scaler.transform(x_train), scaler.transform(x_test)
    y_train = np.stack([target[train] for target in labels], axis=1).astype(float)
    y_test = np.stack([target[test] for target in labels], axis=1).astype(float)
    n_folds = min(5, int(np.unique(row_groups).size))
    alphas = choose_ridge_alphas(x_train, y_train, row_groups, DEFAULT_ALPHAS, n_folds=n_folds)
    path = ridge_path(x_train, y_train, x_test, alphas)
    predicted = np.stack([path[k][:, k] for k in range(len(alphas))], axis=1)
    blocks = [
        [
            r2_score(y_test[test_blocks == b, k], predicted[test_blocks == b, k])
            for b in np.unique(test_blocks)
        ]
        for k in range(len(alphas))
    ]
    return predicted, alphas, blocks


def probe_layers(states: np.ndarray, windows: Windows, *, seed: int = 0) -> LayerProbeResult:
    """Ridge probe of the in-window position from each layer's hidden states, scored on test
    windows, beside the same probe of shuffled position labels.

    ``states``: ``(n_layers + 1, n_windows, window, d_model)`` from :func:`hidden_states`. Features
    are standardised with training statistics; the relative ridge penalty is chosen per layer by
    5-fold CV grouped by blocks of consecutive training windows (:func:`train_groups`).
    """
    n_windows, window = windows.input_ids.shape
    positions = np.broadcast_to(np.arange(window), (n_windows, window))
    shuffled = _shuffled_positions(n_windows, window, seed=seed)
    train = windows.content & ~windows.is_test[:, None]
    test = windows.content & windows.is_test[:, None]
    groups = train_groups(windows)
    test_window = np.broadcast_to(np.arange(n_windows)[:, None], (n_windows, window))[test]
    first_test = int(np.argmax(windows.is_test))
    n_test = n_windows - first_test
    test_blocks = ((test_window - first_test) * min(N_TEST_BLOCKS, n_test)) // max(n_test, 1)
    y_train, y_test = positions[train].astype(float), positions[test].astype(float)
    chance_mae = float(np.abs(y_test - y_train.mean()).mean())
    rows, evidence = [], []
    labels = np.stack([positions, shuffled])
    for layer, layer_states in enumerate(states):
        both, chosen, (blocks, control) = _score_layer(
            layer_states, labels, (train, test), groups, test_blocks
        )
        predicted, alpha = both[:, 0], chosen[0]
        value, null = spread(blocks), spread(control)
        evidence.append(
            Evidence(
                label=f"R² at layer {layer}",
                value=value,
                control=null,
                control_label="shuffled positions",
                higher_is_better=True,
            )
        )
        rows.append(
            {
                "layer": layer,
                "r2": r2_score(y_test, predicted),
                "r2_std": value.std,
                "control_r2": null.mean,
                "control_r2_std": null.std,
                "mae": float(np.abs(predicted - y_test).mean()),
                "chance_mae": chance_mae,
                "alpha": alpha,
            }
        )
    return LayerProbeResult(
        pd.DataFrame(rows), int(train.sum()), int(test.sum()), window, tuple(evidence)
    )


def layer_position_probe(
    model: Any,
    tokenizer: Any,
    text: str,
    *,
    window: int = 64,
    stride: int | None = None,
    test_fraction: float = 0.25,
    max_windows: int = 96,
    progress: Progress | None = None,
) -> LayerProbeResult:
    """Tokenize ``text``, run ``model`` and probe token position at every layer (held-out text).

    Raises:
        ValueError: empty or too-short text, window longer than the model's positions.
    """
    if not text.strip():
        raise ValueError("The text is empty; paste a few paragraphs or pick a bundled text.")
    limit = getattr(model.config, "max_position_embeddings", None) or getattr(
        model.config, "n_positions", None
    )
    if limit and window > limit:
        raise ValueError(f"window={window} is longer than the model's {limit} positions.")
    ids = tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
    windows = cut_windows(
        list(ids),
        tokenizer,
        window=window,
        stride=stride,
        test_fraction=test_fraction,
        max_windows=max_windows,
    )
    states = hidden_states(model, windows, progress=progress)
    return probe_layers(states, windows)


def random_token_windows(
    vocab_size: int,
    *,
    n_windows: int,
    window: int,
    first_id: int = 1000,
    test_fraction: float = 0.25,
    seed: int = 0,
) -> Windows:
    """Windows of uniformly random token ids (no special tokens): a control with no word order.

    Used to check the probe itself: a bidirectional model whose position embeddings are zeroed,
    fed random tokens, carries no position signal, so the probe must score at chance (R² ≈ 0).
    """
    rng = np.random.default_rng(seed)
    ids = rng.integers(first_id, vocab_size, size=(n_windows, window))
    n_test = max(1, int(n_windows * test_fraction))
    return Windows(ids, np.ones_like(ids, dtype=bool), np.arange(n_windows) >= n_windows - n_test)


def summarise(result: LayerProbeResult) -> str:
    """One sentence stating what the per-layer scores show."""
    scores = result.scores
    best, worst = scores.loc[scores.r2.idxmax()], scores.loc[scores.r2.idxmin()]
    first, last = scores.iloc[0], scores.iloc[-1]
    return (
        f"At the input (layer 0) a linear probe reads the position with R² = {first.r2:.2f} "
        f"(error {first.mae:.1f} positions; guessing the mean gives {first.chance_mae:.1f}); after "
        f"the last layer R² = {last.r2:.2f} (error {last.mae:.1f}). Best layer: {int(best.layer)} "
        f"(R² {best.r2:.2f}); weakest: {int(worst.layer)} (R² {worst.r2:.2f})."
    )
