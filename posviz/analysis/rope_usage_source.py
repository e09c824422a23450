"""Frequency usage of any Llama/Qwen/Mistral-style RoPE checkpoint from its q/k weights alone,
read by byte range (a hub id, a local model directory): no model is built and no forward pass
runs, so it works for models far larger than a CPU could run.

For each layer ``model.layers.<i>.self_attn.q_proj.weight`` and ``…k_proj.weight`` are read
with :func:`posviz.tables.load.read_tensor` (safetensors single or sharded: the header, then
the tensor's bytes only; each tensor within ``POSVIZ_MAX_FETCH_MB``, and only its pair norms
kept, so memory holds one tensor at a time), and the head geometry and
``rope_theta`` come from the checkpoint's ``config.json``; then
:func:`posviz.analysis.rope_usage.frequency_usage` (Barbero et al. 2025, arXiv 2410.06205).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from posviz.analysis.rope_usage import FrequencyUsage, pair_weight_norms, usage_from_norms
from posviz.encodings.families import family_of_config
from posviz.tables.load import read_tensor
from posviz.tables.sources import open_files, resolve_source

#: Layers read at most (each costs two range reads); a deeper model is sampled evenly.
MAX_LAYERS = 64


def rope_geometry(config: Mapping[str, Any]) -> dict[str, Any]:
    """``n_heads``, ``n_kv_heads``, ``head_dim``, ``base`` and ``n_layers`` of a RoPE config.

    Raises:
        ValueError: not a full-rotary RoPE config with separate q/k projections.
    """
    family = family_of_config(config)
    if family is None or family.id != "rope":
        what = family.label if family is not None else "no rotary position encoding"
        raise ValueError(
            f"{config.get('model_type', 'This model')!r} uses {what}; frequency usage needs a "
            "RoPE model (Llama, Qwen, Mistral, …)."
        )
    if float(config.get("partial_rotary_factor", 1.0) or 1.0) != 1.0:
        raise ValueError("Only models that rotate the whole head are read here (no partial RoPE).")
    params = config.get("rope_parameters") or {}
    scaling = config.get("rope_scaling") or params.get("rope_type")
    n_heads = int(config["num_attention_heads"])
    return {
        "n_heads": n_heads,
        "n_kv_heads": int(config.get("num_key_value_heads") or n_heads),
        "head_dim": int(config.get("head_dim") or int(config["hidden_size"]) // n_heads),
        "base": float(config.get("rope_theta") or params.get("rope_theta") or 10000.0),
        "n_layers": int(config["num_hidden_layers"]),
        "scaled": bool(scaling) and scaling != "default",
    }


def source_frequency_usage(
    source: str,
    *,
    revision: str | None = None,
    max_layers: int = MAX_LAYERS,
    progress: Callable[[float, str], None] | None = None,
) -> tuple[FrequencyUsage, list[int]]:
    """:class:`FrequencyUsage` of ``source``'s q/k weights, and the layers it read.

    θ_i are the unscaled ``base^(−2i/d)``: a scaled RoPE (YaRN, llama3 …) changes the angles,
    not which weight rows feed which pair, so the shares stand; their wavelengths are the
    unscaled ones.

    Raises:
        ValueError: not a RoPE model, no config, missing q/k tensors, a tensor over the fetch cap,
            or any source error (offline, private, not found).
    """
    resolved = resolve_source(source, revision=revision)
    files = open_files(resolved)
    config = files.config()
    if not config:
        raise ValueError(f"{source!r} has no config.json; its head geometry is unknown.")
    geo = rope_geometry(config)
    n = geo["n_layers"]
    layers = sorted({round(i * (n - 1) / max(1, min(n, max_layers) - 1)) for i in
                     range(min(n, max_layers))})  # fmt: skip
    q, k = [], []
    for j, layer in enumerate(layers):
        if progress is not None:
            progress(j / len(layers), f"Reading layer {layer}'s q/k weights …")
        for name, out, heads in (("q_proj", q, geo["n_heads"]), ("k_proj", k, geo["n_kv_heads"])):
            suffix = f"layers.{layer}.self_attn.{name}.weight"
            array, _key, _file = read_tensor(files, (suffix,), filename=resolved.filename)
            # only the pair norms are kept: one tensor in memory at a time
            out.append(pair_weight_norms(array, heads, geo["head_dim"]))
            del array
    usage = usage_from_norms(np.stack(q), np.stack(k), head_dim=geo["head_dim"], base=geo["base"])
    return usage, layers
