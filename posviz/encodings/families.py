"""The family registry: one :class:`FamilySpec` per positional-encoding family, one id everywhere.

A family is one thing in the code. Its id (``"sinusoidal"``, ``"learned"``, ``"rope"``,
``"p_rope"``, ``"alibi"``, ``"t5"``, ``"nope"``) is the same in the lab's ``ModelConfig.scheme``,
the Compare page, the URL of its page and the tables registry; its display label is separate.
Whatever needs to know "which families exist" reads :data:`FAMILIES`; nothing keeps its own list:

- which model types use a family, and how a config says so (``model_types``, ``recognises``):
  the tables registry's "no stored table" answers (:func:`family_for_model_type`), the model
  loader's "no additive table" answers and the config pages' routing (:func:`family_of_config`);
- how to read its settings from a ``config.json`` (``config_parser``, :func:`parse_config`) and
  the hand-written configs to start from (``presets``, :func:`presets_for`);
- its page and where the navigation shows it (``page``, ``nav``: :func:`family_pages`), the
  question the guided path and the home page ask of it and the line under it (``question``,
  ``blurb``), and its colour in every chart (``colour``, found by ``chart_name`` in a label);
- its row on the Compare page (``comparison``: a :class:`ComparisonSignal`);
- how the lab trains with it (``lab``: a :class:`LabMechanism`, whose callables live in the
  formula modules and :mod:`posviz.encodings.lab_mechanisms`). The lab's tiny transformer knows
  only these mechanisms, never family names, so a new family trains in the lab by registering
  one here;
- its formula module (``module``).

Math apart from words: a lab run's id hashes only a family's math (:func:`family_math`: the
mechanism's kind and callables by name, and the source of the modules defining them) for the
families its arms use, never this registry's words (label, navigation, question, blurb, colour,
``how``): rewording a page or registering a family retrains nothing, editing a formula retrains
the studies that use it.

A family without one of these says why in ``missing`` (a test holds every spec to it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal, Protocol

import numpy as np

from posviz.encodings import p_rope
from posviz.encodings.alibi import alibi_slopes
from posviz.encodings.lab_mechanisms import (
    alibi_lab_bias,
    p_rope_lab_inv_freq,
    sinusoid_table,
    t5_lab_buckets,
)
from posviz.encodings.model_config import (
    PRESETS,
    alibi_config_from_dict,
    alibi_switch,
    as_config,
    has_relative_buckets,
    has_rope_fields,
    model_type_of,
    rope_config_from_dict,
    t5_config_from_dict,
    text_part,
)
from posviz.encodings.rope import default_inv_freq
from posviz.encodings.sinusoidal import sinusoid_frequencies

MechanismKind = Literal["none", "table", "learned_table", "rotary", "bias", "learned_bucket_bias"]
SignalKind = Literal["angles", "table", "bias", "buckets"]
Section = Literal["Encodings", "Beyond"]
#: What a family may lack, each with its reason in ``FamilySpec.missing``.
PARTS = ("page", "comparison", "lab", "config")

COMPARE_P_ROPE_FRACTION = p_rope.GEMMA4_FRACTION


class ConfigParser(Protocol):
    """Reads a family's settings from a ``config.json`` dict (raises ``ValueError`` if it can't)."""

    def __call__(self, config: Mapping[str, Any], *, model_types: Collection[str]) -> Any: ...


@dataclass(frozen=True)
class LabMechanism:
    """How the lab's transformer puts a family's positions in (one of six mechanisms).

    Attributes:
        kind: ``"none"`` (no positions), ``"table"`` (fixed vectors added/concatenated at the
            input), ``"learned_table"`` (an ``nn.Embedding`` of positions), ``"rotary"`` (queries
            and keys rotated by position-dependent angles), ``"bias"`` (fixed additive attention
            logits), ``"learned_bucket_bias"`` (a learned scalar per relative-distance bucket and
            head, added to the attention logits).
        table: ``(rows, width) -> (rows, width)`` float array, for ``"table"``.
        inv_freq: ``head_dim -> (head_dim // 2,)`` angle per position of each rotary pair, for
            ``"rotary"`` (a zero frequency leaves its pair unrotated).
        bias: ``(n_positions, heads, causal) -> (heads, n, n)`` additive logits, for ``"bias"``
            (``-inf`` above the diagonal when causal is allowed but not required: the lab adds its
            own causal mask).
        buckets: ``(n_positions, causal) -> ((n, n) int bucket of key j for query i, n_buckets)``,
            for ``"learned_bucket_bias"``.
    """

    kind: MechanismKind
    table: Callable[[int, int], np.ndarray] | None = None
    inv_freq: Callable[[int], np.ndarray] | None = None
    bias: Callable[[int, int, bool], np.ndarray] | None = None
    buckets: Callable[[int, bool], tuple[np.ndarray, int]] | None = None

    @property
    def absolute(self) -> bool:
        """True when positions are vectors at the input (they can be concatenated or re-added)."""
        return self.kind in ("table", "learned_table")


@dataclass(frozen=True)
class Nav:
    """Where a family's page sits in the app's navigation (``posviz.navigation`` reads it)."""

    title: str
    icon: str  # a Streamlit ":material/…:" icon
    section: Section


@dataclass(frozen=True)
class ComparisonSignal:
    """What the Compare page reduces a family to (:mod:`posviz.analysis.comparison`).

    Attributes:
        kind: ``"angles"`` (rotation angles ``kθ_i``, or ``pθ_i`` of a sinusoid table, from
            ``inv_freq``), ``"table"`` (a learned table the caller supplies), ``"bias"`` (a
            per-head logit penalty from ``slopes``) or ``"buckets"`` (T5's relative buckets).
        label: the curves' legend name.
        signal_for, acts_on, beyond: the summary's facts ("position p" or "distance k"; where
            the signal enters; what happens past the trained length).
        inv_freq: ``(dims, base) -> (pairs,)`` angle per token of each pair, for ``"angles"``.
        absolute: angles of the position added at the input (dims = the sinusoid's width, base
            10000), else of the distance inside attention (dims = the head dim, the RoPE base).
        scalable: RoPE's context-extension scalings apply (a scaled curve is added).
        slopes: ``heads -> (heads,)`` per-head slopes, for ``"bias"``.
    """

    kind: SignalKind
    label: str
    signal_for: str
    acts_on: str
    beyond: str
    inv_freq: Callable[[int, float], np.ndarray] | None = None
    absolute: bool = False
    scalable: bool = False
    slopes: Callable[[int], np.ndarray] | None = None


@dataclass(frozen=True)
class FamilySpec:
    """One positional-encoding family: what it is called, where it lives, how each view uses it.

    Attributes:
        id: the one id used everywhere (lab scheme, Compare, URLs).
        label: display name.
        module: the formula module (``posviz.encodings.…``); hashed into lab run ids.
        page: the page that explains it (``pages/….py``), or None with the reason in ``missing``.
        lab: how the lab trains with it, or None with the reason in ``missing``.
        references: keys of :data:`posviz.references.REFERENCES`.
        missing: a part of :data:`PARTS` → why this family has none.
        nav: the page's navigation title, icon and section.
        how: what it does to a transformer, one clause ("rotates queries and keys …"), for the
            messages that send a user to its page.
        model_types: Hugging Face ``model_type``\\ s that use it (each in one family only).
        recognises: ``config -> bool``: the config itself says it uses this family (a field or a
            switch), whatever its model type.
        overrides: families whose fields this one's configs also carry and whose claim it beats
            (a Gemma 4 config has RoPE fields; Falcon keeps ``rope_theta`` beside ``alibi=true``).
        config_parser: reads its settings from a ``config.json``, or None (reason in ``missing``).
        presets: hand-written configs ``name -> config`` the parser accepts, for offline use.
        comparison: its Compare row, or None (reason in ``missing``).
        question: the question its page answers, as the guided path and the home page ask it.
        blurb: one sentence of what its page shows (the home page's card under the question).
        colour: its colour in every chart (hex; one of ``charts.style.PALETTE``),
            matched by :attr:`chart_name` in series labels (``charts.style.entity_color``).
    """

    id: str
    label: str
    module: str
    page: str | None
    lab: LabMechanism | None
    references: tuple[str, ...] = ()
    missing: Mapping[str, str] = field(default_factory=dict)
    nav: Nav | None = None
    how: str = ""
    model_types: frozenset[str] = frozenset()
    recognises: Callable[[Mapping[str, Any]], bool] | None = None
    overrides: tuple[str, ...] = ()
    config_parser: ConfigParser | None = None
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    comparison: ComparisonSignal | None = None
    question: str = ""
    blurb: str = ""
    colour: str = ""

    @property
    def chart_name(self) -> str:
        """The word that names it in a chart's series labels: its label's first word, lower case
        (``"p-RoPE"`` → ``"p-rope"``, ``"T5 buckets"`` → ``"t5"``)."""
        return self.label.split()[0].lower()

    @property
    def url_path(self) -> str | None:
        """The page's URL segment: its file name (``pages/t5_buckets.py`` → ``t5_buckets``)."""
        return None if self.page is None else PurePosixPath(self.page).stem

    @property
    def title(self) -> str:
        """The page's title where there is one, else the label (for "see the … page")."""
        return self.nav.title if self.nav is not None else self.label


# --- each family's pieces ------------------------------------------------------------------


def _sinusoid_angles(width: int, base: float) -> np.ndarray:
    return sinusoid_frequencies(width, base=base)


def _compare_p_rope(head_dim: int, base: float) -> np.ndarray:
    return p_rope.p_rope_inv_freq(head_dim, fraction=COMPARE_P_ROPE_FRACTION, base=base)


def _accepted(parser: ConfigParser, model_types: Collection[str]) -> dict[str, Mapping[str, Any]]:
    """The shared :data:`~posviz.encodings.model_config.PRESETS` that ``parser`` reads."""
    chosen = {}
    for name, config in PRESETS.items():
        try:
            parser(config, model_types=model_types)
        except ValueError:
            continue
        chosen[name] = config
    return chosen


_ROPE_MODEL_TYPES = frozenset(
    {
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
    }
)
_ALIBI_MODEL_TYPES = frozenset({"bloom", "mpt"})
_T5_MODEL_TYPES = frozenset({"t5", "mt5", "umt5", "longt5", "switch_transformers"})
_SINUSOID_MODEL_TYPES = frozenset(
    {"marian", "whisper", "fsmt", "speech_to_text", "pegasus", "m2m_100", "nllb-moe"}
)
_NO_CONFIG = "its settings are not read from a model config"

FAMILIES: dict[str, FamilySpec] = {
    spec.id: spec
    for spec in (
        FamilySpec(
            "sinusoidal",
            "sinusoid",
            "posviz.encodings.sinusoidal",
            "pages/sinusoidal.py",
            LabMechanism("table", table=sinusoid_table),
            ("vaswani_2017",),
            missing={
                "config": "a sinusoid has no parameters beyond its width and length, which its "
                "page takes by hand (its models' tables load as 'sinusoidal:NxD')",
            },
            nav=Nav("Sinusoidal", ":material/waves:", "Encodings"),
            how="adds fixed sinusoids computed from the position",
            question="What does the sinusoidal encoding look like, and why sin and cos?",
            blurb="Every position's vector of sines and cosines, and why a sine alone is "
            "ambiguous.",
            colour="#c66713",  # PALETTE orange
            model_types=_SINUSOID_MODEL_TYPES,
            comparison=ComparisonSignal(
                "angles",
                "Sinusoid",
                "position p",
                "added to the input",
                "defined; slow dims unseen",
                inv_freq=_sinusoid_angles,
                absolute=True,
            ),
        ),
        FamilySpec(
            "learned",
            "learned table (nn.Embedding)",
            "posviz.encodings.lab_mechanisms",
            "pages/learned.py",
            LabMechanism("learned_table"),
            ("so_nn_embedding",),
            missing={
                "config": "a learned table is read from the checkpoint itself; which tensor holds "
                "it, per model type, is posviz.tables.registry's",
            },
            nav=Nav("Learned tables", ":material/psychology:", "Encodings"),
            how="adds a learned vector per position, stored in the checkpoint",
            question="What has a learned position table learned?",
            blurb="A real checkpoint's table: which positions look alike, and where its rows "
            "stop being trained.",
            colour="#4c78a8",  # PALETTE blue
            comparison=ComparisonSignal(
                "table", "Learned", "position p", "added to the input", "no row past the table"
            ),
        ),
        FamilySpec(
            "rope",
            "RoPE",
            "posviz.encodings.rope",
            "pages/rope.py",
            LabMechanism("rotary", inv_freq=default_inv_freq),
            ("su_2021",),
            nav=Nav("RoPE", ":material/360:", "Beyond"),
            how="rotates queries and keys by position-dependent angles",
            question="Llama has no position table: where did the positions go?",
            blurb="RoPE rotates queries and keys; context-extension scalings exactly as "
            "transformers does them.",
            colour="#317740",  # PALETTE green
            model_types=_ROPE_MODEL_TYPES,
            recognises=has_rope_fields,
            config_parser=rope_config_from_dict,
            presets=_accepted(rope_config_from_dict, _ROPE_MODEL_TYPES),
            comparison=ComparisonSignal(
                "angles",
                "RoPE",
                "distance k",
                "rotates q and k",
                "defined; slow pairs unseen",
                inv_freq=default_inv_freq,
                scalable=True,
            ),
        ),
        FamilySpec(
            "p_rope",
            "p-RoPE",
            "posviz.encodings.p_rope",
            "pages/p_rope.py",
            LabMechanism("rotary", inv_freq=p_rope_lab_inv_freq),
            ("barbero_2025", "su_2021"),
            nav=Nav("p-RoPE", ":material/filter_list:", "Beyond"),
            how="rotates only the fastest share p of RoPE's query/key pairs and leaves the rest "
            "unrotated",
            question="Gemma 4 rotates only some of RoPE's pairs: what does that keep?",
            blurb="p-RoPE keeps RoPE's fastest pairs and never rotates the rest, as Gemma 4's "
            "full-attention layers do.",
            colour="#378184",  # PALETTE teal
            model_types=frozenset({"gemma4", "gemma4_text"}),
            recognises=p_rope.uses_p_rope,
            overrides=("rope",),
            config_parser=p_rope.p_rope_config_from_dict,
            presets=p_rope.PRESETS,
            comparison=ComparisonSignal(
                "angles",
                f"p-RoPE (p = {COMPARE_P_ROPE_FRACTION:g})",
                "distance k",
                "rotates a share p of q, k pairs",
                "fast pairs as RoPE; the rest identical at every k",
                inv_freq=_compare_p_rope,
            ),
        ),
        FamilySpec(
            "alibi",
            "ALiBi",
            "posviz.encodings.alibi",
            "pages/alibi.py",
            LabMechanism("bias", bias=alibi_lab_bias),
            ("press_2022",),
            nav=Nav("ALiBi", ":material/trending_down:", "Beyond"),
            how="adds a per-head linear distance penalty to attention scores",
            question="How do BLOOM and MPT encode position?",
            blurb="ALiBi's per-head linear biases, for any head count.",
            colour="#b23d32",  # PALETTE red
            model_types=_ALIBI_MODEL_TYPES,
            recognises=alibi_switch,
            overrides=("rope",),
            config_parser=alibi_config_from_dict,
            presets=_accepted(alibi_config_from_dict, _ALIBI_MODEL_TYPES),
            comparison=ComparisonSignal(
                "bias",
                "ALiBi",
                "distance k",
                "logit bias −m·k",
                "larger penalties than seen; far keys only weaker",
                slopes=alibi_slopes,
            ),
        ),
        FamilySpec(
            "t5",
            "T5 buckets",
            "posviz.encodings.t5",
            "pages/t5_buckets.py",
            LabMechanism("learned_bucket_bias", buckets=t5_lab_buckets),
            ("raffel_2020",),
            nav=Nav("T5 relative buckets", ":material/inventory_2:", "Beyond"),
            how="adds a learned bias per relative-distance bucket",
            question="How does T5 encode position?",
            blurb="T5's relative-position buckets and a checkpoint's learned bias.",
            colour="#735c88",  # PALETTE purple
            model_types=_T5_MODEL_TYPES,
            recognises=has_relative_buckets,
            config_parser=t5_config_from_dict,
            presets=_accepted(t5_config_from_dict, _T5_MODEL_TYPES),
            comparison=ComparisonSignal(
                "buckets",
                "T5 buckets",
                "distance k (bucketed)",
                "learned logit bias per bucket",
                "last bucket shared: nothing new",
            ),
        ),
        FamilySpec(
            "nope",
            "NoPE (no positions)",
            "posviz.encodings.lab_mechanisms",
            "pages/nope.py",
            LabMechanism("none"),
            ("haviv_2022",),
            missing={
                "comparison": "NoPE gives no position signal to compare: order reaches a causal "
                "model only through its mask (its page shows how)",
                "config": "NoPE has no settings to read: it adds nothing to the model",
            },
            nav=Nav("NoPE (no encoding)", ":material/block:", "Beyond"),
            how="adds nothing: a causal model can still read order from its mask",
            question="What if there is no position encoding at all?",
            blurb="What a causal mask alone leaks about position.",
            colour="#a57d6b",  # PALETTE brown
        ),
    )
}


# --- reading the registry ------------------------------------------------------------------


def family(family_id: str) -> FamilySpec:
    """The spec with this id.

    Raises:
        ValueError: unknown id (lists the known ones).
    """
    if family_id not in FAMILIES:
        raise ValueError(f"No encoding family {family_id!r}; choose one of {', '.join(FAMILIES)}.")
    return FAMILIES[family_id]


def lab_schemes() -> tuple[str, ...]:
    """Ids of the families the lab can train with, in registry order."""
    return tuple(spec.id for spec in FAMILIES.values() if spec.lab is not None)


def lab_mechanism(family_id: str) -> LabMechanism:
    """The lab mechanism of a family.

    Raises:
        ValueError: unknown id, or a family the lab cannot train (the message says why).
    """
    spec = family(family_id)
    if spec.lab is None:
        why = spec.missing.get("lab", "it has no lab mechanism")
        raise ValueError(f"The lab cannot train with {spec.label}: {why}.")
    return spec.lab


def code_modules() -> tuple[str, ...]:
    """The formula modules of every family, without repeats (each lab run hashes those of the
    families its arms use: :func:`family_math`)."""
    return tuple(dict.fromkeys(spec.module for spec in FAMILIES.values()))


def _callable_name(fn: Callable[..., Any]) -> str:
    """``module:qualname`` of a mechanism's callable (a ``functools.partial``: its function and
    keywords), the same in every process."""
    if isinstance(fn, functools.partial):
        keywords = ", ".join(f"{k}={v!r}" for k, v in sorted(fn.keywords.items()))
        return f"{_callable_name(fn.func)}({', '.join(map(repr, fn.args))}; {keywords})"
    return f"{fn.__module__}:{getattr(fn, '__qualname__', type(fn).__qualname__)}"


def _callable_module(fn: Callable[..., Any]) -> str:
    return _callable_module(fn.func) if isinstance(fn, functools.partial) else fn.__module__


def family_math(family_id: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """What of a family decides a lab run's numbers: a canonical description of its lab
    mechanism (id, mechanism kind, each callable by ``module:qualname``) and the modules whose
    source is hashed with it (its formula module, then every module defining a callable).

    Nothing of its page is here (label, navigation, question, blurb, colour, ``how``): rewording
    them, or registering another family, changes no run id (:mod:`posviz.lab.engine.store`).

    Raises:
        ValueError: unknown id, or a family the lab cannot train.
    """
    spec = family(family_id)
    mechanism = lab_mechanism(family_id)
    slots = ("table", "inv_freq", "bias", "buckets")
    callables = {s: fn for s in slots if (fn := getattr(mechanism, s)) is not None}
    description = {
        "id": spec.id,
        "mechanism": mechanism.kind,
        "callables": {slot: _callable_name(fn) for slot, fn in callables.items()},
        "module": spec.module,
    }
    modules = dict.fromkeys((spec.module, *(_callable_module(fn) for fn in callables.values())))
    return description, tuple(modules)


def family_pages(section: Section) -> tuple[FamilySpec, ...]:
    """The families whose page the navigation lists in ``section``, in registry order."""
    return tuple(
        spec
        for spec in FAMILIES.values()
        if spec.page is not None and spec.nav is not None and spec.nav.section == section
    )


def compared_families() -> tuple[str, ...]:
    """Ids of the families with a Compare row, in registry order."""
    return tuple(spec.id for spec in FAMILIES.values() if spec.comparison is not None)


def family_for_model_type(model_type: str | None) -> FamilySpec | None:
    """The family a Hugging Face ``model_type`` uses, when the registry knows it."""
    if not isinstance(model_type, str):
        return None
    # read at call time: a family registered later (a test's, a plug-in's) is found too
    return next((s for s in FAMILIES.values() if model_type in s.model_types), None)


def family_of_config(config: Mapping[str, Any]) -> FamilySpec | None:
    """The family a ``config.json`` dict describes, or None (a learned table, or not known).

    The config's own fields and switches decide first (a family that ``overrides`` another wins
    when both are claimed), then its ``model_type``. Multimodal configs are read from their
    ``text_config``.

    Raises:
        ValueError: ``config`` is not a dict.
    """
    outer = as_config(config)
    part = text_part(outer, [])
    claimed = [s for s in FAMILIES.values() if s.recognises is not None and s.recognises(part)]
    beaten = {other for spec in claimed for other in spec.overrides}
    winners = [spec for spec in claimed if spec.id not in beaten]
    if winners:
        return winners[0]
    return family_for_model_type(model_type_of(part)) or family_for_model_type(
        outer.get("model_type")
    )


def parse_config(family_id: str, config: Mapping[str, Any]) -> Any:
    """A family's settings read from a ``config.json`` dict (``RopeConfig``, ``AlibiConfig`` …).

    A config of another family is refused with that family's name and page, before the parser
    sees it; the parser is told the family's model types (configs that name no field of it).

    Raises:
        ValueError: the family reads no config, the config is another family's, or the parser's
            own errors (missing or invalid fields).
    """
    spec = family(family_id)
    if spec.config_parser is None:
        why = spec.missing.get("config", _NO_CONFIG)
        raise ValueError(f"{spec.label} reads no model config: {why}.")
    used = family_of_config(config)
    if used is not None and used.id != spec.id:
        model_type = model_type_of(text_part(as_config(config), []))
        raise ValueError(
            f"config (model_type={model_type!r}) uses {used.label}, not {spec.label}: it "
            f"{used.how}. Open the {used.title} page instead."
        )
    return spec.config_parser(config, model_types=spec.model_types)


def presets_for(family_id: str) -> Mapping[str, Mapping[str, Any]]:
    """A family's hand-written configs, ``name -> config`` (empty when it reads none).

    Raises:
        ValueError: unknown id.
    """
    return family(family_id).presets
