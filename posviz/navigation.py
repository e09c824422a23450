"""The app's pages, as data: every page with its title, icon, section, the question it answers
and its URL parameters (the contract :class:`posviz.urlparams.Param` checks).

An encoding family's page comes from the family registry
(:func:`posviz.encodings.families.family_pages`), a lab question's page from the lab's study list
(:data:`posviz.lab.studies.presets.QUESTIONS`, a page generated without a script, its parameters
from :func:`study_params`), and the guided path is the navigation's own order. Both are read when
asked (:func:`sections`, :func:`guided_path`), so a family or study registered at run time appears
everywhere at once. One hand list remains: a family page's parameters (``_FAMILY_PARAMS``, by URL
segment), until a family's page entry carries them; ``tests/test_pages.py`` fails when a page
writes a parameter it does not declare. ``app.py`` builds Streamlit's navigation from
:func:`sections` (through ``posviz.ui.routes``); every page ends with a link to the next page of
:func:`guided_path`.
"""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from posviz.analysis.comparison import SCALINGS
from posviz.encodings.families import Section, family_pages, presets_for
from posviz.encodings.rope import MANUAL_ROPE_TYPES, PAIRINGS
from posviz.encodings.sinusoidal import SINUSOID_LAYOUTS
from posviz.lab.studies.presets import QUESTIONS
from posviz.tables import picker
from posviz.urlparams import Param, choice, flag, int_list, number, text


@dataclass(frozen=True)
class PageSpec:
    """One view of the app: what draws it and how it appears in the navigation.

    Attributes:
        path: the page script relative to the repository root (``pages/x.py``); a page generated
            from a lab study has no script, and its ``path`` is its ``url_path`` (:attr:`key`).
        title, icon: the navigation's entry.
        url_path: the URL segment (``/sinusoidal``); query parameters use a short prefix (sin_).
        question: the question it answers (the guided path's "Next question →" text).
        blurb: one sentence of what it shows (the home page's card under the question).
        study: the lab study it shows (a key of ``QUESTIONS``), for a generated page.
        sources: keys of :data:`posviz.references.REFERENCES` its question comes from.
        params: its query parameters (:class:`posviz.urlparams.Param`): every one it writes at
            its defaults, and the model-id and path boxes its source choices open (``when``);
            the tests read them here instead of rendering the page to find them.
    """

    path: str
    title: str
    icon: str
    url_path: str
    question: str = ""
    blurb: str = ""
    study: str = ""
    sources: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()

    @property
    def key(self) -> str:
        """How the app and the tests name the page: its script, or a generated page's URL."""
        return self.path


#: The page a visitor lands on; the guided path starts after it.
HOME = "pages/home.py"
#: The lab's index page and its paper checks (scripts); each study's page is generated.
LAB_INDEX = "pages/lab.py"
LAB_PAPERS = "pages/lab_papers.py"


#: The guided tour's step (:mod:`posviz.page_models.tour`, 1-based): one parameter of the app,
#: accepted on every page (no page declares it as its own), so a shared link reopens the step.
TOUR = number("tour", 1, None, None)


def study_url_path(study_id: str) -> str:
    """The URL segment (and page key) of a lab study's generated page: ``lab_<id>``."""
    return f"lab_{study_id}"


# --- each page's URL contract (the names its widgets are keyed by) ------------------------------

#: where a family page's settings come from (``<key>_src``), and what its query/key vectors are.
CONFIG_SOURCES = {
    "preset": "Preset (hand-written config)",
    "hub": "Hub model's config.json",
    "manual": "Manual values",
}
QK_CHOICES = ("q = k = all ones", "random q, k")


def _shown_when(when: tuple[tuple[str, str], ...], *params: Param) -> tuple[Param, ...]:
    """``params`` shown only when ``when`` holds too."""
    return tuple(dataclasses.replace(p, when=(*when, *p.when)) for p in params)


