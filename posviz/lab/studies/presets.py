"""One preset per question people ask about positions, each answered by training tiny models.

A :class:`Question` names its sources (keys of :data:`posviz.references.REFERENCES`), the arms
it compares, how its verdict is judged (``kind``) and the :class:`~posviz.lab.engine.sweep.Sweep` of
settings the verdict could depend on: the learned table's initial scale, the training budget
(the preset's steps and 3×, read from checkpoints of one run) and a second task where the
question makes sense. Presets are sized so that a question with its whole sweep trains within
a minute on 2 CPU cores (``bench/bench_lab.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Literal

from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.store import _module_digest
from posviz.lab.engine.sweep import (
    INIT_LARGE,
    INIT_MATCHED,
    INIT_SMALL,
    ArmSpec,
    Sweep,
    TaskSetting,
)
from posviz.lab.studies import far_context_arms as far_train
from posviz.lab.studies import sinks_arms


@dataclass(frozen=True)
class PanelSetting:
    """One held-out setting: a :class:`LabConfig` field scaled by ``factor`` (learning rate,
    width) or set to ``value`` (the first seed of a fresh seed set)."""

    key: str
    field: str
    factor: float = 0.0
    value: int = 0

    def change(self, base: LabConfig) -> tuple[str, object]:
        """``(field, new value)`` for a run whose preset is ``base``."""
        if self.factor:
            old = getattr(base, self.field)
            new = old * self.factor
            return self.field, (round(new) if isinstance(old, int) else round(new, 8))
        return self.field, self.value


#: The held-out robustness panel: settings *not* used to choose any preset, on which every
#: stated finding is checked (learning rate × ⅓ and × 3, seeds 100 … never used before, twice
#: the width). Each is one more "task" row of a second sweep, trained as the question's
#: ``panel`` part after the default answers (:mod:`posviz.lab.engine.run`).
PANEL: tuple[PanelSetting, ...] = (
    PanelSetting("lr_third", "lr", factor=1 / 3),
    PanelSetting("lr_x3", "lr", factor=3.0),
    PanelSetting("fresh_seeds", "first_seed", value=100),
    PanelSetting("width_x2", "width", factor=2.0),
)
#: the task key of a question's longer budget in its panel part (:attr:`Question.long_budget`).
LONG = "long"
Role = Literal["arm", "control", "table-free control"]


@dataclass(frozen=True)
class Variant:
    """One arm of a comparison: a model, optionally trained on its own task or lengths.

    ``None`` overrides keep the question's :class:`LabConfig` value (``layers``: a model of
    another depth, e.g. a one-layer control). ``role``: ``"arm"``,
    ``"control"`` (an arm whose best possible score without positions is known) or ``"table-free
    control"`` (the same lengths without a learned table).
    """

    id: str
    label: str
    model: ModelConfig
    task: str | None = None
    length_dist: str | None = None
    min_len: int | None = None
    max_len: int | None = None
    role: Role = "arm"
    layers: int | None = None
    condition: str = ""  # what the arm's own trainer varies (the far context's), "" for none

    def changes(self) -> dict[str, object]:
        """This arm's own config changes (the overrides that are set)."""
        return {
            name: value
            for name in ("task", "length_dist", "min_len", "max_len", "layers")
            if (value := getattr(self, name)) is not None
        }

    def config_for(self, base: LabConfig) -> LabConfig:
        """The run's config with this variant's task/length overrides applied (validated)."""
        changes = self.changes()
        return replace(base, **changes) if changes else base

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "label": self.label,
            "model": self.model.to_dict(),
            "role": self.role,
            **{k: getattr(self, k) for k in ("task", "length_dist", "min_len", "max_len")},
            **({"layers": self.layers} if self.layers is not None else {}),
            **({"condition": self.condition} if self.condition else {}),
        }


