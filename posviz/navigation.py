"""The app's pages, as data: every view with its title, icon, section and the question it answers.

Nothing here is a hand list of what a registry holds: an encoding family's page comes from the
family registry (:func:`posviz.encodings.families.family_pages`), a lab question's page from the
lab's study list (:data:`posviz.lab.presets.QUESTIONS`, a page generated without a script), and
the guided path is the navigation's own order. Both are read when asked (:func:`sections`,
:func:`guided_path`), so a family or study registered at run time appears everywhere at once.
``app.py`` builds Streamlit's navigation from :func:`sections` (through ``posviz.ui.routes``);
every page ends with a link to the next page of :func:`guided_path`.
"""

from dataclasses import dataclass

from posviz.encodings.families import Section, family_pages
from posviz.lab.presets import QUESTIONS


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
    """

    path: str
    title: str
    icon: str
    url_path: str
    question: str = ""
    blurb: str = ""
    study: str = ""
    sources: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """How the app and the tests name the page: its script, or a generated page's URL."""
        return self.path


#: The page a visitor lands on; the guided path starts after it.
HOME = "pages/home.py"
#: The lab's index page and its paper checks (scripts); each study's page is generated.
LAB_INDEX = "pages/lab.py"
LAB_PAPERS = "pages/lab_papers.py"


def study_url_path(study_id: str) -> str:
    """The URL segment (and page key) of a lab study's generated page: ``lab_<id>``."""
    return f"lab_{study_id}"


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
            ),
            PageSpec(
                "pages/add_vs_concat.py",
                "Add vs concatenate",
                ":material/add_circle:",
                "add_vs_concat",
                "Why add the position to the word instead of concatenating?",
                "Adding and concatenating, compared on the same words and positions.",
            ),
            PageSpec(
                "pages/permutation.py",
                "Permutation equivariance",
                ":material/shuffle:",
                "permutation",
                "Why does a transformer need positions at all?",
                "Shuffle the tokens of a real model without positions and its outputs shuffle "
                "with them.",
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
            ),
            PageSpec(
                "pages/embedding_lookup.py",
                "nn.Embedding is a table",
                ":material/table_chart:",
                "embedding_lookup",
                "Why does BERT use nn.Embedding for positions?",
                "A lookup is one-hot × table, and one SGD step moves only the rows looked up.",
                sources=("so_nn_embedding",),
            ),
            PageSpec(
                "pages/sibling_diff.py",
                "What did fine-tuning change?",
                ":material/difference:",
                "sibling_diff",
                "What did fine-tuning change in a position table?",
                "Two sibling checkpoints' tables row by row: which rows moved and which were only "
                "scaled, beside controls.",
            ),
            PageSpec(
                "pages/inside_models.py",
                "Inside real models",
                ":material/psychology:",
                "inside_models",
                "Which of RoPE's frequencies does a real model use?",
                "RoPE frequency usage read from a real model's query and key weights, and its "
                "attention by distance.",
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
            ),
            PageSpec(
                "pages/compare.py",
                "Compare families",
                ":material/compare_arrows:",
                "compare",
                "How do the families compare beyond the trained length?",
                "Similarity vs distance, distinguishability and extrapolation of every family "
                "on the same axes.",
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
