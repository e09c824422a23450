"""Does a page draw other bytes while another session's heavy job runs? (issue 35)

    .venv/bin/python tests/load/thread_bits.py   # the load test's views + a GPT-2-sized table

Renders each view in AppTest twice, caches cleared between: idle, then inside
``posviz.governor.heavy_work()`` (what another session's probe or lab run holds), and compares
every chart's data bytes, saying by how much they differ (``loadtest.dataset_difference``). The
views are the load test's scenario values (sinusoid position, length and layout; the learned
page's table, view and second length; NoPE's length) and the learned page with a 1024 × 768
table (GPT-2's size). Before the governor pinned one thread count per process, the views of the
load test drew the same bytes (their tables are small) and the 1024 × 768 table's hero and PCA
view did not (max |Δ| 2e-14): the fix is tested in tests/test_governor.py. About 2 minutes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # tests/: conftest's app_test

#: (page, link query) for every view checked
VIEWS: list[tuple[str, dict[str, str]]] = [
    *(("pages/sinusoidal.py", {"sin_pos": str(p)}) for p in (0, 7, 31, 64, 100)),
    *(("pages/sinusoidal.py", {"sin_n": str(n)}) for n in (32, 64, 128, 256)),
    *(("pages/sinusoidal.py", {"sin_layout": v}) for v in ("interleaved", "split", "tensor2tensor")),  # noqa: E501
    *(("pages/learned.py", {"lrn_a_src": v}) for v in ("bundled", "sinusoid")),
    *(("pages/learned.py", {"lrn_view": v}) for v in ("similarity", "pca2")),
    *(("pages/learned.py", {"lrn_b_n": str(n)}) for n in (64, 128, 256, 512)),
    *(("pages/nope.py", {"nope_n": str(n)}) for n in (16, 64, 128, 256)),
    *(
        ("pages/learned.py", {"lrn_a_src": "sinusoid", "lrn_a_n": "1024", "lrn_a_d": "768",
                              "lrn_cmp": "false", "lrn_view": view})
        for view in ("heatmap", "pca2")
    ),
]  # fmt: skip


def charts(page: str, query: dict[str, str]) -> list[list[bytes]]:
    """Each chart's datasets as the browser gets them, computed afresh (caches cleared)."""
    from conftest import app_test

    from posviz.ui.cache import clear_caches

    clear_caches()
    at = app_test(page, query=query, timeout=180)
    if at.exception:
        raise RuntimeError(f"{page} {query}: {at.exception[0].value}")
    return [[d.data.data for d in c.proto.datasets] for c in at.get("vega_lite_chart")]


def main() -> int:
    from loadtest import dataset_difference

    from posviz.governor import heavy_work

    differ = 0
    for page, query in VIEWS:
        idle = charts(page, query)
        with heavy_work(renice=False):  # another session's job, as far as this process can tell
            busy = charts(page, query)
        said = [
            f"chart {i + 1} dataset {k + 1}: {dataset_difference(b, a)}"
            for i, (x, y) in enumerate(zip(idle, busy, strict=True))
            for k, (a, b) in enumerate(zip(x, y, strict=True))
            if a != b
        ]
        differ += bool(said)
        print(f"{page} {query}: {len(idle)} charts, " + ("; ".join(said) or "same bytes"))
    print(f"{differ} of {len(VIEWS)} views drew other bytes during heavy work")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
