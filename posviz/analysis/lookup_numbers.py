"""What the nn.Embedding page shows: the table to look up in, and the check as a frame."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.analysis.embedding_lookup import LookupCheck
from posviz.encodings.sinusoidal import sinusoidal


def lookup_table(kind: str, *, learned: np.ndarray) -> np.ndarray:
    """MiniLM's learned table (``"learned"``) or the float32 sinusoid of its shape (512 × 384)."""
    if kind == "learned":
        return learned
    return sinusoidal(*learned.shape).astype(np.float32)


def lookup_frame(check: LookupCheck, *, shown: int = 6) -> pd.DataFrame:
    """One row per looked-up id: the one-hot's column and sum, the first ``shown`` dimensions of
    the lookup and of the product side by side."""
    return pd.DataFrame(
        {
            "position": check.ids,
            "one-hot (nonzero column)": check.onehot.argmax(axis=1),
            "one-hot sum": check.onehot.sum(axis=1),
            **{f"lookup[{k}]": check.lookup[:, k] for k in range(shown)},
            **{f"product[{k}]": check.product[:, k] for k in range(shown)},
        }
    )
