"""A lab page's words, computed from a stored run: the one-sentence answer, the sweep at a glance,
one cell's numbers, and what a run trains.

The sentence states the question's verdict where it holds in every cell of the sweep, or what it
depends on with the numbers of the preset's cell and of the nearest cell where it differs
(:func:`posviz.lab.studies.judging.nearest_other`), so a verdict is never stated past the settings
that
support it. Every number is read from the run; nothing is typed.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from posviz.analysis.evidence import spread
from posviz.analysis.headlines import FORMULA_CHARS, Evidence, Verdict
from posviz.encodings.families import family, lab_mechanism
from posviz.lab.engine import metrics as m
from posviz.lab.engine.config import MAX_BATCH, MAX_SEEDS, LabConfig
from posviz.lab.engine.results import Cell, Finding, LabResult, summary_frame
from posviz.lab.engine.store import question_run_id
from posviz.lab.present.clauses import MAX_FIRST_WORDS, at_ceiling, capital, names, short_label
from posviz.lab.present.figures import short_setting
from posviz.lab.present.kinds import kind_view
from posviz.lab.present.live import question_plan
from posviz.lab.studies.judging import AXIS_NAMES, CEILING, nearest_other, undecided_key
from posviz.lab.studies.presets import Question, question
from posviz.lab.studies.summarise import PANEL_AXIS, panel_pending, with_panel
from posviz.settings import settings

#: Where a question's effect shows in real checkpoints: question id -> (page, link label).
REAL_CHECKPOINTS = {
    "rare_rows": (
        "pages/sibling_diff.py",
        "The same effect in real checkpoints: MiniLM's rows past 128, never in its fine-tuning "
        "inputs, only shrank",
    ),
    "sinks": (
        "pages/inside_models.py",
        "The same pile-up in real checkpoints: first-token heads of SmolLM2 and MiniLM, with "
        "RoPE switched off and the first token moved",
    ),
}

#: how a cell whose verdict differs from the preset's shows in the grid (readable in both themes).
DIFFERS_STYLE = "background-color: #fde8b0; color: #3d2f00"


def cell_clause(result: LabResult, cell: Cell, *, head: bool = True) -> str:
    """The verdict of one cell in words, with its numbers (lower case, no full stop)."""
    labels = dict(zip(result.variant_ids, result.variant_labels, strict=True))
    return kind_view(question(result.question_id).kind).clause(result, cell, labels, head)


def _plain(result: LabResult) -> tuple[str, Cell]:
    """The first sentence and the cell it speaks of (the preset's, or the longer budget's
    where only a longer training decides)."""
    q = question(result.question_id)
    cell = result.default_cell
    labels = dict(zip(result.variant_ids, result.variant_labels, strict=True))
    view = kind_view(q.kind)
    text = view.plain(result, cell, labels)
    main = result.findings[0]
    if not main.holds_everywhere and not _undecided_elsewhere(result):
        longer = view.longer(result, labels) if view.longer is not None else ""
        if longer:
            return capital(longer), nearest_other(result.cells, main.keys, cell) or cell
        other = nearest_other(result.cells, main.keys, cell)
        both = view.depends(cell, other, labels) if view.depends and other else ""
        axes = names([LINE_AXES.get(a, AXIS_NAMES.get(a, a)) for a in main.depends_on])
        text = f"It depends on {axes}: {both}."
        if not both or len(text.split()) > MAX_FIRST_WORDS or set(text) & FORMULA_CHARS:
            text = f"It depends on {names([AXIS_NAMES.get(a, a) for a in main.depends_on])}."
    return capital(text), cell


#: an axis as the first line names it where it says both sides ("the table's start: …").
LINE_AXES = {"init": "the table's start"}


def plain_answer(result: LabResult) -> str:
    """The answer's first sentence: plain words, at most :data:`MAX_FIRST_WORDS` words, the
    preset's own cell (the numbers and where it holds follow in :func:`verdict`)."""
    return _plain(result)[0]


def answer_cell(result: LabResult) -> str:
    """The id of the cell the first line speaks of, which the hero draws unless the reader picks
    another: the preset's, or where the preset's is undecided and only a longer budget decides
    ("With longer training, …"), that longer cell — so the line and its chart never disagree."""
    return _plain(result)[1].id


