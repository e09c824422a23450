"""Read RoPE / ALiBi / T5 parameters from a Hugging Face ``config.json`` dict (pure parsing).

Field names follow the configs on the hub and transformers' config classes: ``rope_theta``,
``rope_scaling`` (transformers 4.x) or ``rope_parameters`` (5.x), ``partial_rotary_factor``
(Phi), ``rotary_pct`` / ``rotary_emb_base`` (GPT-NeoX), ``rotary_dim`` (GPT-J), ``head_dim``,
ALiBi's ``n_head``/``alibi`` (BLOOM, MPT, Falcon) and T5's ``relative_attention_num_buckets``.
Multimodal configs with a ``text_config`` are read from it. Nothing here fetches: pass the dict
(``posviz.tables.fetch_config`` fetches one) or use :data:`PRESETS`.

Which model types use which family is the family registry's to say
(:mod:`posviz.encodings.families`, which imports these parsers): a parser is told the model types
that use its family even when their config names none of its fields (``model_types=``), and
:func:`posviz.encodings.families.parse_config` routes a config of another family to that family's
page before any parser sees it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from posviz.encodings.rope import (
    RopeFrequencies,
    normalize_scaling,
    rope_frequencies,
    rotary_dim,
)

# RoPE checkpoints that pair dims (2i, 2i+1) (rotate_every_two) instead of (i, i + d/2)
_EVERY_TWO_MODEL_TYPES = frozenset({"gptj", "codegen"})
_SCALING_KEYS = (
    "factor",
    "original_max_position_embeddings",
    "low_freq_factor",
    "high_freq_factor",
    "beta_fast",
    "beta_slow",
    "attention_factor",
    "mscale",
    "mscale_all_dim",
    "truncate",
    "short_factor",
    "long_factor",
)


def as_config(config: Any) -> Mapping[str, Any]:
    """``config`` itself when it is a mapping (a parsed config.json), else a ``ValueError``."""
    if not isinstance(config, Mapping):
        raise ValueError(
            f"a model config must be a dict (parsed config.json), got {type(config).__name__}."
        )
    return config


def text_part(config: Mapping[str, Any], notes: list[str]) -> Mapping[str, Any]:
    """Multimodal configs (Llava, Gemma 3, Qwen2-VL …) keep the language model under text_config."""
    text = config.get("text_config")
    has_own = any(k in config for k in ("num_attention_heads", "n_head", "hidden_size", "d_model"))
    if isinstance(text, Mapping) and not has_own:
        notes.append(
            "read from the config's text_config (the language model of a multimodal model)"
        )
        return text
    return config


def first_field(config: Mapping[str, Any], *names: str) -> Any:
    """The value of the first of ``names`` that the config sets (not None), else None."""
    for name in names:
        if config.get(name) is not None:
            return config[name]
    return None


def whole_number(value: Any, name: str) -> int:
    """``value`` as an int when it is a whole number (``64`` or ``64.0``), else a ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ValueError(f"config field {name}={value!r} must be a whole number.")
    return int(value)


def model_type_of(config: Mapping[str, Any]) -> str:
    """The config's ``model_type``, or ``"unknown"``."""
    return str(config.get("model_type") or "unknown")


@dataclass(frozen=True)
class RopeConfig:
    """RoPE settings of one model, as read from its config.json.

    Attributes:
        model_type: config's ``model_type``.
        head_dim, partial_rotary_factor, base: as transformers derives them.
        scaling: normalised ``rope_scaling`` (``rope_type`` set) or ``None``.
        max_position_embeddings: the config's context length, when given.
        pairing: "rotate_half" or "rotate_every_two" (GPT-J, CodeGen).
        notes: what was inferred or defaulted, shown to the user.
    """

    model_type: str
    head_dim: int
    partial_rotary_factor: float
    base: float
    scaling: dict[str, Any] | None
    max_position_embeddings: int | None
    pairing: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def rotary_dim(self) -> int:
        return rotary_dim(self.head_dim, self.partial_rotary_factor)

    def frequencies(self, *, seq_len: int | None = None) -> RopeFrequencies:
        """The model's RoPE frequencies, scaled as transformers does (:func:`rope_frequencies`)."""
        return rope_frequencies(
            self.head_dim,
            base=self.base,
            scaling=self.scaling,
            partial_rotary_factor=self.partial_rotary_factor,
            max_position_embeddings=self.max_position_embeddings,
            seq_len=seq_len,
        )


