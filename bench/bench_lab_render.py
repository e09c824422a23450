"""A lab question's page with its stored answer renders in <= 2x the time of the Sinusoidal page.

One server, one browser: the question's preset is trained once into a store (not timed; or read
from ``--store``, e.g. one that ``python -m posviz lab warm --store DIR`` filled), then page loads
alternate between the Sinusoidal page and the question's page, which answers from the store on
arrival (its verdict, hero, sweep grid and evidence charts). Each load is timed from navigation
until the script has finished and every chart on the page is drawn (the same wait for both).

    .venv/bin/python bench/bench_lab_render.py [--question learned] [--repeat 7] [--store DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run_all import browser, load_ms, server  # noqa: E402  (bench helpers, not a package)

from posviz.lab import QUESTIONS, RunStore, run_question  # noqa: E402

ALL_DRAWN = """() => {
    const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')];
    return charts.length > 0 && charts.every(c => c.querySelector('canvas, svg'));
}"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default="learned")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--store", type=Path, default=None, help="a run store to read (or fill)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        store_dir = str(args.store or scratch)
        q = QUESTIONS[args.question]
        run_question(q.id, store=RunStore(Path(store_dir)))  # read from the store if it is there
        lab_url = f"/lab_{q.id}"  # no link: the page answers from the store on arrival
        env = {"POSVIZ_LAB_DIR": store_dir}
        with server(ROOT / "app.py", cwd=ROOT, env=env) as (port, _), browser() as b:
            base = f"http://127.0.0.1:{port}"
            page = b.new_page(viewport={"width": 1280, "height": 1000})
            load_ms(page, base + "/sinusoidal", ALL_DRAWN)  # warm both (first loads import modules)
            load_ms(page, base + lab_url, ALL_DRAWN)
            sinusoid, lab = [], []
            for _ in range(args.repeat):
                sinusoid.append(load_ms(page, base + "/sinusoidal", ALL_DRAWN))
                lab.append(load_ms(page, base + lab_url, ALL_DRAWN))
    s_med, l_med = statistics.median(sinusoid), statistics.median(lab)
    ratio = l_med / s_med
    print(f"Sinusoidal page: median {s_med:.0f} ms over {args.repeat} loads")
    print(
        f"lab page with its stored answer ({q.id}): median {l_med:.0f} ms over {args.repeat} loads"
    )
    print(f"ratio {ratio:.2f}x (goal <= 2x)")
    line = {"metric": f"lab page, stored answer ({q.id}) / Sinusoidal page, load to charts drawn",
            "value": round(ratio, 3), "goal": "<= 2x", "ok": ratio <= 2.0, "unit": "x"}  # fmt: skip
    print("BENCH " + json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