def _undecided_elsewhere(result: LabResult) -> bool:
    """Whether the preset's verdict differs only where nothing could be decided (no cell
    decides otherwise: the answer stands wherever it was checked)."""
    main, default = result.findings[0], result.default_cell
    other = nearest_other(result.cells, main.keys, default)
    return (
        other is not None
        and undecided_key(main.keys[other.id])
        and not undecided_key(main.keys[default.id])
    )


def headline(result: LabResult) -> str:
    """The answer: a plain first sentence (:func:`plain_answer`), then the verdict that holds
    across the whole sweep, or what it depends on, with the preset's numbers and those of the
    nearest cell where it differs."""
    return f"{plain_answer(result)} {_detail(result)}"


def _detail(result: LabResult) -> str:
    main, cells, default = result.findings[0], result.cells, result.default_cell
    here = cell_clause(result, default)
    if main.holds_everywhere:
        where = "of the sweep and the held-out panel" if has_panel(result) else "of the sweep"
        return f"{capital(here)} — in all {len(cells)} settings {where}."
    other = nearest_other(cells, main.keys, default)
    changed = [s.label for s in other.settings if s.key != default.setting(s.axis).key]
    axes = names([AXIS_NAMES.get(a, a) for a in main.depends_on])
    if _undecided_elsewhere(result):
        holds = sum(k == main.keys[default.id] for k in main.keys.values())
        return (
            f"{capital(here)} — in every setting where it is decided ({holds} of {len(cells)}); "
            f"not decided in the other {len(cells) - holds}, e.g. with {names(changed)}."
        )
    if all(at_ceiling(c) for c in cells):  # accuracy cannot decide anywhere: say so once
        return (
            f"Both reach held-out accuracy ≥ {CEILING:.2f} in all {len(cells)} settings, so "
            f"accuracy cannot tell them apart; which learns faster depends on {axes}: with the "
            f"preset's settings {cell_clause(result, default, head=False)}; with "
            f"{names(changed)}, {cell_clause(result, other, head=False)}."
        )
    return (
        f"With the preset's settings: {here}; with {names(changed)}: {cell_clause(result, other)}."
    )


#: words a clause may open with that the first line has already said.
_ANSWER_WORDS = ("undecided: ", "yes: ", "no: ", "not the rows: ")


def _unsaid(text: str) -> str:
    """``text`` without an opening answer word the first line already said ("Yes: …")."""
    for word in _ANSWER_WORDS:
        if text.lower().startswith(word):
            return text[len(word) :]
    return text


def _main_evidence(result: LabResult) -> list[Evidence]:
    """The question's verdict as labelled items: the preset's cell with its numbers, and where
    it holds or what it depends on (with the nearest cell that differs)."""
    main, cells, default = result.findings[0], result.cells, result.default_cell
    n, here = len(cells), _unsaid(cell_clause(result, default))
    preset = "With the preset's settings"
    if main.holds_everywhere:
        where = "of the sweep and the held-out panel" if has_panel(result) else "of the sweep"
        return [(preset, here), ("Where it holds", f"in all {n} settings {where}")]
    other = nearest_other(cells, main.keys, default)
    changed = names([s.label for s in other.settings if s.key != default.setting(s.axis).key])
    axes = names([AXIS_NAMES.get(a, a) for a in main.depends_on])
    if _undecided_elsewhere(result):
        holds = sum(k == main.keys[default.id] for k in main.keys.values())
        return [
            (preset, here),
            (
                "Where it holds",
                f"in every setting where it is decided ({holds} of {n}); not decided in the "
                f"other {n - holds}, e.g. with {changed}",
            ),
        ]
    if all(at_ceiling(c) for c in cells):  # accuracy cannot decide anywhere: say so once
        return [
            (
                "Accuracy",
                f"both reach held-out accuracy ≥ {CEILING:.2f} in all {n} settings, so accuracy "
                "cannot tell them apart",
            ),
            ("Which learns faster depends on", axes),
            (preset, cell_clause(result, default, head=False)),
            ("Where it differs", f"with {changed}, {cell_clause(result, other, head=False)}"),
        ]
    return [
        ("It depends on", axes),
        (preset, here),
        ("Where it differs", f"with {changed}: {cell_clause(result, other)}"),
    ]


