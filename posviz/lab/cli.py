"""The lab on the command line: ``lab list`` and ``lab run QUESTION [--seeds N] [--json PATH]``.

The integrator wires :func:`add_lab_commands` into ``posviz/cli.py``; :func:`main` runs the same
commands on their own (``main(["run", "learned", "--seeds", "3"])``). ``run`` prints the same
results table as the lab page (:func:`posviz.lab.results_frame`) and the answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from posviz.lab.presets import QUESTIONS, question
from posviz.lab.results import LabResult, Progress, results_frame
from posviz.lab.run import run_question
from posviz.lab.store import RunStore


def add_lab_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``lab list`` and ``lab run`` to an ``argparse`` sub-parser collection."""
    lab = subparsers.add_parser("lab", help="train tiny transformers to answer position questions")
    commands = lab.add_subparsers(dest="lab_command", required=True)
    listing = commands.add_parser("list", help="the questions and the stored runs")
    listing.add_argument("--store", type=Path, default=None, help="run store directory")
    run = commands.add_parser("run", help="run (or load) a question's preset")
    run.add_argument("question", choices=list(QUESTIONS))
    run.add_argument("--seeds", type=int, default=None, help="seeds per variant (default: preset)")
    run.add_argument("--steps", type=int, default=None, help="optimiser steps (default: preset)")
    run.add_argument("--json", type=Path, default=None, help="also write the result as JSON here")
    run.add_argument("--store", type=Path, default=None, help="run store directory")
    lab.set_defaults(handler=run_lab_command)
    return lab


def _progress(out: TextIO) -> Any:
    def show(progress: Progress) -> None:
        if progress.queue_position:
            print(f"waiting for a job slot: position {progress.queue_position}", file=out)
        elif progress.step == progress.total_steps:
            print(f"{progress.variant}: done, {progress.elapsed_s:.1f} s", file=out)

    return show


def result_json(result: LabResult) -> dict[str, Any]:
    """The parts of a result a script wants: ids, config, table rows, answer, wall time."""
    frame = results_frame(result)
    return {
        "run_id": result.run_id,
        "question": result.question_id,
        "code_version": result.code_version,
        "config": result.config.to_dict(),
        "results": json.loads(frame.to_json(orient="records")),
        "answer": result.answer,
        "notes": list(result.notes),
        "wall_s": result.wall_s,
    }


def run_lab_command(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Execute a parsed ``lab`` command; returns the exit status."""
    out = out or sys.stdout
    store = RunStore(args.store) if getattr(args, "store", None) else RunStore()
    if args.lab_command == "list":
        for q in QUESTIONS.values():
            print(f"{q.id:14} {q.title}", file=out)
        for s in store.list():
            if s.corrupt:
                print(f"{s.run_id}  CORRUPTED: {s.corrupt} (retrained when asked for)", file=out)
            else:
                print(f"{s.run_id}  {s.question_id:14} seeds={s.seeds} {s.wall_s:.1f} s", file=out)
        return 0
    q = question(args.question)
    config = q.default
    if args.seeds is not None:
        config = replace(config, seeds=args.seeds)
    if args.steps is not None:
        config = replace(config, steps=args.steps)
    result = run_question(
        q.id,
        config=config,
        store=store,
        on_progress=_progress(sys.stderr),
        on_corrupt=lambda error: print(f"{error} Retraining it now.", file=sys.stderr),
    )
    print(f"{q.title} (run {result.run_id})", file=out)
    print(results_frame(result).to_string(index=False, float_format=lambda v: f"{v:.3f}"), file=out)
    print("\n" + result.answer, file=out)
    if args.json is not None:
        args.json.write_text(json.dumps(result_json(result), indent=1), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None, *, out: TextIO | None = None) -> int:
    """``lab`` commands on their own; a bad setting prints its message and returns 2."""
    parser = argparse.ArgumentParser(prog="posviz")
    add_lab_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["lab", *(argv or [])])
    try:
        return run_lab_command(args, out=out)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