@dataclass(frozen=True)
class Question:
    """A question, the arms that answer it, how the answer is judged and what it sweeps.

    Attributes:
        id: URL-safe id (``?q=...``).
        title: short title for menus.
        question: the question in plain words, as people asked it.
        source_keys: keys of ``posviz.references.REFERENCES`` for the question's sources.
        variants: the arms compared (ordered as shown).
        default: the run settings of the preset (its own task, the default cell's budget).
        explain: how the answer is measured (held-out data, metric, control, sweep).
        kind: the name of its kind (:data:`posviz.lab.studies.kinds.KINDS`), which says how a
            cell is measured and judged: ``"pair"`` (``compare[0]`` vs ``compare[1]``),
            ``"extrapolation"`` (all arms ranked on unseen positions), ``"rare_rows"`` (late-
            position accuracy of a short-trained table against uniform lengths and a table-free
            arm on the same lengths, then row movement) or ``"need_positions"`` (each attention
            kind without positions vs with).
        sweep: the settings swept (the first of each axis is the preset's own).
        compare: the two arm ids whose difference answers a ``"pair"`` question.
        control: the arm id of the control ("" when the question has none).
        metric: the metric id that decides the default cell (see :mod:`posviz.lab.engine.metrics`).
        probe_tables: also probe the trained tables (error by position on the late rows).
        layer_probe: the arm whose hidden states are probed layer by layer ("" for none).
        paper_checks: ids of the :mod:`posviz.lab.studies.papers` checks on this question's topic
        (their
            cards are shown beside its answer; each is its own run,
            :mod:`posviz.lab.studies.cards`).
        panel_settings: the held-out settings every finding is checked on (:data:`PANEL`);
            ``()`` for none. :attr:`panel` is them as a sweep.
        head_scores: arms whose every attention head gets the prefix-matching score after
            training (the preset's task and init, the longest budget;
            :mod:`posviz.lab.engine.induction`).
        source: modules outside the engine that decide its numbers (a kind's own trainer and
            task, :attr:`posviz.lab.studies.kinds.StudyKind.train`): their source is hashed into
            its run ids; ``()`` for the engine's tasks (then nothing is added to the design).
        long_budget: a longer budget, in multiples of the preset's steps, for arms the sweep's
            budgets leave under-trained (0: none). It is too slow for the first start's
            minutes, so it trains once, in the panel part after every default answer, on the
            preset's own task at every init of the sweep, and is read at this budget and at
            the sweep's other budgets scaled to it (18 with budgets 1 and 3: 6× and 18× the
            steps). A multiple of the sweep's longest budget, above it.
    """

    id: str
    title: str
    question: str
    source_keys: tuple[str, ...]
    variants: tuple[Variant, ...]
    default: LabConfig
    explain: str
    kind: str  # a kind's name in posviz.lab.studies.kinds.KINDS
    sweep: Sweep
    compare: tuple[str, str] = ("", "")
    control: str = ""
    metric: str = "accuracy"
    probe_tables: bool = False
    layer_probe: str = ""
    paper_checks: tuple[str, ...] = ()
    panel_settings: tuple[PanelSetting, ...] = PANEL
    head_scores: tuple[str, ...] = ()
    long_budget: int = 0
    source: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        longest = self.sweep.longest
        if self.long_budget and (self.long_budget <= longest or self.long_budget % longest):
            raise ValueError(
                f"long_budget={self.long_budget} must be a multiple of the sweep's longest budget "
                f"({longest}) above it, e.g. {4 * longest}."
            )

    @property
    def panel(self) -> Sweep | None:
        """The held-out panel as a sweep: each panel setting applied to the preset's own task,
        at every init of the sweep (each init's findings are checked there too) and the sweep's
        budgets, then the longer budget (:attr:`long_budget`) as one more row, :data:`LONG`
        (None without either)."""
        if not self.panel_settings and not self.long_budget:
            return None
        own = self.sweep.tasks[0]
        tasks = tuple(
            TaskSetting(p.key, (*own.changes, p.change(self.default)), own.metric)
            for p in self.panel_settings
        )
        if self.long_budget:
            steps = self.long_steps // self.sweep.longest  # read at 1× … longest× of it
            tasks += (TaskSetting(LONG, (*own.changes, ("steps", steps)), own.metric),)
        return Sweep(tasks=tasks, inits=self.sweep.inits, budgets=self.sweep.budgets)

    @property
    def long_steps(self) -> int:
        """The steps of the longer budget on the preset's own task (0 without one)."""
        return self.sweep.tasks[0].config(self.default).steps * self.long_budget

    @property
    def higher_is_better(self) -> bool:
        return self.metric not in ("loss", "train_loss_mean", "probe_error_late", "loss_mid")

    def variant(self, variant_id: str) -> Variant:
        """The variant with this id.

        Raises:
            ValueError: unknown id (lists the known ones).
        """
        for variant in self.variants:
            if variant.id == variant_id:
                return variant
        known = ", ".join(v.id for v in self.variants)
        raise ValueError(f"Question {self.id!r} has no variant {variant_id!r}; choose {known}.")

    def arm_specs(self) -> tuple[ArmSpec, ...]:
        """``(arm id, model, own changes)`` of every arm, for :mod:`posviz.lab.engine.sweep`."""
        return tuple((v.id, v.model, v.changes()) for v in self.variants)

    @property
    def schemes(self) -> tuple[str, ...]:
        """The families its arms train with (their math is hashed into its run ids)."""
        return tuple(dict.fromkeys(v.model.scheme for v in self.variants))

    def design(self) -> dict[str, object]:
        """What of the question decides its runs' numbers (hashed into their run ids): every
        field but its words (:data:`TEXT_FIELDS`), each arm without its label."""
        out: dict[str, object] = {
            f.name: getattr(self, f.name) for f in fields(self) if f.name not in TEXT_FIELDS
        }
        out["variants"] = [{"id": v.id, "model": v.model.to_dict(), "role": v.role,
                            **v.changes(), **({"condition": v.condition} if v.condition else {})}
                           for v in self.variants]  # fmt: skip
        # a question trained by its kind's own loop hashes that loop's modules; no other id moves
        source = out.pop("source")
        if source:
            out["source"] = [_module_digest(name) for name in source]
        return out


