"""The lab on the command line: ``lab list``, ``lab run``, ``lab check`` and ``lab warm``.

The integrator wires :func:`add_lab_commands` into ``posviz/cli.py``; :func:`main` runs the same
commands on their own (``main(["run", "learned", "--seeds", "3"])``). ``run`` prints the same
results table as the lab page (:func:`posviz.lab.results_frame`), the sweep at a glance and the
answer; ``warm`` computes every default answer and paper check into the store (what the Docker
image's build step runs, so a hosted link's first visitor trains nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from posviz.lab.engine.results import CardResult, LabResult, Progress, grid_frame, results_frame
from posviz.lab.engine.store import RunStore
from posviz.lab.studies.cards import run_paper_check
from posviz.lab.studies.papers import PAPER_CHECKS
from posviz.lab.studies.presets import QUESTIONS, question
from posviz.lab.studies.questions import question_parts, run_question
from posviz.lab.studies.summarise import with_panel
from posviz.labfiles import CorruptEntry


def add_lab_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``lab list``, ``lab run``, ``lab check`` and ``lab warm`` to an ``argparse``
    sub-parser collection."""
    lab = subparsers.add_parser("lab", help="train tiny transformers to answer position questions")
    commands = lab.add_subparsers(dest="lab_command", required=True)
    listing = commands.add_parser("list", help="the questions, paper checks and stored runs")
    listing.add_argument("--store", type=Path, default=None, help="run store directory")
    run = commands.add_parser("run", help="run (or load) a question's preset with its sweep")
    run.add_argument("question", choices=list(QUESTIONS))
    run.add_argument("--seeds", type=int, default=None, help="seeds per arm (default: preset)")
    run.add_argument(
        "--steps", type=int, default=None, help="the preset budget S (the sweep also reads 3S)"
    )
    run.add_argument(
        "--panel",
        action="store_true",
        help="also run (or load) the held-out panel and judge every finding on it too",
    )
    run.add_argument("--json", type=Path, default=None, help="also write the result as JSON here")
    run.add_argument("--store", type=Path, default=None, help="run store directory")
    check = commands.add_parser("check", help="run (or load) a paper check")
    check.add_argument("paper", choices=list(PAPER_CHECKS))
    check.add_argument("--store", type=Path, default=None, help="run store directory")
    warm = commands.add_parser("warm", help="compute every default answer and paper check")
    warm.add_argument("--store", type=Path, default=None, help="run store directory")
    lab.set_defaults(handler=run_lab_command)
    return lab


def _progress(out: TextIO) -> Any:
    state = {"shown": -10.0}

    def show(progress: Progress) -> None:
        if progress.queue_position:
            print(f"waiting for a job slot: position {progress.queue_position}", file=out)
        elif progress.elapsed_s - state["shown"] >= 10 or progress.step == progress.total_steps:
            state["shown"] = progress.elapsed_s
            print(
                f"{progress.variant}: step {progress.step} of {progress.total_steps}, "
                f"{progress.elapsed_s:.0f} s",
                file=out,
            )

    return show


def _corrupt(out: TextIO) -> Any:
    def say(error: CorruptEntry) -> None:
        print(f"Found a corrupted run: {error} Retraining it now.", file=out)

    return say


def result_json(result: LabResult) -> dict[str, Any]:
    """The parts of a result a script wants: ids, config, tables, sweep, findings, answer."""
    return {
        "run_id": result.run_id,
        "question": result.question_id,
        "code_version": result.code_version,
        "config": result.config.to_dict(),
        "results": json.loads(results_frame(result).to_json(orient="records")),
        "sweep": json.loads(grid_frame(result).to_json(orient="records")),
        "findings": [
            {"topic": f.topic, "holds_everywhere": f.holds_everywhere, "depends_on": f.depends_on}
            for f in result.findings
        ],
        "answer": result.answer,
        "notes": list(result.notes),
        "wall_s": result.wall_s,
    }


def print_result(result: LabResult, *, out: TextIO) -> None:
    """The results table of the preset's cell, the sweep grid and the answer."""
    q = question(result.question_id)
    print(f"{q.title} (run {result.run_id})", file=out)
    table = results_frame(result).to_string(index=False, float_format=lambda v: f"{v:.3f}")
    print(table, file=out)
    grid = grid_frame(result).drop(columns=["cell", "preset"])
    print("\nThe sweep (one row per cell):", file=out)
    print(grid.to_string(index=False), file=out)
    print("\n" + result.answer, file=out)


