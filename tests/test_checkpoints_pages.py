"""The real checkpoints on their pages: each section's words follow its numbers (a table without
the finding gets other words), and each page shows its section offline."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import app_test

from posviz import load_table
from posviz.analysis.echo import find_echo, shuffled_rows
from posviz.page_models import learned, sinusoidal, t5_buckets, vit_grid

DECODER = "bundled:whisper-tiny.en-decoder"


def _with(table, matrix):
    return dataclasses.replace(table, matrix=np.ascontiguousarray(matrix, dtype=np.float32))


def test_the_echo_section_states_its_numbers_and_turns_with_them():
    decoder, minilm = load_table(DECODER), load_table("bundled")
    section = learned.echo_section((decoder, minilm))
    echo = find_echo(decoder.matrix)
    assert section.lead.startswith("**Whisper's text decoder learned a table with an echo.**")
    assert f"near k = {echo.peak_at}" in section.lead and f"{echo.alignment:.0%}" in section.lead
    assert "*A hypothesis, not a fact:*" in section.lead
    assert len(section.findings) == 3 and all(f.description for f in section.findings)
    shuffled = _with(decoder, shuffled_rows(decoder.matrix, seed=5))
    assert "shows no echo" in learned.echo_section((shuffled, minilm)).lead


def test_the_sinusoid_section_states_the_match_and_turns_with_it():
    encoder, decoder = load_table("bundled:whisper-tiny.en-encoder"), load_table(DECODER)
    section = sinusoidal.whisper_section((encoder, decoder))
    assert "entry for entry, rounded to float16" in section.lead
    noisy = _with(encoder, encoder.matrix + np.float32(0.01))
    assert "to within 0.01" in sinusoidal.whisper_section((noisy, decoder)).lead


@pytest.mark.slow  # over 2 s on 2 quiet cores (the DINOv2 table read and its grid checks)
def test_the_dinov2_section_states_the_cross_and_turns_with_it():
    grid = load_table("bundled:dinov2-vit-s14")
    section = vit_grid.dinov2_section(grid)
    assert section.lead.startswith("**Yes: a real ViT's table has learned its grid")
    assert "possibly fine-tuned" in section.caveat
    shuffled = _with(grid, shuffled_rows(grid.matrix, seed=2))
    assert "no clear row/column cross" in vit_grid.dinov2_section(shuffled).lead


def test_the_mpnet_section_states_the_dead_bucket_and_any_t5_table_gets_the_same_words():
    bias = load_table("bundled:mpnet-relative-bias")
    section = t5_buckets.mpnet_section(bias)
    assert "Bucket 16 is never looked up" in section.lead
    assert "negative in 12 of 12 heads" in section.lead
    causal = t5_buckets.findings_text(bias.matrix, max_distance=128, bidirectional=False)
    assert "no dead bucket" in causal


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "query", "title"),
    [
        ("pages/learned.py", {"lrn_a_src": "whisper-decoder"}, "Whisper tiny.en's decoder"),
        ("pages/sinusoidal.py", {}, "Whisper tiny.en's encoder"),
        ("pages/vit_grid.py", {"vit_src": "dinov2"}, "DINOv2 ViT-S/14"),
        ("pages/t5_buckets.py", {}, "MPNet"),
    ],
)
def test_each_page_shows_its_real_checkpoint_offline(page, query, title, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = app_test(page, query=query)
    assert not at.exception and not at.error
    assert any(title in h.value for h in at.header)
