"""Trajectory and norm charts: geometry of the 3-D projection and the chart specs."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.charts import trajectory


def test_stride_keeps_at_most_max_points():
    for n in (1, 7, 512, 1000, 8192):
        for cap in (1, 16, 128, 2048):
            step = trajectory.stride_for(n, cap)
            assert len(range(0, n, step)) <= cap
            assert step == 1 or len(range(0, n, step - 1)) > cap  # the smallest such step


@pytest.mark.parametrize(("azimuth", "elevation"), [(0, 0), (30, 20), (-135, 75), (180, -90)])
def test_3d_projection_is_a_rotation(azimuth, elevation):
    points = np.random.default_rng(0).normal(size=(50, 3))
    view = trajectory.project_3d(points, azimuth=azimuth, elevation=elevation)
    gram = points @ points.T
    np.testing.assert_allclose(view @ view.T, gram, atol=1e-9)  # lengths and angles kept


def test_3d_projection_front_view_shows_first_and_third_axes():
    # azimuth 0, elevation 0: screen-x = PC1, screen-y = PC3, nearness = −PC2 (camera at −y)
    view = trajectory.project_3d(np.eye(3), azimuth=0, elevation=0)
    np.testing.assert_allclose(view, [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-12)
    # looking straight down (elevation 90°): the screen shows PC1 × PC2, PC3 points at the viewer
    top = trajectory.project_3d(np.eye(3), azimuth=0, elevation=90)
    np.testing.assert_allclose(top, [[1, 0, 0], [0, 1, 0], [0, 0, 1]], atol=1e-12)
    rotation = trajectory.project_3d(np.eye(3), azimuth=37, elevation=21)
    assert np.linalg.det(rotation) == pytest.approx(1.0)


def _layer_marks(chart) -> list[str]:
    spec = chart.to_dict()
    return [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in spec["layer"]
    ]


def test_pca_charts_join_positions_in_order_and_keep_true_positions():
    scores = np.random.default_rng(1).normal(size=(100, 3))
    chart = trajectory.pca_trajectory_chart(
        scores, x=0, y=2, explained=np.array([0.5, 0.3, 0.1]), positions=np.arange(0, 500, 5)
    )
    assert _layer_marks(chart) == ["line", "circle"]
    spec = chart.to_dict()
    values = next(iter(spec["datasets"].values()))
    assert [row["position"] for row in values[:3]] == [0, 5, 10]
    assert "PC3 (10.0% of variance)" in str(spec)
    chart3 = trajectory.pca_3d_chart(scores, max_points=10)
    assert len(next(iter(chart3.to_dict()["datasets"].values()))) == 10


def test_norm_chart_is_a_line_over_positions():
    norms = trajectory.norm_chart(np.ones(8)).to_dict()
    assert norms["mark"]["type"] == "line"
    assert len(next(iter(norms["datasets"].values()))) == 8
