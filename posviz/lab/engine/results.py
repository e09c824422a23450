"""What a lab run produces: :class:`LabResult` (typed, for pages and scripts), live
:class:`Progress`, and the results table.

A run answers a question over a **sweep**: every arm is trained under each setting its verdict
could depend on (the learned table's initial scale, a second task) and read at two training
budgets (checkpoints of one run). One :class:`Cell` per combination carries the arms' numbers,
whether each arm trained to convergence, the comparisons (differences with 95 % intervals) and
a :class:`Verdict`; :class:`Finding` s say which verdicts hold in every cell and, where one does
not, which setting it depends on. Raw per-seed arrays (loss curves, held-out numbers at every
checkpoint, table snapshots) are kept per trained *instance* (an arm under one task and init).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from posviz.jobs import JobCancelled
from posviz.lab.engine.config import LabConfig


class LabStopped(JobCancelled):
    """Raised by :func:`posviz.lab.run_question` when ``should_stop()`` turned true."""


@dataclass(frozen=True)
class Progress:
    """Live progress of a run, reported every few steps.

    Attributes:
        step: optimiser steps done in the current training group (1 … total_steps).
        total_steps: steps of that group.
        loss: training loss per arm id so far (mean over seeds, latest step).
        elapsed_s: seconds since the run started.
        eta_s: estimated seconds left for the whole run.
        variant: what trains now (e.g. ``"task reverse: 7 arms"``).
        queue_position: 0 while training; 1, 2, … while waiting for a job slot.
    """

    step: int
    total_steps: int
    loss: dict[str, float]
    elapsed_s: float
    eta_s: float
    variant: str = ""
    queue_position: int = 0


@dataclass(frozen=True)
class SummaryRow:
    """One line of a results table: an arm's metric over seeds (metric: a display name)."""

    variant: str
    label: str
    metric: str
    mean: float  # NaN where the metric is not defined (e.g. a learned table past its rows)
    std: float
    n: int
    low: float  # 95 % t-interval of the mean (posviz.analysis.evidence.spread)
    high: float
    values: tuple[float, ...]  # per seed
    note: str = ""


@dataclass(frozen=True)
class ArmInfo:
    """One arm of a question, as a page lists it.

    ``role``: ``"arm"``, ``"control"`` (a control whose bound is known) or ``"table-free
    control"``; ``learned_table``: whether it has a learned position table (so the init sweep
    applies to it); ``n_params``: one model's parameters.
    """

    id: str
    label: str
    role: str
    kind: str
    scheme: str
    injection: str
    task: str
    lengths: str
    learned_table: bool
    n_params: int


@dataclass(frozen=True)
class Setting:
    """One value of one swept setting: ``axis`` is ``"task"``, ``"init"`` or ``"budget"``."""

    axis: str
    key: str
    label: str


@dataclass(frozen=True)
class Comparison:
    """Arm ``a`` against arm ``b`` on one metric: the paired difference and what it decides.

    ``outcome``: ``"a"`` or ``"b"`` (that arm is better, the interval of ``a − b`` excludes 0),
    ``"tie"`` (it contains 0) or ``"undefined"`` (an arm has no value or did not converge).
    """

    a: str
    b: str
    metric: str  # metric id (see posviz.lab.engine.metrics)
    metric_label: str
    higher_is_better: bool
    a_mean: float
    b_mean: float
    estimate: float  # mean of a − b
    low: float
    high: float
    p_value: float
    n: int
    method: str
    outcome: str
    text: str


@dataclass(frozen=True)
class RankRow:
    """One arm's place in a ranking (on unseen positions, for extrapolation)."""

    rank: int  # 1 = best; arms whose difference from the one above is not decided share it
    arm: str
    label: str
    mean: float
    low: float
    high: float
    in_range: float  # the same arm's in-range value
    retention: float  # mean over seeds of unseen ÷ in-range
    retention_low: float
    retention_high: float
    holds: bool
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    """The answer in one cell: ``key`` compares across cells, ``short`` fits a grid cell."""

    key: str
    short: str
    text: str