#: a question's words: rewording them (or its sources and related paper checks) never retrains.
TEXT_FIELDS = ("id", "title", "question", "source_keys", "explain", "paper_checks")


def _enc(scheme: str, injection: str = "input", **kw: int) -> ModelConfig:
    return ModelConfig(kind="encoder", scheme=scheme, injection=injection, **kw)  # type: ignore[arg-type]


def _dec(scheme: str, **kw: int) -> ModelConfig:
    return ModelConfig(kind="decoder", scheme=scheme, **kw)  # type: ignore[arg-type]


# Reverse, length 12, at lr 0.01: every arm with positions reaches held-out accuracy 1.000 on
# every seed by 200 steps, the small-init learned table included (at 100 steps it was at 0.27);
# 3× is the budget sweep. The second task is the token 2 back (a relative offset instead of an
# absolute order), on the same lengths; it learns as fast. (The masked character LM learned too
# slowly for the sweep: still 2 % better per 300 steps after 1,800.) 5 seeds: the verdicts are
# differences in speed of learning, and 3 seeds left their intervals wide.
_REVERSE = LabConfig(
    task="reverse", min_len=12, max_len=12, eval_lengths=(12,), steps=200, lr=1e-2, seeds=5
)
_KBACK_ENCODER = TaskSetting("kback", (("task", "kback"), ("k", 2)))
_REVERSE_TASK = TaskSetting("reverse")
_PAIR_SWEEP = Sweep(tasks=(_REVERSE_TASK, _KBACK_ENCODER), inits=(INIT_SMALL, INIT_MATCHED))
_NOPE_ENCODER = "no positions (control)"

LEARNED_VS_SINUSOID = Question(
    id="learned",
    title="Does a learned table help?",
    question=(
        "Does a learnable position embedding give better results than the fixed sinusoid? "
        "(Vaswani et al. found them equal: Table 3 row E, BLEU 25.7 vs 25.8.)"
    ),
    source_keys=("so_learnable", "so_nn_embedding", "vaswani_2017"),
    variants=(
        Variant("learned", "learned table", _enc("learned")),
        Variant("sinusoid", "fixed sinusoid", _enc("sinusoidal")),
        Variant("nope", _NOPE_ENCODER, _enc("nope"), role="control"),
    ),
    default=_REVERSE,
    explain=(
        "Task: reverse a sequence of random tokens (the output at position t is the input token "
        "at position n−1−t), so only a model that knows absolute order can solve it; and, as a "
        "second task, output the token 2 back (a relative offset). Metric: held-out accuracy on "
        "fresh sequences never trained on, compared seed by seed (paired 95% interval of the "
        "difference); where both arms reach the ceiling, the speed of learning (mean training "
        "loss over the run). Control: the same "
        "encoder with no positions; it cannot beat the position-blind ceiling shown beside it. "
        "Sweep: the learned table's initial scale (BERT/GPT-2's 0.02 and the token embedding's "
        "own scale) and the budget (the preset's steps and 3×); a verdict is stated as holding "
        "only where it holds in every cell."
    ),
    kind="pair",
    sweep=_PAIR_SWEEP,
    compare=("learned", "sinusoid"),
    control="nope",
)

