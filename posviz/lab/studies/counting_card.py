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

Registered as the paper check ``golovneva_2024`` (:data:`posviz.lab.studies.papers.GOLOVNEVA_2024`):
it trains through the one runner (:func:`posviz.lab.engine.run.run_study`) with its own trainer
(:func:`train_card_arms` → :func:`posviz.lab.studies.counting_train.train_card_arms`, the
runner's :attr:`~posviz.lab.engine.run.Unit.train`), one arm per scheme × number of variables
(:func:`card_arms`), and is judged by :func:`judge_card` (:func:`judge_counting` on its stored
per-seed numbers). :func:`judge_counting` was fixed before the pilot's runs
(``scripts/pilot_counting.py``) and is not tuned to them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from posviz.analysis.difference import paired_difference
from posviz.lab.engine.card_inputs import ladder_inputs
from posviz.lab.engine.results import Condition, Published
from posviz.lab.studies.counting import VARIABLE_COUNTS, CountingConfig, CountingRun

if TYPE_CHECKING:
    from posviz.lab.studies.papers import CheckOutcome

# The verdicts and the outcome type live in posviz.lab.studies.papers, which registers this card
# (it imports this module): read at call time.
AGREES, DISAGREES, NOT_JUDGED = "agrees in shape", "does not agree in shape", "cannot be judged"

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
    # lazy: papers imports this module (a cycle at import time)
    from posviz.lab.studies.papers import CheckOutcome

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


#: The card's run, the pilot's setting E (``scripts/pilot_counting.py``): a fixed training set
#: of 500 programs of 4 … 24 statements per seed (51 epochs), batch 32, 800 steps, seeds 3–7.
#: With 2,000 programs (pilot B) no scheme fell behind another; with 500 the learned table fell
#: behind T5's buckets (pilot E) — the criterion, fixed before either, judges both relative
#: schemes as it always did.
CARD_RUN = CountingRun(
    CountingConfig(max_statements=24),
    seeds=5,
    first_seed=3,
    batch=32,
    steps=800,
    train_programs=500,
)

#: what a scheme is called on the card (the paper's "Absolute PE" is the learned table)
LABELS = {
    "learned": "learned absolute table (the paper's Absolute PE)",
    "t5": "T5's relative buckets",
    "rope": "RoPE",
    "nope": "no positions (NoPE)",
}


@dataclass(frozen=True)
class ArmConfig:
    """A card arm's settings, flat as the engine's ``LabConfig`` (the one runner reads its
    seeds, steps and the sizes :func:`posviz.lab.engine.run.step_cpu_s` weighs; ``max_len`` is
    the longest program in tokens): one scheme on one counting task, :attr:`run` its
    :class:`CountingRun`.

    Raises:
        ValueError: settings :class:`CountingRun` refuses (the message names the setting).
    """

    task: CountingConfig
    scheme: str
    seeds: int
    first_seed: int
    width: int
    heads: int
    layers: int
    batch: int
    lr: float
    steps: int
    eval_batch: int
    train_programs: int | None

    def __post_init__(self) -> None:
        self.run  # noqa: B018 - validates every setting

    @classmethod
    def of(cls, run: CountingRun, scheme: str) -> ArmConfig:
        return cls(
            run.task, scheme, run.seeds, run.first_seed, run.width, run.heads, run.layers,
            run.batch, run.lr, run.steps, run.eval_size, run.train_programs,
        )  # fmt: skip

    @property
    def run(self) -> CountingRun:
        """This arm's run: its one scheme, evaluated at 4 checkpoints (the last at the end)."""
        return CountingRun(
            self.task, (self.scheme,), self.seeds, self.first_seed, self.width, self.heads,
            self.layers, self.batch, self.lr, self.steps, self.eval_batch, min(4, self.steps),
            self.train_programs,
        )  # fmt: skip

    @property
    def max_len(self) -> int:
        return self.task.max_tokens

    @property
    def eval_lengths(self) -> tuple[int, ...]:
        return (self.max_len,)

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self) | {"task": self.task.to_dict()}


def arm_id(scheme: str, variables: int) -> str:
    """``learned_3v``: a card arm's id."""
    return f"{scheme}_{variables}v"


def card_arms(run: CountingRun = CARD_RUN) -> tuple[tuple[str, str, str, ArmConfig], ...]:
    """``(id, label, scheme, settings)`` of every scheme × number of variables of ``run``."""
    return tuple(
        (
            arm_id(scheme, one.task.variables),
            f"{LABELS.get(scheme, scheme)}, {one.task.variables} variable"
            + ("s" if one.task.variables > 1 else ""),
            scheme,
            ArmConfig.of(one, scheme),
        )
        for one in card_runs(run)
        for scheme in run.schemes
    )


def train_card_arms(members, **kwargs):
    """The card's trainer (:func:`posviz.lab.studies.counting_train.train_card_arms`), imported
    when it trains (torch is heavy; listing and judging cards needs none)."""
    # lazy: torch, only when the card trains
    from posviz.lab.studies import counting_train

    return counting_train.train_card_arms(members, **kwargs)


#: the inputs the judge reads, per arm and seed
INPUTS = (
    ("test_error", "held-out test error (share of 512 programs answered wrong), last checkpoint"),
    (
        "majority_error",
        "error of always giving the commonest answer on the same held-out programs",
    ),
)


def counting_inputs(arm, heldout: Mapping[int, object]) -> dict[str, np.ndarray]:
    """``{test_error, majority_error, test_error@stepS}`` of one card arm from its trainer's
    held-out numbers (:class:`~posviz.lab.studies.counting_train.CardHeldOut`)."""
    held = heldout[arm.config.max_len]
    error = np.asarray(held.error, dtype=np.float64)  # type: ignore[attr-defined]
    return {
        "test_error": error[:, -1],
        "majority_error": np.asarray(held.majority, dtype=np.float64),  # type: ignore[attr-defined]
        **ladder_inputs("test_error", arm, error),
    }


def judge_card(values: Mapping[str, Mapping[str, np.ndarray]]) -> CheckOutcome:
    """:func:`judge_counting` on the card's stored numbers (``values[arm id][input]``): each
    scheme's test error per number of variables, the floors the commonest-answer error (mean
    over seeds) of the learned arm's held-out programs (every arm of a task sees the same)."""
    by_scheme = {
        scheme: {
            n: values[arm_id(scheme, n)]["test_error"]
            for n in VARIABLE_COUNTS
            if arm_id(scheme, n) in values
        }
        for scheme in (ABSOLUTE, *RELATIVE)
    }
    floors = {
        n: float(np.mean(values[arm_id(ABSOLUTE, n)]["majority_error"]))
        for n in VARIABLE_COUNTS
        if arm_id(ABSOLUTE, n) in values
    }
    if len(floors) < len(VARIABLE_COUNTS):
        # lazy: papers imports this module (a cycle at import time)
        from posviz.lab.studies.papers import CheckOutcome

        return CheckOutcome(NOT_JUDGED, reason="the learned table's arms are missing.")
    return judge_counting(by_scheme, floors)


def counting_run_id() -> str:
    """The registered card's run id (:func:`posviz.lab.studies.cards.card_run_id`)."""
    # lazy: papers imports this module (a cycle at import time)
    from posviz.lab.studies.cards import card_run_id
    from posviz.lab.studies.papers import GOLOVNEVA_2024  # lazy: the same cycle

    return card_run_id(GOLOVNEVA_2024)
