"""References: every source renders as a citation by name, never an internal file number."""

from __future__ import annotations

import re

import pytest

from posviz.references import REFERENCES, cite, cite_plain

REQUIRED = {
    "so_learnable",
    "so_nn_embedding",
    "jexus_2020",
    "t2t_1591",
    "cnblogs_2020",
    "vaswani_2017",
    "wang_chen_2020",
    "su_2021",
    "press_2022",
    "raffel_2020",
    "dosovitskiy_2021",
    "haviv_2022",
    "amir_2021",
}


def test_every_required_key_is_present() -> None:
    assert set(REFERENCES) >= REQUIRED


@pytest.mark.parametrize("key", sorted(REFERENCES))
def test_every_key_renders_with_title_and_author(key: str) -> None:
    ref = REFERENCES[key]
    text = cite(key)
    assert " — " in text
    assert ref.author.split()[0] in text
    assert "seed" not in text.lower()
    if ref.year is not None:
        assert text.endswith(str(ref.year))
    plain = cite_plain(key)
    assert ref.title in plain
    assert "seed" not in plain.lower()


@pytest.mark.parametrize("key", sorted(REFERENCES))
def test_link_only_where_a_url_is_known(key: str) -> None:
    ref = REFERENCES[key]
    text = cite(key)
    if ref.url is None:
        assert "](" not in text
        assert text.startswith("*")
    else:
        assert text.startswith("[")
        assert f"]({ref.url})" in text
        assert re.fullmatch(r"https://(arxiv\.org/abs/\d{4}\.\d{4,5}|github\.com/\S+)", ref.url)


def test_sources_without_a_known_address_have_no_url() -> None:
    # The two Stack Overflow questions and the two blog posts: no address is known, none invented.
    for key in ("so_learnable", "so_nn_embedding", "jexus_2020", "cnblogs_2020"):
        assert REFERENCES[key].url is None


def test_published_identifiers() -> None:
    assert REFERENCES["vaswani_2017"].url == "https://arxiv.org/abs/1706.03762"
    assert REFERENCES["t2t_1591"].url == "https://github.com/tensorflow/tensor2tensor/issues/1591"
    assert REFERENCES["jexus_2020"].year == 2020
    assert REFERENCES["cnblogs_2020"].author == "shendawei"


def test_markdown_specials_in_titles_are_escaped() -> None:
    # "nn.Embedding" has no specials, but a title with "*" or "[" must not break the link.
    assert cite("dosovitskiy_2021").count("[") == 1


def test_unknown_key_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="vaswani_2017"):
        cite("some_file_004")