ADD_VS_CONCAT = Question(
    id="concat",
    title="Add or concatenate?",
    question="Why add the position embedding to the token embedding instead of concatenating it?",
    source_keys=("t2t_1591",),
    variants=(
        Variant("add", "add (token d + position d)", _enc("learned")),
        Variant("concat", "concatenate (token d−p ‖ position p)", _enc("learned", "concat")),
        Variant("nope", _NOPE_ENCODER, _enc("nope"), role="control"),
    ),
    default=_REVERSE,
    explain=(
        "Both arms feed a d-wide transformer. Add: a d-wide token embedding plus a d-wide "
        "learned table. Concatenate: a (d−p)-wide token embedding next to a p-wide learned table "
        "(p = d/2), with no extra projection, so the concatenated arm has slightly fewer "
        "parameters (the counts are shown with the result; they differ by under 5%). Tasks: "
        "reverse and the token 2 back; control: no positions, with its position-blind ceiling. "
        "Sweep: both tables' initial scale and the budget."
    ),
    kind="pair",
    sweep=_PAIR_SWEEP,
    compare=("add", "concat"),
    control="nope",
)

EVERY_LAYER = Question(
    id="every_layer",
    title="Re-inject position at every layer?",
    question=(
        "Would I get better results if I re-encoded the position before every layer instead of "
        "only at the input?"
    ),
    source_keys=("so_learnable",),
    variants=(
        Variant("input", "table added at the input", _enc("learned")),
        Variant("every_layer", "table added before every layer", _enc("learned", "every_layer")),
        Variant("nope", _NOPE_ENCODER, _enc("nope"), role="control"),
    ),
    default=_REVERSE,
    explain=(
        "Both arms have the same parameters (one learned table); the second adds it again before "
        "each of the two blocks. Tasks: reverse and the token 2 back; control: no positions, "
        "with its position-blind ceiling. Sweep: the table's initial scale and the budget."
    ),
    kind="pair",
    sweep=_PAIR_SWEEP,
    compare=("every_layer", "input"),
    control="nope",
)

NOPE_CAUSAL = "NoPE (learns position from the causal mask)"

TRAIN_SHORT_TEST_LONG = Question(
    id="extrapolation",
    title="Train short, test long",
    question=(
        "Which position schemes still work on sequences longer than any seen in training "
        "(ALiBi's claim, Press et al. 2022)?"
    ),
    source_keys=("press_2022", "su_2021", "raffel_2020", "vaswani_2017"),
    variants=(
        Variant("learned", "learned table", _dec("learned")),
        Variant("sinusoid", "sinusoid", _dec("sinusoidal")),
        Variant("rope", "RoPE", _dec("rope")),
        Variant("alibi", "ALiBi", _dec("alibi")),
        Variant("t5", "T5 buckets", _dec("t5")),
        Variant("nope", NOPE_CAUSAL, _dec("nope")),
    ),
    # 8 heads: ALiBi's slopes are a geometric sequence set by the head count (1/2 … 1/256 for 8
    # heads, Press et al. 2022 §3); with 2 heads they are 1/16 and 1/256, nearly no position
    # signal, and the ALiBi arm did not learn the task at all. k = 1 (the previous token): with
    # k = 2 ALiBi needed about 1,200 steps to reach 0.95 in range (0.87 at 400, lr 0.01), three
    # times what fits the sweep in a minute; with k = 1 it is at 0.98 by 150 steps and 0.99 by
    # 300, RoPE and T5 at 1.00 by 150.
    # The causal NoPE arm needs far more than the first start allows: trained alone to 2,400
    # steps (12× the preset; 53 s for its 3 seeds, loaded machine) it reaches in-range 0.79–0.81
    # at 200, 0.87–0.88 at 600, 0.90–0.92 at 1,200, 0.92–0.94 at 1,800 and 0.93–0.94 at 2,400,
    # its held-out loss still falling 0–15 % per 600 steps, unseen positions 0.61–0.64. So it is
    # left out of the ranking, with its slope said in the answer; at 0.40 on unseen positions it
    # is far below the best's interval, so the "best" is still stated.
    default=LabConfig(
        task="kback",
        k=1,
        min_len=8,
        max_len=16,
        eval_lengths=(16, 32),
        heads=8,
        steps=200,
        lr=1e-2,
    ),
    explain=(
        "A causal decoder trained on lengths 8–16 and evaluated on fresh sequences of length 32. "
        "Metric: held-out accuracy on the unseen positions only (16–31, past every training "
        "sequence), and retention = unseen ÷ seen-position accuracy of the same sequences. Every "
        "arm that trained to convergence is ranked, with 95% intervals; arms whose difference "
        "from the one above is not decided share a rank. A learned table has no rows past 16: "
        "not defined there, not zero. The no-position arm is not a control: a causal decoder "
        "learns position from its mask (Haviv et al. 2022). Tasks: the previous token (k = 1 "
        "back: a relative offset) and the next character of the lab's text (five books of the King "
        "James Version, 416,058 characters). Sweep: the budget. The learned table's initial "
        "scale is not swept here: the table is not defined past its rows, so it cannot move "
        "the ranking on unseen positions (the learned question sweeps it)."
    ),
    kind="extrapolation",
    paper_checks=("press_2022", "kazemnejad_2023"),
    sweep=Sweep(
        tasks=(
            TaskSetting("kback"),
            TaskSetting("lm", (("task", "lm"),)),
        ),
        inits=(INIT_SMALL,),
    ),
    metric="accuracy_unseen",
)