def _support_evidence(result: LabResult) -> list[Evidence]:
    """Every other finding, the held-out check, the position-blind ceiling, the layer probe and
    the head scores, as labelled items (one item per finding whose words differ)."""
    items: list[Evidence] = []
    for f in result.findings[1:]:
        topic = capital(f.topic)
        items.append((topic, _finding_line(f, result).removeprefix(f"{topic}: ").rstrip(".")))
    pending = "" if has_panel(result) else panel_pending(question(result.question_id))
    if pending:
        label, _, text = pending.partition(" pending: ")
        items.append((f"{label} (pending)", text.rstrip(".")) if text else ("", pending))
    bounds = {b.text for b in result.bounds}
    if bounds:
        items.append(
            (
                "Position-blind ceiling",
                f"at most {' / '.join(sorted(bounds))} held-out accuracy on this task for a model "
                "that cannot tell positions apart",
            )
        )
    if probe := layer_probe_line(result):
        items.append(("Layer probe", probe.rstrip(".")))
    for score in getattr(result, "head_scores", ()):
        label, _, text = _shortened(score.text, result).partition(": ")
        items.append((label, text.rstrip(".")) if text else ("", score.text))
    return items


_DEPENDS = "; depends on "


def _depends_once(items: list[Evidence]) -> list[Evidence]:
    """A "…; depends on the budget" ending that several findings share, said once: cut from each
    and stated in one item that names them ("Depends on the budget: Positions and Sink₁ …")."""
    ends: dict[str, list[str]] = {}
    for label, text in items:
        _, cut, axes = text.rpartition(_DEPENDS)
        if cut:
            ends.setdefault(axes, []).append(label)
    shared = {axes: labels for axes, labels in ends.items() if len(labels) > 1}
    if not shared:
        return items
    out = []
    for label, text in items:
        kept, cut, axes = text.rpartition(_DEPENDS)
        out.append((label, kept) if cut and axes in shared else (label, text))
    return out + [(f"Depends on {axes}", names(labels)) for axes, labels in shared.items()]


def _merged(items: list[Evidence]) -> list[Evidence]:
    """Items whose words are the same said once, under their labels joined ("A, B and C vs the
    control: undecided in all 4 settings")."""
    by_text: dict[str, list[str]] = {}
    for label, text in items:
        by_text.setdefault(text, []).append(label)
    out = []
    for text, labels in by_text.items():
        suffix = " vs the control"
        lead = labels[0].rpartition(", ")[0] + ", " if ", " in labels[0] else ""
        if len(labels) > 1 and all(label.endswith(suffix) for label in labels):
            heads = [label.removesuffix(suffix) for label in labels]
            label = names([heads[0], *(h[:1].lower() + h[1:] for h in heads[1:])]) + suffix
        elif len(labels) > 1 and lead and all(label.startswith(lead) for label in labels):
            label = lead + names([label.removeprefix(lead) for label in labels])  # "After 12
            # steps, A and B"
        else:
            label = "; ".join(labels)
        out.append((label, text))
    return out


#: the longest label and text of one evidence item a page shows whole
#: (:func:`posviz.ui.answer.show_verdict` cuts past these).
MAX_LABEL, MAX_TEXT = 80, 400


def _fitted(items: list[Evidence]) -> list[Evidence]:
    """Every item within :data:`MAX_LABEL` / :data:`MAX_TEXT`: a long label leads its text
    instead, a long text continues in unlabelled items cut at its ``;`` clauses."""
    out: list[Evidence] = []
    for label, text in items:
        if len(label) > MAX_LABEL:
            label, text = "", f"{label}: {text}"
        parts, current = [], ""
        for clause in text.split("; "):
            joined = f"{current}; {clause}" if current else clause
            if current and len(joined) > MAX_TEXT:
                parts.append(current)
                joined = clause
            current = joined
        parts.append(current)
        out += [(label if i == 0 else "", part) for i, part in enumerate(parts)]
    return out


#: a parenthetical without another inside it, long enough to be a clause of its own.
_PARENTHETICAL = re.compile(r"\s*\([^()]{12,}\)")


