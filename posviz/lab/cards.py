"""Paper checks run through the lab's machinery: trained, judged, stored and warmed like questions.

Each check of :mod:`posviz.lab.papers` defines its arms (model + full settings), the per-seed
numbers its judge reads and the criterion, fixed in code before any run. :func:`run_paper_check`
trains the arms with :func:`posviz.lab.train.train_arms` (deterministic on the CPU), hands the
held-out results to the check's own extractor and judge, and stores a :class:`CardResult`: the
published numbers beside this run's, and "agrees in shape" / "does not agree in shape" / "cannot
be judged". The run id hashes the check id, every arm's settings and the code version.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from posviz.analysis.evidence import spread
from posviz.jobs import JobCancelled, claim, job_slot
from posviz.lab import metrics as m
from posviz.lab.papers import PAPER_CHECKS, CardArm, PaperCheck, card_values, paper_check
from posviz.lab.results import CardResult, LabStopped, Progress
from posviz.lab.run import TRAIN_THREADS, train_module
from posviz.lab.store import RunStore, code_version
from posviz.labfiles import CorruptEntry
from posviz.references import cite_plain

#: the held-out checkpoint before the last is this share of the run (for the plateau test).
PLATEAU_AT = 0.75


def card_run_id(check: PaperCheck) -> str:
    """Hash (16 hex digits) of the check id, every arm's model and settings, and the code."""
    key = {
        "paper_check": check.id,
        "arms": [[a.id, a.model.to_dict(), a.config.to_dict()] for a in check.arms],
        "code": code_version(),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def run_paper_check(
    check_id: str,
    *,
    store: RunStore | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_corrupt: Callable[[CorruptEntry], None] | None = None,
) -> CardResult:
    """Run (or load) one paper check and judge it with its pre-registered criterion.

    Raises:
        ValueError: unknown check id.
        LabStopped: ``should_stop()`` returned true (nothing is stored).
    """
    check = paper_check(check_id)
    store = store or RunStore()
    run_id = card_run_id(check)
    try:
        stored = store.load_card(run_id)
    except CorruptEntry as error:
        stored = None
        if on_corrupt is not None:
            on_corrupt(error)
    if stored is not None:
        return stored
    steps = max(a.config.steps for a in check.arms)
    marks = sorted({round(PLATEAU_AT * steps), steps})
    start = time.perf_counter()
    try:
        # One training per check across replicas sharing the store, as for questions
        # (posviz.jobs.claim): a second replica waits, then reads what the first stored.
        with claim(store.root / ".claims", run_id, should_stop=should_stop) as held:
            if (stored := _stored_card(store, run_id)) is not None:
                return stored
            held.note("training")
            with job_slot("lab", should_stop=should_stop):
                report = _reporter(on_progress, start, steps, check.id)
                outputs = _train(check, steps, marks, report, should_stop)
            result = _card(check, run_id, outputs, time.perf_counter() - start)
            store.save(result)  # before the claim is released: its waiters find it
    except JobCancelled as stop:
        raise LabStopped(f"Paper check {check.id} stopped before it finished.") from stop
    return result


def _stored_card(store: RunStore, run_id: str) -> CardResult | None:
    """The stored card, or None (also when corrupted: it is then retrained and replaced)."""
    try:
        return store.load_card(run_id)
    except CorruptEntry:
        return None


def _halves(check: PaperCheck) -> list[list[CardArm]]:
    """The check's arms in :data:`posviz.lab.run.TRAIN_THREADS` groups of about equal work."""
    groups: list[list[CardArm]] = [[] for _ in range(min(TRAIN_THREADS, len(check.arms)))]
    for arm in sorted(check.arms, key=lambda a: -a.config.seeds * a.config.max_len):
        lightest = min(groups, key=lambda g: sum(a.config.seeds * a.config.max_len for a in g))
        lightest.append(arm)
    return groups


def _train(
    check: PaperCheck,
    steps: int,
    marks: list[int],
    report: Callable[[int, int, dict[str, float]], None] | None,
    should_stop: Callable[[], bool] | None,
) -> dict:
    """Every arm of the check, its arms split over :data:`TRAIN_THREADS` training threads."""
    train = train_module()

    def one(group: list[CardArm]) -> dict:
        train.use_one_thread()
        arms = [train.Arm(a.id, a.model, a.config) for a in group]
        return train.train_arms(
            arms, steps=steps, checkpoints=marks, on_step=report, should_stop=should_stop
        )

    with ThreadPoolExecutor(max_workers=TRAIN_THREADS, thread_name_prefix="lab") as pool:
        parts = [f.result() for f in [pool.submit(one, g) for g in _halves(check)]]
    return {arm_id: out for part in parts for arm_id, out in part.items()}


def _reporter(
    on_progress: Callable[[Progress], None] | None, start: float, steps: int, what: str
) -> Callable[[int, int, dict[str, float]], None] | None:
    if on_progress is None:
        return None

    def report(done: int, total: int, losses: dict[str, float]) -> None:
        # one of the training threads' own count: a share of that thread's work
        elapsed = time.perf_counter() - start
        eta = elapsed / done * (total - done) if done else math.nan
        on_progress(Progress(round(steps * done / total), steps, losses, elapsed, eta, what))

    return report


def _plateau(loss: np.ndarray) -> str:
    """How an arm's held-out loss moved over the last quarter of its run (mean over seeds)."""
    before, now = float(np.mean(loss[:, -2])), float(np.mean(loss[:, -1]))
    gain = (before - now) / before if before > 0 else 0.0
    state = "plateaued" if gain < m.PLATEAU else "still falling"
    return f"held-out loss {before:.3f} → {now:.3f} over the last quarter ({gain:+.1%}): {state}"


def _this_run(check: PaperCheck, values: dict[str, dict[str, np.ndarray]]) -> tuple[str, ...]:
    """Each arm's judged numbers in words: losses also as perplexity (``exp``)."""
    lines = []
    for arm in check.arms:
        parts = []
        for name, _ in check.inputs:
            v = np.asarray(values[arm.id][name], dtype=np.float64)
            if not np.isfinite(v).all():
                parts.append(f"{name}: not defined")
                continue
            s = spread(v)
            if name.startswith("loss"):
                parts.append(
                    f"perplexity {name.removeprefix('loss')} {math.exp(s.mean):.2f}".strip()
                )
                parts[-1] += f" (loss {s.text(3)} nats)"
            else:
                parts.append(f"{name.replace('_', ' ')} {s.text(3)}")
        lines.append(f"{arm.label}: " + "; ".join(parts))
    return tuple(lines)


def _card(check: PaperCheck, run_id: str, outputs, wall: float) -> CardResult:
    heldout = {arm.id: outputs[arm.id].heldout for arm in check.arms}
    values = card_values(check, heldout)
    outcome = check.check(values)
    first = min(check.arms[0].config.eval_lengths)
    return CardResult(
        run_id=run_id,
        check_id=check.id,
        code_version=code_version(),
        reference=check.reference,
        citation=cite_plain(check.reference),
        claim=check.claim,
        claim_read_at=check.claim_read_at,
        published=check.published,
        published_note=check.published_note or "",
        criterion=check.criterion,
        caveat=check.caveat,
        arm_labels={a.id: a.label for a in check.arms},
        inputs={
            arm: {name: tuple(float(x) for x in np.ravel(v)) for name, v in by_name.items()}
            for arm, by_name in values.items()
        },
        input_names=check.inputs,
        this_run=_this_run(check, values),
        verdict=outcome.verdict,
        agrees=outcome.agrees,
        conditions=outcome.conditions,
        reason=outcome.reason,
        convergence={
            a.id: _plateau(np.asarray(outputs[a.id].heldout[first].loss)) for a in check.arms
        },
        wall_s=wall,
    )


def stored_cards(*, store: RunStore | None = None) -> dict[str, CardResult]:
    """Every paper check whose current run is stored, by check id (nothing trains)."""
    store = store or RunStore()
    out = {}
    for check_id, check in PAPER_CHECKS.items():
        try:
            card = store.load_card(card_run_id(check))
        except CorruptEntry:
            card = None
        if card is not None:
            out[check_id] = card
    return out
