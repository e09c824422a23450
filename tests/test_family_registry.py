"""The family registry: every family has a page, a Compare row and a lab mechanism, or says why.

One id per family everywhere: the lab's schemes, the Compare rows, the navigation and the tables
registry's "no stored table" answers are all read from ``posviz.encodings.families``.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import SimpleNamespace
from typing import get_args

import numpy as np
import pytest
from conftest import ROOT

from posviz.encodings.families import (
    FAMILIES,
    PARTS,
    MechanismKind,
    code_modules,
    compared_families,
    family,
    family_for_model_type,
    family_math,
    family_of_config,
    family_pages,
    lab_mechanism,
    lab_schemes,
    parse_config,
    presets_for,
)
from posviz.references import REFERENCES

SPECS = list(FAMILIES.values())


def _has(spec, part: str) -> bool:
    return {
        "page": spec.page is not None,
        "comparison": spec.comparison is not None,
        "lab": spec.lab is not None,
        "config": spec.config_parser is not None,
    }[part]


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.id)
def test_every_family_has_each_part_or_says_why_not(spec):
    assert set(spec.missing) <= set(PARTS), spec.missing
    for part in PARTS:
        if _has(spec, part):
            assert part not in spec.missing, f"{spec.id} has a {part} and a reason for none"
        else:
            assert len(spec.missing.get(part, "")) > 20, f"{spec.id} has no {part} and no reason"
    # the three every family needs, by the registry's rule: only NoPE may skip the Compare row
    assert spec.page is not None and spec.lab is not None
    assert spec.comparison is not None or spec.id == "nope"


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.id)
def test_each_family_points_at_real_things(spec):
    assert re.fullmatch(r"[a-z][a-z0-9_]*", spec.id) and family(spec.id) is spec
    assert (ROOT / spec.page).is_file() and spec.url_path == Path(spec.page).stem
    assert spec.nav is not None and spec in family_pages(spec.nav.section)
    assert set(spec.references) <= set(REFERENCES) and spec.references
    module = importlib.import_module(spec.module)
    assert spec.module.startswith("posviz.encodings.") and module.__doc__
    assert spec.how and spec.label


def test_ids_labels_and_model_types_are_each_in_one_family_only():
    from posviz.tables.registry import REGISTRY

    assert len({spec.label for spec in SPECS}) == len(SPECS)
    owners = [t for spec in SPECS for t in spec.model_types]
    assert len(owners) == len(set(owners))
    assert not set(owners) & set(REGISTRY)  # a model type has a stored table or a family
    for spec in SPECS:
        assert set(spec.overrides) <= set(FAMILIES) - {spec.id}
        for model_type in spec.model_types:
            assert family_for_model_type(model_type) is spec


def test_every_formula_module_is_hashed_into_lab_run_ids():
    # model_config reads config.json files (no formula the lab runs) and the registry holds the
    # families' words (never hashed); every other module here is a family's formula or the lab's
    # mechanisms, and the run ids of a study hash those of the families its arms use
    on_disk = {
        f"posviz.encodings.{p.stem}"
        for p in (ROOT / "posviz" / "encodings").glob("*.py")
        if p.stem not in ("__init__", "model_config", "families")
    }
    assert on_disk == set(code_modules())
    hashed = {m for spec in SPECS if spec.lab is not None for m in family_math(spec.id)[1]}
    assert hashed == on_disk and "posviz.encodings.families" not in hashed


def test_one_id_everywhere():
    from posviz.analysis.comparison import FAMILIES as COMPARED
    from posviz.lab.engine.config import schemes
    from posviz.navigation import all_pages

    assert schemes() == lab_schemes() == tuple(FAMILIES)
    assert COMPARED == compared_families() == tuple(f for f in FAMILIES if f != "nope")
    nav = {(p.path, p.title, p.url_path) for p in all_pages()}
    for spec in SPECS:
        assert (spec.page, spec.nav.title, spec.url_path) in nav


@pytest.mark.parametrize("spec", [s for s in SPECS if s.config_parser], ids=lambda s: s.id)
def test_presets_parse_and_route_to_their_own_family(spec):
    assert presets_for(spec.id)
    for name, config in presets_for(spec.id).items():
        assert family_of_config(config) is spec, name
        parse_config(spec.id, config)
    for other in SPECS:
        if other is not spec and other.config_parser is not None:
            for config in presets_for(other.id).values():
                with pytest.raises(ValueError, match=f"uses {re.escape(other.label)}"):
                    parse_config(spec.id, config)


def test_families_without_a_config_say_why():
    with pytest.raises(ValueError, match="NoPE has no settings"):
        parse_config("nope", {"model_type": "gpt2"})
    assert presets_for("nope") == {}
    with pytest.raises(ValueError, match="No encoding family 'sinusoid'; choose one of"):
        family("sinusoid")


#: The callables each mechanism kind reads (posviz.lab.engine.model); any other would be ignored.
CALLABLES = ("table", "inv_freq", "bias", "buckets")
NEEDS = {
    "none": set(),
    "learned_table": set(),  # the lab model owns the nn.Embedding
    "table": {"table"},
    "rotary": {"inv_freq"},
    "bias": {"bias"},
    "learned_bucket_bias": {"buckets"},
}


def test_every_mechanism_kind_says_what_it_needs():
    assert set(NEEDS) == set(get_args(MechanismKind))


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.id)
def test_lab_mechanisms_have_the_callable_their_kind_needs(spec):
    mechanism = lab_mechanism(spec.id)
    given = {name for name in CALLABLES if getattr(mechanism, name) is not None}
    assert given == NEEDS[mechanism.kind], (mechanism.kind, given)  # none/learned_table: nothing
    if mechanism.kind == "table":
        assert mechanism.table(10, 8).shape == (10, 8)
    if mechanism.kind == "rotary":
        theta = mechanism.inv_freq(16)
        assert theta.shape == (8,) and theta[0] == 1.0 and np.all(np.diff(theta) <= 0)
    if mechanism.kind == "bias":
        bias = mechanism.bias(6, 4, True)
        assert bias.shape == (4, 6, 6) and np.all(np.diag(bias[0]) == 0)
    if mechanism.kind == "learned_bucket_bias":
        buckets, count = mechanism.buckets(6, False)
        assert buckets.shape == (6, 6) and buckets.min() >= 0 and buckets.max() < count
    assert mechanism.absolute == (mechanism.kind in ("table", "learned_table"))


def test_compare_gives_every_compared_family_a_row():
    from posviz.analysis.comparison import (
        CompareSettings,
        LearnedTable,
        compare_families,
        family_label,
    )

    table = np.random.default_rng(0).normal(size=(64, 8))
    learned = LearnedTable("Learned (random)", table, np.zeros(64))
    result = compare_families(
        compared_families(), settings=CompareSettings(n_distances=128), learned=learned
    )
    assert not result.errors
    rows = list(result.summary["family"])
    for family_id in compared_families():
        label = "Learned (random)" if family_id == "learned" else family_label(family_id)
        assert any(row.startswith(label) for row in rows), (label, rows)
    with pytest.raises(ValueError, match="NoPE gives no position signal"):
        family_label("nope")


@pytest.mark.parametrize(
    ("config_class", "kwargs", "expected"),
    [
        ("LlamaConfig", {}, "rope"),
        ("BloomConfig", {}, "alibi"),
        ("FalconConfig", {"alibi": True}, "alibi"),
        ("FalconConfig", {"alibi": False}, "rope"),
        ("T5Config", {}, "t5"),
        ("MarianConfig", {}, "sinusoidal"),
        ("Gemma4TextConfig", {}, "p_rope"),
        ("BertConfig", {}, None),
        ("GPT2Config", {}, None),
    ],
)
def test_transformers_configs_are_recognised(config_class, kwargs, expected):
    transformers = pytest.importorskip("transformers")
    config = getattr(transformers, config_class)(**kwargs)
    found = family_of_config(config.to_dict())
    assert (found.id if found else None) == expected


@pytest.mark.parametrize(
    ("config_class", "message"),
    [
        ("BloomConfig", "bloom uses ALiBi: it adds a per-head linear distance penalty"),
        ("T5Config", "t5 uses T5 buckets.*See the T5 relative buckets page"),
        ("Gemma4TextConfig", "gemma4_text uses p-RoPE.*See the p-RoPE page"),
    ],
)
def test_models_without_an_added_table_are_refused_with_their_family(config_class, message):
    transformers = pytest.importorskip("transformers")
    from posviz.models import additive_position_modules

    model = SimpleNamespace(config=getattr(transformers, config_class)())
    with pytest.raises(ValueError, match=message):
        additive_position_modules(model)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.id)
def test_every_family_asks_its_question_and_has_its_own_colour(spec):
    """The guided path, the home page and every chart read these from the registry."""
    from posviz.charts.style import PALETTE, entity_color

    assert spec.question.endswith("?") and spec.blurb.endswith(".")
    assert spec.colour in PALETTE
    assert entity_color(spec.label) == spec.colour  # its label in a legend takes its colour
    assert [s.id for s in SPECS if s.colour == spec.colour] == [spec.id]
