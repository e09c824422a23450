"""The Inside-real-models findings on the real checkpoints, pinned within their spread: the
first-token counts at every window length, the ablations (RoPE off, position table zeroed) and
the moved control. Slow: uses the signed disk cache when there, else computes it (SmolLM2 about
45 s at 32 tokens and 2¼ min at 256 on two cores; MiniLM-L6 under a minute for all four)."""

from __future__ import annotations

import pytest

#: the lengths the full suite computes (2 of 4: cold, 128 and 256 tokens are 3-4 more minutes on two
#: cores); the answers tier (``./scripts/test.sh --answers``) pins all four
LENGTHS = {"slow": (32, 64), "answers": (32, 64, 128, 256)}


@pytest.mark.slow
@pytest.mark.parametrize(
    "tier",
    [
        "slow",
        # cold, SmolLM2's four windows took 200 s beside one lab training (2 cores, 2026-11-29)
        # and passed 600 s under the answers tier's three workers, each training
        pytest.param("answers", marks=[pytest.mark.answers, pytest.mark.timeout(1800)]),
    ],
    ids=list(LENGTHS),
)
def test_first_token_heads_depend_on_the_window_and_do_not_need_positions(tier) -> None:
    """Measured here (8 windows of the King James text): SmolLM2 141, 112, 103, 98 first-token
    heads of 270 at 32, 64, 128, 256 tokens; 126 with RoPE off at 32, while its 5 previous-token
    and 6 self heads drop to 0; after 16 other tokens 107 heads look at slot 0 and none at the
    window's first token. MiniLM-L6: 15, 8, 1, 0 of 72 on [CLS]; 30 with its position table
    zeroed; 0 on [CLS] moved to the middle. Tolerances: ± 3 heads (± 2 for MiniLM), borderline
    heads flipping under another BLAS."""
    pytest.importorskip("gguf")
    from posviz.analysis.headlines import FIRST_SENTENCE_WORDS
    from posviz.analysis.inside_models import findings, inside_all_windows
    from posviz.page_models.inside_models import inside_page

    lengths = LENGTHS[tier]
    smol_all = inside_all_windows("smollm2", windows=lengths)
    mini_all = inside_all_windows("minilm", windows=lengths)
    smol = {w: findings(r) for w, r in smol_all.items()}
    mini = {w: findings(r) for w, r in mini_all.items()}
    # the page's answer: the 32-token "most heads" is not said; the dependence is, with numbers
    page = inside_page((smol_all, mini_all), window=64)
    line = page.verdict.first_line
    assert "fall with window length" in line and len(line.split()) <= FIRST_SENTENCE_WORDS
    assert (
        "over half only at 32 tokens" in dict(page.verdict.evidence)["First-token heads, by window"]
    )
    sinks = [smol[w]["trained"]["pooled"]["first-token (sink)"] for w in smol]
    for got, want in zip(sinks, (141, 112, 103, 98)[: len(lengths)], strict=True):
        assert abs(got - want) <= 3, sinks
    at32 = smol[32]
    assert abs(at32["ablated"]["pooled"]["first-token (sink)"] - 126) <= 3
    assert at32["trained"]["pooled"]["previous-token"] >= 4
    for w in smol:  # the flip: previous-token and self heads vanish without RoPE, every length
        assert smol[w]["ablated"]["pooled"]["previous-token"] == 0
        assert smol[w]["ablated"]["pooled"]["self"] == 0
        assert smol[w]["ablated"]["positional_kept"] == 0 < smol[w]["trained"]["positional"]
        moved = smol[w]["moved"]
        trained = smol[w]["trained"]["pooled"]["first-token (sink)"]
        assert moved["on_slot_0"] > trained / 2 and moved["on_the_token"] == 0
    cls = [mini[w]["trained"]["pooled"]["first-token (sink)"] for w in mini]
    for got, want in zip(cls, (15, 8, 1, 0)[: len(lengths)], strict=True):
        assert abs(got - want) <= 2, cls
    assert abs(mini[32]["ablated"]["pooled"]["first-token (sink)"] - 30) <= 2
    assert mini[32]["moved"]["on_the_token"] == 0
    # Barbero et al.'s measure beside the proxy (posviz.analysis.rope_activation, cached
    # separately): the section's notes quote the numbers its charts draw
    from posviz.analysis import rope_activation as ra
    from posviz.page_models.inside_models import activation_view

    view = activation_view(ra.rope_activation(32))
    usage = view.usage.data
    real = usage[usage["series"] == "real queries and keys"]
    slowest = real.nlargest(len(real) // 4, "wavelength")["share"].sum()
    assert f"carries {slowest:.1%} of the usage" in view.usage_note
    assert "v_proj" in view.massive_note and "Jin, Mei" in view.definitions
