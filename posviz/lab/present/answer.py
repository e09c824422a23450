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

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from posviz.analysis.evidence import spread
from posviz.encodings.families import family, lab_mechanism
from posviz.lab.engine import metrics as m
from posviz.lab.engine.config import MAX_BATCH, MAX_SEEDS, LabConfig
from posviz.lab.engine.results import Cell, Comparison, Finding, LabResult, summary_frame
from posviz.lab.engine.store import question_run_id
from posviz.lab.present.figures import short_setting
from posviz.lab.present.live import question_plan
from posviz.lab.studies.judging import AXIS_NAMES, CEILING, HOLDS, nearest_other, undecided_key
from posviz.lab.studies.presets import Question, question
from posviz.lab.studies.summarise import PANEL_AXIS, panel_pending, with_panel
from posviz.settings import settings

#: how a cell whose verdict differs from the preset's shows in the grid (readable in both themes).
DIFFERS_STYLE = "background-color: #fde8b0; color: #3d2f00"


def _names(items: list[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _deciding(cell: Cell) -> Comparison | None:
    """The comparison behind a pair cell's verdict (speed of learning at the ceiling)."""
    speed = cell.verdict.key.startswith("ceiling")
    for c in cell.comparisons:
        if (c.metric == "train_loss_mean") == speed:
            return c
    return None


def _at_ceiling(cell: Cell) -> bool:
    return cell.verdict.key.startswith("ceiling")


def _pair_clause(cell: Cell, labels: dict[str, str], *, head: bool = True) -> str:
    """A pair cell's verdict with its numbers; at the accuracy ceiling, the speed of learning
    (``head=False`` leaves out "both reach held-out accuracy ≥ 0.99")."""
    c = _deciding(cell)
    if cell.verdict.key == "undecided" or c is None or c.outcome == "undefined":
        return cell.verdict.text.rstrip(".")
    a, b = labels[c.a], labels[c.b]
    win, lose = (a, b) if c.outcome == "a" else (b, a)
    w, lo = (c.a_mean, c.b_mean) if c.outcome == "a" else (c.b_mean, c.a_mean)
    margin = m.spec(c.metric).margin
    interval = f"the difference's 95% interval {c.low:+.3f} … {c.high:+.3f}"
    if _at_ceiling(cell):
        first = f"both reach held-out accuracy ≥ {CEILING:.2f}, and " if head else ""
        losses = f"{a} {c.a_mean:.3f}, {b} {c.b_mean:.3f}"
        if c.outcome == "tie":
            return first + (
                f"they learn equally fast (mean training loss {losses}; {interval} lies "
                f"inside ±{margin:g}, the equivalence margin)"
            )
        if c.outcome == "unclear":
            return first + (
                f"which learns faster is undecided (mean training loss {losses}; {interval} "
                f"contains 0 but reaches past ±{margin:g})"
            )
        return first + f"{win} learns faster (mean training loss {w:.3f} vs {lo:.3f})"
    name = m.spec(c.metric).name
    if c.outcome == "tie":
        return (
            f"{a} and {b} do equally well ({name} {c.a_mean:.3f} vs {c.b_mean:.3f}; {interval} "
            f"lies inside ±{margin:g}, the equivalence margin)"
        )
    if c.outcome == "unclear":
        return (
            f"undecided between {a} and {b} ({name} {c.a_mean:.3f} vs {c.b_mean:.3f}; "
            f"{interval} contains 0 but reaches past ±{margin:g}, the equivalence margin)"
        )
    side = "higher" if m.spec(c.metric).higher_is_better else "lower"
    return f"{win} reaches {side} {name} than {lose} ({w:.3f} vs {lo:.3f})"


def _values(rows: list, *, digits: int = 2) -> str:
    return _names([f"{r.label} ({r.mean:.{digits}f})" for r in rows])


def _extrapolation_clause(cell: Cell, result: LabResult) -> str:
    """Who keeps its accuracy past the training length (with the unseen-position accuracy),
    who does not, and which arms are not ranked (under-trained, or not defined there)."""
    ranked = {r.arm for r in cell.ranking}
    holding = [r for r in cell.ranking if r.holds]
    losing = [r for r in cell.ranking if not r.holds]
    under, undefined = [], []
    for arm in result.arms:
        values = cell.metrics.get(arm.id, {}).get("accuracy_unseen", ())
        if arm.id not in ranked:
            defined = len(values) and np.isfinite(values).all()
            (under if defined else undefined).append(arm.label)
    parts = [
        f"{_values(holding)} keep{'s' if len(holding) == 1 else ''} at least {HOLDS:.0%} of "
        "their seen-position accuracy on unseen positions"
        if holding
        else f"no ranked arm keeps {HOLDS:.0%} of its seen-position accuracy on unseen positions"
    ]
    if losing:
        parts.append(f"{_values(losing)} {'does' if len(losing) == 1 else 'do'} not")
    if under:
        parts.append(f"not ranked, not trained: {_status_words(cell, result, under)}")
    if undefined:
        parts.append(f"{_names(undefined)} has no rows there (not defined)")
    return "; ".join(parts)


def _status_words(cell: Cell, result: LabResult, labels: list[str]) -> str:
    """``"NoPE still improving"``: the arms of ``labels`` with their status in the cell."""
    words = {"improving": "still improving", "collapsed": "collapsed on some seeds"}
    return _names(
        [
            f"{result.label(a)} {words.get(s, s)}"
            for a, s in cell.status.items()
            if result.label(a) in labels
        ]
    )


def _late(cell: Cell, arm: str) -> float:
    return float(np.mean(cell.metrics[arm]["accuracy_late"]))


def _rare_rows_clause(cell: Cell) -> str:
    key = cell.verdict.key
    if key == "undecided":
        return cell.verdict.text.rstrip(".")
    short, uniform, free = (_late(cell, a) for a in ("short", "uniform", "rope_short"))
    numbers = f"late-position accuracy {short:.2f} vs {uniform:.2f} with uniform lengths"
    if key == "no_lag":
        return f"no: the short-trained table does not lag at the late positions ({numbers})"
    if key == "rows":
        return (
            f"yes: the short-trained table lags at the late positions ({numbers}), while RoPE, "
            f"which has no table, trained on the same short lengths does not ({free:.2f})"
        )
    return (
        f"not the rows: the short-trained table lags at the late positions ({numbers}), but so "
        f"does RoPE with no table on the same short lengths ({free:.2f}): attention never saw "
        "long sequences"
    )


#: Where a question's effect shows in real checkpoints: question id -> (page, link label).
REAL_CHECKPOINTS = {
    "rare_rows": (
        "pages/sibling_diff.py",
        "The same effect in real checkpoints: MiniLM's rows past 128, never in its fine-tuning "
        "inputs, only shrank",
    ),
}


_WITHOUT = {
    "b": "does worse without positions",
    "a": "does better without positions",
    "tie": "does as well without positions",
    "unclear": "is undecided (interval too wide)",
    "undecided": "is undecided (not trained, or the interval is too wide)",
}


def _need_positions_clause(cell: Cell) -> str:
    enc, dec = cell.comparisons[0], cell.comparisons[1]
    said = {c.a: _WITHOUT.get(c.outcome, "is not defined") for c in (enc, dec)}
    return (
        f"the encoder {said[enc.a]} (held-out loss {enc.a_mean:.2f} vs {enc.b_mean:.2f} with a "
        f"learned table) and the causal decoder {said[dec.a]} ({dec.a_mean:.2f} vs "
        f"{dec.b_mean:.2f})"
    )


def cell_clause(result: LabResult, cell: Cell, *, head: bool = True) -> str:
    """The verdict of one cell in words, with its numbers (lower case, no full stop)."""
    q = question(result.question_id)
    labels = dict(zip(result.variant_ids, result.variant_labels, strict=True))
    if q.kind == "pair":
        return _pair_clause(cell, labels, head=head)
    if q.kind == "extrapolation":
        return _extrapolation_clause(cell, result)
    if q.kind == "rare_rows":
        return _rare_rows_clause(cell)
    return _need_positions_clause(cell)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


MAX_FIRST_WORDS = 15


def _pair_plain(cell: Cell, labels: dict[str, str]) -> str:
    c = _deciding(cell)
    if cell.verdict.key == "undecided" or c is None or c.outcome in ("undefined", "unclear"):
        return "Undecided: these runs cannot tell them apart yet."
    a, b = labels[c.a], labels[c.b]
    win, lose = (a, b) if c.outcome == "a" else (b, a)
    if _at_ceiling(cell):
        if c.outcome == "tie":
            return "Both solve it, and they learn equally fast."
        return f"Both solve it; the {win} learns faster."
    if c.outcome == "tie":
        return f"No difference: the {a} and the {b} do equally well."
    return f"The {win} does better than the {lose}."


def _extrapolation_plain(cell: Cell) -> str:
    holding = [r.label for r in cell.ranking if r.holds]
    if not cell.ranking:
        return "Undecided: too few arms finished training."
    if not holding:
        return "No scheme keeps its accuracy past the training length."
    return f"{_names(holding)} keep their accuracy past the training length."


def _rare_rows_plain(cell: Cell) -> str:
    return {
        "rows": "Yes: the rarely seen rows are what is untrained.",
        "attention": "No: attention never saw long sequences; the rows are not the cause.",
        "no_lag": "No: the short-trained table does not lag at late positions.",
    }.get(cell.verdict.key, "Undecided: these runs cannot tell yet.")


def _need_positions_plain(cell: Cell) -> str:
    enc, dec = cell.comparisons[0], cell.comparisons[1]
    words = {"b": "needs positions", "a": "does better without", "tie": "does not need them"}
    e, d = words.get(enc.outcome), words.get(dec.outcome)
    if e and d:
        return f"The encoder {e}; the causal decoder {d}."
    if e:
        return f"The encoder {e}; the causal decoder is undecided."
    if d:
        return f"The causal decoder {d}; the encoder is undecided."
    return "Undecided: neither model finished training."


def plain_answer(result: LabResult) -> str:
    """The answer's first sentence: plain words, at most :data:`MAX_FIRST_WORDS` words, the
    preset's own cell (the numbers and where it holds follow in :func:`headline`)."""
    q = question(result.question_id)
    cell = result.default_cell
    labels = dict(zip(result.variant_ids, result.variant_labels, strict=True))
    if q.kind == "pair":
        text = _pair_plain(cell, labels)
    elif q.kind == "extrapolation":
        text = _extrapolation_plain(cell)
    elif q.kind == "rare_rows":
        text = _rare_rows_plain(cell)
    else:
        text = _need_positions_plain(cell)
    main = result.findings[0]
    if not main.holds_everywhere and not _undecided_elsewhere(result):
        longer = _decided_with_longer_training(result, labels) if q.kind == "pair" else ""
        text = longer or f"It depends on {_names([AXIS_NAMES.get(a, a) for a in main.depends_on])}."
    return _capital(text)


def _decided_with_longer_training(result: LabResult, labels: dict[str, str]) -> str:
    """``"With longer training, …"`` where the preset's cell is undecided and the verdict it
    depends on is the budget's alone, decided at a longer one (its arms trained only there);
    "" otherwise or past :data:`MAX_FIRST_WORDS`."""
    main, default = result.findings[0], result.default_cell
    if main.depends_on != ("budget",) or not undecided_key(main.keys[default.id]):
        return ""
    other = nearest_other(result.cells, main.keys, default)
    if other is None or other.steps <= default.steps or undecided_key(main.keys[other.id]):
        return ""
    plain = _pair_plain(other, labels)
    text = f"With longer training, {plain[:1].lower()}{plain[1:]}"
    return text if len(text.split()) <= MAX_FIRST_WORDS else ""


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
        return f"{_capital(here)} — in all {len(cells)} settings {where}."
    other = nearest_other(cells, main.keys, default)
    changed = [s.label for s in other.settings if s.key != default.setting(s.axis).key]
    axes = _names([AXIS_NAMES.get(a, a) for a in main.depends_on])
    if _undecided_elsewhere(result):
        holds = sum(k == main.keys[default.id] for k in main.keys.values())
        return (
            f"{_capital(here)} — in every setting where it is decided ({holds} of {len(cells)}); "
            f"not decided in the other {len(cells) - holds}, e.g. with {_names(changed)}."
        )
    if all(_at_ceiling(c) for c in cells):  # accuracy cannot decide anywhere: say so once
        return (
            f"Both reach held-out accuracy ≥ {CEILING:.2f} in all {len(cells)} settings, so "
            f"accuracy cannot tell them apart; which learns faster depends on {axes}: with the "
            f"preset's settings {cell_clause(result, default, head=False)}; with "
            f"{_names(changed)}, {cell_clause(result, other, head=False)}."
        )
    return (
        f"With the preset's settings: {here}; with {_names(changed)}: {cell_clause(result, other)}."
    )


def _finding_line(finding: Finding, result: LabResult) -> str:
    n, default = len(result.cells), result.default_cell.id
    here = finding.shorts.get(default, "").removeprefix("best: ")
    if finding.holds_everywhere:
        return f"{_capital(finding.topic)}: {here} in all {n} settings."
    holds = sum(key == finding.keys[default] for key in finding.keys.values())
    other = nearest_other(result.cells, finding.keys, result.default_cell)
    if undecided_key(finding.keys[other.id]) and not undecided_key(finding.keys[default]):
        # only cells that could not decide differ: no setting changes the verdict
        return (
            f"{_capital(finding.topic)}: {here} in every setting where it is decided "
            f"({holds} of {n}); not decided in the other {n - holds}."
        )
    axes = _names([AXIS_NAMES.get(a, a) for a in finding.depends_on])
    return (
        f"{_capital(finding.topic)}: {here} with the preset's settings, in {holds} of {n}; "
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


def index_line(question_id: str, result: LabResult | None, *, computing: bool = False) -> str:
    """One question's line on the front page: its answer, or how long it takes to compute
    (``computing``: the first start's warm-up computes it, in turn with the others)."""
    if result is not None:
        return headline(result)
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