RARE_ROWS = Question(
    id="rare_rows",
    title="Are rarely-seen rows untrained?",
    question=(
        "Is a learned table poor at late positions because training rarely saw sequences that "
        "long (Jexus 2020, on BERT past position 400)?"
    ),
    source_keys=("jexus_2020", "wang_chen_2020"),
    variants=(
        Variant(
            "short",
            "learned table, mostly short sequences",
            _enc("learned", table_rows=40),
            length_dist="short",
        ),
        Variant(
            "uniform",
            "learned table, uniform lengths",
            _enc("learned", table_rows=40),
            length_dist="uniform",
        ),
        Variant(
            "rope_short",
            "RoPE (no table), mostly short sequences",
            _enc("rope"),
            length_dist="short",
            role="table-free control",
        ),
    ),
    # One layer, batch 16, lr 0.01: the uniform-length table reaches held-out accuracy 0.99 by
    # 300 steps (at its late positions too), RoPE on the short lengths 1.00, while the short-
    # trained table is at 0.10–0.28 on its late positions; two layers and batch 32 cost 5× as
    # much per step for the same picture.
    default=LabConfig(
        task="kback",
        k=2,
        min_len=4,
        max_len=32,
        eval_lengths=(32,),
        layers=1,
        batch=16,
        steps=300,
        lr=1e-2,
        seeds=5,
    ),
    explain=(
        "Three encoders learn the k-back task on lengths 4–32: a 40-row learned table (started "
        "small, N(0, 0.02²), as BERT and GPT-2, and swept) trained on mostly short sequences "
        "(P(n) ∝ 0.8^(n−4)), the same table on uniform lengths, and RoPE, which has no table, "
        "on the same mostly-short lengths. Decisive evidence first: held-out accuracy at the "
        "late positions (24–31). If the short-trained table lags there but RoPE on the very "
        "same lengths does not, the rows are what is untrained; if RoPE lags too, attention "
        "never saw long sequences. Second: how far training moved each row from its start "
        "against how often its position was seen (rows 32–39 are never used, get exactly zero "
        "gradient and cannot move, so they are not counted as a check). Sweep: the table's "
        "initial scale (0.02, the token embeddings' 0.71 and 1) and the budget."
    ),
    kind="rare_rows",
    sweep=Sweep(
        tasks=(TaskSetting("kback"),),
        inits=(INIT_SMALL, INIT_MATCHED, INIT_LARGE),
    ),
    metric="accuracy_late",
    probe_tables=True,
)

