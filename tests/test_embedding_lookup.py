"""nn.Embedding is a table: lookup == one-hot × matrix; training moves only looked-up rows."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import app_test, assert_no_exception

from posviz.analysis.embedding_lookup import lookup_vs_onehot, train_a_few_steps


def test_lookup_equals_onehot_product_exactly():
    table = np.random.default_rng(0).normal(size=(50, 7)).astype(np.float32)
    check = lookup_vs_onehot(table, [0, 3, 3, 49])
    assert check.max_abs_diff == 0.0
    np.testing.assert_array_equal(check.lookup, table[[0, 3, 3, 49]])
    assert check.onehot.shape == (4, 50) and (check.onehot.sum(axis=1) == 1).all()
    np.testing.assert_array_equal(check.onehot.argmax(axis=1), [0, 3, 3, 49])


@pytest.mark.parametrize(
    "table, ids, message",
    [
        (np.zeros(5), [0], "2-D"),
        (np.zeros((5, 2)), [], "at least one"),
        (np.zeros((5, 2)), [5], "outside"),
    ],
)
def test_lookup_bad_input(table, ids, message):
    with pytest.raises(ValueError, match=message):
        lookup_vs_onehot(table, ids)


def test_training_moves_only_used_learned_rows():
    demo = train_a_few_steps(16, 8, steps=20, used=(0, 2, 4))
    changes = demo.changes.set_index("position")
    assert (changes.learned_change[[0, 2, 4]] > 0).all()
    assert (changes.learned_change[changes.index.difference([0, 2, 4])] == 0).all()
    assert demo.requires_grad == {"learned": True, "sinusoid": False}
    assert demo.trainable_parameters == {"learned": 128, "sinusoid": 0}
    assert demo.losses[-1] < demo.losses[0]


@pytest.mark.parametrize("used", [(0, 2, 4), (1, 1, 5)])
def test_first_sgd_step_matches_the_gradient_formula(used):
    # One SGD step on L = mean_i (w·(E[p_i] + S[p_i]) + 2b − t_i)² changes a
    # looked-up row by −lr·(2/k)·Σ_{i: p_i = p} r_i·w (r = residual), every other row by 0.
    # A repeated position gets the sum of its gradients. Computed here in float64 from the
    # initial weights; a wrong lr, a frozen table or a leaking gradient fails it.
    import posviz

    n, d, lr = 16, 8, 0.05
    demo = train_a_few_steps(n, d, steps=1, lr=lr, used=used)
    table, w, b = (
        demo.learned_before.astype(np.float64),
        demo.readout_before[:d],
        demo.readout_before[d],
    )
    sinusoid = posviz.sinusoidal(n, d)
    index = np.asarray(used)
    residual = (table[index] + sinusoid[index]) @ w + 2 * b - index / n
    expected = table.copy()
    for p, r in zip(index, residual, strict=True):
        expected[p] -= lr * (2 / index.size) * r * w
    np.testing.assert_allclose(demo.learned_after, expected, rtol=0, atol=1e-6)
    untouched = np.setdiff1d(np.arange(n), index)
    np.testing.assert_array_equal(demo.learned_after[untouched], demo.learned_before[untouched])
    assert demo.losses[0] == pytest.approx(float(np.mean(residual**2)), rel=1e-5)


def test_training_bad_input():
    with pytest.raises(ValueError, match="even width"):
        train_a_few_steps(16, 7)
    with pytest.raises(ValueError, match="Training positions"):
        train_a_few_steps(16, 8, used=(16,))


def test_page_runs_and_reports_zero_difference():
    at = app_test("pages/embedding_lookup.py", query={"emb_ids": "0,5,600,x"})
    assert_no_exception(at)
    assert any("Ignored" in w.value for w in at.warning)  # 600 and x dropped, with a message
    diff = next(m.value for m in at.metric if m.label.startswith("max |nn.Embedding"))
    assert diff == "0 (bit for bit)"
    at.selectbox(key="emb_table").set_value("sinusoid (512 × 384)").run()
    assert_no_exception(at)
    assert len(at.get("vega_lite_chart")) == 1