def table_source_params(key: str, default: str = "bundled") -> tuple[Param, ...]:
    """The table picker's parameters (``posviz.ui.table_source.pick_table(key=…)``)."""
    src, mode = f"{key}_src", picker.default_mode(default)
    n, d, _ = picker.sinusoid_shape(default)
    listed, typed = picker.hub_defaults(default)
    hub = ((src, "hub"),)
    return (
        choice(src, tuple(picker.MODES), mode),
        *_shown_when(
            ((src, "sinusoid"),),
            number(f"{key}_n", 1, picker.SINUSOID_MAX_POSITIONS, n),
            number(f"{key}_d", 2, picker.SINUSOID_MAX_WIDTH, d),
        ),
        choice(f"{key}_hub", (*picker.HUB_SUGGESTIONS, picker.OTHER), listed, when=hub),
        text(f"{key}_id", typed, when=(*hub, (f"{key}_hub", picker.OTHER))),
        text(f"{key}_rev", when=hub),
        choice(f"{key}_part", tuple(picker.PARTS), "", when=hub),
        text(f"{key}_lab", None, when=((src, "lab"),)),
        text(f"{key}_path", when=((src, "path"),)),
    )


def config_source_params(key: str, family: str, preset: str) -> tuple[Param, ...]:
    """A family page's config picker (``posviz.ui.families.pick_config(key=…)``)."""
    src = f"{key}_src"
    return (
        choice(src, tuple(CONFIG_SOURCES), "preset"),
        choice(f"{key}_preset", tuple(presets_for(family)), preset, when=((src, "preset"),)),
        text(f"{key}_hub", when=((src, "hub"),)),
        text(f"{key}_rev", when=((src, "hub"),)),
    )


def qk_params(key: str) -> tuple[Param, ...]:
    """The q and k of a RoPE score chart (``posviz.ui.families.pick_qk``)."""
    seed = number(f"{key}_seed", 0, 10_000, 0)
    return (
        choice(f"{key}_qk", QK_CHOICES, QK_CHOICES[0]),
        *_shown_when(((f"{key}_qk", QK_CHOICES[1]),), seed),
    )


def _sinusoidal() -> tuple[Param, ...]:
    return (
        number("sin_n", 1, 8192, 128),
        number("sin_d", 2, 8192, 512),
        number("sin_base", 1.01, 1e9, 10000.0),
        choice("sin_layout", SINUSOID_LAYOUTS, "interleaved"),
        number("sin_pos", 0, None, 10),
        flag("sin_hm_zoom", False),
        int_list("sin_dims", 0, None, (0, 64, 128, 256, 510)),
        number("sin_pair", 0, None, 0),
        int_list("sin_hands", 0, None, ()),
        number("sin_thr", -8.0, 0.0, -3.0),
        number("sin_kmax", 1, None, None),
        choice("sin_metric", ("cosine", "dot"), "cosine"),
    )


def _learned() -> tuple[Param, ...]:
    return (
        flag("lrn_cmp", True),
        choice("lrn_view", (), "heatmap"),
        *table_source_params("lrn_a"),
        *table_source_params("lrn_b", "sinusoid"),
        number("lrn_pos", 0, None, None),
        flag("lrn_a_hm_contrast", True),
        flag("lrn_a_hm_zoom", False),
        flag("lrn_b_hm_zoom", False),
    )


def _rope() -> tuple[Param, ...]:
    return (
        *config_source_params("rope", "rope", "Llama-3.1-8B (llama3 scaling, config.json)"),
        choice("rope_type", MANUAL_ROPE_TYPES, "default", when=(("rope_src", "manual"),)),
        number("rope_pos", 0, 4096, 12),
        int_list("rope_pairs", 0, None, None),
        number("rope_maxd", 16, None, None),
        *qk_params("rope"),
        choice("rope_pairing", PAIRINGS, None),
        flag("rope_bound_scaled", None),
    )


def _p_rope() -> tuple[Param, ...]:
    return (
        *config_source_params("prope", "p_rope", next(iter(presets_for("p_rope")))),
        number("prope_maxd", 16, None, None),
        *qk_params("prope"),
    )