@dataclass(frozen=True)
class Cell:
    """One combination of the swept settings and everything measured there.

    Attributes:
        id: ``"<task>.<init>.x<budget>"``.
        settings: the task, init and budget of this cell.
        steps: the training step at which this cell reads its arms.
        default: whether these are the preset's own settings.
        instances: ``arm id → trained instance id`` whose numbers this cell reads.
        metrics: ``arm → metric id → per-seed values`` (NaN where not defined).
        summary: the results table of this cell.
        converged: ``arm → trained to convergence here`` (under-trained arms are left out of
            rankings and verdicts).
        convergence: ``arm → how it was judged`` (in words, with the numbers).
        comparisons: the differences that decide the verdict.
        ranking: arms ranked (extrapolation: on unseen positions), best first.
        verdict: the answer in this cell.
        status: ``arm → training status`` (``trained``, ``improving``, ``stalled``,
            ``collapsed``, ``diverged``; :func:`posviz.lab.engine.metrics.convergence`).
        group: the training its instances came from, the key of the result's step arrays
            (``curve_steps``, ``checkpoint_steps``, ``snapshot_steps_by_task``); "" for the
            cell's own task. A held-out panel's cell, or a longer budget's, names its panel row.
    """

    id: str
    settings: tuple[Setting, ...]
    steps: int
    default: bool
    instances: dict[str, str]
    metrics: dict[str, dict[str, tuple[float, ...]]]
    summary: tuple[SummaryRow, ...]
    converged: dict[str, bool]
    convergence: dict[str, str]
    comparisons: tuple[Comparison, ...]
    ranking: tuple[RankRow, ...]
    verdict: Verdict
    status: dict[str, str] = field(default_factory=dict)
    group: str = ""

    def setting(self, axis: str) -> Setting:
        """This cell's value of one axis."""
        return next(s for s in self.settings if s.axis == axis)

    @property
    def steps_key(self) -> str:
        """The key of this cell's step arrays in its result (:attr:`group`, else its task's)."""
        return self.group or self.setting("task").key

    def label(self) -> str:
        """``"reverse · table init N(0, 0.02²) · 400 steps"``."""
        return " · ".join(s.label for s in self.settings)


@dataclass(frozen=True)
class Finding:
    """A verdict across the sweep: where it holds and, if not everywhere, what it depends on.

    ``holds_everywhere``: the same verdict in every cell; ``depends_on``: the axes whose value
    changes it (empty when it holds everywhere); ``text``: the sentence the answer states, with
    the numbers of the cells that differ; ``keys`` and ``shorts``: each cell's verdict (cell id →
    comparable key, and a few words for a grid).
    """

    topic: str
    holds_everywhere: bool
    depends_on: tuple[str, ...]
    text: str
    keys: dict[str, str] = field(default_factory=dict)
    shorts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Bound:
    """A control's exact bound: the best score any position-blind model can reach on a task."""

    task: str
    metric: str
    value: float
    how: str  # "exact", "simulated" or "held-out set" (posviz.lab.engine.bounds)
    text: str
    chance: float = 0.0  # the best accuracy without looking at the input (0: not computed)


@dataclass(frozen=True)
class HeadScores:
    """A mechanism score for every attention head of one trained arm (the induction question's
    prefix-matching score, :mod:`posviz.lab.engine.induction`).

    ``scores``: ``(seeds, layers, heads)``; ``baseline``: ``(seeds,)`` the same score for heads
    that attend uniformly (the control); ``steps``: the training step the models were read at;
    ``text``: the scores in words.
    """

    arm: str
    label: str
    steps: int
    scores: np.ndarray
    baseline: np.ndarray
    text: str


@dataclass(frozen=True)
class LayerProbe:
    """Per-layer position probe of one trained arm's hidden states (position from the mask).

    ``score`` and ``control``: ``(layers + 1, seeds)`` probe R² per layer (layer 0 = the input)
    and the same probe on the control; ``control_label`` says what the control is.
    """

    arm: str
    label: str
    cell: str
    score: np.ndarray
    control: np.ndarray
    control_label: str
    text: str


