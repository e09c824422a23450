"""``PositionTable``: a learned (or synthetic) position table aligned to real token positions."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SetAside:
    """Rows of the stored tensor that are not token positions, and why (shown to the user)."""

    rows: tuple[int, ...]  # indices into the *stored* tensor
    reason: str  # e.g. "padding_idx=1 (RoBERTa offset 2)", "CLS token (ViT)"
    values: np.ndarray | None = None  # the rows themselves, (len(rows), d_model), when kept


@dataclass(frozen=True)
class PositionTable:
    """A position table: row ``p`` is the vector the model adds at token position ``p``.

    Attributes:
        matrix: ``(n_positions, d_model)`` float array, aligned so row 0 is the first real token
            position (offset rows and CLS rows removed and recorded in ``set_aside``).
        source: what was asked for ("bundled", a hub id, a path, "sinusoidal(...)").
        tensor_name: the checkpoint key the rows were read from ("" for synthetic tables).
        kind: "learned", "sinusoidal", "vit-2d" ...; says how to read the rows.
        set_aside: rows of the stored tensor that were dropped or set aside, with reasons.
        bytes_read: bytes fetched/read to get this table (0 for synthetic tables).
        revision: hub revision/commit when known.
        model_type: ``config.json``'s ``model_type`` when known.
        grid: ``(h, w)`` for 2-D patch tables (ViT), else ``None``.
        notes: further facts shown next to the table (e.g. "offset 2: positions start at row 2").
    """

    matrix: np.ndarray
    source: str
    tensor_name: str = ""
    kind: str = "learned"
    set_aside: tuple[SetAside, ...] = ()
    bytes_read: int = 0
    revision: str | None = None
    model_type: str | None = None
    grid: tuple[int, int] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        check_table_shape(np.shape(self.matrix), where=self.source)

    @property
    def n_positions(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def d_model(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def label(self) -> str:
        """Short human label, e.g. "bert-base-uncased (512×768)"."""
        return f"{self.source} ({self.n_positions}×{self.d_model})"


def check_table_shape(shape: tuple[int, ...], *, where: str) -> None:
    """Refuse anything but ``(n_positions ≥ 1, d_model ≥ 1)``: every view needs one cell at least.

    Raises:
        ValueError: rank ≠ 2, or no positions or no dimensions (e.g. ``0×8``).
    """
    if len(shape) != 2:
        raise ValueError(
            f"{where} has shape {tuple(shape)}; a position table is 2-D (n_positions, d_model)."
        )
    if min(shape) < 1:
        raise ValueError(
            f"{where}: a position table needs at least 1 position and 1 dimension; this one is "
            f"{shape[0]}×{shape[1]}. Pick a non-empty table."
        )
