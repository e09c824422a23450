"""posviz: see what transformer positional encodings are, on real models.

The notebook API. Everything here is importable without Streamlit, and names are loaded lazily so
that ``import posviz`` stays light (torch and transformers are imported only by the functions that
run a model). Example::

    import posviz
    pe = posviz.sinusoidal(128, 512)                # (n_positions, d_model)
    posviz.heatmap_chart(pe)                         # an Altair chart, displayed by the notebook
    table = posviz.load_table("bundled")             # MiniLM's learned table, offline
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # --- sinusoidal encodings, statistics, chart builders (spine) ---
    "sinusoidal": "posviz.encodings.sinusoidal",
    "sinusoid_frequencies": "posviz.encodings.sinusoidal",
    "SINUSOID_LAYOUTS": "posviz.encodings.sinusoidal",
    "dimension_variance": "posviz.analysis.stats",
    "heatmap_chart": "posviz.charts.heatmap",
    "unit_circle_chart": "posviz.charts.circle",
    "variance_chart": "posviz.charts.lines",
    "sinusoid_wavelengths": "posviz.encodings.sinusoidal",
    "pair_columns": "posviz.encodings.sinusoidal",
    "position_norms": "posviz.analysis.stats",
    "cosine_similarity_matrix": "posviz.analysis.stats",
    "dot_product_matrix": "posviz.analysis.stats",
    "shift_similarity": "posviz.analysis.stats",
    "pca": "posviz.analysis.stats",
    "dimensions_chart": "posviz.charts.lines",
    "shift_similarity_chart": "posviz.charts.lines",
    # --- learned tables ---
    "load_table": "posviz.tables",
    "PositionTable": "posviz.tables",
    "table_from_upload": "posviz.tables",
    "fetch_config": "posviz.tables.hub",
    "read_named_tensor": "posviz.tables.hub",
    # --- experiments ---
    "probe_positions": "posviz.analysis.probes",
    "probe_relative_order": "posviz.analysis.probes",
    "concat_hypothesis": "posviz.analysis.add_concat",
    "word_position_cloud": "posviz.analysis.add_concat",
    "permutation_test": "posviz.analysis.permutation",
    "layer_position_probe": "posviz.analysis.layers",
    "lookup_vs_onehot": "posviz.analysis.embedding_lookup",
    "train_a_few_steps": "posviz.analysis.embedding_lookup",
    "load_bundled_model": "posviz.models",
    "load_hub_model": "posviz.models",
    # --- other encoding families ---
    "rope_inv_freq": "posviz.encodings.rope",
    "rope_frequencies": "posviz.encodings.rope",
    "rope_attention_factor": "posviz.encodings.rope",
    "rope_rotate": "posviz.encodings.rope",
    "rope_scores": "posviz.encodings.rope",
    "rope_decay_bound": "posviz.encodings.rope",
    "alibi_slopes": "posviz.encodings.alibi",
    "alibi_bias": "posviz.encodings.alibi",
    "t5_relative_bucket": "posviz.encodings.t5",
    "t5_bias_matrix": "posviz.encodings.t5",
    "rope_config_from_dict": "posviz.encodings.model_config",
    "patch_similarity_grid": "posviz.analysis.vit",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'posviz' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