def _once(items: list[Evidence]) -> list[Evidence]:
    """Every long parenthetical said once: its later repetitions are dropped (a definition such
    as the prefix-matching score's, repeated per arm)."""
    seen: set[str] = set()
    out = []
    for label, text in items:

        def first_time(match: re.Match) -> str:
            group = match.group().strip()
            if group in seen:
                return ""
            seen.add(group)
            return match.group()

        out.append((label, _PARENTHETICAL.sub(first_time, text)))
    return out


def _shorts(result: LabResult) -> dict[str, str]:
    """``full label → short label`` of the arms whose label has a parenthetical."""
    full = {label: short_label(label) for label in result.variant_labels}
    return {a: b for a, b in full.items() if a != b}


def _shortened(text: str, result: LabResult) -> str:
    """``text`` with every arm named by its short label (:func:`short_label`)."""
    full = _shorts(result)
    for label in sorted(full, key=len, reverse=True):
        text = text.replace(label, full[label]).replace(capital(label), capital(full[label]))
    return text


def _short_labels(items: list[Evidence], result: LabResult) -> list[Evidence]:
    """Each arm named by its short label and defined in full once, in an "Arms" item first, so
    a label's formula is never repeated in every clause."""
    full = _shorts(result)
    if not full:
        return items
    defined = "; ".join(
        f"{short} = {', '.join(re.findall(r'[(]([^()]*)[)]', label))}"
        for label, short in full.items()
    )
    return [*((_shortened(a, result), _shortened(b, result)) for a, b in items), ("Arms", defined)]


def verdict(result: LabResult) -> Verdict:
    """The answer as a page shows it: its plain first line (:func:`plain_answer`, at most
    :data:`MAX_FIRST_WORDS` words, no formula), then the evidence folded under it — the
    verdict across the sweep with its numbers, every other finding, the held-out check, the
    control's ceiling, the layer probe — as labelled items, each clause once; ``sentence`` is the
    paragraph pages showed before (:func:`headline`, then the support lines), every number of
    which the evidence holds."""
    items = [*_main_evidence(result), *_depends_once(_support_evidence(result))]
    evidence = _fitted(_once(_short_labels(_merged(items), result)))
    sentence = " ".join([headline(result), *support_lines(result)])
    return Verdict(sentence, {}, plain_answer(result), tuple(evidence))


def _finding_line(finding: Finding, result: LabResult) -> str:
    n, default = len(result.cells), result.default_cell.id
    here = finding.shorts.get(default, "").removeprefix("best: ")
    if finding.holds_everywhere:
        return f"{capital(finding.topic)}: {here} in all {n} settings."
    holds = sum(key == finding.keys[default] for key in finding.keys.values())
    other = nearest_other(result.cells, finding.keys, result.default_cell)
    if undecided_key(finding.keys[other.id]) and not undecided_key(finding.keys[default]):
        # only cells that could not decide differ: no setting changes the verdict
        return (
            f"{capital(finding.topic)}: {here} in every setting where it is decided "
            f"({holds} of {n}); not decided in the other {n - holds}."
        )
    axes = names([AXIS_NAMES.get(a, a) for a in finding.depends_on])
    return (
        f"{capital(finding.topic)}: {here} with the preset's settings, in {holds} of {n}; "
        f"depends on {axes}."
    )


def layer_probe_line(result: LabResult) -> str:
    """Where position appears inside the probed arm: the first layer whose probe R²'s 95%
    interval lies wholly above its shuffled control's ("" without a layer probe)."""
    probe = result.layer_probe
    if probe is None:
        return ""
    scores = [spread(np.asarray(row)) for row in probe.score]
    controls = [spread(np.asarray(row)) for row in probe.control]
    found = next(
        (i for i, (s, c) in enumerate(zip(scores, controls, strict=True)) if s.low > c.high), None
    )
    if found is None:
        best = max(range(len(scores)), key=lambda i: scores[i].mean)
        return (
            f"No layer of {probe.label} holds more position than its control "
            f"({probe.control_label}): "
            f"best probe R² {scores[best].mean:.2f} at layer {best} vs {controls[best].mean:.2f}."
        )
    return (
        f"Position appears inside {probe.label} although nothing encoded it: probe R² "
        f"{scores[found].text(2)} at layer {found} against {controls[found].text(2)} with "
        f"{probe.control_label} (layer 0, the input, holds none)."
    )


