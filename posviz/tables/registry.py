"""Which checkpoint tensor is a model's position table: one explicit table, keyed by ``model_type``.

Each entry says where the rows live (checkpoint-key suffixes; prefixes such as ``bert.`` or
``model.`` vary between heads), how many stored rows come before token position 0 and why, and the
shape ``config.json`` predicts. Families whose positions are *not* a stored table (RoPE, ALiBi,
T5 buckets, fixed sinusoids) are listed separately so the loader can say so plainly and point to the
view that explains them.

Sources (transformers 5.x): ``models/roberta/modeling_roberta.py``
(``create_position_ids_from_input_ids``: positions start at ``padding_idx + 1 = 2``, padding tokens
get row 1), ``models/opt/modeling_opt.py`` (``OPTLearnedPositionalEmbedding``:
``cumsum(mask) * mask - 1 + 2``, so padding gets row 1, row 0 is never used),
``models/bart/modeling_bart.py`` (``BartLearnedPositionalEmbedding``: ``arange + 2``, rows 0 and 1
never used), ``models/vit/modeling_vit.py`` (``position_embeddings`` of shape
``(1, num_patches + 1, hidden)``; row 0 is added to the CLS token).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TableSpec:
    """Where one architecture keeps its position table and how its rows map to token positions."""

    suffixes: tuple[str, ...]  # checkpoint-key suffixes, tried in order
    rows_key: str  # config key giving the number of stored rows (before ``extra_rows``)
    width_keys: tuple[str, ...]  # config keys for d; the first one present wins
    extra_rows: int = 0  # stored rows = config[rows_key] + extra_rows
    set_aside: tuple[tuple[tuple[int, ...], str], ...] = ()  # leading rows that are not positions
    kind: str = "learned"
    part: str = ""  # "encoder" / "decoder" when a model has several tables
    vit_grid: bool = False  # stored as (1, 1 + h·w, d): row 0 CLS, the rest an h×w grid

    @property
    def offset(self) -> int:
        """Stored rows before token position 0."""
        return sum(len(rows) for rows, _ in self.set_aside)

    def expected_shape(self, config: Mapping[str, Any]) -> tuple[int, int] | None:
        """``(stored_rows, d)`` predicted by ``config.json``; ``None`` if the config lacks keys."""
        if self.vit_grid:
            h, w = vit_grid_shape(config) or (0, 0)
            rows = 1 + h * w if h else None
        else:
            raw = config.get(self.rows_key)
            rows = int(raw) + self.extra_rows if isinstance(raw, int) else None
        width = next((config[k] for k in self.width_keys if isinstance(config.get(k), int)), None)
        if rows is None or width is None:
            return None
        return rows, int(width)


def vit_grid_shape(config: Mapping[str, Any]) -> tuple[int, int] | None:
    """Patch grid ``(h, w)``: ``image_size // patch_size`` per side (``ViTPatchEmbeddings``)."""
    image, patch = config.get("image_size"), config.get("patch_size")
    if image is None or patch is None:
        return None
    ih, iw = (image, image) if isinstance(image, int) else tuple(image)
    ph, pw = (patch, patch) if isinstance(patch, int) else tuple(patch)
    return int(ih) // int(ph), int(iw) // int(pw)


_BERT_KEYS = ("embeddings.position_embeddings.weight",)
_ROBERTA_ROWS = (
    ((0,), "row 0 is never used: RoBERTa numbers positions from padding_idx + 1 = 2"),
    ((1,), "row 1 is padding_idx: the position every padding token gets (not a real position)"),
)
_OPT_ROWS = (
    ((0,), "row 0 is never used: OPT adds offset 2 to cumsum(attention_mask) − 1"),
    ((1,), "row 1 is where padding tokens land (their position is −1 + 2)"),
)
_BART_ROWS = (((0, 1), "rows 0 and 1 are never used: BART adds offset 2 to arange(seq_len)"),)

_BERT = TableSpec(_BERT_KEYS, "max_position_embeddings", ("hidden_size",))
_BERT_FACTORISED = TableSpec(
    _BERT_KEYS, "max_position_embeddings", ("embedding_size", "hidden_size")
)
_ROBERTA = TableSpec(
    _BERT_KEYS, "max_position_embeddings", ("hidden_size",), set_aside=_ROBERTA_ROWS
)
_GPT2 = TableSpec(("wpe.weight",), "n_positions", ("n_embd",))

