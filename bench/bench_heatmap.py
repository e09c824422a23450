"""Benchmark: heatmap payloads and slider → repaint time vs a trivial chart, in one browser run.

    .venv/bin/python bench/bench_heatmap.py [--presses 10]

Starts a small Streamlit app (written to a temp dir) on a free loopback port, opens it in headless
Chromium (the system one, see tests/browser_support.py), and for each view presses ArrowRight on
a slider and waits until the chart shows the new value. Each press changes what is drawn:

* ``trivial``: one bar whose height is the slider value (the round trip with ~nothing to draw);
* ``512x768`` / ``1024x1024``: the sinusoid table with a new ``base`` → a new 1:1 PNG heatmap;
* ``8192x8192 zoom``: a 1024×1024 window of the cached 8192×8192 table, moved by the slider;
* ``8192x8192 overview``: a new 8192×8192 table (new base) reduced to 1024×1024 — server compute.

Prints a markdown table: chart JSON bytes (``payload_bytes``), websocket bytes received per
repaint, median and p90 repaint time, and the ratio to the trivial chart. Also the JSON size of a
naive Altair rect heatmap of 512×768 for comparison (not rendered).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser_support import browser_page, start_streamlit_server, stop_process  # noqa: E402

APP = textwrap.dedent(
    """
    import altair as alt
    import numpy as np
    import pandas as pd
    import streamlit as st

    from posviz.charts.heatmap import color_limit, heatmap_chart
    from posviz.encodings.sinusoidal import sinusoidal

    @st.cache_resource
    def big(n: int, d: int) -> tuple[np.ndarray, float]:
        table = sinusoidal(n, d, dtype=np.float32)
        return table, color_limit(table)  # the page caches the colour limit per table too

    mode = st.query_params.get("mode", "trivial")
    renderer = st.query_params.get("renderer", "canvas")
    v = st.slider("v", 0, 1000, 0, key="v")
    title = f"v={v}"
    if mode == "trivial":
        frame = pd.DataFrame({"x": ["a"], "y": [v]})
        chart = alt.Chart(frame, title=title).mark_bar().encode(x="x:N", y="y:Q")
    elif mode == "zoom":
        table, vmax = big(8192, 8192)
        r0 = min(8 * v, 8192 - 1024)
        chart = heatmap_chart(table, window=(r0, r0 + 1024, 4096, 5120), vmax=vmax,
                              title=title, renderer=renderer)
    else:
        n, d = (int(part) for part in mode.split("x"))
        chart = heatmap_chart(sinusoidal(n, d, base=10000.0 + 100 * v, dtype=np.float32),
                              title=title, renderer=renderer)
    st.altair_chart(chart, key="chart")
    """
)

VIEWS = [  # (label, mode, cells)
    ("trivial bar chart", "trivial", None),
    ("heatmap 512×768 (1:1)", "512x768", (512, 768)),
    ("heatmap 1024×1024 (1:1)", "1024x1024", (1024, 1024)),
    ("heatmap 1024×1024 (1:1), SVG renderer", "1024x1024&renderer=svg", (1024, 1024)),
    ("heatmap 8192×8192, 1024² zoom window (1:1)", "zoom", (8192, 8192)),
    ("heatmap 8192×8192 overview (8×8 mean)", "8192x8192", (8192, 8192)),
]

HAS_TITLE = """needle => {
    // SVG (trivial chart): a text element shows the title. Canvas (heatmaps): the chart's
    // aria-label (the spec's description) starts with the title, and the image is painted: the
    // centre pixel, inside the image layer, is opaque (the canvas starts transparent).
    const chart = document.querySelector('[data-testid="stVegaLiteChart"]');
    const canvas = chart?.querySelector('canvas');
    if (canvas) {
        const label = chart.getAttribute('aria-label') ?? '';
        if (!label.startsWith(needle + '.') && !label.startsWith(needle + ' ')) return false;
        const x = canvas.width >> 1, y = canvas.height >> 1;
        return canvas.getContext('2d').getImageData(x, y, 1, 1).data[3] > 0;
    }
    const texts = [...chart?.querySelectorAll('text') ?? []].map(t => t.textContent);
    return texts.some(t => t === needle || t.startsWith(needle + " "));
}"""


def _payload(mode: str) -> int:
    import numpy as np

    from posviz.charts.heatmap import heatmap_chart, payload_bytes
    from posviz.encodings.sinusoidal import sinusoidal

    if mode == "trivial":
        import altair as alt
        import pandas as pd

        frame = pd.DataFrame({"x": ["a"], "y": [1]})
        return payload_bytes(alt.Chart(frame, title="v=1").mark_bar().encode(x="x:N", y="y:Q"))
    mode = mode.split("&")[0]  # drop "&renderer=..."
    if mode == "zoom":
        table = sinusoidal(8192, 8192, dtype=np.float32)
        return payload_bytes(heatmap_chart(table, window=(0, 1024, 4096, 5120)))
    n, d = (int(part) for part in mode.split("x"))
    return payload_bytes(heatmap_chart(sinusoidal(n, d, dtype=np.float32)))


def _naive_rect_bytes(n: int = 512, d: int = 768) -> int:
    import altair as alt
    import numpy as np
    import pandas as pd

    from posviz.charts.heatmap import payload_bytes
    from posviz.encodings.sinusoidal import sinusoidal

    rows, cols = np.indices((n, d)).reshape(2, -1)
    frame = pd.DataFrame({"p": rows, "j": cols, "v": sinusoidal(n, d).ravel()})
    alt.data_transformers.disable_max_rows()
    chart = alt.Chart(frame).mark_rect().encode(x="j:O", y="p:O", color="v:Q")
    return payload_bytes(chart)


class _Tab:
    """One browser tab on one view: press ArrowRight, time until the chart shows the new value."""

    def __init__(self, page, url: str, mode: str) -> None:
        self.page, self.value, self.bytes = page, 0, 0
        page.on("websocket", lambda socket: socket.on("framereceived", self._count))
        page.goto(f"{url}/?mode={mode}")
        page.wait_for_function(HAS_TITLE, arg="v=0", timeout=180_000)
        self.slider = page.locator('[data-testid="stSlider"] input[type="range"]')

    def _count(self, payload) -> None:
        self.bytes += len(payload)

    def press(self) -> tuple[float, int]:
        self.page.bring_to_front()
        self.slider.focus()
        self.value += 1
        self.bytes = 0
        start = time.perf_counter()
        self.page.keyboard.press("ArrowRight")
        self.page.wait_for_function(HAS_TITLE, arg=f"v={self.value}", timeout=180_000)
        return time.perf_counter() - start, self.bytes


def _interleaved(browser, url: str, mode: str, presses: int) -> dict[str, list]:
    """Alternate presses between a trivial tab and this view's tab, so load swings hit both."""
    print(f"measuring {mode}", file=sys.stderr, flush=True)
    size = {"width": 1400, "height": 1000}
    trivial = _Tab(browser.new_page(viewport=size), url, "trivial")
    view = _Tab(browser.new_page(viewport=size), url, mode)
    trivial.press(), view.press()  # warm caches and both Vega views
    out = {"trivial": [], "view": [], "bytes": []}
    for _ in range(presses):
        out["trivial"].append(trivial.press()[0])
        seconds, size = view.press()
        out["view"].append(seconds)
        out["bytes"].append(size)
    trivial.page.close(), view.page.close()
    return out


