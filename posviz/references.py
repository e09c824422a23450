"""The sources posviz's questions and formulas come from, cited by title, author and year.

Pages and docstrings cite these by key through :func:`cite`, never by an internal file name.
A URL is given only where it is known for certain (arXiv abstract pages, the GitHub issue);
for the Stack Overflow questions and the two blog posts no address is known here, so they are
cited by title and author without a link.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    """One cited source: what users know it as, who wrote it, when, and where to read it."""

    title: str
    author: str
    year: int | None  # None where the date is not known
    url: str | None  # None where no address is known (never guessed)
    venue: str | None = None  # journal, conference, site
    note: str | None = None  # e.g. what a post is based on


REFERENCES: dict[str, Reference] = {
    "so_learnable": Reference(
        title=(
            "The essence of learnable positional embedding? Does embedding improve outcomes better?"
        ),
        author="Stack Overflow question and accepted answer",
        year=None,
        url=None,
        venue="Stack Overflow",
        note="the answer cites Amir et al. 2021, §3.1 and Fig. 3",
    ),
    "so_nn_embedding": Reference(
        title="Why nn.Embedding layer is used for positional encoding in BERT?",
        author="Stack Overflow question and accepted answer",
        year=None,
        url=None,
        venue="Stack Overflow",
    ),
    "jexus_2020": Reference(
        title="What has the positional “embedding” learned?",
        author="Jexus",
        year=2020,
        url=None,
        venue="blog post, 26 January 2020",
    ),
    "t2t_1591": Reference(
        title="Why add positional embedding instead of concatenate?",
        author="tensorflow/tensor2tensor issue #1591",
        year=None,
        url="https://github.com/tensorflow/tensor2tensor/issues/1591",
        venue="GitHub",
    ),
    "cnblogs_2020": Reference(
        title="Transformer Position Encoding",
        author="shendawei",
        year=2020,
        url=None,
        venue="cnblogs, 5 August 2020",
        note=(
            "after kikaben.com, “Transformer's Positional Encoding”, and Machine Learning "
            "Mastery, “A Gentle Introduction to Positional Encoding in Transformer Models, Part 1”"
        ),
    ),
    "vaswani_2017": Reference(
        title="Attention Is All You Need",
        author="Vaswani et al.",
        year=2017,
        url="https://arxiv.org/abs/1706.03762",
        venue="NeurIPS 2017",
    ),
    "wang_chen_2020": Reference(
        title=(
            "What Do Position Embeddings Learn? An Empirical Study of Pre-Trained Language "
            "Model Positional Encoding"
        ),
        author="Wang & Chen",
        year=2020,
        url="https://arxiv.org/abs/2010.04903",
        venue="EMNLP 2020",
    ),
    "su_2021": Reference(
        title="RoFormer: Enhanced Transformer with Rotary Position Embedding",
        author="Su et al.",
        year=2021,
        url="https://arxiv.org/abs/2104.09864",
        venue="arXiv",
    ),
    "barbero_2025": Reference(
        title="Round and Round We Go! What makes Rotary Positional Encodings useful?",
        author="Barbero, Vitvitskyi, Perivolaropoulos, Pascanu & Veličković",
        year=2025,
        url="https://arxiv.org/abs/2410.06205",
        venue="ICLR 2025",
    ),
    "press_2022": Reference(
        title=(
            "Train Short, Test Long: Attention with Linear Biases Enables Input Length "
            "Extrapolation"
        ),
        author="Press, Smith & Lewis",
        year=2022,
        url="https://arxiv.org/abs/2108.12409",
        venue="ICLR 2022",
    ),
    "raffel_2020": Reference(
        title=("Exploring the Limits of Transfer Learning with a Unified Text-to-Text Transformer"),
        author="Raffel et al.",
        year=2020,
        url="https://arxiv.org/abs/1910.10683",
        venue="JMLR 2020",
    ),
    "dosovitskiy_2021": Reference(
        title="An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale",
        author="Dosovitskiy et al.",
        year=2021,
        url="https://arxiv.org/abs/2010.11929",
        venue="ICLR 2021",
    ),
    "haviv_2022": Reference(
        title=(
            "Transformer Language Models without Positional Encodings Still Learn Positional "
            "Information"
        ),
        author="Haviv et al.",
        year=2022,
        url="https://arxiv.org/abs/2203.16634",
        venue="Findings of EMNLP 2022",
    ),
    "olsson_2022": Reference(
        title="In-context Learning and Induction Heads",
        author="Olsson et al.",
        year=2022,
        url="https://arxiv.org/abs/2209.11895",
        venue="Transformer Circuits Thread",
        note=(
            "first published at transformer-circuits.pub/2022/"
            "in-context-learning-and-induction-heads/index.html"
        ),
    ),
    "kazemnejad_2023": Reference(
        title="The Impact of Positional Encoding on Length Generalization in Transformers",
        author="Kazemnejad, Padhi, Natesan Ramamurthy, Das & Reddy",
        year=2023,
        url="https://arxiv.org/abs/2305.19466",
        venue="NeurIPS 2023",
    ),
    "devlin_2019": Reference(
        title="BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        author="Devlin, Chang, Lee & Toutanova",
        year=2019,
        url="https://arxiv.org/abs/1810.04805",
        venue="NAACL 2019",
    ),
    "amir_2021": Reference(
        title="Deep ViT Features as Dense Visual Descriptors",
        author="Amir, Gandelsman, Bagon & Dekel",
        year=2021,
        url="https://arxiv.org/abs/2112.05814",
        venue="arXiv",
    ),
    "xiao_2024": Reference(
        title="Efficient Streaming Language Models with Attention Sinks",
        author="Xiao, Tian, Chen, Han & Lewis",
        year=2024,
        url="https://arxiv.org/abs/2309.17453",
        venue="ICLR 2024",
    ),
    "clark_2019": Reference(
        title="What Does BERT Look At? An Analysis of BERT's Attention",
        author="Clark, Khandelwal, Levy & Manning",
        year=2019,
        url="https://arxiv.org/abs/1906.04341",
        venue="BlackboxNLP 2019",
    ),
}

# Characters that Markdown would read as syntax inside a link text or emphasis.
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>#|"})


def _escape(text: str) -> str:
    return text.translate(_MD_SPECIAL)


def cite(key: str) -> str:
    """Markdown citation of one source: ``[title](url) — author, year``.

    Without a known URL the title is shown in italics, unlinked; without a known year the
    venue stands in its place.

    Raises:
        ValueError: ``key`` is not in :data:`REFERENCES` (the message lists the known keys).
    """
    if key not in REFERENCES:
        raise ValueError(f"Unknown reference {key!r}; use one of: {', '.join(sorted(REFERENCES))}.")
    ref = REFERENCES[key]
    title = _escape(ref.title)
    head = f"[{title}]({ref.url})" if ref.url else f"*{title}*"
    when = str(ref.year) if ref.year is not None else (ref.venue or "")
    tail = ", ".join(part for part in (_escape(ref.author), when) if part)
    return f"{head} — {tail}"


def cite_plain(key: str) -> str:
    """Plain-text citation (no Markdown): ``title — author, year``, for exports and code blocks."""
    if key not in REFERENCES:
        raise ValueError(f"Unknown reference {key!r}; use one of: {', '.join(sorted(REFERENCES))}.")
    ref = REFERENCES[key]
    when = str(ref.year) if ref.year is not None else (ref.venue or "")
    return f"“{ref.title}” — {', '.join(p for p in (ref.author, when) if p)}"