def print_card(card: CardResult, *, out: TextIO) -> None:
    """A paper check's card: claim, published vs this run, the verdict with its conditions."""
    print(f"{card.citation} (run {card.run_id})", file=out)
    print(f"Claim: {card.claim}", file=out)
    for table in card.published:
        numbers = ", ".join(f"{label} {value:g}" for label, value in table.numbers)
        print(f"Published, {table.table} ({table.setting}; {table.unit}): {numbers}", file=out)
    if card.published_note:
        print(f"Published: {card.published_note}", file=out)
    print("This run: " + " | ".join(card.this_run), file=out)
    print(f"Criterion (fixed before the run): {card.criterion}", file=out)
    conditions = "; ".join(f"{'holds' if c.holds else 'fails'}: {c.text}" for c in card.conditions)
    print(f"Verdict: {card.verdict}. {conditions or card.reason}", file=out)
    for asked, text in card.trends():
        print(f"{asked} {text}", file=out)
    print(f"Caveat: {card.caveat}", file=out)


def _warm(store: RunStore, *, out: TextIO, err: TextIO) -> int:
    """Every question's default run, every paper check, then every question's held-out panel,
    stored; one line each with its time."""
    for q in QUESTIONS.values():
        start = time.perf_counter()
        result = run_question(
            q.id, store=store, on_progress=_progress(err), on_corrupt=_corrupt(err)
        )
        print(f"{q.id:16} {result.run_id}  {time.perf_counter() - start:7.1f} s", file=out)
    for check_id in PAPER_CHECKS:
        start = time.perf_counter()
        card = run_paper_check(
            check_id, store=store, on_progress=_progress(err), on_corrupt=_corrupt(err)
        )
        took = time.perf_counter() - start
        print(f"{check_id:16} {card.run_id}  {took:7.1f} s  {card.verdict}", file=out)
    for q in QUESTIONS.values():  # the held-out panels last, as the app's warm-up does
        for part in question_parts(q)[1:]:
            start = time.perf_counter()
            result = run_question(
                q.id, store=store, on_progress=_progress(err), on_corrupt=_corrupt(err), part=part
            )
            took = time.perf_counter() - start
            print(f"{q.id + ' ' + part:16} {result.run_id}  {took:7.1f} s", file=out)
    return 0


def run_lab_command(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Execute a parsed ``lab`` command; returns the exit status."""
    out = out or sys.stdout
    store = RunStore(args.store) if getattr(args, "store", None) else RunStore()
    if args.lab_command == "list":
        for q in QUESTIONS.values():
            print(f"{q.id:16} {q.title}", file=out)
        for check in PAPER_CHECKS.values():
            print(f"{check.id:16} paper check: {check.claim[:70]}…", file=out)
        for s in store.list():
            if s.corrupt:
                print(f"{s.run_id}  CORRUPTED: {s.corrupt} (retrained when asked for)", file=out)
            else:
                print(f"{s.run_id}  {s.question_id:22} seeds={s.seeds} {s.wall_s:.1f} s", file=out)
        return 0
    if args.lab_command == "warm":
        return _warm(store, out=out, err=sys.stderr)
    if args.lab_command == "check":
        card = run_paper_check(
            args.paper,
            store=store,
            on_progress=_progress(sys.stderr),
            on_corrupt=_corrupt(sys.stderr),
        )
        print_card(card, out=out)
        return 0
    q = question(args.question)
    config = q.default
    if args.seeds is not None:
        config = replace(config, seeds=args.seeds)
    if args.steps is not None:
        config = replace(config, steps=args.steps)

    def run(part: str) -> LabResult:
        return run_question(
            q.id,
            config=config,
            store=store,
            on_progress=_progress(sys.stderr),
            on_corrupt=_corrupt(sys.stderr),
            part=part,
        )

    result = run("default")
    if args.panel and "panel" in question_parts(q):
        result = with_panel(result, run("panel"))
    print_result(result, out=out)
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