def panel_run_id(question_id: str, config: LabConfig) -> str:
    """The run id of a question's held-out panel part with ``config``."""
    return question_run_id(question(question_id), config, part="panel")


def judged(result: LabResult, panel: LabResult | None) -> LabResult:
    """The stored answer judged together with its held-out panel (None: not computed yet, the
    answer says the check is pending); see :func:`posviz.lab.studies.summarise.with_panel`."""
    return with_panel(result, panel)


def has_panel(result: LabResult) -> bool:
    """Whether the result's findings were judged with its held-out panel."""
    return any(s.axis == PANEL_AXIS for s in result.cells[0].settings)


def support_lines(result: LabResult) -> tuple[str, ...]:
    """Short lines under the answer: every other finding across the sweep (a control with its
    position-blind ceiling), the layer probe, and the held-out check (or that it is pending)."""
    lines = [_finding_line(f, result) for f in result.findings[1:]]
    pending = "" if has_panel(result) else panel_pending(question(result.question_id))
    if pending:
        lines.append(pending)
    bounds = {b.text for b in result.bounds}
    if bounds:
        lines.append(
            "A model that cannot tell positions apart can reach at most "
            f"{' / '.join(sorted(bounds))} held-out accuracy on this task (its position-blind "
            "ceiling)."
        )
    probe = layer_probe_line(result)
    heads = [s.text for s in getattr(result, "head_scores", ())]
    return (*lines, *((probe,) if probe else ()), *heads)


# --------------------------------------------------------------------------- the sweep at a glance


_AXIS_COLUMNS = {"task": "task", "init": "table init", "budget": "budget", PANEL_AXIS: "held out"}


def _setting_columns(result: LabResult) -> list[str]:
    present = {s.axis for s in result.cells[0].settings}
    return [
        axis
        for axis in _AXIS_COLUMNS
        if axis in present
        and (len({c.setting(axis).key for c in result.cells}) > 1 or axis == "budget")
    ]


def grid(result: LabResult) -> Styler:
    """The sweep at a glance: one row per cell (the preset's first), each finding's verdict
    there first (a narrow screen cuts the right, not the answer), the arms under-trained there,
    then its settings; verdicts that differ from the preset's are highlighted."""
    axes = _setting_columns(result)
    names = _AXIS_COLUMNS
    rows, differs = [], []
    for cell in result.cells:
        row: dict[str, str] = {}
        flags: dict[str, str] = {}
        for index, f in enumerate(result.findings):
            row[f.topic] = f.shorts.get(cell.id, "")
            same = f.keys.get(cell.id) == f.keys.get(result.default_cell.id)
            flags[f.topic] = "" if same else DIFFERS_STYLE
            if index == 0:  # the arms left out, right after the verdict they are left out of
                under = [result.label(a) for a, ok in cell.converged.items() if not ok]
                row["under-trained"], flags["under-trained"] = ", ".join(under) or "—", ""
        for axis in axes:
            row[names[axis]], flags[names[axis]] = short_setting(cell, axis), ""
        rows.append(row)
        differs.append(flags)
    frame = pd.DataFrame(rows)
    styles = pd.DataFrame(differs, columns=frame.columns)
    return frame.style.apply(lambda _: styles, axis=None)


def cell_ids(result: LabResult) -> tuple[str, ...]:
    """The cells in the grid's row order."""
    return tuple(c.id for c in result.cells)


def comparisons_frame(result: LabResult, cell_id: str) -> pd.DataFrame:
    """Every comparison of a cell: ``comparison, measured on, difference, 95% interval, seeds,
    verdict`` (the difference is the first arm minus the second, paired over seeds)."""
    cell = result.cell(cell_id)
    label = dict(zip(result.variant_ids, result.variant_labels, strict=True))
    rows = []
    for c in cell.comparisons:
        decided = c.outcome in ("a", "b")
        winner = label.get(c.a if c.outcome == "a" else c.b, "") if decided else ""
        rows.append(
            {
                "comparison": f"{label.get(c.a, c.a)} − {label.get(c.b, c.b)}",
                "measured on": c.metric_label,
                "difference": c.estimate,
                "95% interval": "n/a"
                if not math.isfinite(c.low)
                else f"{c.low:+.3f} … {c.high:+.3f}",
                "seeds": c.n,
                "verdict": f"{winner} better"
                if decided
                else {
                    "tie": f"no difference (within ±{m.spec(c.metric).margin:g})"
                    if c.metric in m.METRICS
                    else "no difference",
                    "unclear": "undecided (interval too wide)",
                }.get(c.outcome, c.outcome),
            }
        )
    return pd.DataFrame(
        rows,
        columns=["comparison", "measured on", "difference", "95% interval", "seeds", "verdict"],
    )