def _rope_parameters(config: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """One flat dict of RoPE parameters from rope_parameters (5.x) or rope_scaling (4.x)."""
    params = config.get("rope_parameters") or config.get("rope_scaling") or {}
    if not isinstance(params, Mapping):
        raise ValueError(f"config's rope_scaling must be a dict, got {type(params).__name__}.")
    params = dict(params)
    if "rope_type" not in params and "type" not in params:
        nested = [k for k, v in params.items() if isinstance(v, Mapping)]
        if nested:  # per-layer-type parameters (Gemma 3 and others)
            chosen = "full_attention" if "full_attention" in nested else nested[0]
            notes.append(
                f"RoPE parameters differ per layer type; showing {chosen!r} "
                f"(others: {', '.join(k for k in nested if k != chosen) or 'none'})"
            )
            params = dict(params[chosen])
    if params.get("type") == "su" or params.get("rope_type") == "su":
        notes.append("rope_scaling type 'su' is the early name of 'longrope' (Phi-3); read as such")
        params = {k: v for k, v in params.items() if k != "type"} | {"rope_type": "longrope"}
    if params.get("type") == "mrope" or params.get("rope_type") == "mrope":
        notes.append(
            "mrope (multimodal RoPE) uses the default frequencies, split across t/h/w axes"
        )
        params = {k: v for k, v in params.items() if k not in ("type", "rope_type")}
    return params


def head_dim_of(config: Mapping[str, Any]) -> int:
    """``head_dim``, else ``hidden_size // num_attention_heads`` (as transformers derives it)."""
    head_dim = config.get("head_dim")
    if head_dim is not None:
        return whole_number(head_dim, "head_dim")
    hidden = first_field(config, "hidden_size", "n_embd", "d_model")
    heads = first_field(config, "num_attention_heads", "n_head", "num_heads")
    if hidden is None or heads is None:
        missing = [
            n for n, v in (("hidden_size", hidden), ("num_attention_heads", heads)) if v is None
        ]
        raise ValueError(
            f"config has no head_dim and lacks {' and '.join(missing)}; add head_dim (e.g. 128) or "
            "hidden_size and num_attention_heads."
        )
    hidden, heads = whole_number(hidden, "hidden_size"), whole_number(heads, "num_attention_heads")
    if heads < 1:
        raise ValueError(f"num_attention_heads={heads} must be ≥ 1.")
    return hidden // heads


_ROPE_KEYS = (
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "rotary_pct",
    "rotary_dim",
    "rotary_emb_base",
    "partial_rotary_factor",
)


def has_rope_fields(config: Mapping[str, Any]) -> bool:
    """The config sets a RoPE field (``rope_theta``, ``rope_scaling``, ``rotary_*`` …)."""
    return any(config.get(key) is not None for key in _ROPE_KEYS)


def rope_config_from_dict(
    config: Mapping[str, Any], *, model_types: Collection[str] = ()
) -> RopeConfig:
    """Parse RoPE settings from a hub ``config.json`` dict.

    ``model_types``: model types that use RoPE even when the config names no RoPE field
    (transformers then uses its defaults, e.g. ``rope_theta`` 10000);
    :func:`posviz.encodings.families.parse_config` passes the registry's.

    Raises:
        ValueError: no RoPE field and a model type not in ``model_types``, fields missing or
            invalid, or an unknown ``rope_scaling`` type.
    """
    notes: list[str] = []
    config = text_part(as_config(config), notes)
    model_type = model_type_of(config)
    params = _rope_parameters(config, notes)
    if not has_rope_fields(config) and model_type not in model_types:
        raise ValueError(
            f"config (model_type={model_type!r}) has no RoPE fields (rope_theta, rope_scaling, "
            "rotary_*); it probably uses a learned or sinusoidal table — see the Learned tables "
            "page."
        )
    head_dim = head_dim_of(config)
    base = first_field(params, "rope_theta") or first_field(config, "rope_theta", "rotary_emb_base")
    if base is None:
        base = 10000.0
        notes.append("no rope_theta in the config: transformers' default 10000 is used")
    partial = first_field(params, "partial_rotary_factor") or first_field(
        config, "partial_rotary_factor", "rotary_pct"
    )
    if partial is None and config.get("rotary_dim") is not None:
        partial = whole_number(config["rotary_dim"], "rotary_dim") / head_dim
    if partial is None and model_type == "gpt_neox":
        partial = 0.25
        notes.append("GPT-NeoX default rotary_pct=0.25 used")
    rope_type = params.get("rope_type", params.get("type", "default"))
    scaling = {k: params[k] for k in _SCALING_KEYS if k in params}
    scaling = normalize_scaling({"rope_type": rope_type, **scaling})
    if scaling is not None and scaling["rope_type"] in ("yarn", "longrope", "llama3"):
        # transformers: a top-level original_max_position_embeddings wins (Phi-3), else max_pos
        top = config.get("original_max_position_embeddings")
        if top is not None:
            scaling["original_max_position_embeddings"] = top
    max_pos = first_field(config, "max_position_embeddings", "n_positions", "max_seq_len")
    return RopeConfig(
        model_type=model_type,
        head_dim=head_dim,
        partial_rotary_factor=float(partial or 1.0),
        base=float(base),
        scaling=scaling,
        max_position_embeddings=None
        if max_pos is None
        else whole_number(max_pos, "max_position_embeddings"),
        pairing="rotate_every_two" if model_type in _EVERY_TWO_MODEL_TYPES else "rotate_half",
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class AlibiConfig:
    """ALiBi settings: ``n_heads`` (slopes follow from it) and the context length when given."""

    model_type: str
    n_heads: int
    max_positions: int | None


def alibi_switch(config: Mapping[str, Any]) -> bool:
    """The config turns ALiBi on: ``alibi=true`` (Falcon) or ``attn_config.alibi`` (MPT)."""
    attn = config.get("attn_config") if isinstance(config.get("attn_config"), Mapping) else {}
    return bool(attn.get("alibi")) or bool(config.get("alibi"))


def alibi_config_from_dict(
    config: Mapping[str, Any], *, model_types: Collection[str] = ()
) -> AlibiConfig:
    """ALiBi head count from a BLOOM / MPT / Falcon(alibi=true) config.

    ``model_types``: model types that use ALiBi with no switch in their config (BLOOM).

    Raises:
        ValueError: the model does not use ALiBi, or has no head count.
    """
    config = as_config(config)
    model_type = model_type_of(config)
    if not (alibi_switch(config) or model_type in model_types):
        raise ValueError(
            f"config (model_type={model_type!r}) does not use ALiBi (BLOOM, MPT with "
            "attn_config.alibi, Falcon with alibi=true do)."
        )
    heads = first_field(config, "n_head", "n_heads", "num_attention_heads")
    if heads is None:
        raise ValueError(
            "ALiBi config lacks its head count (n_head / n_heads / num_attention_heads)."
        )
    max_pos = first_field(config, "max_seq_len", "max_position_embeddings", "seq_length")
    return AlibiConfig(
        model_type,
        whole_number(heads, "n_heads"),
        None if max_pos is None else whole_number(max_pos, "max_seq_len"),
    )


@dataclass(frozen=True)
class T5Config:
    """T5 relative-attention settings (``max_distance`` defaults to 128 as in transformers)."""

    model_type: str
    num_buckets: int
    max_distance: int
    n_heads: int | None


def has_relative_buckets(config: Mapping[str, Any]) -> bool:
    """The config sets T5's ``relative_attention_num_buckets``."""
    return config.get("relative_attention_num_buckets") is not None


def t5_config_from_dict(
    config: Mapping[str, Any], *, model_types: Collection[str] = ()
) -> T5Config:
    """Bucket settings from a T5-family config.

    ``model_types``: model types whose configs may omit the bucket count (transformers: 32).

    Raises:
        ValueError: the config has no relative-attention buckets.
    """
    config = as_config(config)
    model_type = model_type_of(config)
    buckets = config.get("relative_attention_num_buckets")
    if buckets is None and model_type not in model_types:
        raise ValueError(
            f"config (model_type={model_type!r}) has no relative_attention_num_buckets: "
            "not a T5-style model."
        )
    heads = first_field(config, "num_heads", "num_attention_heads")
    return T5Config(
        model_type=model_type,
        num_buckets=whole_number(
            buckets if buckets is not None else 32, "relative_attention_num_buckets"
        ),
        max_distance=whole_number(
            config.get("relative_attention_max_distance") or 128, "relative_attention_max_distance"
        ),
        n_heads=None if heads is None else whole_number(heads, "num_heads"),
    )


# Well-known configs written out by hand (the RoPE/ALiBi/T5 fields only), for offline use.
# "illustrative" entries are not a published config; they show a scaling type on a known model.
PRESETS: dict[str, dict[str, Any]] = {
    "Llama-3.1-8B (llama3 scaling, config.json)": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    },
    "Llama-2-7B (plain RoPE, config.json)": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": None,
    },
    "Mistral-7B-v0.1 (plain RoPE, config.json)": {
        "model_type": "mistral",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 32768,
        "rope_theta": 10000.0,
    },
    "Qwen2.5-7B-Instruct + YaRN ×4 (as its model card suggests adding)": {
        "model_type": "qwen2",
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
    },
    "Phi-2 (partial rotary 0.4, config.json)": {
        "model_type": "phi",
        "hidden_size": 2560,
        "num_attention_heads": 32,
        "max_position_embeddings": 2048,
        "rope_theta": 10000.0,
        "partial_rotary_factor": 0.4,
    },
    "GPT-NeoX-20B (rotary_pct 0.25, config.json)": {
        "model_type": "gpt_neox",
        "hidden_size": 6144,
        "num_attention_heads": 64,
        "max_position_embeddings": 2048,
        "rotary_emb_base": 10000,
        "rotary_pct": 0.25,
    },
    "GPT-J-6B (rotate_every_two, rotary_dim 64, config.json)": {
        "model_type": "gptj",
        "n_embd": 4096,
        "n_head": 16,
        "n_positions": 2048,
        "rotary_dim": 64,
    },
    "Llama-2-7B + linear ×4 (illustrative)": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "linear", "factor": 4.0},
    },
    "Llama-2-7B + dynamic NTK ×4 (illustrative)": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "dynamic", "factor": 4.0},
    },
    "BLOOM-560m (ALiBi, 16 heads)": {"model_type": "bloom", "n_head": 16, "hidden_size": 1024},
    "BLOOM-176B (ALiBi, 112 heads)": {"model_type": "bloom", "n_head": 112, "hidden_size": 14336},
    "MPT-7B (ALiBi, 32 heads)": {
        "model_type": "mpt",
        "n_heads": 32,
        "d_model": 4096,
        "max_seq_len": 2048,
        "attn_config": {"alibi": True},
    },
    "T5-small (8 heads, 32 buckets)": {
        "model_type": "t5",
        "num_heads": 8,
        "d_model": 512,
        "relative_attention_num_buckets": 32,
        "relative_attention_max_distance": 128,
    },
    "T5-base (12 heads, 32 buckets)": {
        "model_type": "t5",
        "num_heads": 12,
        "d_model": 768,
        "relative_attention_num_buckets": 32,
        "relative_attention_max_distance": 128,
    },
}
