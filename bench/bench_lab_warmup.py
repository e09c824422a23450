"""A fresh clone's first start, timed: every default lab answer and paper check trained into an
empty store (what the app's background warm-up does), one line each with the time so far and
the page's estimate for it on idle cores (:attr:`posviz.lab.engine.run.Unit.cost`), so the
estimate's error is measured in the same run.

    taskset -c 0,1 python bench/bench_lab_warmup.py            # two cores (the README's goal)
    taskset -c 0,1 python bench/bench_lab_warmup.py --panels   # then every held-out panel

Prints ``study  run-id  seconds  estimated  measured/estimated  cumulative``; the last line is
the time until every study is stored. The store is a fresh temporary directory
(``POSVIZ_LAB_DIR`` is set to it).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", action="store_true", help="then train every held-out panel")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="posviz-warm-") as root:
        os.environ["POSVIZ_LAB_DIR"] = root
        os.environ.pop("POSVIZ_LAB_WARM_DIR", None)
        from posviz.lab import QUESTIONS, RunStore, run_paper_check, run_question
        from posviz.lab.present.live import card_plan, question_plan
        from posviz.lab.studies.papers import PAPER_CHECKS
        from posviz.lab.studies.questions import question_parts

        store = RunStore(Path(root))
        jobs = [("question", q, "default") for q in QUESTIONS]
        jobs += [("paper", c, "default") for c in PAPER_CHECKS]
        if args.panels:
            jobs += [
                ("question", q.id, "panel")
                for q in QUESTIONS.values()
                if "panel" in question_parts(q)
            ]
        start = time.perf_counter()
        for kind, study, part in jobs:
            if kind == "question":
                plan = question_plan(study, QUESTIONS[study].default, part=part)
            else:
                plan = card_plan(study)
            began = time.perf_counter()
            if kind == "question":
                run_id = run_question(study, store=store, part=part).run_id
            else:
                run_id = run_paper_check(study, store=store).run_id
            now = time.perf_counter()
            took, name = now - began, study + ("" if part == "default" else f" {part}")
            print(
                f"{name:22} {run_id}  {took:7.1f} s  est {plan.estimate_s:7.1f} s  "
                f"{took / plan.estimate_s:5.2f}×  {now - start:7.1f} s",
                flush=True,
            )
        print(f"all {len(jobs)} studies stored in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
