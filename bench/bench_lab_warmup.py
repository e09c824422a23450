"""A fresh clone's first start, timed: every default lab answer and paper check trained into an
empty store (what the app's background warm-up does), one line each with the time so far.

    taskset -c 0,1 python bench/bench_lab_warmup.py      # two cores, as the README's goal says

Prints ``study  run-id  seconds  cumulative``; the last line is the time until every default is
stored. The store is a fresh temporary directory (``POSVIZ_LAB_DIR`` is set to it).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="posviz-warm-") as root:
        os.environ["POSVIZ_LAB_DIR"] = root
        os.environ.pop("POSVIZ_LAB_WARM_DIR", None)
        from posviz.lab import QUESTIONS, RunStore, run_paper_check, run_question
        from posviz.lab.papers import PAPER_CHECKS

        store = RunStore(Path(root))
        start = time.perf_counter()
        jobs = [("question", q) for q in QUESTIONS] + [("paper", c) for c in PAPER_CHECKS]
        for kind, study in jobs:
            began = time.perf_counter()
            if kind == "question":
                run_id = run_question(study, store=store).run_id
            else:
                run_id = run_paper_check(study, store=store).run_id
            now = time.perf_counter()
            print(f"{study:18} {run_id}  {now - began:7.1f} s  {now - start:7.1f} s", flush=True)
        print(f"all {len(jobs)} defaults stored in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