def _alibi() -> tuple[Param, ...]:
    return (
        *config_source_params("alb", "alibi", "BLOOM-560m (ALiBi, 16 heads)"),
        number("alb_head", 0, None, 0),
        number("alb_n", 4, 128, 32),
        choice("alb_var", ("causal", "symmetric"), "causal"),
        number("alb_maxd", 8, 4096, 256),
    )


def _t5_buckets() -> tuple[Param, ...]:
    return (
        *config_source_params("t5", "t5", "T5-small (8 heads, 32 buckets)"),
        number("t5_span", 16, 2048, None),
        choice("t5_spans", ("bidirectional", "causal"), "causal"),
    )


def _nope() -> tuple[Param, ...]:
    return (
        number("nope_n", 8, 1024, 256),
        number("nope_d", 8, 1024, 64),
        number("nope_s", 1, 256, 32),
        number("nope_seed", 0, 10_000, 0),
    )


#: a family page's parameters, by its URL segment (a family whose page has none is left out).
_FAMILY_PARAMS: dict[str, Callable[[], tuple[Param, ...]]] = {
    "sinusoidal": _sinusoidal,
    "learned": _learned,
    "rope": _rope,
    "p_rope": _p_rope,
    "alibi": _alibi,
    "t5_buckets": _t5_buckets,
    "nope": _nope,
}


def _family_specs(section: Section) -> list[PageSpec]:
    """The family registry's pages of one navigation section, in registry order."""
    return [
        PageSpec(
            spec.page,
            spec.nav.title,
            spec.nav.icon,
            spec.url_path,
            spec.question,
            spec.blurb,
            sources=spec.references,
            params=_FAMILY_PARAMS.get(spec.url_path or "", tuple)(),
        )
        for spec in family_pages(section)
        if spec.page is not None and spec.nav is not None and spec.url_path is not None
    ]


def _study_specs() -> list[PageSpec]:
    """One generated page per lab study, in the study list's order (no script: ``study`` set)."""
    return [
        PageSpec(
            study_url_path(q.id),
            q.title,
            ":material/science:",
            study_url_path(q.id),
            q.title,
            q.question,
            study=q.id,
            sources=q.source_keys,
        )
        for q in QUESTIONS.values()
    ]


def study_params(study_id: str) -> tuple[Param, ...]:
    """A lab study page's parameters (``lab_<id>_…``), from the study registry: each setting the
    run form offers, seeded from the study's preset config, and the shown run's id."""
    from posviz.lab.present.answer import setting_limits  # lazy: the lab form, only when asked

    key, base = f"{study_url_path(study_id)}_", QUESTIONS[study_id].default
    return (
        *(
            number(f"{key}{name}", lo, hi, min(max(int(getattr(base, name)), lo), hi))
            for name, _label, lo, hi in setting_limits()
        ),
        number(f"{key}lr", 1e-5, 1.0, float(base.lr)),
        int_list(f"{key}eval", 2, None, base.eval_lengths),
        Param(f"{key}run", "id"),
    )


def page_params(spec: PageSpec) -> tuple[Param, ...]:
    """A page's query parameters: its own, or a generated study page's from the study registry."""
    return study_params(spec.study) if spec.study else spec.params


def shown_at_defaults(params: tuple[Param, ...]) -> tuple[Param, ...]:
    """The parameters a page writes when nothing is linked: those whose ``when`` holds for the
    others' defaults."""
    defaults = {p.name: p.default for p in params}
    return tuple(p for p in params if all(defaults.get(k) == v for k, v in p.when))