@dataclass(frozen=True)
class Published:
    """Numbers as a paper prints them in one table, with the setting they hold for.

    Attributes:
        table: the table and the PDF page it is printed on, e.g. ``"Appendix Table 2 (p. 16)"``.
        setting: model, data, training length and metric of the table.
        numbers: ``(row label, value)`` pairs, exactly as printed.
        unit: what the values are (e.g. validation perplexity; lower is better).
        read_at: the PDF they were read in (a URL), never from memory.
    """

    table: str
    setting: str
    numbers: tuple[tuple[str, float], ...]
    unit: str
    read_at: str


@dataclass(frozen=True)
class Condition:
    """One pre-registered condition, whether it held, and the numbers it was decided on."""

    text: str
    holds: bool
    numbers: dict[str, float]


#: the questions a paper check's two ladders answer (:meth:`CardResult.trends`)
BUDGET_QUESTION = "Does more training move it?"
SIZE_QUESTION = "Does a bigger model move it?"


@dataclass(frozen=True)
class CardResult:
    """A paper check's card after its run: published vs this run, and the pre-registered verdict.

    Attributes:
        run_id, check_id, code_version: the store key, the check (:mod:`posviz.lab.studies.papers`)
        and
            the code that ran it.
        reference: key of ``posviz.references.REFERENCES``; ``citation``: it in plain text.
        claim, claim_read_at: the published claim in one sentence, and where it was read.
        published: the paper's tables as printed (empty when none could be read:
            ``published_note`` says why).
        criterion: the conditions, fixed in code before the run; ``caveat``: why a tiny model
            may differ.
        arm_labels: ``arm id → label``.
        inputs: ``arm → input name → per-seed values`` the judge read; ``input_names``:
            ``(name, how it is computed)``.
        this_run: the run's numbers in words, one line each (beside the published ones).
        verdict: "agrees in shape", "does not agree in shape" or "cannot be judged";
            ``agrees``: True/False/None; ``conditions``: each condition, whether it held, its
            numbers; ``reason``: why it cannot be judged.
        convergence: ``arm → how its training ended`` (held-out loss plateau or not).
        wall_s: seconds the run took.
        ladder: how the check's gap moves with the training budget, in words (empty for a check
            without a ladder; judged again from ``inputs`` on every load).
        sizes: how the same gap moves as the model grows, in words (the same way; empty for a
            check without a size ladder).
    """

    run_id: str
    check_id: str
    code_version: str
    reference: str
    citation: str
    claim: str
    claim_read_at: str
    published: tuple[Published, ...]
    published_note: str
    criterion: str
    caveat: str
    arm_labels: dict[str, str]
    inputs: dict[str, dict[str, tuple[float, ...]]]
    input_names: tuple[tuple[str, str], ...]
    this_run: tuple[str, ...]
    verdict: str
    agrees: bool | None
    conditions: tuple[Condition, ...]
    reason: str
    convergence: dict[str, str]
    wall_s: float = 0.0
    ladder: str = ""
    sizes: str = ""

    def trends(self) -> tuple[tuple[str, str], ...]:
        """``(question, answer)`` for each ladder the check has (the budget's, the size's)."""
        pairs = ((BUDGET_QUESTION, self.ladder), (SIZE_QUESTION, self.sizes))
        return tuple((question, text[:1].upper() + text[1:]) for question, text in pairs if text)


@dataclass(frozen=True)
class Instance:
    """One trained arm under one task and init: its raw per-seed arrays.

    ``heldout_*[length]``: ``(seeds, n_checkpoints)`` accuracy and loss on fresh held-out
    sequences; ``per_position[length]``: ``(seeds, n_checkpoints, length)`` accuracy per position
    (NaN where not defined, e.g. a learned table past its rows); ``snapshots``: ``(seeds,
    n_snapshots, rows, p)`` the learned table during training (learned tables only).
    """

    id: str
    arm: str
    task: str
    init: str
    losses: np.ndarray
    heldout_accuracy: dict[str, np.ndarray]
    heldout_loss: dict[str, np.ndarray]
    per_position: dict[str, np.ndarray]
    snapshots: np.ndarray | None
    diverged_at: tuple[int, ...]
    n_params: int
    trained_rows: int
    undefined: dict[str, str] = field(default_factory=dict)  # length → why not defined


