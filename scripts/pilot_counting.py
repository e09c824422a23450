"""Pilot: does CoPE's counting result (Golovneva et al. 2024, Table 3) show its shape in the lab?

Trains the lab's tiny causal decoders (:class:`posviz.lab.engine.model.LabModel`, through
:func:`posviz.lab.studies.counting_train.train_counting`) on the counting task
(:mod:`posviz.lab.studies.counting`) with a learned absolute table, T5's relative buckets, RoPE
and no positions, for 1 / 3 / 5 variables, and prints each scheme's held-out test error (mean
over seeds, per checkpoint) with paired 95% intervals of the differences the published shape is
about: absolute − T5 and absolute − RoPE (Table 3: absolute ≫ relative, the gap growing with the
number of variables).

Run (one at a time, niced: the machine is shared)::

    nice -n 5 .venv/bin/python scripts/pilot_counting.py --variables 1 3 5 --steps 600 --seeds 3

Findings (2026-11-28, shared 2-core CPU; 2 layers, width 32, 4 heads, batch 32, lr 3e-3; test
error on 512 held-out programs per seed at the last checkpoint, mean over seeds; [paired 95%
interval]):

* Fresh programs every step, 3 variables, 4 … 24 statements, seeds 0–1, 600 steps (96 s CPU):
  learned 0.254, T5 0.230, RoPE 0.229, NoPE 0.191, all still falling; learned − RoPE +0.025
  [−0.024, +0.075].
* A fixed set of 2,000 programs per seed (``--train-programs 2000``, 12.8 epochs), 4 … 24
  statements, seeds 0–2, 800 steps, ~150 s CPU per variable count:
  1 variable (commonest-answer error 0.674): learned 0.028, T5 0.068, RoPE 0.018, NoPE 0.068;
  3 variables (0.701): learned 0.191, T5 0.177, RoPE 0.215, NoPE 0.160;
  5 variables (0.633): learned 0.229, T5 0.236, RoPE 0.231, NoPE 0.278.
  learned − T5: −0.040 [−0.111, +0.030] / +0.014 [−0.053, +0.081] / −0.007 [−0.052, +0.038];
  learned − RoPE: +0.010 [−0.039, +0.059] / −0.024 [−0.069, +0.021] / −0.003 [−0.135, +0.129].
  The card's judge (counting_card.judge_counting): does not agree in shape — every condition
  fails; the absolute table is not worse than either relative scheme at any number of
  variables, and all schemes degrade together from 1 to 3 variables (Table 3's absolute ≫
  relative does not show at this size: programs of at most 50 tokens, every position seen
  thousands of times).
* Longer programs, 4 … 64 statements (up to 130 tokens), 3 variables, the same fixed set of
  2,000 programs, seeds 0–2, 800 steps, learned / T5 / RoPE only (431 s CPU): far from trained
  (commonest-answer error 0.744): learned 0.518, T5 0.497, RoPE 0.528, all still falling;
  learned − T5 +0.021 [−0.022, +0.065], learned − RoPE −0.010 [−0.080, +0.060]. No gap either,
  and at 0.06 s CPU per member-step a longer budget is past the lab's.
* A smaller fixed set, 500 programs per seed (51 epochs; the paper's Figure 2 finds relative PE's
  error falling as the training set grows), 4 … 24 statements, 800 steps. Seeds 0–2, learned /
  T5 / RoPE (~95 s CPU per variable count): learned 0.081 / 0.339 / 0.323, T5 0.081 / 0.238 /
  0.253, RoPE 0.049 / 0.324 / 0.302 at 1 / 3 / 5 variables; learned − T5 +0.000 [−0.157, +0.157]
  / +0.102 [−0.017, +0.220] / +0.070 [−0.116, +0.256]; learned − RoPE +0.033 [−0.149, +0.215] /
  +0.015 [−0.019, +0.049] / +0.021 [−0.118, +0.159]. Chosen after that, a check of the T5 half on
  fresh seeds 3–7 (5 seeds, learned and T5 only, ~105 s CPU per variable count): learned 0.043 /
  0.277 / 0.306, T5 0.107 / 0.241 / 0.260; learned − T5 −0.064 [−0.143, +0.015] / +0.036
  [+0.025, +0.048] / +0.046 [+0.010, +0.082]; the gap grows from 1 to 5 variables by +0.110
  [+0.043, +0.176]. So with little data the absolute table does fall behind T5's buckets at 3
  and 5 variables, by 4–5 points (the paper's gap: 50 points), and not behind RoPE (3 seeds).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from posviz.analysis.difference import paired_difference
from posviz.lab.studies.counting import (
    EVAL_STREAM,
    CountingConfig,
    CountingRun,
    counting_rng,
    majority_error,
    make_batch,
    positions_and_answers,
)
from posviz.lab.studies.counting_card import judge_counting
from posviz.lab.studies.counting_train import train_counting


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variables", type=int, nargs="+", default=[1, 3, 5])
    parser.add_argument("--schemes", default="learned,t5,rope,nope")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--max-statements", type=int, default=32)
    parser.add_argument("--eval-size", type=int, default=512)
    parser.add_argument("--checkpoints", type=int, default=4)
    parser.add_argument("--train-programs", type=int, help="a fixed training set (per seed)")
    parser.add_argument("--json", help="also write every number here")
    args = parser.parse_args()
    schemes = tuple(args.schemes.split(","))
    report, values, floors = [], {s: {} for s in schemes}, {}
    for n in args.variables:
        run = CountingRun(
            CountingConfig(variables=n, max_statements=args.max_statements),
            schemes=schemes, seeds=args.seeds, first_seed=args.first_seed, width=args.width,
            heads=args.heads, layers=args.layers, batch=args.batch, lr=args.lr,
            steps=args.steps, eval_size=args.eval_size, checkpoints=args.checkpoints,
            train_programs=args.train_programs,
        )  # fmt: skip
        cpu = time.process_time()
        out = train_counting(run)
        cpu = time.process_time() - cpu
        held = make_batch(run.task, counting_rng(args.first_seed, EVAL_STREAM, n), args.eval_size)
        floors[n] = majority_error(positions_and_answers(held)[1])
        for s in schemes:
            values[s][n] = out.final_error(s)
        print(
            f"\n{n} variable(s), commonest-answer error {floors[n]:.3f}: "
            f"{out.seconds:.0f} s wall, {cpu:.0f} s CPU for "
            f"{len(schemes)} schemes × {args.seeds} seeds × {args.steps} steps; "
            f"checkpoints {out.checkpoint_steps}"
        )
        for s in schemes:
            e = out.error[s]
            means = " ".join(f"{x:.3f}" for x in e.mean(0))
            print(f"  {s:8s} test error by checkpoint {means}; final per seed {e[:, -1].round(3)}")
        gaps = {}
        if "learned" in schemes:
            for other in schemes:
                if other == "learned":
                    continue
                d = paired_difference(out.final_error("learned"), out.final_error(other))
                gaps[other] = [d.estimate, d.low, d.high]
                print(f"  learned − {other}: {d.interval_text()}")
        report.append(
            {
                "variables": n,
                "seconds": out.seconds,
                "cpu_seconds": cpu,
                "checkpoints": list(out.checkpoint_steps),
                "error": {s: out.error[s].tolist() for s in schemes},
                "loss": {s: out.loss[s].tolist() for s in schemes},
                "learned_minus": gaps,
                "commonest_answer_error": floors[n],
                "settings": {k: v for k, v in vars(args).items() if k != "json"},
            }
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
    if len(report) > 1 and "learned" in schemes:
        for other in (s for s in schemes if s != "learned"):
            first, last = report[0], report[-1]
            grow = paired_difference(
                np.array(last["error"]["learned"])[:, -1] - np.array(last["error"][other])[:, -1],
                np.array(first["error"]["learned"])[:, -1] - np.array(first["error"][other])[:, -1],
            )
            print(
                f"gap learned − {other}, {last['variables']} vs {first['variables']} variables: "
                f"{grow.interval_text()}"
            )
    if sorted(args.variables) == [1, 3, 5]:
        print("\nThe card's judge (criterion fixed in posviz/lab/studies/counting_card.py):")
        print(judge_counting(values, floors).text())


if __name__ == "__main__":
    main()