NEED_POSITIONS = Question(
    id="need_positions",
    title="Does a transformer need positions at all?",
    question=(
        "Is position information needed at all? An encoder without positions is "
        "permutation-equivariant; a causal decoder's mask already orders the tokens "
        "(Haviv et al. 2022)."
    ),
    source_keys=("haviv_2022", "so_learnable"),
    variants=(
        Variant(
            "enc_nope",
            "encoder without positions (masked characters)",
            _enc("nope"),
            task="mlm",
            role="control",
        ),
        Variant(
            "enc_learned",
            "encoder with a learned table (masked characters)",
            _enc("learned"),
            task="mlm",
        ),
        Variant("dec_nope", f"decoder, {NOPE_CAUSAL}", _dec("nope"), task="lm"),
        Variant(
            "dec_learned",
            "decoder with a learned table (next character)",
            _dec("learned"),
            task="lm",
        ),
    ),
    # Length 16, lr 0.01, 400 steps (3× = 1,200). On the KJV text nothing overfits: the causal
    # LMs' held-out loss still falls at 1,600 steps (with a table 1.82, without 1.99 nats, 3
    # seeds). The masked LM with a small-init table starts to use positions only after about
    # 400 steps (2.79 at 400, 2.25 at 800, against 2.82 without positions), so the preset's
    # budget shows the start and 3× shows the gap; an arm still improving is said to be.
    default=LabConfig(task="lm", min_len=16, max_len=16, eval_lengths=(16,), steps=400, lr=1e-2),
    explain=(
        "Two kinds of model on the lab's text (five books of the King James Version), each with "
        "and without positions: an encoder "
        "predicting masked characters (bidirectional attention: without positions it cannot "
        "tell where a character is, and cannot beat the position-blind ceiling shown) and a "
        "causal decoder predicting the next character (its mask lets position t see exactly "
        "t + 1 tokens, so it can count its way to its position). Metric: held-out loss; the "
        "gap without positions is compared seed by seed. Then a position probe on every layer "
        "of the trained causal decoder without positions, beside a shuffled-position control: "
        "where position appears although nothing encoded it. Sweep: the learned tables' "
        "initial scale and the budget."
    ),
    kind="need_positions",
    sweep=Sweep(tasks=(TaskSetting("text"),)),
    metric="loss",
    control="enc_nope",
    layer_probe="dec_nope",
    paper_checks=("haviv_2022",),
)

# Induction: next token of a repeated block of distinct random tokens, length 16, periods 4–8
# (random per sequence: a fixed period is solved by a purely positional head), lr 0.01, 5 seeds.
# Measured here (3 seeds, vocab 16): at 100 steps the 2-layer RoPE decoder is at 0.98 on the
# repeat, the learned table 0.91, no positions 0.39, one layer 0.31; at 400 steps 1.00, 1.00,
# 0.85 and 0.43. 150 steps (3× = 450) fits the sweep (a second vocabulary, 32 tokens) in the
# minute. Standard pre-LN blocks (the engine has no attention-only model): the MLP cannot let
# one attention layer look at the token before a key, so one layer still cannot compose.
# Without positions the model is still improving at 450 steps (0.84–0.89, 5 seeds), at 1,800
# one seed of five still is (0.948–0.963), and at 2,700 every seed is trained (0.978–0.986, RoPE
# 1.000). So the stored answer also trains the preset's task for 2,700 steps (long_budget 18,
# under the hosted cap of 3,000), in the panel part after the first answers: 90 s on 2 cores.
INDUCTION_NOPE = "2-layer model without positions"

