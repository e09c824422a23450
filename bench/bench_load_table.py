"""Benchmark: ``posviz.load_table("bundled")`` vs ``AutoModel.from_pretrained`` + the parameter.

Both get the same (512, 384) MiniLM position table. Each measurement runs in a fresh Python
subprocess so imports and peak memory are not shared; the two methods alternate, ``--repeats``
times each, and the median is reported:

* **end to end**: from the first import to having the numpy array (imports included: numpy for
  posviz; torch + transformers for the model path);
* **call only**: the same process, libraries already imported, timing just the load call;
* **peak RSS**: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end of the subprocess.

Run: ``.venv/bin/python bench/bench_load_table.py [--repeats 5]``; prints a markdown table and
``BENCH {...}`` lines for ``bench/run_all.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run_all import python_json  # noqa: E402  (bench helpers, not a package)

_POSVIZ = """
import time, resource, json
t0 = time.perf_counter()
import posviz.tables
t1 = time.perf_counter()
matrix = posviz.tables.load_table("bundled").matrix
t2 = time.perf_counter()
print(json.dumps({"wall": t2 - t0, "call": t2 - t1, "rss_kb": resource.getrusage(
    resource.RUSAGE_SELF).ru_maxrss, "shape": list(matrix.shape), "sum": float(matrix.sum())}))
"""

_TRANSFORMERS = """
import time, resource, json
t0 = time.perf_counter()
import torch
from transformers import AutoModel
from transformers.utils import logging
logging.disable_progress_bar()
from posviz.tables.bundled import bundled_model_dir
directory = bundled_model_dir()
t1 = time.perf_counter()
model = AutoModel.from_pretrained(directory)
matrix = model.embeddings.position_embeddings.weight.detach().numpy().copy()
t2 = time.perf_counter()
print(json.dumps({"wall": t2 - t0, "call": t2 - t1, "rss_kb": resource.getrusage(
    resource.RUSAGE_SELF).ru_maxrss, "shape": list(matrix.shape), "sum": float(matrix.sum())}))
"""


def _run(code: str) -> dict[str, float]:
    return python_json(code, {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"})


def measure(repeats: int) -> dict[str, list[dict[str, float]]]:
    """``repeats`` alternating runs of each method (a warm-up run of each is discarded)."""
    _run(_POSVIZ), _run(_TRANSFORMERS)  # warm the page cache and the verification stamp
    runs: dict[str, list[dict[str, float]]] = {"posviz": [], "transformers": []}
    for _ in range(repeats):
        runs["posviz"].append(_run(_POSVIZ))
        runs["transformers"].append(_run(_TRANSFORMERS))
    first, second = runs["posviz"][0], runs["transformers"][0]
    assert first["shape"] == second["shape"] and abs(first["sum"] - second["sum"]) < 1e-3
    return runs


def report(runs: dict[str, list[dict[str, float]]]) -> str:
    """Markdown table of medians and ratios."""

    def med(method: str, field: str) -> float:
        return statistics.median(r[field] for r in runs[method])

    rows = [
        ("end to end, incl. imports (s)", "wall", 1.0, "{:.3f}"),
        ("load call only (s)", "call", 1.0, "{:.4f}"),
        ("peak RSS (MiB)", "rss_kb", 1 / 1024, "{:.0f}"),
    ]
    lines = [
        '| measure | `load_table("bundled")` | `AutoModel.from_pretrained` + parameter | ratio |',
        "|---|---:|---:|---:|",
    ]
    for label, field, scale, fmt in rows:
        ours, theirs = med("posviz", field) * scale, med("transformers", field) * scale
        lines.append(
            f"| {label} | {fmt.format(ours)} | {fmt.format(theirs)} | {theirs / ours:.0f}× |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs = measure(args.repeats)
    version = sys.version.split()[0]
    print(f"Median of {args.repeats} fresh subprocesses per method (Python {version}).\n")
    print(report(runs))
    for metric, field, goal in (
        ("load_table speed-up vs AutoModel, end to end", "wall", 50),
        ("load_table speed-up vs AutoModel, load call only", "call", 50),
        ("load_table peak-memory ratio vs AutoModel", "rss_kb", None),
    ):
        ratio = statistics.median(r[field] for r in runs["transformers"]) / statistics.median(
            r[field] for r in runs["posviz"]
        )
        line = {"metric": metric, "value": round(ratio, 1), "unit": "x"}
        if goal is not None:
            line |= {"goal": f">= {goal}x", "ok": ratio >= goal}
        print("BENCH " + json.dumps(line))


if __name__ == "__main__":
    main()
