"""One preset per question people ask about positions, each answered by training tiny models.

A :class:`Question` names its sources (keys of :data:`posviz.references.REFERENCES`), the
variants it compares, which two variants carry the question (``compare``), which variant is the
control, the metric that decides it and the default :class:`~posviz.lab.config.LabConfig`
(sized to finish, all variants and seeds, within a minute on 2 CPU cores;
see ``bench/bench_lab.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from posviz.lab.config import LabConfig, ModelConfig


@dataclass(frozen=True)
class Variant:
    """One arm of a comparison: a model, optionally trained on its own task or lengths.

    ``None`` overrides keep the question's :class:`LabConfig` value.
    """

    id: str
    label: str
    model: ModelConfig
    task: str | None = None
    length_dist: str | None = None
    min_len: int | None = None
    max_len: int | None = None

    def config_for(self, base: LabConfig) -> LabConfig:
        """The run's config with this variant's task/length overrides applied (validated)."""
        changes = {
            name: value
            for name in ("task", "length_dist", "min_len", "max_len")
            if (value := getattr(self, name)) is not None
        }
        return replace(base, **changes) if changes else base

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "label": self.label,
            "model": self.model.to_dict(),
            "task": self.task,
            "length_dist": self.length_dist,
            "min_len": self.min_len,
            "max_len": self.max_len,
        }


@dataclass(frozen=True)
class Question:
    """A question, the variants that answer it and how the answer is measured.

    Attributes:
        id: URL-safe id (``?q=...``).
        title: short title for menus.
        question: the question in plain words, as people asked it.
        source_keys: keys of ``posviz.references.REFERENCES`` for the question's sources.
        variants: the arms compared (ordered as shown).
        default: the run settings of the preset.
        explain: how the answer is measured (held-out data, metric, control).
        compare: the two variant ids whose difference answers the question.
        control: the variant id of the control arm.
        metric: the metric (``metric`` column of :func:`posviz.lab.results_frame`) that decides
            it; ``"accuracy_longest"`` means the accuracy at the longest evaluation length.
        higher_is_better: direction of ``metric``.
        probe_tables: also probe the trained tables (error by position on the late rows).
    """

    id: str
    title: str
    question: str
    source_keys: tuple[str, ...]
    variants: tuple[Variant, ...]
    default: LabConfig
    explain: str
    compare: tuple[str, str]
    control: str
    metric: str
    higher_is_better: bool = True
    probe_tables: bool = False  # also probe the trained tables (error by position, late rows)

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


def _enc(scheme: str, injection: str = "input", **kw: int) -> ModelConfig:
    return ModelConfig(kind="encoder", scheme=scheme, injection=injection, **kw)  # type: ignore[arg-type]


def _dec(scheme: str, **kw: int) -> ModelConfig:
    return ModelConfig(kind="decoder", scheme=scheme, **kw)  # type: ignore[arg-type]


# 400 steps: with learned tables starting at N(0, 0.02²) (BERT/GPT-2's initializer_range) every
# position arm reaches held-out accuracy ≥ 0.99 on every seed (run the CLI to see it); 150 were
# not enough for the input-added learned table.
_REVERSE = LabConfig(task="reverse", min_len=12, max_len=12, eval_lengths=(12,), steps=400, lr=5e-3)

LEARNED_VS_SINUSOID = Question(
    id="learned",
    title="Does a learned table help?",
    question=(
        "Does a learnable position embedding give better results than the fixed sinusoid? "
        "(Vaswani et al. found them equal: Table 3 row E, BLEU 25.7 vs 25.8.)"
    ),
    source_keys=("so_learnable", "so_nn_embedding", "vaswani_2017"),
    variants=(
        Variant("learned", "learned table (nn.Embedding)", _enc("learned")),
        Variant("sinusoid", "fixed sinusoid", _enc("sinusoidal")),
        Variant("nope", "no positions (NoPE, control)", _enc("nope")),
    ),
    default=_REVERSE,
    explain=(
        "Task: reverse a sequence of random tokens (the output at position t is the input token "
        "at position n−1−t), so only a model that knows absolute order can solve it. Metric: "
        "token accuracy on fresh held-out sequences never seen in training. Control: the same "
        "encoder with no positions, which is permutation-equivariant and cannot beat chance."
    ),
    compare=("learned", "sinusoid"),
    control="nope",
    metric="accuracy",
)

ADD_VS_CONCAT = Question(
    id="concat",
    title="Add or concatenate?",
    question="Why add the position embedding to the token embedding instead of concatenating it?",
    source_keys=("t2t_1591",),
    variants=(
        Variant("add", "add: token (d) + position (d)", _enc("learned")),
        Variant("concat", "concatenate: token (d−p) ‖ position (p)", _enc("learned", "concat")),
        Variant("nope", "no positions (NoPE, control)", _enc("nope")),
    ),
    default=_REVERSE,
    explain=(
        "Both arms feed a d-wide transformer. Add: a d-wide token embedding plus a d-wide "
        "learned table. Concatenate: a (d−p)-wide token embedding next to a p-wide learned table "
        "(p = d/2), with no extra projection, so the concatenated arm has slightly fewer "
        "parameters (the counts are shown with the result; they differ by under 5%). Task: "
        "reverse, token accuracy on fresh held-out sequences; control: no positions."
    ),
    compare=("add", "concat"),
    control="nope",
    metric="accuracy",
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
        Variant("input", "learned table, added at the input", _enc("learned")),
        Variant(
            "every_layer", "same table, added before every layer", _enc("learned", "every_layer")
        ),
        Variant("nope", "no positions (NoPE, control)", _enc("nope")),
    ),
    default=_REVERSE,
    explain=(
        "Both arms have the same parameters (one learned table); the second adds it again before "
        "each of the two blocks. Task: reverse, token accuracy on fresh held-out sequences; "
        "control: no positions."
    ),
    compare=("every_layer", "input"),
    control="nope",
    metric="accuracy",
)

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
        Variant("nope", "NoPE (control)", _dec("nope")),
    ),
    # 8 heads: ALiBi's slopes are a geometric sequence set by the head count (1/2 … 1/256 for 8
    # heads, Press et al. 2022 §3); with 2 heads they are 1/16 and 1/256, nearly no position
    # signal, and the ALiBi arm did not learn the task at all (no better than NoPE).
    default=LabConfig(
        task="kback",
        k=2,
        min_len=8,
        max_len=16,
        eval_lengths=(16, 32),
        heads=8,
        steps=400,
        lr=5e-3,
    ),
    explain=(
        "Task: output the token k = 2 back (a relative offset), with a causal decoder trained on "
        "lengths 8–16. Metric: token accuracy on fresh held-out sequences of length 16 (seen "
        "lengths) and 32 (twice the longest training sequence). A learned table has no rows past "
        "its training length, so it cannot be evaluated there: shown as not defined, not zero."
    ),
    compare=("alibi", "sinusoid"),
    control="nope",
    metric="accuracy_longest",
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
            "short", "mostly short sequences", _enc("learned", table_rows=40), length_dist="short"
        ),
        Variant(
            "uniform", "uniform lengths", _enc("learned", table_rows=40), length_dist="uniform"
        ),
    ),
    # 600 steps at lr 0.005: the uniform arm learns k-back at every position (held-out accuracy
    # at positions 24–31 ≈ 0.96); at 300 steps and lr 0.003 it had not learned the task at all,
    # so nothing could be read from its table. 5 seeds: with 3 the uniform arm's late/early
    # movement interval (t with 2 degrees of freedom) was too wide to separate the arms.
    default=LabConfig(
        task="kback", k=2, min_len=4, max_len=32, eval_lengths=(32,), steps=600, lr=5e-3, seeds=5
    ),
    explain=(
        "Both arms train the same encoder with a 40-row learned table (started at N(0, 0.02²), "
        "as BERT and GPT-2) on the k-back task, lengths 4–32: one with mostly short sequences "
        "(P(n) ∝ 0.8^(n−4): position 31 is reached by about 1 sequence in 500), one uniform. "
        "Decisive evidence: how far training moved each row from its start, ‖W_trained[p] − "
        "W_init[p]‖, against how often position p was seen — the late rows' (24–31) movement "
        "divided by the early rows' (0–7), and the rank correlation of movement with frequency. "
        "Rows 32–39 are never used, so they get exactly zero gradient and move exactly 0: the "
        "built-in control. Also: token accuracy on held-out sequences of length 32 at the late "
        "positions 24–31, and the linear probe's error by position on each trained table (the "
        "Probing page's probe)."
    ),
    compare=("short", "uniform"),
    control="uniform",
    metric="accuracy_late",
    probe_tables=True,
)

QUESTIONS: dict[str, Question] = {
    q.id: q
    for q in (LEARNED_VS_SINUSOID, ADD_VS_CONCAT, EVERY_LAYER, TRAIN_SHORT_TEST_LONG, RARE_ROWS)
}


def question(question_id: str) -> Question:
    """The preset with this id.

    Raises:
        ValueError: unknown id (lists the known ones).
    """
    if question_id not in QUESTIONS:
        raise ValueError(f"No lab question {question_id!r}; choose one of {', '.join(QUESTIONS)}.")
    return QUESTIONS[question_id]
