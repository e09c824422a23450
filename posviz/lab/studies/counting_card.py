"""CoPE's counting result as a paper check's data and judge, fixed before any run.

Golovneva, Wang, Lan, Weston & Sukhbaatar, "Contextual Position Encoding: Learning to Count
What's Important" (2024, https://arxiv.org/abs/2405.18719), Table 3: test error on the counting
task (:mod:`posviz.lab.studies.counting`) for 1 / 3 / 5 variables. No PDF of the paper is kept
here; the numbers are **read from the authors' figure** of Table 3 in their repository
(:data:`FIGURE`), and the card says so.

Only the *shape* is judged, never the values (the lab's decoders are thousands of times smaller
than the paper's 4-layer, width-256 ones, and its programs tens of statements, not hundreds):
an absolute position table does much worse than relative positions once there are several
variables, and the gap grows with the number of variables. The paper's "relative PE" is a learned
relative embedding; the lab has two relative schemes, T5's buckets and RoPE, and the shape must
hold for each. CoPE itself is not in the lab (it needs a new position mechanism in the engine),
so its row is shown and not tested; NoPE is trained and reported, not judged (the paper has no
such arm).

Not registered in :data:`posviz.lab.studies.papers.PAPER_CHECKS`: a registered check trains
through the one runner (:func:`posviz.lab.engine.run.run_study`), whose units train only the
engine's own tasks (:func:`posviz.lab.engine.train.train_arms`), and the engine is not to be
changed for it here. :func:`judge_counting` judges the pilot's runs
(``scripts/pilot_counting.py``) with the criterion the card will use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from posviz.analysis.difference import paired_difference
from posviz.lab.engine.results import Condition, Published
from posviz.lab.engine.store import _module_digest, study_run_id
from posviz.lab.studies.counting import VARIABLE_COUNTS, CountingConfig, CountingRun
from posviz.lab.studies.papers import AGREES, DISAGREES, NOT_JUDGED, CheckOutcome

CARD_ID = "golovneva_2024"
#: What decides the card's numbers besides the engine's source (hashed by every run id): the
#: task and its training loop live outside the engine, so their source goes into the design.
TASK_MODULES = ("posviz.lab.studies.counting", "posviz.lab.studies.counting_train")

#: The authors' figure of Table 3, at the commit it was read at.
FIGURE = (
    "https://github.com/facebookresearch/RAM/blob/e6f051fbcfaef4cab69bf2ea1b25f500f94c0c64/"
    "projects/cope/figures/counting_task.png"
)

PUBLISHED = Published(
    table="Table 3 (read from the authors' figure, projects/cope/figures/counting_task.png)",
    setting=(
        "4-layer decoders of width 256 with 4 heads trained on the answer only, 10,000 programs "
        "of 3 … 512 statements (set : pass : increment = 1 : 50 : 7), 1, 3 or 5 variables; "
        "mean of 3 seeds (projects/cope/run.sh and README)"
    ),
    numbers=(
        ("Absolute PE, 1 var", 5.3),
        ("Absolute PE, 3 var", 67.6),
        ("Absolute PE, 5 var", 71.5),
        ("Relative PE, 1 var", 1.1),
        ("Relative PE, 3 var", 17.8),
        ("Relative PE, 5 var", 22.4),
        ("CoPE, 1 var", 0.0),
        ("CoPE, 3 var", 1.2),
        ("CoPE, 5 var", 7.4),
    ),
    unit="test error rate (%, lower is better)",
    read_at=FIGURE,
)

ABSOLUTE = "learned"
RELATIVE: tuple[str, ...] = ("t5", "rope")
#: A relative arm has learned the task when its test error is at most this share of the
#: commonest-answer error (the error of a model that ignores the program): it then gets at
#: least half of what guessing misses right.
LEARNED_SHARE = 0.5

Values = Mapping[str, Mapping[int, np.ndarray]]  # scheme → variables → (E,) test error per seed

CRITERION = (
    f"Judged only when T5's buckets and RoPE have each learned the task at every number of "
    f"variables (mean test error at most {LEARNED_SHARE} × the error of always giving the "
    "commonest answer). Agrees in shape when, for each of T5 and RoPE, (1) the learned "
    "absolute table's error is above the relative scheme's at 3 and at 5 variables (the whole "
    "paired 95% interval over seeds of absolute − relative above 0), and (2) that gap is larger "
    "at 5 variables than at 1 (the whole interval of the change above 0; seed s of 1 and of 5 "
    "variables paired)."
)


def _array(values: Values, scheme: str, n: int) -> np.ndarray | None:
    v = values.get(scheme, {}).get(n)
    if v is None:
        return None
    a = np.asarray(v, dtype=np.float64).ravel()
    return a if a.size >= 2 and np.isfinite(a).all() else None


def judge_counting(values: Values, floors: Mapping[int, float]) -> CheckOutcome:
    """The verdict on a run: ``values[scheme][variables]`` = ``(E,)`` test error per seed, and
    ``floors[variables]`` the commonest-answer error of that task's held-out programs
    (:func:`posviz.lab.studies.counting.majority_error`). Never raises for bad numbers: a
    missing arm, one seed or NaN gives :data:`NOT_JUDGED` with the reason."""
    for scheme in (ABSOLUTE, *RELATIVE):
        for n in VARIABLE_COUNTS:
            if _array(values, scheme, n) is None:
                return CheckOutcome(
                    NOT_JUDGED,
                    reason=f"{scheme} at {n} variable(s) has no finite error on ≥ 2 seeds.",
                )
    untrained = [
        f"{scheme} {float(np.mean(_array(values, scheme, n))):.3f} at {n} "
        f"(bound {LEARNED_SHARE * floors[n]:.3f})"
        for scheme in RELATIVE
        for n in VARIABLE_COUNTS
        if np.mean(_array(values, scheme, n)) > LEARNED_SHARE * floors[n]
    ]
    if untrained:
        return CheckOutcome(
            NOT_JUDGED,
            reason=(
                "relative schemes not trained (test error above "
                f"{LEARNED_SHARE} × the commonest-answer error): {', '.join(untrained)}; "
                "train longer before comparing."
            ),
        )
    conditions = []
    for rel in RELATIVE:
        gap = {
            n: _array(values, ABSOLUTE, n) - _array(values, rel, n)  # type: ignore[operator]
            for n in VARIABLE_COUNTS
        }
        for n in VARIABLE_COUNTS[1:]:
            d = paired_difference(_array(values, ABSOLUTE, n), _array(values, rel, n))
            conditions.append(
                Condition(
                    f"absolute table above {rel} at {n} variables (absolute − {rel}, whole "
                    f"interval above 0): {d.interval_text()}",
                    d.low > 0,
                    {"estimate": d.estimate, "low": d.low, "high": d.high, "threshold": 0.0},
                )
            )
        first, last = VARIABLE_COUNTS[0], VARIABLE_COUNTS[-1]
        grow = paired_difference(gap[last], gap[first])
        conditions.append(
            Condition(
                f"the gap absolute − {rel} grows from {first} to {last} variables (change, "
                f"whole interval above 0): {grow.interval_text()}",
                grow.low > 0,
                {"estimate": grow.estimate, "low": grow.low, "high": grow.high, "threshold": 0.0},
            )
        )
    verdict = AGREES if all(c.holds for c in conditions) else DISAGREES
    return CheckOutcome(verdict, tuple(conditions))


def card_runs(run: CountingRun) -> tuple[CountingRun, ...]:
    """The card's runs: ``run``'s settings at each of Table 3's numbers of variables."""
    return tuple(
        dataclasses.replace(run, task=dataclasses.replace(run.task, variables=n))
        for n in VARIABLE_COUNTS
    )


#: The card's run as planned from the pilot (``scripts/pilot_counting.py``): a fixed training
#: set of 2,000 programs of 4 … 24 statements per seed, batch 32, 800 steps, 3 seeds.
CARD_RUN = CountingRun(
    CountingConfig(max_statements=24), seeds=3, batch=32, steps=800, train_programs=2000
)


def counting_design(runs: Sequence[CountingRun]) -> dict[str, object]:
    """What decides the card's stored numbers: every run's settings, the published numbers,
    and the source of the task and its loop (:data:`TASK_MODULES`), so an edit of either
    retrains this card and nothing else."""
    return {
        "runs": [dataclasses.asdict(r) | {"task": r.task.to_dict()} for r in runs],
        "published": [PUBLISHED.table, PUBLISHED.numbers],
        "task_source": [_module_digest(name) for name in TASK_MODULES],
    }


def counting_run_id(runs: Sequence[CountingRun] | None = None) -> str:
    """The card's run id (:func:`posviz.lab.engine.store.study_run_id`, kind ``paper_check``)."""
    runs = card_runs(CARD_RUN) if runs is None else runs
    schemes = sorted({s for r in runs for s in r.schemes})
    return study_run_id("paper_check", CARD_ID, counting_design(runs), schemes=schemes)