def results_frame(result: LabResult, cell_id: str) -> pd.DataFrame:
    """A cell's results table (every arm and metric with its spread over seeds)."""
    return summary_frame(result.cell(cell_id).summary)


def convergence_lines(result: LabResult, cell_id: str) -> tuple[str, ...]:
    """How each arm's training was judged in a cell (converged or under-trained, and why)."""
    cell = result.cell(cell_id)
    return tuple(f"{result.label(arm)}: {how}" for arm, how in cell.convergence.items())


# --------------------------------------------------------------------------- what a run trains

_ENTERS = {
    "none": "nowhere",
    "rotary": "rotates queries and keys",
    "bias": "fixed bias on attention scores",
    "learned_bucket_bias": "learned bias per distance bucket",
}
_INJECTION = {
    "input": "added to the token embedding",
    "concat": "concatenated with the token embedding",
    "every_layer": "added before every layer",
}


def _lengths(config: LabConfig) -> str:
    if config.min_len == config.max_len:
        return str(config.max_len)
    return f"{config.min_len}–{config.max_len} ({config.length_dist})"


def arms_frame(q: Question, config: LabConfig) -> pd.DataFrame:
    """The arms a run trains: attention, position family, where positions enter, task, lengths."""
    rows = []
    for v in q.variants:
        run = v.config_for(config)
        kind = lab_mechanism(v.model.scheme).kind
        enters = _ENTERS.get(kind) or _INJECTION[v.model.injection]
        if kind == "none" and v.model.kind == "decoder":
            enters = "nowhere: only the causal mask orders tokens"
        rows.append(
            {
                "arm": v.label,
                "role": "" if v.role == "arm" else v.role,
                "attention": "causal (decoder)"
                if v.model.kind == "decoder"
                else "bidirectional (encoder)",
                "positions": family(v.model.scheme).label,
                "positions enter": enters,
                "task": run.task,
                "training lengths": _lengths(run),
            }
        )
    return pd.DataFrame(rows)


def run_caption(config: LabConfig) -> str:
    """Seeds, steps and model size of a run, in one sentence."""
    return (
        f"Each arm: {config.seeds} seeds × {config.steps} steps (and 3× for the budget sweep) of "
        f"{config.batch} sequences, width {config.width}, {config.heads} heads, {config.layers} "
        f"layers, learning rate {config.lr:g}; held-out evaluation on {config.eval_batch} fresh "
        f"sequences per seed of length {', '.join(map(str, config.eval_lengths))}."
    )


# --------------------------------------------------------------------------- a run of one's own

#: held-out sequences per seed and length (LabConfig's own bound).
MAX_EVAL_BATCH = 4096


def setting_limits() -> tuple[tuple[str, str, int, int], ...]:
    """The whole-number settings a page offers: ``(name, label, lowest, highest)``, the highest
    capped by this server (:func:`posviz.settings.settings`)."""
    caps = settings()
    return (
        ("seeds", "Seeds", 1, MAX_SEEDS),
        ("steps", "Steps (the preset budget; the sweep also reads 3×)", 1, caps.lab_max_steps),
        ("width", "Width", 4, caps.lab_max_width),
        ("heads", "Heads", 1, 64),
        ("layers", "Layers", 1, 8),
        ("batch", "Batch", 1, MAX_BATCH),
        ("min_len", "Shortest training length", 2, caps.lab_max_len),
        ("max_len", "Longest training length", 2, caps.lab_max_len),
        ("eval_batch", "Held-out sequences", 1, MAX_EVAL_BATCH),
    )


def caps_text() -> str:
    """What this server allows a run (the hosted profile is tighter), naming the variables."""
    caps = settings()
    return (
        f"This server ({'hosted' if caps.hosted else 'local'} profile) allows at most "
        f"{caps.lab_max_steps:,} steps (POSVIZ_LAB_MAX_STEPS), width {caps.lab_max_width} "
        f"(POSVIZ_LAB_MAX_WIDTH) and sequences of {caps.lab_max_len} tokens (POSVIZ_LAB_MAX_LEN); "
        f"{caps.max_jobs} training run(s) at once (POSVIZ_MAX_JOBS), the rest wait in a queue."
    )


