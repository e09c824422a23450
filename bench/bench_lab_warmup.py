"""A fresh clone's first start, timed: every default lab answer and paper check trained into an
empty store (what the app's background warm-up does), one line each with the time so far and
the page's estimate for it on idle cores (:attr:`posviz.lab.engine.run.Unit.cost`), so the
estimate's error is measured in the same run.

    taskset -c 0,1 python bench/bench_lab_warmup.py            # two cores (the README's goal)
    taskset -c 0,1 python bench/bench_lab_warmup.py --panels   # then every held-out panel
    python bench/bench_lab_warmup.py --line --busy 2 --questions   # the first start's line

``--line`` runs the app's own warm-up (:func:`posviz.lab_jobs.start_warmup`: its jobs, its
pace, its progress line) into an empty store beside ``--busy`` spinning processes (once the load
average has settled with them), reads the line every ``--every`` seconds, and at the end sets
each reading's "about X min left" against the time that was really left until every default
(``--questions``: every question's default only) was stored: ``time  stored  load  said  left
left/said``, then how many readings fall within 1.25×.

Prints ``study  run-id  seconds  estimated  measured/estimated  cumulative``; the last line is
the time until every study is stored. The store is a fresh temporary directory
(``POSVIZ_LAB_DIR`` is set to it).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


#: the goal: every estimate within this factor of the time it came to (either way)
WITHIN = 1.25


def _line(busy: int, questions: bool, every: float) -> int:
    """The first start's progress line against the real finish (``--line``)."""
    from bench_estimates import _spinners, _wait_for_load

    spinners = _spinners(busy)
    try:
        with tempfile.TemporaryDirectory(prefix="posviz-line-") as root:
            os.environ["POSVIZ_LAB_DIR"] = root
            os.environ.pop("POSVIZ_LAB_WARM_DIR", None)
            from posviz import lab_jobs

            print(f"load average before: {_wait_for_load(busy):.1f}", flush=True)
            studies = [s for s in lab_jobs.default_studies() if s.part == "default"]
            if questions:
                studies = [s for s in studies if not s.title.startswith("paper check")]
            start = time.monotonic()
            warmup = lab_jobs.start_warmup(root, studies)
            readings = []  # (seconds since the start, stored, load, the line's eta)
            stores = [(0.0, time.process_time())]  # when each study was stored, CPU seconds then
            last = -every
            while True:
                view = warmup.view()
                now = time.monotonic() - start
                if view.stored > len(stores) - 1:
                    stores.append((now, time.process_time()))
                if view.defaults_done or not view.running:
                    break
                if now - last >= every:
                    last = now
                    readings.append((now, view.stored, os.getloadavg()[0], view.eta_s))
                    print(f"{now:6.0f} s  {view.text()}", flush=True)
                time.sleep(1.0)
            finish = time.monotonic() - start
            print(f"all {view.total} stored after {finish:.0f} s (failed: {view.failed or 0})")
            # the work model alone, whatever the load did: each study's CPU seconds per unit of
            # work against all studies' (one the model counts right reads 1.00)
            spans = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(stores)]
            pooled = sum(c for _, c in spans) / sum(s.plan.work for s in studies[: len(spans)])
            for study, (wall, cpu) in zip(studies, spans, strict=False):
                print(
                    f"{study.title[:40]:40} {wall:6.1f} s  CPU {cpu:6.1f} s  CPU/work ÷ pooled "
                    f"{cpu / study.plan.work / pooled:4.2f}",
                    flush=True,
                )
            within = 0
            for now, stored, load, said in readings:
                left = finish - now
                within += 1 / WITHIN <= left / said <= WITHIN
                print(
                    f"{now:6.0f} s  {stored:2} of {view.total}  load {load:4.1f}  said "
                    f"{said / 60:5.1f} min  left {left / 60:5.1f} min  {left / said:4.2f}×",
                    flush=True,
                )
            print(f"{within} of {len(readings)} readings within {WITHIN}× either way", flush=True)
    finally:
        for process in spinners:
            process.kill()
            process.wait()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", action="store_true", help="then train every held-out panel")
    parser.add_argument("--line", action="store_true", help="the warm-up's line, read and timed")
    parser.add_argument("--busy", type=int, default=0, help="with --line: spinning processes")
    parser.add_argument("--questions", action="store_true", help="with --line: questions only")
    parser.add_argument("--every", type=float, default=15.0, help="with --line: seconds apart")
    args = parser.parse_args()
    if args.line:
        return _line(args.busy, args.questions, args.every)
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
