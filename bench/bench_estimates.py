"""The lab's Run estimates against measured runs on a busy machine (issue 37, item 4).

    python bench/bench_estimates.py --busy 2      # two spinning processes beside the runs

Starts ``--busy`` processes that keep a core each busy (what another tenant's work does), waits
until the 1-minute load average has risen to about ``--busy``, then trains ten runs one after the
other into an empty store: every question's default, the cheapest paper check (Press) and two
custom runs (a Run with other settings, as a reader presses it). Before each run it reads the
estimate a page would show for it now (:meth:`posviz.lab.present.live.RunPlan.estimate_now`:
the load average on the first run, then the pace pooled over the runs measured so far, as the
app's live view records it), and prints ``study  load (at the start → at the end)  estimate
measured  measured/estimate  source``, then how many ratios fall within 1.25×, then each run's
CPU seconds per unit of work against all runs' (the work model's own error, apart from changes
in the load while the runs went on: on a shared machine other tenants' work comes and goes).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: the goal: every estimate within this factor of the measured time (either way)
WITHIN = 1.25


def _spinners(count: int) -> list[subprocess.Popen]:
    spin = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]


def _wait_for_load(target: float, settle: float = 120.0, timeout: float = 300.0) -> float:
    """Until the 1-minute load average has settled with the spinners (it is a moving average:
    read as soon as it first reaches ``target`` it is still rising, and the first estimate would
    be made on a lighter load than the run meets)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout and (
        time.monotonic() - start < settle or os.getloadavg()[0] < target * 0.9
    ):
        time.sleep(5)
    return os.getloadavg()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=2, help="spinning processes beside the runs")
    args = parser.parse_args()
    busy = _spinners(args.busy)
    try:
        with tempfile.TemporaryDirectory(prefix="posviz-est-") as root:
            os.environ["POSVIZ_LAB_DIR"] = root
            os.environ.pop("POSVIZ_LAB_WARM_DIR", None)
            from posviz.lab import QUESTIONS, RunStore, run_paper_check, run_question
            from posviz.lab.present import live

            store = RunStore(Path(root))
            jobs: list[tuple[str, str, object]] = [("question", q, None) for q in QUESTIONS]
            jobs.append(("paper", "press_2022", None))
            for qid, change in (("learned", {"seeds": 3}), ("concat", {"steps": 300})):
                jobs.append(
                    ("question", qid, dataclasses.replace(QUESTIONS[qid].default, **change))
                )
            print(f"load average before: {_wait_for_load(args.busy):.1f}", flush=True)
            within, cpu = 0, []
            for number, (kind, study, config) in enumerate(jobs):
                if kind == "question":
                    plan = live.question_plan(study, config or QUESTIONS[study].default)
                else:
                    plan = live.card_plan(study)
                load = os.getloadavg()[0]
                estimate, source = plan.estimate_now()
                began, cpu_began = time.perf_counter(), time.process_time()
                if kind == "question":
                    run_question(study, config=config, store=store)
                else:
                    run_paper_check(study, store=store)
                took = time.perf_counter() - began
                cpu.append((study + ("" if config is None else " (custom)"),
                            time.process_time() - cpu_began, plan.work))  # fmt: skip
                after = os.getloadavg()[0]
                # what the live view records once a run is under way: its training seconds
                # against its work (the models' build, START_S, not counted)
                live.PACE.record(number, max(took - live.START_S, 0.0), plan.work)
                ratio = took / estimate
                within += 1 / WITHIN <= ratio <= WITHIN
                name = study + ("" if config is None else " (custom)")
                print(
                    f"{name:22} load {load:4.1f}→{after:4.1f}  est {estimate:6.1f} s  "
                    f"took {took:6.1f} s  "
                    f"{ratio:4.2f}×  {source}",
                    flush=True,
                )
            print(f"{within} of {len(jobs)} within {WITHIN}× either way", flush=True)
            # the work model alone, whatever the load did: each run's CPU seconds per unit of
            # work against all runs' (a run whose work the model counts right reads 1.00)
            pooled = sum(c for _, c, _ in cpu) / sum(w for _, _, w in cpu)
            for name, seconds, work in cpu:
                print(f"{name:22} CPU {seconds:6.1f} s  CPU/work ÷ pooled "
                      f"{seconds / work / pooled:4.2f}", flush=True)  # fmt: skip
    finally:
        for process in busy:
            process.kill()
            process.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
