"""What the Position-through-layers page shows: each run's per-layer scores, labelled."""

from __future__ import annotations

import pandas as pd

from posviz.analysis.layers import LayerProbeResult


def labelled_scores(result: LayerProbeResult, *, model: str) -> pd.DataFrame:
    """``result.scores`` with the ``model`` label and the train/test token counts per row."""
    scores = result.scores.copy()
    scores["model"] = model
    scores["train_tokens"] = result.n_train_tokens
    scores["test_tokens"] = result.n_test_tokens
    return scores


def layer_frames(scores: pd.DataFrame, zeroed: pd.DataFrame | None) -> pd.DataFrame:
    """The layer probe's scores, with the zeroed-position ablation's rows below when run."""
    return scores if zeroed is None else pd.concat([scores, zeroed], ignore_index=True)
