"""The app's pages, as data: every view with its file, title, icon and section, and the reading
order of the questions they answer.

An encoding family's page is listed from the family registry (:func:`family_pages`), so a new
family appears in the navigation by registering it there. ``app.py`` builds Streamlit's navigation
from :data:`PAGES`; every page ends with a link to the next question of :data:`GUIDED_PATH`.
"""

from dataclasses import dataclass

from posviz.encodings.families import Section, family_pages


@dataclass(frozen=True)
class PageSpec:
    """One view of the app: the script that draws it and how it appears in the navigation."""

    path: str  # relative to the repository root
    title: str
    icon: str
    url_path: str  # the URL segment (``/sinusoidal``); query parameters use a short prefix (sin_)


def _family_specs(section: Section) -> list[PageSpec]:
    """The family registry's pages of one navigation section, in registry order."""
    return [
        PageSpec(spec.page, spec.nav.title, spec.nav.icon, spec.url_path)
        for spec in family_pages(section)
        if spec.page is not None and spec.nav is not None and spec.url_path is not None
    ]


PAGES: dict[str, list[PageSpec]] = {
    "Start": [
        PageSpec("pages/home.py", "Questions → views", ":material/explore:", "home"),
    ],
    "Encodings": _family_specs("Encodings"),
    "Experiments": [
        PageSpec("pages/probing.py", "Probing positions", ":material/straighten:", "probing"),
        PageSpec(
            "pages/add_vs_concat.py", "Add vs concatenate", ":material/add_circle:", "add_vs_concat"
        ),
        PageSpec(
            "pages/permutation.py", "Permutation equivariance", ":material/shuffle:", "permutation"
        ),
        PageSpec("pages/layers.py", "Position through layers", ":material/layers:", "layers"),
        PageSpec(
            "pages/embedding_lookup.py",
            "nn.Embedding is a table",
            ":material/table_chart:",
            "embedding_lookup",
        ),
        PageSpec(
            "pages/sibling_diff.py",
            "What did fine-tuning change?",
            ":material/difference:",
            "sibling_diff",
        ),
        PageSpec(
            "pages/inside_models.py",
            "Inside real models",
            ":material/psychology:",
            "inside_models",
        ),
    ],
    "Lab": [
        PageSpec("pages/lab.py", "Position lab", ":material/science:", "lab"),
        PageSpec(
            "pages/lab_learned.py", "Does a learned table help?", ":material/school:", "lab_learned"
        ),
        PageSpec("pages/lab_concat.py", "Add or concatenate?", ":material/merge:", "lab_concat"),
        PageSpec(
            "pages/lab_every_layer.py",
            "Re-inject position at every layer?",
            ":material/stacks:",
            "lab_every_layer",
        ),
        PageSpec(
            "pages/lab_extrapolation.py",
            "Train short, test long",
            ":material/open_in_full:",
            "lab_extrapolation",
        ),
        PageSpec(
            "pages/lab_rare_rows.py",
            "Are rarely-seen rows untrained?",
            ":material/visibility_off:",
            "lab_rare_rows",
        ),
        PageSpec(
            "pages/lab_need_positions.py",
            "Does a transformer need positions at all?",
            ":material/shuffle:",
            "lab_need_positions",
        ),
        PageSpec("pages/lab_papers.py", "Paper checks", ":material/fact_check:", "lab_papers"),
    ],
    "Beyond": [
        *_family_specs("Beyond"),
        PageSpec("pages/vit_grid.py", "ViT 2-D patch grid", ":material/grid_on:", "vit_grid"),
        PageSpec("pages/compare.py", "Compare families", ":material/compare_arrows:", "compare"),
    ],
}


def all_pages() -> list[PageSpec]:
    """Every page, in navigation order."""
    return [spec for specs in PAGES.values() for spec in specs]


#: The reading order of the non-lab pages: (page, the question it answers). The home page's
#: "Start here" path is the first :data:`START_HERE` of them; every page links to the next.
GUIDED_PATH: tuple[tuple[str, str], ...] = (
    ("pages/sinusoidal.py", "What does the sinusoidal encoding look like, and why sin and cos?"),
    ("pages/learned.py", "What has a learned position table learned?"),
    ("pages/probing.py", "Can you read the position back out of a position vector?"),
    ("pages/add_vs_concat.py", "Why add the position to the word instead of concatenating?"),
    ("pages/permutation.py", "Why does a transformer need positions at all?"),
    ("pages/layers.py", "Positions are added once: do later layers still know them?"),
    ("pages/embedding_lookup.py", "Why does BERT use nn.Embedding for positions?"),
    ("pages/rope.py", "Llama has no position table: where did the positions go?"),
    ("pages/alibi.py", "How do BLOOM and MPT encode position?"),
    ("pages/t5_buckets.py", "How does T5 encode position?"),
    ("pages/nope.py", "What if there is no position encoding at all?"),
    ("pages/vit_grid.py", "Does a vision transformer learn a 2-D grid of positions?"),
    ("pages/compare.py", "How do the families compare beyond the trained length?"),
)
START_HERE = 5