def index_headline(answers: dict[str, LabResult | None], *, computing: bool = False) -> str:
    """The lab's front page in one sentence: how many questions are answered on this server.

    ``computing``: the first start's warm-up is computing the missing answers now (its progress
    line follows), so the sentence says so instead of counting nothing ("0 answered").
    """
    done, total = sum(r is not None for r in answers.values()), len(answers)
    lead = (
        f"{total} questions about positions that only training can answer, each across a sweep "
        "of the settings its verdict could depend on"
    )
    if done == total:
        return f"{lead}; all {total} answered on this server."
    if computing:
        so_far = "" if done == 0 else f"{done} of {total} answered so far, "
        return (
            f"{lead}; {so_far}the answers are being computed now and each appears below as soon "
            "as it is stored."
        )
    if done == 0:
        return (
            f"{lead}; none is answered on this server yet: each question below says how long its "
            "run takes."
        )
    return f"{lead}; {done} of {total} answered on this server."


def index_verdict(answers: dict[str, LabResult | None], *, computing: bool = False) -> Verdict:
    """The lab's front page in one line (how many questions are answered here, at most
    :data:`MAX_FIRST_WORDS` words), what the lab is and what to do folded under it;
    ``sentence`` is :func:`index_headline`."""
    done, total = sum(r is not None for r in answers.values()), len(answers)
    lab = (
        f"{total} questions about positions that only training can answer, each across a sweep "
        "of the settings its verdict could depend on"
    )
    if done == total:
        line, then = f"All {total} questions are answered on this server.", ""
    elif computing:
        line = f"The answers are being computed now: {done} of {total} so far."
        then = "each appears below as soon as it is stored"
    elif done == 0:
        line = f"None of the {total} questions is answered on this server yet."
        then = "each question below says how long its run takes"
    else:
        line, then = f"{done} of {total} questions are answered on this server.", ""
    evidence = (("The lab", lab), *((("Meanwhile", then),) if then else ()))
    return Verdict(index_headline(answers, computing=computing), {}, line, evidence)


def index_line(question_id: str, result: LabResult | None, *, computing: bool = False) -> str:
    """One question's line on the front page: its answer, or how long it takes to compute
    (``computing``: the first start's warm-up computes it, in turn with the others)."""
    if result is not None:
        return plain_answer(result)
    estimate = question_plan(question_id, question(question_id).default).estimate_text()
    if computing:
        return f"Being computed now, in turn with the other answers ({estimate} of training)."
    return f"Not computed on this server yet: training takes {estimate}."


def run_facts(result: LabResult, *, stored: bool) -> str:
    """Where a page's numbers come from: run id, code version, seeds, wall time."""
    how = "read from the run store (no training)" if stored else "just trained"
    return (
        f"Run `{result.run_id}` · code version `{result.code_version}` · "
        f"{result.config.seeds} seeds · trained in {result.wall_s:.1f} s · {how}. "
        "The same settings give the same numbers on a CPU; copy this page's address to share it."
    )


def no_answer(
    question_id: str, config: LabConfig, *, preset: bool, running: bool, queued: bool = False
) -> str:
    """What a page says in place of its answer when none is stored for these settings.

    ``running``: a run of these settings trains now; ``queued``: the first start's warm-up will
    compute them (it computes every default answer in turn; its progress line follows).
    """
    plan = question_plan(question_id, config)
    which = "the preset's settings" if preset else "these settings"
    if running:
        return (
            f"Training {which} now ({plan.models} small models); the answer appears here when "
            "the run ends, and is kept for the next visitor."
        )
    if queued:
        return (
            f"The answer for {which} is being computed on this server now, with every other "
            "default answer in turn; it appears here as soon as it is stored (Run moves it "
            "to the front of the queue)."
        )
    return (
        f"No answer for {which} is stored on this server yet: press Run to train "
        f"{plan.models} small models ({plan.estimate_text()}); the answer is kept, so the next "
        "visitor sees it at once."
    )