@dataclass(frozen=True)
class LabResult:
    """A finished run of one question over its sweep.

    Attributes:
        run_id: the store key (hash of question, config and code version).
        question_id: the question answered.
        config: the preset's (or the user's) base :class:`LabConfig`.
        code_version: hash of the code that produced it.
        arms: the arms, in order.
        cells: every combination of the swept settings, the preset's own first.
        findings: the verdicts across the sweep.
        answer: the answer in plain words, one finding per line.
        bounds: the controls' bounds per task.
        layer_probe: per-layer position probe (the "positions at all" question), else None.
        curve_steps: ``(n_points,)`` steps of the training-loss curves, per task key.
        checkpoint_steps: ``(n_checkpoints,)`` steps of the held-out evaluations, per task key.
        snapshot_steps: ``(n_snapshots,)`` steps of the table snapshots, per task key.
        instances: the trained instances' raw arrays.
        notes: facts shown with the result.
        wall_s: seconds the training took.
        head_scores: a mechanism score for every head of the arms that declare one (the
            induction question's prefix-matching score), read on the trained models.
        part: which part of the study (``default``; ``panel``: a later run of extra settings).
    """

    run_id: str
    question_id: str
    config: LabConfig
    code_version: str
    arms: tuple[ArmInfo, ...]
    cells: tuple[Cell, ...]
    findings: tuple[Finding, ...]
    answer: str
    bounds: tuple[Bound, ...]
    layer_probe: LayerProbe | None
    curve_steps: dict[str, np.ndarray]
    checkpoint_steps: dict[str, np.ndarray]
    snapshot_steps_by_task: dict[str, np.ndarray]
    instances: dict[str, Instance]
    notes: tuple[str, ...] = ()
    wall_s: float = 0.0
    part: str = "default"
    head_scores: tuple[HeadScores, ...] = ()

    # ------------------------------------------------------------------ the preset's own cell

    @property
    def default_cell(self) -> Cell:
        """The cell of the preset's own settings (task, init, budget)."""
        return next(c for c in self.cells if c.default)

    @property
    def variant_ids(self) -> tuple[str, ...]:
        return tuple(a.id for a in self.arms)

    @property
    def variant_labels(self) -> tuple[str, ...]:
        return tuple(a.label for a in self.arms)

    def label(self, variant_id: str) -> str:
        """The display label of an arm id."""
        return dict(zip(self.variant_ids, self.variant_labels, strict=True))[variant_id]

    def arm(self, arm_id: str) -> ArmInfo:
        return next(a for a in self.arms if a.id == arm_id)

    @property
    def metrics(self) -> dict[str, dict[str, tuple[float, ...]]]:
        """The default cell's ``arm → metric → per-seed values``."""
        return self.default_cell.metrics

    @property
    def summary(self) -> tuple[SummaryRow, ...]:
        """The default cell's results table."""
        return self.default_cell.summary

    def _default_instances(self) -> dict[str, Instance]:
        return {arm: self.instances[i] for arm, i in self.default_cell.instances.items()}

    @property
    def n_params(self) -> dict[str, int]:
        return {a.id: a.n_params for a in self.arms}

    @property
    def diverged(self) -> tuple[str, ...]:
        """Arms whose loss became NaN/inf on some seed in the default cell's instances."""
        return tuple(
            arm for arm, inst in self._default_instances().items() if max(inst.diverged_at) >= 0
        )

    @property
    def default_task(self) -> str:
        return self.default_cell.setting("task").key

    @property
    def curves(self) -> dict[str, np.ndarray]:
        """The default cell's training-loss curves, ``arm → (seeds, n_points)``, to its budget."""
        steps = self.curve_steps[self.default_task]
        keep = steps <= self.default_cell.steps
        return {arm: inst.losses[:, keep] for arm, inst in self._default_instances().items()}

    @property
    def default_curve_steps(self) -> np.ndarray:
        steps = self.curve_steps[self.default_task]
        return steps[steps <= self.default_cell.steps]

    def _snapshot_keep(self) -> np.ndarray:
        steps = self.snapshot_steps_by_task.get(self.default_task, np.zeros(0, dtype=np.int64))
        return np.asarray(steps) <= self.default_cell.steps

    @property
    def snapshot_steps(self) -> np.ndarray:
        """Steps of the preset cell's table snapshots (up to its budget)."""
        steps = self.snapshot_steps_by_task.get(self.default_task, np.zeros(0, dtype=np.int64))
        return np.asarray(steps)[self._snapshot_keep()]

    @property
    def snapshots(self) -> dict[str, np.ndarray]:
        """The preset cell's learned tables up to its budget, ``arm → (seeds, s, rows, p)``."""
        keep = self._snapshot_keep()
        return {
            arm: inst.snapshots[:, keep]
            for arm, inst in self._default_instances().items()
            if inst.snapshots is not None
        }

    @property
    def position_accuracy(self) -> dict[str, np.ndarray]:
        """The default cell's held-out accuracy per position at the longest length each arm
        can read, at the cell's budget: ``arm → (seeds, length)``."""
        cell = self.default_cell
        index = int(np.searchsorted(self.checkpoint_steps[self.default_task], cell.steps))
        out = {}
        for arm, inst in self._default_instances().items():
            defined = [k for k in inst.per_position if k not in inst.undefined]
            if defined:
                longest = max(defined, key=int)
                out[arm] = inst.per_position[longest][:, index]
        return out

    def cell(self, cell_id: str) -> Cell:
        """The cell with this id.

        Raises:
            ValueError: unknown id (lists the known ones).
        """
        for cell in self.cells:
            if cell.id == cell_id:
                return cell
        raise ValueError(
            f"No cell {cell_id!r}; choose one of {', '.join(c.id for c in self.cells)}."
        )


