"""The settings a verdict could depend on, swept: which instances to train and which cells to read.

A question declares its :class:`Sweep`: the tasks it makes sense on (the preset's own first),
the learned table's initial scales, and the training budgets (multiples of the preset's steps,
read from checkpoints of one run, so a budget costs no extra training). Every arm is trained
once per task and, if it has a learned table, once per init (arms without a table do not depend
on it and are shared by the init cells). A :class:`~posviz.lab.engine.results.Cell` is one
combination
(task, init, budget); :func:`cells` lists them with the instance each arm reads there.

Initial scales: ``small`` = N(0, 0.02²), BERT's and GPT-2's ``initializer_range`` for their
position table, against token embeddings at std 1/√2 here (1 : 35); ``matched`` = the token
embedding's own std (BERT and GPT-2 start both tables at the same scale, 1 : 1); ``large`` =
N(0, 1), where row movement is known to be fragile.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from posviz.lab.engine.config import SMALL_INIT_STD, LabConfig, ModelConfig
from posviz.lab.engine.results import Setting
from posviz.settings import settings

#: std of the lab's token embeddings (posviz.lab.engine.model.EMBED_STD, 1/√2), kept here without
#: torch.
TOKEN_EMBED_STD = 0.5**0.5


@dataclass(frozen=True)
class InitSetting:
    """One initial scale of the learned position table: N(0, std²)."""

    key: str
    label: str
    std: float


INIT_SMALL = InitSetting("small", "table init N(0, 0.02²) (BERT/GPT-2)", SMALL_INIT_STD)
INIT_MATCHED = InitSetting(
    "matched", "table init N(0, 0.71²) (= token embeddings)", TOKEN_EMBED_STD
)
INIT_LARGE = InitSetting("large", "table init N(0, 1)", 1.0)


@dataclass(frozen=True)
class TaskSetting:
    """One task a question runs on: its key and the config changes it makes.

    ``changes`` are :class:`LabConfig` fields (task, lengths, evaluation lengths, …) applied on
    top of the question's base config; the preset's own task has none. ``metric``: the metric id
    that decides a cell on this task ("" = the question's own). Its label is computed from the
    config it makes (:func:`task_label`), never typed, so a run at another length says so.
    """

    key: str
    changes: tuple[tuple[str, object], ...] = ()
    metric: str = ""

    def config(self, base: LabConfig) -> LabConfig:
        """``base`` with this task's changes (validated)."""
        return replace(base, **dict(self.changes)) if self.changes else base


@dataclass(frozen=True)
class Sweep:
    """What a question sweeps: tasks, learned-table inits and budgets (multiples of ``steps``).

    The first value of each axis is the preset's own (the default cell).
    """

    tasks: tuple[TaskSetting, ...]
    inits: tuple[InitSetting, ...] = (INIT_SMALL, INIT_MATCHED)
    budgets: tuple[int, ...] = (1, 3)

    def __post_init__(self) -> None:
        if not self.tasks or not self.inits or not self.budgets:
            raise ValueError("a sweep needs at least one task, one init and one budget.")
        if any(b < 1 for b in self.budgets) or list(self.budgets) != sorted(set(self.budgets)):
            raise ValueError(f"budgets {self.budgets} must be increasing whole multiples ≥ 1.")

    @property
    def longest(self) -> int:
        return max(self.budgets)


@dataclass(frozen=True)
class Planned:
    """One instance to train: an arm under one task and init, with its model and config."""

    id: str
    arm: str
    task: str
    init: str
    model: ModelConfig
    config: LabConfig


def instance_id(arm: str, task: str, init: str | None, *, sweep: Sweep) -> str:
    """``arm`` in the preset's own task and init; else ``arm.task[.init]``.

    The default instance keeps the bare arm id, so ``lab:<run>/<arm>`` names the preset's table.
    """
    own_task, own_init = sweep.tasks[0].key, sweep.inits[0].key
    if task == own_task and init in (None, own_init):
        return arm
    return f"{arm}.{task}" if init is None else f"{arm}.{task}.{init}"


def _inits_for(model: ModelConfig, sweep: Sweep) -> tuple[InitSetting | None, ...]:
    return sweep.inits if model.scheme == "learned" else (None,)


ArmSpec = tuple[str, ModelConfig, dict[str, object]]  # (arm id, model, its own config changes)


def plan(arms: tuple[ArmSpec, ...], sweep: Sweep, base: LabConfig) -> dict[str, list[Planned]]:
    """Every instance to train, grouped by task key: ``task → [Planned]``.

    ``arms``: ``(arm id, model, own changes)``; an arm's own changes (e.g. its length
    distribution, or its task where arms differ in task) apply on top of every task setting.
    Each config trains for the longest budget (``max(budgets) · steps``).

    Raises:
        ValueError: a task's or an arm's changes make an invalid config (names the setting).
    """
    cap = settings().lab_max_steps
    for task in sweep.tasks:
        steps = task.config(base).steps
        if steps * sweep.longest > cap:
            raise ValueError(
                f"steps={steps} trains {steps * sweep.longest:,} steps with the sweep's longest "
                f"budget ({sweep.longest}× the steps) and the server allows "
                f"POSVIZ_LAB_MAX_STEPS={cap:,}; use steps ≤ {cap // sweep.longest:,}."
            )
    groups: dict[str, list[Planned]] = {}
    for task in sweep.tasks:
        planned = []
        for arm, model, own in arms:
            config = replace(task.config(base), **own)
            # snapshots every quarter of the preset's budget: every budget is among them
            config = replace(
                config, steps=config.steps * sweep.longest, snapshots=4 * sweep.longest + 1
            )
            for init in _inits_for(model, sweep):
                std = model.pos_init_std if init is None else init.std
                planned.append(
                    Planned(
                        instance_id(arm, task.key, init and init.key, sweep=sweep),
                        arm,
                        task.key,
                        "" if init is None else init.key,
                        replace(model, pos_init_std=std),
                        config,
                    )
                )
        groups[task.key] = planned
    return groups


@dataclass(frozen=True)
class CellPlan:
    """One cell before it is measured: its settings, budget step and arm → instance."""

    id: str
    settings: tuple[Setting, ...]
    steps: int
    default: bool
    instances: dict[str, str]


_TASK_NAMES = {
    "reverse": "reverse",
    "count": "count earlier copies of the token",
    "lm": "next character of the KJV text",
    "mlm": "masked characters of the KJV text",
}


def task_name(config: LabConfig) -> str:
    """``"token 2 back"``, ``"previous token"``, ``"reverse"`` … from the config."""
    if config.task == "kback":
        return "previous token" if config.k == 1 else f"token {config.k} back"
    if config.task == "induction":
        periods = f"periods {config.k}–{config.min_len // 2}"
        return f"next token of a repeated random block ({periods}, {config.vocab} tokens)"
    return _TASK_NAMES.get(config.task, config.task)


def lengths_label(config: LabConfig) -> str:
    """``"length 12"`` or ``"lengths 4–32, mostly short"``."""
    if config.min_len == config.max_len:
        return f"length {config.max_len}"
    dist = ", mostly short" if config.length_dist == "short" else ""
    return f"lengths {config.min_len}–{config.max_len}{dist}"


#: LabConfig fields a task setting may change that are not the task itself: held-out panel
#: settings, said with the preset's value beside them.
_PANEL_WORDS = {"lr": "learning rate", "width": "width", "layers": "layers", "heads": "heads"}


def change_label(name: str, value: object, base: LabConfig) -> str:
    """``"learning rate 0.0333 (3× the preset's 0.01)"``, ``"seeds 100–104 (fresh)"``."""
    if name == "first_seed":
        first = int(value)  # type: ignore[call-overload]
        last, was = first + base.seeds - 1, base.first_seed
        return f"seeds {first}–{last} (fresh; the preset's {was}–{was + base.seeds - 1})"
    was = getattr(base, name)
    ratio = float(value) / float(was) if was else float("nan")  # type: ignore[arg-type]
    times = f"{ratio:g}×" if ratio >= 1 else f"{ratio:.2g}×"
    return f"{_PANEL_WORDS.get(name, name)} {value:.3g} ({times} the preset's {was:.3g})"


def _setting_label(task: TaskSetting, arms: tuple[ArmSpec, ...], base: LabConfig) -> str:
    """A cell's task label: the task from its configs, then any held-out panel change."""
    label = task_label([replace(task.config(base), **own) for _, _, own in arms])
    extra = [
        change_label(k, v, base) for k, v in task.changes if k in (*_PANEL_WORDS, "first_seed")
    ]
    return " · ".join([label, *extra])


def task_label(configs: list[LabConfig] | tuple[LabConfig, ...]) -> str:
    """A task setting's label from the configs its arms train on: every task named once, with
    the lengths they share (``"reverse (length 12)"``; ``"masked characters of the KJV text and
    next character of the KJV text (length 16)"``)."""
    names = list(dict.fromkeys(task_name(c) for c in configs))
    lengths = list(dict.fromkeys((c.min_len, c.max_len) for c in configs))
    base = configs[0]
    if len(lengths) == 1:
        length = (
            f"length {base.max_len}"
            if base.min_len == base.max_len
            else f"lengths {base.min_len}–{base.max_len}"
        )
    else:
        length = ", ".join(lengths_label(c) for c in configs)
    return f"{' and '.join(names)} ({length})"


def budget_label(budget: int, steps: int) -> str:
    """``"400 steps (preset)"`` / ``"1,200 steps (3× preset)"``."""
    return f"{steps:,} steps (preset)" if budget == 1 else f"{steps:,} steps ({budget}× preset)"


def cells(arms: tuple[ArmSpec, ...], sweep: Sweep, base: LabConfig) -> list[CellPlan]:
    """Every (task, init, budget) cell, the preset's own first, with the instance per arm."""
    out = []
    for task, init, budget in itertools.product(sweep.tasks, sweep.inits, sweep.budgets):
        steps = task.config(base).steps * budget
        label = _setting_label(task, arms, base)
        settings = (
            Setting("task", task.key, label),
            Setting("init", init.key, init.label),
            Setting("budget", f"x{budget}", budget_label(budget, steps)),
        )
        instances = {
            arm: instance_id(
                arm, task.key, init.key if model.scheme == "learned" else None, sweep=sweep
            )
            for arm, model, _ in arms
        }
        default = (task, init, budget) == (sweep.tasks[0], sweep.inits[0], sweep.budgets[0])
        out.append(
            CellPlan(f"{task.key}.{init.key}.x{budget}", settings, steps, default, instances)
        )
    return out


def checkpoints(steps: int, sweep: Sweep, *, per_budget: int = 4) -> tuple[int, ...]:
    """Held-out evaluation steps: ``per_budget`` evenly spaced up to each budget, every budget
    included (so a cell reads its own step and the one before it for the plateau test)."""
    marks = set()
    for budget in sweep.budgets:
        end = steps * budget
        marks.update(round(end * i / per_budget) for i in range(1, per_budget + 1))
    return tuple(sorted(m for m in marks if m > 0))