INDUCTION_HEADS = Question(
    id="induction",
    title="Do induction heads need positions?",
    question=(
        "Induction heads complete a repeated pattern (… A B … A → B) by composing two attention "
        "layers (Olsson et al. 2022). Do they need a position encoding to do it?"
    ),
    source_keys=("olsson_2022", "haviv_2022"),
    variants=(
        Variant("rope", "2-layer RoPE model", _dec("rope")),
        Variant("learned", "2-layer model with a learned table", _dec("learned")),
        Variant("nope", INDUCTION_NOPE, _dec("nope")),
        Variant(
            "one_layer",
            "1-layer RoPE model (control: one layer cannot compose)",
            _dec("rope"),
            layers=1,
            role="control",
        ),
    ),
    default=LabConfig(
        task="induction",
        vocab=16,
        k=4,
        min_len=16,
        max_len=16,
        eval_lengths=(16,),
        steps=150,
        lr=1e-2,
        seeds=5,
    ),
    explain=(
        "Task: sequences of 16 tokens that repeat a block of distinct random tokens; each "
        "sequence has its own period (4–8), so no fixed offset finds the earlier copy. A causal "
        "decoder predicts the next token; only the repeat counts (the current token occurred "
        "once before, and the answer is the token that followed it), so the ceiling is 1 and "
        "chance is 1 in the vocabulary. Metric: held-out accuracy on the repeat, compared seed "
        "by seed (paired 95% interval). Arms: two-layer decoders with RoPE, with a learned "
        "table and without positions (a causal decoder can still learn position from its "
        "mask, Haviv et al. 2022). Control: a one-layer model, which cannot compose two "
        "attention steps. Mechanism: the prefix-matching score of every head, the attention "
        "from a repeated token to the token right after its earlier copy (Olsson et al. "
        "2022). Standard blocks with MLPs (the lab has no attention-only model). Sweep: a "
        "vocabulary of 32 and the budget (the preset's steps and 3×); after the first answers, "
        "the preset's task once more for 18× the steps, where the model without positions "
        "stops improving."
    ),
    kind="pair",
    sweep=Sweep(
        tasks=(TaskSetting("induction"), TaskSetting("vocab32", (("vocab", 32),))),
        inits=(INIT_SMALL,),
    ),
    compare=("rope", "nope"),
    control="one_layer",
    head_scores=("rope", "learned", "nope", "one_layer"),
    long_budget=18,
)

# The far context (O'Connor & Andreas 2021, scaled): character LMs (2 layers, width 32) read 16
# far characters, a separator and 16 near ones; only the near targets count. Per scheme (NoPE,
# learned table, RoPE) four arms: far context intact, shuffled (trained so), absent, and intact
# in training but shuffled at evaluation only (trained once with the intact arm). 300 steps and
# 3× fit the sweep in the minute; the paper card (oconnor_2021) measured this setting at 1,200.
_FAR_CONDITIONS = {
    "full": "far context intact",
    "shuffle_all": "far context shuffled in training",
    "noinfo": "no far context",
    "eval_shuffled": "far context shuffled at evaluation only",
}
_FAR_SCHEMES = {"nope": "NoPE", "learned": "learned table", "rope": "RoPE"}

FAR_CONTEXT = Question(
    id="far_context",
    title="Does the far context need its order?",
    question=(
        "Does the far context need its order, and does the position scheme change that? "
        "(O'Connor & Andreas found that shuffling the far context's words removes 41 % of its "
        "usable information in the mid range, 84 % in the long range.)"
    ),
    source_keys=("oconnor_2021",),
    variants=tuple(
        Variant(
            far_train.arm_id(scheme, condition),
            f"{name}, {words}",
            _dec(scheme),
            condition=condition,
            role="control" if condition == "noinfo" else "arm",  # the one that can fail
        )
        for scheme, name in _FAR_SCHEMES.items()
        for condition, words in _FAR_CONDITIONS.items()
    ),
    default=LabConfig(
        task="lm",
        min_len=16 + far_train.NEAR,
        max_len=16 + far_train.NEAR,
        eval_lengths=far_train.eval_lengths(16),
        width=32,
        heads=2,
        layers=2,
        steps=300,
        batch=16,
        lr=1e-2,
        seeds=3,
        eval_batch=256,
    ),
    explain=(
        "Causal character language models on the lab's public-domain text read 16 far "
        "characters, a separator, then 16 near characters; only the next-character losses on "
        "the near part count, held out (the text's last 10 %). Per position scheme — no "
        "positions (NoPE), a learned table, RoPE — four arms on the same windows and seeds: the "
        "far context intact; its words shuffled in training and evaluation; no far context at "
        "all; and the intact model read with the far context shuffled at evaluation only. "
        "Usable information = loss without the far context − loss with it (the gate: a share is "
        "stated only where it is decided above 0); share removed by the shuffle = (shuffled − "
        "intact) ÷ usable information, with Fieller's 95% interval. Mid range: the first 8 "
        "near targets; long range: the last 8. Each difference is paired over seeds (95% "
        "interval, ±0.02 nats equivalence margin). Sweep: the budget (the preset's steps and "
        "3×); arms are compared as they stand at each."
    ),
    kind="far_context",
    sweep=Sweep(tasks=(TaskSetting("far16"),), inits=(INIT_SMALL,)),
    metric="loss_mid",
    paper_checks=("oconnor_2021",),
    source=(
        "posviz.lab.studies.far_context",
        "posviz.lab.studies.far_context_arms",
        "posviz.lab.studies.own_loop",
        "posviz.lab.studies.far_context_question_train",
    ),
)