def sections() -> dict[str, list[PageSpec]]:
    """Every page by navigation section, in reading order (read from the registries now)."""
    return {
        "Start": [
            PageSpec(HOME, "Questions → views", ":material/explore:", "home"),
        ],
        "Encodings": _family_specs("Encodings"),
        "Experiments": [
            PageSpec(
                "pages/probing.py",
                "Probing positions",
                ":material/straighten:",
                "probing",
                "Can you read the position back out of a position vector?",
                "A leak-free probe reads the position back, beside a shuffled control.",
                params=(
                    *table_source_params("prb_t"),
                    choice("prb_proto", (), "even→odd (Jexus blog)"),
                    number("prb_folds", 2, 10, 5),
                    Param("prb_cmp", "choices", "sinusoid, same shape"),
                    choice("prb_fit", (), "OLS (ordinary least squares, the papers')"),
                    number("prb_seed", 0, 9999, 0),
                    flag("prb_pad", False),
                    choice("prb_order", (), "held-out positions (leak-free)"),
                ),
            ),
            PageSpec(
                "pages/add_vs_concat.py",
                "Add vs concatenate",
                ":material/add_circle:",
                "add_vs_concat",
                "Why add the position to the word instead of concatenating?",
                "Adding and concatenating, compared on the same words and positions.",
                params=(
                    text("avc_word", "coding"),
                    choice("avc_pe", (), "MiniLM's learned position table"),
                    number("avc_n", 2, 512, 128),
                    choice("avc_view", (), "first two dimensions (the cnblogs post's picture)"),
                    number("avc_dx", 0, 383, 0),
                    number("avc_dy", 0, 383, 1),
                    number("avc_frac", 0.5, 0.99, 0.9),
                ),
            ),
            PageSpec(
                "pages/permutation.py",
                "Permutation equivariance",
                ":material/shuffle:",
                "permutation",
                "Why does a transformer need positions at all?",
                "Shuffle the tokens of a real model without positions and its outputs shuffle "
                "with them.",
                params=(
                    choice("perm_ex", (), "Tom bit a dog / A dog bit Tom"),
                    text("perm_a", "Tom bit a dog"),
                    text("perm_b", "A dog bit Tom"),
                    choice("perm_depth", (), "first self-attention block"),
                    flag("perm_special", True),
                ),
            ),
            PageSpec(
                "pages/layers.py",
                "Position through layers",
                ":material/layers:",
                "layers",
                "Positions are added once: do later layers still know them?",
                "A leak-free probe of the position at every layer of MiniLM, beside a "
                "shuffled-position control.",
                sources=("so_learnable",),
                params=(
                    choice("lay_model", (), "bundled MiniLM-L6 (offline)"),
                    text(
                        "lay_hub", when=(("lay_model", "a Hugging Face model (cache or online)"),)
                    ),
                    number("lay_win", 16, 256, 64),
                    choice("lay_text", (), "All five, one after another"),
                    flag("lay_zero", False),
                ),
            ),
            PageSpec(
                "pages/embedding_lookup.py",
                "nn.Embedding is a table",
                ":material/table_chart:",
                "embedding_lookup",
                "Why does BERT use nn.Embedding for positions?",
                "A lookup is one-hot × table, and one SGD step moves only the rows looked up.",
                sources=("so_nn_embedding",),
                params=(
                    choice("emb_table", (), "MiniLM's learned position table (512 × 384)"),
                    int_list("emb_ids", 0, 511, (0, 1, 7, 511)),
                    number("emb_steps", 1, 50, 5),
                    int_list("emb_used", 0, 15, range(6)),
                ),
            ),
            PageSpec(
                "pages/sibling_diff.py",
                "What did fine-tuning change?",
                ":material/difference:",
                "sibling_diff",
                "What did fine-tuning change in a position table?",
                "Two sibling checkpoints' tables row by row: which rows moved and which were only "
                "scaled, beside controls.",
                params=(
                    *table_source_params("sib_a"),
                    *table_source_params("sib_b", "minilm-l3"),
                ),
            ),
            PageSpec(
                "pages/inside_models.py",
                "Inside real models",
                ":material/psychology:",
                "inside_models",
                "Which of RoPE's frequencies does a real model use?",
                "RoPE frequency usage read from a real model's query and key weights, and its "
                "attention by distance.",
                params=(
                    choice("inside_window", ("32", "64", "128", "256"), "32"),
                    text("inside_src"),
                ),
            ),
        ],
        "Lab": [
            PageSpec(
                LAB_INDEX,
                "Position lab",
                ":material/science:",
                "lab",
                "Which questions can only training answer?",
                "Tiny transformers trained on this server's CPU, several seeds each beside a "
                "control.",
            ),
            *_study_specs(),
            PageSpec(
                LAB_PAPERS,
                "Paper checks",
                ":material/fact_check:",
                "lab_papers",
                "Do published findings about positions hold when trained here?",
                "Published claims rerun at a small size, each judged by a stated criterion.",
            ),
        ],
        "Beyond": [
            *_family_specs("Beyond"),
            PageSpec(
                "pages/vit_grid.py",
                "ViT 2-D patch grid",
                ":material/grid_on:",
                "vit_grid",
                "Does a vision transformer learn a 2-D grid of positions?",
                "Each patch's similarity to every other patch, tiled on the patch grid.",
                params=(
                    choice("vit_src", ("synthetic", "model"), "synthetic"),
                    number("vit_h", 2, 32, 14),
                    number("vit_w", 2, 32, 14),
                    choice("vit_d", ("64", "128", "256", "768"), "256"),
                    *_shown_when((("vit_src", "model"),), *table_source_params("vit_t", "hub")),
                    number("vit_r", 0, None, 7),
                    number("vit_c", 0, None, 3),
                ),
            ),
            PageSpec(
                "pages/compare.py",
                "Compare families",
                ":material/compare_arrows:",
                "compare",
                "How do the families compare beyond the trained length?",
                "Similarity vs distance, distinguishability and extrapolation of every family "
                "on the same axes.",
                params=(
                    Param("cmp_fam", "choices", "sinusoidal,learned,rope,p_rope,alibi,t5"),
                    number("cmp_L", 16, 4096, 512),
                    number("cmp_n", 32, 4096, 1536),
                    number("cmp_dsin", 8, 1024, 384),
                    number("cmp_hd", 8, 256, 64),
                    number("cmp_base", 2.0, 1e9, 10000.0),
                    choice("cmp_scal", SCALINGS, "yarn"),
                    number("cmp_fac", 1.0, 64.0, 4.0),
                    number("cmp_heads", 1, 1024, 8),
                    number("cmp_nb", 2, 1024, 32),
                    number("cmp_md", 2, 1_000_000, 128),
                    text("cmp_t5"),
                ),
            ),
        ],
    }