def _fmt(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.3f}"


def summary_frame(rows: tuple[SummaryRow, ...]) -> pd.DataFrame:
    """A results table: one row per arm and metric.

    Columns: ``variant``, ``metric``, ``mean``, ``±`` (standard deviation over seeds), ``low``,
    ``high`` (95 % interval of the mean), ``seeds`` (n), ``per seed`` (values joined), ``note``.
    """
    records = [
        {
            "variant": row.label,
            "metric": row.metric,
            "mean": row.mean,
            "±": row.std,
            "low": row.low,
            "high": row.high,
            "seeds": row.n,
            "per seed": ", ".join(_fmt(v) for v in row.values),
            "note": row.note,
        }
        for row in rows
    ]
    columns = ["variant", "metric", "mean", "±", "low", "high", "seeds", "per seed", "note"]
    return pd.DataFrame(records, columns=columns)


def results_frame(result: LabResult) -> pd.DataFrame:
    """The default cell's results table (the page and the CLI print the same one)."""
    return summary_frame(result.summary)


#: column names of the sweep's axes (``panel``: the held-out setting a panel cell was trained with)
GRID_AXES = {"task": "task", "init": "init", "budget": "budget", "panel": "held out"}


def grid_frame(result: LabResult) -> pd.DataFrame:
    """The sweep at a glance, the verdict first: one row per cell, ``verdict, under-trained``,
    then its settings (``task, init, budget``, and ``held out`` where the held-out panel was
    judged in), ``cell, preset``."""
    axes = [a for a in GRID_AXES if any(s.axis == a for s in result.cells[0].settings)]
    rows = []
    for cell in result.cells:
        under = [result.label(a) for a, ok in cell.converged.items() if not ok]
        row = {"verdict": cell.verdict.short, "under-trained": ", ".join(under)}
        row |= {GRID_AXES[a]: cell.setting(a).label for a in axes}
        rows.append(row | {"cell": cell.id, "preset": cell.default})
    columns = ["verdict", "under-trained", *(GRID_AXES[a] for a in axes), "cell", "preset"]
    return pd.DataFrame(rows, columns=columns)