def _bench_line(metric: str, value: float, unit: str, goal: str, ok: bool | None, detail: str):
    print(
        "BENCH "
        + json.dumps(
            {
                "metric": metric,
                "value": round(value, 3),
                "unit": unit,
                "goal": goal,
                "ok": ok,
                "detail": detail,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="skip the 8192×8192 views")
    args = parser.parse_args()
    views = [view for view in VIEWS[1:] if not (args.quick and view[2] == (8192, 8192))]
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "bench_app.py"
        app.write_text(APP)
        url, process = start_streamlit_server(app, env={"PYTHONPATH": str(ROOT)})
        try:
            with browser_page(width=1400, height=1000) as page:
                results = {
                    label: _interleaved(
                        page.context.browser, url, mode, 3 if mode == "8192x8192" else args.presses
                    )
                    for label, mode, _cells in views
                }
        finally:
            stop_process(process)
    print(
        "| view | chart JSON | websocket bytes / repaint | repaint median | p90 "
        "| trivial median (same run) | × trivial |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, mode, _cells in views:
        r = results[label]
        median, trivial = statistics.median(r["view"]), statistics.median(r["trivial"])
        p90 = sorted(r["view"])[max(0, int(0.9 * len(r["view"])) - 1)]
        payload = _payload(mode)
        print(
            f"| {label} | {payload / 1000:,.1f} kB "
            f"| {statistics.median(r['bytes']) / 1000:,.0f} kB "
            f"| {median * 1000:,.0f} ms | {p90 * 1000:,.0f} ms | {trivial * 1000:,.0f} ms "
            f"| {median / trivial:.2f} |"
        )
        rebuild = mode == "8192x8192"
        _bench_line(
            f"heatmap repaint / trivial: {label}",
            median / trivial,
            "x",
            "n/a (rebuilds a 67M-cell table on the server)" if rebuild else "<= 1.5",
            None if rebuild else median / trivial <= 1.5,
            f"{median * 1000:.0f} ms vs {trivial * 1000:.0f} ms",
        )
        _bench_line(
            f"heatmap chart payload: {label}",
            payload / 1000,
            "kB",
            "<= 1000",
            payload <= 1_000_000,
            "chart JSON incl. the PNG data URL",
        )
    print(
        f"\nNaive Altair rect heatmap of 512×768 (not drawn): {_naive_rect_bytes() / 1e6:.1f} MB "
        "of chart JSON."
    )


if __name__ == "__main__":
    main()