# Attention sinks (Gu et al. 2025, on the lab's bigram-backcopy task): one-layer decoders (width
# 32, 2 heads) on sequences of 64 tokens; per scheme (NoPE, learned table, RoPE) softmax with a
# BOS and a key-bias slot with the BOS; for the learned table and RoPE also softmax without a BOS
# (the control; studies/sinks_arms.py says why NoPE has none). The pilot's setting
# (docs/benchmarks.md, the sinks pilot): lr 2e-2, batch 16; 200 steps and 3× (600, the pilot's).
_SINK_CONDITIONS = {
    "softmax": "softmax",
    "key_bias": "key-bias slot",
    "no_bos": "softmax without a BOS",
}

SINKS = Question(
    id="sinks",
    title="Why is attention on the first token?",
    question=(
        "Why does attention pile onto the first token — is it the positions, or softmax's "
        "sum-to-one? (Gu et al. found sinks with every position scheme they tried, Table 3, "
        "and none once a learnable key bias takes the attention: Sink₁ 0.00 %, Table 4.)"
    ),
    source_keys=("gu_2025",),
    variants=tuple(
        Variant(
            sinks_arms.arm_id(scheme, condition),
            f"{name}, {words}",
            _dec(scheme),
            condition=condition,
            role="control" if condition == "no_bos" else "arm",  # the one that can fail
        )
        for scheme, condition in sinks_arms.ARMS
        for name, words in ((_FAR_SCHEMES[scheme], _SINK_CONDITIONS[condition]),)
    ),
    default=LabConfig(
        task="kback",  # carries the bigram-backcopy task: studies/sinks_arms.py says why
        k=1,
        vocab=sinks_arms.N_TOKENS,
        min_len=64,
        max_len=64,
        eval_lengths=(64,),
        width=32,
        heads=2,
        layers=1,
        steps=200,
        batch=16,
        lr=2e-2,
        seeds=3,
        eval_batch=100,
    ),
    explain=(
        "One-layer causal models read sequences of 64 tokens from a fixed bigram chain over 29 "
        "tokens, where after one of 3 trigger tokens the next token repeats the token before "
        "the trigger: only those copies need attention, so a head has nothing to read at about "
        "90% of the positions. Per position scheme — no positions (NoPE), a learned table, RoPE "
        "— arms on the same seeds: softmax attention with a BOS token first; a key-bias slot "
        "(one extra learnable key per head whose value is 0, so attention can go nowhere) with "
        "the BOS; and, for the learned table and RoPE, softmax without a BOS. Readings on 100 "
        "held-out sequences per seed: a head's first-token score α₁ (its mean attention on the "
        "first token over the 64 queries), Sink₁ (the share of heads with α₁ above 0.3, Gu et "
        "al.'s definition), the accuracy on the copies and the held-out loss. Each difference in "
        "α₁ is paired over seeds (95% interval, ±0.02 equivalence margin). The engine names the "
        "task 'previous token' in the sweep's labels (it carries this task under that name). "
        "Sweep: the budget (the preset's steps and 3×); arms are compared as they stand at each."
    ),
    kind="sinks",
    paper_checks=("gu_2025",),
    sweep=Sweep(tasks=(TaskSetting("backcopy"),), inits=(INIT_SMALL,)),
    metric="alpha_first",
    source=(
        "posviz.lab.sink_task",
        "posviz.lab.attention_variants",
        "posviz.lab.studies.sinks_arms",
        "posviz.lab.studies.own_loop",
        "posviz.lab.studies.sinks_question_train",
    ),
)

QUESTIONS: dict[str, Question] = {
    q.id: q
    for q in (
        LEARNED_VS_SINUSOID,
        ADD_VS_CONCAT,
        EVERY_LAYER,
        TRAIN_SHORT_TEST_LONG,
        RARE_ROWS,
        NEED_POSITIONS,
        INDUCTION_HEADS,
        FAR_CONTEXT,
        SINKS,
    )
}


def question(question_id: str) -> Question:
    """The preset with this id.

    Raises:
        ValueError: unknown id (lists the known ones).
    """
    if question_id not in QUESTIONS:
        raise ValueError(f"No lab question {question_id!r}; choose one of {', '.join(QUESTIONS)}.")
    return QUESTIONS[question_id]
