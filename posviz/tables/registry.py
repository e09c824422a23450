"""Which checkpoint tensor is a model's position table: one explicit table, keyed by ``model_type``.

Each entry says where the rows live (checkpoint-key suffixes; prefixes such as ``bert.`` or
``model.`` vary between heads), how many stored rows come before token position 0 and why, and the
shape ``config.json`` predicts. Model types whose positions are *not* a stored table (RoPE, ALiBi,
T5 buckets, fixed sinusoids …) are the family registry's to know
(:func:`posviz.encodings.families.family_for_model_type`), so the loader can say so plainly and
point to the view that explains them.

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

from posviz.encodings.families import family_for_model_type

__all__ = [
    "ALL_SUFFIXES",
    "REGISTRY",
    "TablePlan",
    "TableSpec",
    "find_key",
    "key_matches",
    "pick_key",
    "plan_for",
    "spec_for",
    "specs_for",
    "vit_grid_shape",
]


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
    """Patch grid ``(h, w)``: ``image_size // patch_size`` per side (``ViTPatchEmbeddings``).

    ``None`` when either size is missing or not a positive whole number (per side).
    """
    sides = [_two_sides(config.get(name)) for name in ("image_size", "patch_size")]
    if sides[0] is None or sides[1] is None:
        return None
    (ih, iw), (ph, pw) = sides
    return ih // ph, iw // pw


def _two_sides(value: Any) -> tuple[int, int] | None:
    """``224`` -> ``(224, 224)``; ``[224, 160]`` -> ``(224, 160)``; anything else -> ``None``."""
    pair = [value, value] if isinstance(value, int) else value
    if not isinstance(pair, list | tuple) or len(pair) != 2:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in pair):
        return None
    return int(pair[0]), int(pair[1])


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


def specs_for(model_type: str | None) -> tuple[TableSpec, ...]:
    """The registry entries for ``model_type``.

    Raises:
        ValueError: the model's positions are not a stored table (RoPE, ALiBi, T5, sinusoidal …:
            the family registry's model types), or the model type is not in the registry.
    """
    family = family_for_model_type(model_type)
    if family is not None:
        raise ValueError(
            f"Model type {model_type!r} has no learned position table: it uses {family.label}, "
            f"which {family.how}. See the {family.title} view (page '{family.url_path}') for how "
            "that works, or pick a model with a learned table (e.g. openai-community/gpt2, "
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


def pick_key(
    keys: list[str], suffixes: tuple[str, ...], *, only_tensor_ok: bool = False
) -> str | None:
    """:func:`find_key`, or the single key of a one-tensor file when ``only_tensor_ok``."""
    key = find_key(keys, suffixes)
    if key is None and only_tensor_ok and len(keys) == 1:
        key = keys[0]  # a bare file holding one tensor: that is the table
    return key


#: Every suffix the registry knows: what is tried when the architecture is unknown.
ALL_SUFFIXES: tuple[str, ...] = tuple(
    dict.fromkeys(s for specs in REGISTRY.values() for spec in specs for s in spec.suffixes)
)


@dataclass(frozen=True)
class TablePlan:
    """The registry's answer for one checkpoint: which tensor holds the table, how to align it.

    ``spec`` is ``None`` when the architecture is unknown (no ``config.json``, or a model type
    outside :data:`REGISTRY`): then any registry suffix is tried, a file holding a single tensor
    is taken as the table, and rows are kept as stored.
    """

    spec: TableSpec | None
    model_type: str | None
    kind: str
    notes: tuple[str, ...]
    expected_shape: tuple[int, int] | None = None  # stored shape config.json predicts
    grid: tuple[int, int] | None = None  # ViT patch grid config.json predicts

    @property
    def suffixes(self) -> tuple[str, ...]:
        return self.spec.suffixes if self.spec is not None else ALL_SUFFIXES

    @property
    def only_tensor_ok(self) -> bool:
        """A file holding a single tensor may be taken as the table (architecture unknown)."""
        return self.spec is None


def plan_for(config: Mapping[str, Any] | None, part: str | None = None) -> TablePlan:
    """Which tensor to read and how to align it, from ``config.json`` (or its absence).

    Raises:
        ValueError: the model computes its positions (RoPE, ALiBi, T5, sinusoidal), ``part`` is
            not one of the model's tables, or ``model_type`` is not a string.
    """
    model_type = (config or {}).get("model_type")
    if model_type is not None and not isinstance(model_type, str):
        raise ValueError(
            f"config.json's model_type is {model_type!r}, not a string: the config is corrupt."
        )
    if family_for_model_type(model_type) is not None:
        specs_for(model_type)  # raises the family's message
    if model_type is None or (model_type not in REGISTRY and not part):
        what = "no config.json"
        if model_type:
            what = f"model type {model_type!r} is not in the registry"
        note = f"{what}: rows are taken as stored, no offset applied"
        return TablePlan(None, model_type, "learned", (note,))
    spec = spec_for(model_type, part)
    notes: list[str] = []
    if spec.part:
        notes.append(f"{spec.part} table (this model has {len(REGISTRY[model_type])})")
    kind = spec.kind
    if model_type == "distilbert" and (config or {}).get("sinusoidal_pos_embds"):
        kind = "sinusoidal"
        notes.append("sinusoidal_pos_embds=true: this stored table is a fixed sinusoid")
    expected = spec.expected_shape(config) if config else None
    grid = vit_grid_shape(config) if spec.vit_grid and config else None
    return TablePlan(spec, model_type, kind, tuple(notes), expected, grid)
