"""A stored lab run renders in <= 2x the time of the Sinusoidal page (issue #10).

One server, one browser: a lab question's preset is trained once into a temporary store (not timed),
then page loads alternate between the Sinusoidal page and the stored run's URL. Each load is timed
from navigation until the script has finished and every chart is drawn (the same wait for both).

    .venv/bin/python bench/bench_lab_render.py [--question learned] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run_all import browser, open_page, server  # noqa: E402  (bench helpers, not a package)

from posviz.lab import QUESTIONS, RunStore, run_question  # noqa: E402


def _load_ms(page, url: str) -> float:
    start = time.perf_counter()
    open_page(page, url)
    page.wait_for_selector('[data-testid="stVegaLiteChart"] canvas, '
                           '[data-testid="stVegaLiteChart"] svg', timeout=120_000)  # fmt: skip
    page.wait_for_load_state("networkidle")
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default="learned")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as store_dir:
        q = QUESTIONS[args.question]
        result = run_question(q.id, store=RunStore(Path(store_dir)))
        lab_url = f"/lab_{q.id}?lab_{q.id}_run={result.run_id}"
        env = {"POSVIZ_LAB_DIR": store_dir}
        with server(ROOT / "app.py", cwd=ROOT, env=env) as (port, _), browser() as b:
            base = f"http://127.0.0.1:{port}"
            page = b.new_page(viewport={"width": 1280, "height": 1000})
            _load_ms(page, base + "/sinusoidal")  # warm both (first loads import modules)
            _load_ms(page, base + lab_url)
            sinusoid, lab = [], []
            for _ in range(args.repeat):
                sinusoid.append(_load_ms(page, base + "/sinusoidal"))
                lab.append(_load_ms(page, base + lab_url))
    s_med, l_med = statistics.median(sinusoid), statistics.median(lab)
    ratio = l_med / s_med
    print(f"Sinusoidal page: median {s_med:.0f} ms over {args.repeat} loads")
    print(f"stored lab run ({q.id}): median {l_med:.0f} ms over {args.repeat} loads")
    print(f"ratio {ratio:.2f}x (goal <= 2x)")
    line = {"metric": f"stored lab run ({q.id}) / Sinusoidal page, load to charts drawn",
            "value": round(ratio, 3), "goal": "<= 2x", "ok": ratio <= 2.0, "unit": "x"}  # fmt: skip
    print("BENCH " + json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
