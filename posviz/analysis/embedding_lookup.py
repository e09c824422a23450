"""``nn.Embedding`` is a table: a lookup equals a one-hot vector times the matrix (Stack Overflow).

"Why nn.Embedding layer is used for positional encoding in BERT?" (Stack Overflow): "nn.Embedding
is just a table of vectors … conceptually equivalent to having one-hot vectors multiplied by a
matrix"; BERT's learned positions and the Transformer's static sinusoid are both such a table, "the
only difference is how they are trained". Two live demos on real tensors (torch):

* :func:`lookup_vs_onehot` — ``nn.Embedding.from_pretrained(W)(ids)`` against ``one_hot(ids) @ W``.
* :func:`train_a_few_steps` — a learned table (``requires_grad=True``) and a frozen sinusoid
  (``nn.Embedding.from_pretrained(..., freeze=True)``) take the same few SGD steps on a toy
  objective: only the learned rows that were looked up move; the frozen table does not move at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.encodings.sinusoidal import sinusoidal


@dataclass(frozen=True)
class LookupCheck:
    """One-hot × matrix vs ``nn.Embedding`` lookup for some ids.

    Attributes:
        ids: ``(k,)`` the looked-up row indices.
        onehot: ``(k, n_rows)`` the one-hot matrix.
        lookup: ``(k, d)`` rows returned by ``nn.Embedding``.
        product: ``(k, d)`` ``onehot @ table``.
        max_abs_diff: ``max |lookup − product|`` (0 exactly: the product adds zeros).
    """

    ids: np.ndarray
    onehot: np.ndarray
    lookup: np.ndarray
    product: np.ndarray
    max_abs_diff: float


def lookup_vs_onehot(table: np.ndarray, ids: list[int]) -> LookupCheck:
    """Compare ``nn.Embedding(table)(ids)`` with ``one_hot(ids) @ table`` (both in torch, float32).

    Args:
        table: ``(n_rows, d)`` e.g. a position table (rows = positions).
        ids: indices to look up, each in ``0 … n_rows−1``.

    Raises:
        ValueError: empty ids, or an id outside the table.
    """
    import torch
    import torch.nn.functional as F

    matrix = np.asarray(table, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"The table must be 2-D (rows × dimensions); got shape {matrix.shape}.")
    if not ids:
        raise ValueError("Give at least one index to look up.")
    bad = [i for i in ids if not 0 <= i < matrix.shape[0]]
    if bad:
        raise ValueError(f"Indices {bad[:5]} are outside the table's rows 0…{matrix.shape[0] - 1}.")
    weight = torch.from_numpy(matrix)
    index = torch.tensor(ids, dtype=torch.long)
    embedding = torch.nn.Embedding.from_pretrained(weight, freeze=True)
    with torch.inference_mode():
        lookup = embedding(index)  # (k, d)
        onehot = F.one_hot(index, num_classes=matrix.shape[0]).to(weight.dtype)  # (k, n_rows)
        product = onehot @ weight  # (k, d)
    return LookupCheck(
        ids=np.asarray(ids),
        onehot=onehot.numpy(),
        lookup=lookup.numpy(),
        product=product.numpy(),
        max_abs_diff=float((lookup - product).abs().max()),
    )


@dataclass(frozen=True)
class TrainingDemo:
    """What a few SGD steps did to a learned table and to a frozen sinusoidal one.

    Attributes:
        changes: one row per position: ``position``, ``used`` (looked up during training),
            ``learned_change`` and ``sinusoid_change`` (L2 norm of the row's change).
        requires_grad: ``{"learned": True, "sinusoid": False}`` as torch reports it.
        trainable_parameters: ``{"learned": n·d, "sinusoid": 0}``.
        losses: the toy loss at each step (it goes down: the learned table is being trained).
        learned_before, learned_after: ``(n_positions, d_model)`` the learned table before the
            first and after the last step.
        readout_before: ``(d_model + 1,)`` the read-out's initial weights, then its bias: with
            ``learned_before`` they give the first SGD step in closed form (see the tests).
    """

    changes: pd.DataFrame
    requires_grad: dict[str, bool]
    trainable_parameters: dict[str, int]
    losses: tuple[float, ...]
    learned_before: np.ndarray | None = None
    learned_after: np.ndarray | None = None
    readout_before: np.ndarray | None = None


def train_a_few_steps(
    n_positions: int = 16,
    d_model: int = 8,
    *,
    steps: int = 5,
    lr: float = 0.05,
    used: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6, 7),
    seed: int = 0,
) -> TrainingDemo:
    """Train a learned ``nn.Embedding`` next to a frozen sinusoid for a few SGD steps.

    The toy task: from ``PE[p]`` a shared linear read-out must predict ``p / n`` (mean squared
    error), using only the positions in ``used``. Gradients reach only the rows that were looked up,
    and never a frozen table.

    Raises:
        ValueError: sizes out of range, odd ``d_model``, ``used`` outside the table.
    """
    import torch

    if not 2 <= n_positions <= 512 or not 2 <= d_model <= 256 or d_model % 2:
        raise ValueError("Use 2…512 positions and an even width 2…256 for this small demo.")
    if not 1 <= steps <= 200:
        raise ValueError(f"steps={steps} must be between 1 and 200.")
    if not used or any(not 0 <= p < n_positions for p in used):
        raise ValueError(f"Training positions {used} must lie in 0…{n_positions - 1}.")
    torch.manual_seed(seed)
    learned = torch.nn.Embedding(n_positions, d_model)  # N(0, 1) init, requires_grad=True
    frozen = torch.nn.Embedding.from_pretrained(
        torch.from_numpy(sinusoidal(n_positions, d_model).astype(np.float32)), freeze=True
    )
    readout = torch.nn.Linear(d_model, 1)
    before = {
        "learned": learned.weight.detach().clone(),
        "sinusoid": frozen.weight.detach().clone(),
    }
    readout_before = np.concatenate(
        [readout.weight.detach().numpy().ravel(), readout.bias.detach().numpy()]
    ).astype(np.float64)
    trainable = [
        p
        for p in (*learned.parameters(), *frozen.parameters(), *readout.parameters())
        if p.requires_grad
    ]
    optimizer = torch.optim.SGD(trainable, lr=lr)
    index = torch.tensor(used, dtype=torch.long)
    target = (index.float() / n_positions).unsqueeze(1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        prediction = readout(learned(index)) + readout(frozen(index))
        loss = torch.nn.functional.mse_loss(prediction, target)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    changes = pd.DataFrame(
        {
            "position": np.arange(n_positions),
            "used": np.isin(np.arange(n_positions), used),
            "learned_change": (learned.weight.detach() - before["learned"]).norm(dim=1).numpy(),
            "sinusoid_change": (frozen.weight.detach() - before["sinusoid"]).norm(dim=1).numpy(),
        }
    )
    return TrainingDemo(
        changes=changes,
        requires_grad={
            "learned": learned.weight.requires_grad,
            "sinusoid": frozen.weight.requires_grad,
        },
        trainable_parameters={
            "learned": learned.weight.numel() if learned.weight.requires_grad else 0,
            "sinusoid": 0 if not frozen.weight.requires_grad else frozen.weight.numel(),
        },
        losses=tuple(losses),
        learned_before=before["learned"].numpy().copy(),
        learned_after=learned.weight.detach().numpy().copy(),
        readout_before=readout_before,
    )