def all_pages() -> list[PageSpec]:
    """Every page, in navigation order."""
    return [spec for specs in sections().values() for spec in specs]


def page_spec(key: str) -> PageSpec:
    """The page with this key (its script, or a generated page's URL segment).

    Raises:
        ValueError: no such page (lists the known ones).
    """
    for spec in all_pages():
        if key in (spec.key, spec.url_path):
            return spec
    known = ", ".join(spec.key for spec in all_pages())
    raise ValueError(f"No page {key!r}; choose one of {known}.")


def guided_specs() -> list[PageSpec]:
    """The guided path's pages: every page but the home page (where the path starts), in
    navigation order (the encodings, the experiments, the lab, then beyond). No page is left off.
    """
    return [spec for spec in all_pages() if spec.key != HOME]


def guided_path() -> tuple[tuple[str, str], ...]:
    """The reading order as ``(page key, the question it answers)``; the home page's "Start here"
    cards are the first :data:`START_HERE`; every page links to the next, the last back home."""
    return tuple((spec.key, spec.question or spec.title) for spec in guided_specs())


def lab_pages() -> list[PageSpec]:
    """The lab's pages: its index, one generated page per study, the paper checks."""
    return sections()["Lab"]


def explorer_pages() -> list[PageSpec]:
    """The pages that compute their answer on the spot (every page but home and the lab's, whose
    answers are read from stored runs): each leads with a verdict and a hero chart, and the chart-
    and page-hygiene tests check every one."""
    lab = {spec.key for spec in lab_pages()}
    return [spec for spec in guided_specs() if spec.key not in lab]


START_HERE = 5
