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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what IDEs and type checkers see; at run time names load on first use
    from posviz.analysis.add_concat import concat_hypothesis, word_position_cloud
    from posviz.analysis.embedding_lookup import lookup_vs_onehot, train_a_few_steps
    from posviz.analysis.layers import layer_position_probe
    from posviz.analysis.permutation import permutation_test
    from posviz.analysis.probes import probe_positions, probe_relative_order
    from posviz.analysis.stats import (
        cosine_similarity_matrix,
        dimension_variance,
        dot_product_matrix,
        pca,
        position_norms,
        shift_similarity,
    )
    from posviz.analysis.vit import patch_similarity_grid
    from posviz.charts.circle import unit_circle_chart
    from posviz.charts.heatmap import heatmap_chart
    from posviz.charts.lines import dimensions_chart
    from posviz.encodings.alibi import alibi_bias, alibi_slopes
    from posviz.encodings.families import FAMILIES, family, parse_config
    from posviz.encodings.model_config import rope_config_from_dict
    from posviz.encodings.rope import (
        rope_attention_factor,
        rope_decay_bound,
        rope_frequencies,
        rope_inv_freq,
        rope_rotate,
        rope_scores,
    )
    from posviz.encodings.sinusoidal import (
        SINUSOID_LAYOUTS,
        pair_columns,
        sinusoid_frequencies,
        sinusoid_wavelengths,
        sinusoidal,
    )
    from posviz.encodings.t5 import t5_bias_matrix, t5_relative_bucket
    from posviz.models import load_bundled_model, load_hub_model
    from posviz.notebook import shift_similarity_chart, variance_chart
    from posviz.tables import (
        PositionTable,
        fetch_config,
        load_table,
        read_named_tensor,
        table_from_upload,
    )

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # --- sinusoidal encodings, statistics, chart builders (spine) ---
    "sinusoidal": "posviz.encodings.sinusoidal",
    "sinusoid_frequencies": "posviz.encodings.sinusoidal",
    "SINUSOID_LAYOUTS": "posviz.encodings.sinusoidal",
    "dimension_variance": "posviz.analysis.stats",
    "heatmap_chart": "posviz.charts.heatmap",
    "unit_circle_chart": "posviz.charts.circle",
    "variance_chart": "posviz.notebook",
    "sinusoid_wavelengths": "posviz.encodings.sinusoidal",
    "pair_columns": "posviz.encodings.sinusoidal",
    "position_norms": "posviz.analysis.stats",
    "cosine_similarity_matrix": "posviz.analysis.stats",
    "dot_product_matrix": "posviz.analysis.stats",
    "shift_similarity": "posviz.analysis.stats",
    "pca": "posviz.analysis.stats",
    "dimensions_chart": "posviz.charts.lines",
    "shift_similarity_chart": "posviz.notebook",
    # --- learned tables ---
    "load_table": "posviz.tables",
    "PositionTable": "posviz.tables",
    "table_from_upload": "posviz.tables",
    "fetch_config": "posviz.tables",
    "read_named_tensor": "posviz.tables",
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
    "parse_config": "posviz.encodings.families",
    "family": "posviz.encodings.families",
    "FAMILIES": "posviz.encodings.families",
    "patch_similarity_grid": "posviz.analysis.vit",
}

__all__ = [  # every public name; a test checks it equals _EXPORTS and that each one resolves
    "FAMILIES",
    "SINUSOID_LAYOUTS",
    "PositionTable",
    "alibi_bias",
    "alibi_slopes",
    "concat_hypothesis",
    "cosine_similarity_matrix",
    "dimension_variance",
    "dimensions_chart",
    "dot_product_matrix",
    "family",
    "fetch_config",
    "heatmap_chart",
    "layer_position_probe",
    "load_bundled_model",
    "load_hub_model",
    "load_table",
    "lookup_vs_onehot",
    "pair_columns",
    "parse_config",
    "patch_similarity_grid",
    "pca",
    "permutation_test",
    "position_norms",
    "probe_positions",
    "probe_relative_order",
    "read_named_tensor",
    "rope_attention_factor",
    "rope_config_from_dict",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_inv_freq",
    "rope_rotate",
    "rope_scores",
    "shift_similarity",
    "shift_similarity_chart",
    "sinusoid_frequencies",
    "sinusoid_wavelengths",
    "sinusoidal",
    "t5_bias_matrix",
    "t5_relative_bucket",
    "table_from_upload",
    "train_a_few_steps",
    "unit_circle_chart",
    "variance_chart",
    "word_position_cloud",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'posviz' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