#: model_type -> its position tables; the first one is the default.
REGISTRY: dict[str, tuple[TableSpec, ...]] = {
    "bert": (_BERT,),
    "distilbert": (TableSpec(_BERT_KEYS, "max_position_embeddings", ("dim",)),),
    "electra": (_BERT_FACTORISED,),
    "albert": (_BERT_FACTORISED,),
    "roberta": (_ROBERTA,),
    "xlm-roberta": (_ROBERTA,),
    "camembert": (_ROBERTA,),
    "gpt2": (_GPT2,),
    "gpt_neo": (TableSpec(("wpe.weight",), "max_position_embeddings", ("hidden_size",)),),
    "opt": (
        TableSpec(
            ("decoder.embed_positions.weight",),
            "max_position_embeddings",
            ("hidden_size",),
            extra_rows=2,
            set_aside=_OPT_ROWS,
        ),
    ),
    "bart": tuple(
        TableSpec(
            (f"{part}.embed_positions.weight",),
            "max_position_embeddings",
            ("d_model",),
            extra_rows=2,
            set_aside=_BART_ROWS,
            part=part,
        )
        for part in ("encoder", "decoder")
    ),
    "vit": (
        TableSpec(
            ("embeddings.position_embeddings",),
            "",
            ("hidden_size",),
            kind="vit-2d",
            vit_grid=True,
        ),
    ),
}


@dataclass(frozen=True)
class Family:
    """A family whose positions are computed, not stored: what it is and which view explains it."""

    name: str
    page: str  # url_path of the posviz view
    how: str


_ROPE = Family("RoPE", "rope", "rotates queries and keys by position-dependent angles")
_ALIBI = Family("ALiBi", "alibi", "adds a per-head linear distance penalty to attention scores")
_T5 = Family(
    "T5 relative buckets", "t5_buckets", "adds a learned bias per relative-distance bucket"
)
_SIN = Family("Sinusoidal", "sinusoidal", "adds fixed sinusoids computed from the position")

#: model_type -> family, for models with no stored absolute position table.
NOT_A_TABLE: dict[str, Family] = {
    **dict.fromkeys(
        (
            "llama",
            "mistral",
            "mixtral",
            "qwen2",
            "qwen2_moe",
            "qwen3",
            "qwen3_moe",
            "gemma",
            "gemma2",
            "gemma3",
            "gemma3_text",
            "phi",
            "phi3",
            "gpt_neox",
            "gptj",
            "falcon",
            "stablelm",
            "olmo",
            "olmo2",
            "cohere",
            "starcoder2",
            "internlm2",
            "deepseek_v2",
            "deepseek_v3",
            "granite",
            "smollm3",
            "roformer",
            "codegen",
            "persimmon",
        ),
        _ROPE,
    ),
    **dict.fromkeys(("bloom", "mpt"), _ALIBI),
    **dict.fromkeys(("t5", "mt5", "umt5", "longt5", "switch_transformers"), _T5),
    **dict.fromkeys(
        ("marian", "whisper", "fsmt", "speech_to_text", "pegasus", "m2m_100", "nllb-moe"), _SIN
    ),
}


def specs_for(model_type: str | None) -> tuple[TableSpec, ...]:
    """The registry entries for ``model_type``.

    Raises:
        ValueError: the model's positions are not a stored table (RoPE, ALiBi, T5, sinusoidal),
            or the model type is not in the registry.
    """
    if model_type in NOT_A_TABLE:
        family = NOT_A_TABLE[model_type]
        raise ValueError(
            f"Model type {model_type!r} has no learned position table: it uses {family.name}, "
            f"which {family.how}. See the {family.name} view (page '{family.page}') for how that "
            "works, or pick a model with a learned table (e.g. openai-community/gpt2, "
            "bert-base-uncased)."
        )
    if model_type not in REGISTRY:
        known = ", ".join(sorted(REGISTRY))
        raise ValueError(
            f"Model type {model_type!r} is not in posviz's table registry (known: {known}). "
            "Try one of those, or load the table from a .npy / .safetensors file."
        )
    return REGISTRY[model_type]


def spec_for(model_type: str | None, part: str | None = None) -> TableSpec:
    """One registry entry: the default table, or the one named ``part`` ("encoder"/"decoder")."""
    specs = specs_for(model_type)
    if not part:
        return specs[0]
    for spec in specs:
        if spec.part == part:
            return spec
    parts = [spec.part for spec in specs if spec.part]
    hint = f"choose one of {parts}" if parts else "leave the part empty"
    raise ValueError(f"Model type {model_type!r} has no {part!r} position table; {hint}.")


def key_matches(key: str, suffix: str) -> bool:
    """``key`` ends with ``suffix`` at a ``.`` boundary (``bert.emb.x`` matches ``emb.x``)."""
    return key == suffix or key.endswith("." + suffix)


def find_key(keys: list[str] | tuple[str, ...], suffixes: tuple[str, ...]) -> str | None:
    """Key for the first suffix that matches anything: shortest key, ties in checkpoint order."""
    for suffix in suffixes:
        hits = sorted((k for k in keys if key_matches(k, suffix)), key=len)
        if hits:
            return hits[0]
    return None
