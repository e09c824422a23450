"""The position lab's pages in AppTest, and what they show, computed by posviz.lab.present.

Every question page answers first from the store (the writable store or the read-only warm one)
without training; with nothing stored it says so and offers Run with an estimate; Run trains into
a temporary store and shows the answer; the progress is one count across the whole run; the sweep
grid has one row per cell and the selected cell follows the URL; bad links and settings get
messages; Stop stops; a run nobody watches stops; corrupted and diverged runs say so; the paper
checks page shows one card per check. The presets are shrunk to tiny configs for this module
(every question trains its whole sweep in a second or two).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
import urllib.parse

import pytest
from conftest import app_test, assert_no_exception

import posviz.lab
from posviz import lab_jobs as runs
from posviz.jobs import job_slot
from posviz.lab import QUESTIONS, RunStore, run_question
from posviz.lab.present import answer, cards, figures
from posviz.lab.present.live import LiveProgress, card_plan, question_plan
from posviz.lab.studies.cards import card_run_id, run_paper_check
from posviz.lab.studies.papers import AGREES, PAPER_CHECKS, Condition
from posviz.page_models.lab import page_path, prefix
from posviz.references import cite
from posviz.ui import lab_runs
from posviz.ui.cache import clear_caches

#: small enough to train a question's whole sweep in a second or two on 2 cores.
TINY = {"seeds": 2, "steps": 4, "width": 8, "heads": 2, "layers": 1, "batch": 4, "eval_batch": 8}
WAIT_S = 240  # join budget for a worker thread (a loaded CI machine is slow)


#: one question of each study kind (the registry's first): what Run does on a page (train, store,
#: show) depends on the kind, not on which question of it (every question's stored answer is shown
#: on arrival below)
ONE_PER_KIND = list({q.kind: qid for qid, q in reversed(QUESTIONS.items())}.values())


def tiny(config, **extra):
    return dataclasses.replace(config, **{**TINY, **extra})


@pytest.fixture(scope="module", autouse=True)
def tiny_presets():
    """Every question's preset (and every paper check's arms) shrunk to a tiny config."""
    with pytest.MonkeyPatch.context() as patch:
        for qid, q in list(QUESTIONS.items()):
            patch.setitem(QUESTIONS, qid, dataclasses.replace(q, default=tiny(q.default)))
        for cid, check in list(PAPER_CHECKS.items()):
            arms = tuple(dataclasses.replace(a, config=tiny(a.config)) for a in check.arms)
            patch.setitem(PAPER_CHECKS, cid, dataclasses.replace(check, arms=arms))
        yield


@pytest.fixture(scope="module")
def warm(tmp_path_factory, tiny_presets):
    """A store holding every question's (tiny) preset answer, as ``lab warm`` builds it."""
    root = tmp_path_factory.mktemp("warm")
    store = RunStore(root)
    results = {qid: run_question(qid, store=store) for qid in QUESTIONS}
    return root, results


def texts(at, kind: str) -> list[str]:
    return [element.value for element in getattr(at, kind)]


def all_text(at) -> str:
    kinds = ("markdown", "caption", "info", "warning", "error", "subheader", "title")
    return "\n".join(str(v) for kind in kinds for v in texts(at, kind))


def verdict(at) -> str:
    """The bold answer sentence (the first Markdown element of the page)."""
    return at.markdown[0].value


@pytest.fixture
def lab_dir(tmp_path, monkeypatch):
    """A private, empty run store; every worker a test starts is joined before the next test."""
    root = tmp_path / "lab"
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(root))
    monkeypatch.delenv("POSVIZ_LAB_WARM_DIR", raising=False)
    clear_caches()
    yield root
    assert runs.wait_for_jobs(WAIT_S), "a lab worker thread outlived its test"


@pytest.fixture
def no_training(monkeypatch):
    """Make any attempt to train fail the test (the page must read the store instead)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the page started training for a stored run")

    monkeypatch.setattr(posviz.lab, "run_question", refuse)
    monkeypatch.setattr(lab_runs, "start_job", refuse)


def progress_text(at) -> str:
    return " ".join(bar.proto.text for bar in at.get("progress"))


def press_run_and_finish(at, key: str):
    at.button(key=key).click().run()
    assert_no_exception(at)
    assert runs.wait_for_jobs(WAIT_S)
    at.run()
    assert_no_exception(at)
    return at


def chart_specs(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


# --------------------------------------------------------------------------- answers on arrival


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_the_stored_answer_shows_on_arrival_without_training(
    lab_dir, monkeypatch, warm, no_training, question_id
):
    """No link, no Run: the page reads the warm store and answers first, with the grid."""
    root, results = warm
    monkeypatch.setenv("POSVIZ_LAB_WARM_DIR", str(root))
    result = results[question_id]
    at = app_test(page_path(question_id))
    assert_no_exception(at)
    assert not at.error, texts(at, "error")
    assert answer.headline(result)[:40].split("(")[0].strip() in verdict(at).replace("\\", "")
    assert not [b for b in at.button if b.key == f"{prefix(question_id)}go"]
    grid = at.dataframe[0].value
    assert len(grid) == len(result.cells)  # one row per cell of the sweep
    assert "under-trained" in grid.columns
    assert at.query_params[f"{prefix(question_id)}run"] == result.run_id
    assert at.query_params[f"{prefix(question_id)}cell"] == result.default_cell.id
    assert "read from the run store (no training)" in all_text(at)
    text = all_text(at)
    assert QUESTIONS[question_id].question in text
    assert all(cite(key) in text for key in QUESTIONS[question_id].source_keys)


def test_nothing_stored_says_so_and_offers_run_with_an_estimate(lab_dir):
    at = app_test(page_path("learned"))
    assert_no_exception(at)
    plan = question_plan("learned", QUESTIONS["learned"].default)
    assert "No answer for the preset's settings is stored" in verdict(at)
    button = at.button(key="lab_learned_go")
    assert button.label == f"Run to reproduce, {plan.estimate_text()}"
    assert plan.estimate_text().startswith("~") and plan.estimate_s > 0
    arms = at.dataframe[0].value
    assert list(arms["arm"]) == [v.label for v in QUESTIONS["learned"].variants]
    assert at.query_params["lab_learned_run"] == RunStore().run_id(
        QUESTIONS["learned"], QUESTIONS["learned"].default
    )
    assert "POSVIZ_LAB_MAX_STEPS" in all_text(at)


def test_arms_are_shown_by_family_and_where_positions_enter():
    """RoPE/ALiBi/T5 arms are not 'injection: input': each arm says where positions enter."""
    q = QUESTIONS["extrapolation"]
    frame = answer.arms_frame(q, q.default).set_index("arm")
    assert frame.loc["RoPE", "positions enter"] == "rotates queries and keys"
    assert frame.loc["ALiBi", "positions enter"] == "fixed bias on attention scores"
    assert frame.loc["T5 buckets", "positions enter"] == "learned bias per distance bucket"
    assert frame.loc["sinusoid", "positions enter"] == "added to the token embedding"
    assert frame.loc["RoPE", "positions"] == "RoPE"
    assert "causal mask" in frame.loc[q.variant("nope").label, "positions enter"]


# --------------------------------------------------------------------------- running


@pytest.mark.parametrize("question_id", ONE_PER_KIND)
def test_run_trains_stores_and_shows_the_answer(lab_dir, question_id):
    query = {f"{prefix(question_id)}seeds": "3"}  # not the stored preset: Run trains
    at = app_test(page_path(question_id), query=query)
    assert_no_exception(at)
    at = press_run_and_finish(at, f"{prefix(question_id)}go")
    run_id = at.query_params[f"{prefix(question_id)}run"]
    stored = RunStore(lab_dir).load(run_id)
    assert stored is not None and stored.config.seeds == 3
    assert answer.headline(stored)[:30] in verdict(at).replace("\\", "")
    assert len(at.dataframe[0].value) == len(stored.cells)
    assert "just trained" in all_text(at) or "read from the run store" in all_text(at)


def test_progress_is_one_count_across_every_arm_and_cell(lab_dir):
    """The live count runs once from 0 to the run's model-steps (not per arm), never back, and
    every arm's live loss is drawn under its label."""
    q = QUESTIONS["extrapolation"]
    plan = question_plan(q.id, q.default)
    live, seen = LiveProgress(plan), []

    def record(progress):
        live.update(progress)
        seen.append(live.view())

    run_question(q.id, store=RunStore(lab_dir), on_progress=record)
    done = [view.done for view in seen]
    assert done == sorted(done) and done[-1] == plan.model_steps
    assert {view.total for view in seen} == {plan.model_steps}
    assert f"of {plan.model_steps:,} in all" in seen[-1].text(plan)
    assert set(seen[-1].curves["variant"]) == {v.label for v in q.variants}
    assert plan.models == plan.instances * q.default.seeds


def test_the_page_shows_the_count_while_training(lab_dir, monkeypatch):
    gate = threading.Event()
    real = posviz.lab.run_question

    def slow(*args, on_progress=None, **kwargs):
        def report(progress):
            on_progress(progress)
            gate.set()

        return real(*args, on_progress=report, **kwargs)

    monkeypatch.setattr(posviz.lab, "run_question", slow)
    at = app_test(page_path("learned"), query={"lab_learned_steps": "3000"})
    at.button(key="lab_learned_go").click().run()
    assert gate.wait(WAIT_S)
    at.run()
    text = progress_text(at)
    assert "in all" in text or "Starting" in text, text
    at.button(key="lab_learned_stop").click().run()
    assert runs.wait_for_jobs(WAIT_S)


def test_queue_position_is_shown_while_another_run_holds_the_slot(lab_dir, monkeypatch):
    monkeypatch.setenv("POSVIZ_MAX_JOBS", "1")
    queued = threading.Event()
    original = runs.LabJob.on_progress

    def on_progress(self, progress):
        original(self, progress)
        if progress.queue_position:
            queued.set()

    monkeypatch.setattr(runs.LabJob, "on_progress", on_progress)
    at = app_test(page_path("learned"))
    with job_slot("lab"):  # someone else's run holds the only slot
        at.button(key="lab_learned_go").click().run()
        assert queued.wait(WAIT_S), "the run never reported waiting in the queue"
        at.run()
        assert "position 1 in the queue" in progress_text(at)
    assert runs.wait_for_jobs(WAIT_S)
    at.run()
    assert len(at.dataframe[0].value) == 8, progress_text(at)


def test_stop_button_stops_the_run_and_stores_nothing(lab_dir):
    at = app_test(page_path("learned"), query={"lab_learned_steps": "3000"})
    at.button(key="lab_learned_go").click().run()
    run_id = at.query_params["lab_learned_run"]
    at.button(key="lab_learned_stop").click().run()
    assert runs.wait_for_jobs(WAIT_S)
    at.run()
    assert_no_exception(at)
    assert runs.get_job(str(lab_dir), run_id).snapshot().state == runs.STOPPED
    assert not RunStore(lab_dir).exists(run_id)
    warnings = "\n".join(texts(at, "warning"))
    assert "Stop button was pressed" in warnings and "Nothing was stored" in warnings
    assert at.button(key="lab_learned_go")  # and it can be started again


# --------------------------------------------------------------------------- stored runs, links


def test_a_linked_run_and_its_cell_render_without_training(lab_dir, no_training):
    config = tiny(QUESTIONS["learned"].default, seeds=3)
    result = run_question("learned", config=config, store=RunStore(lab_dir))
    other = result.cells[-1]
    query = {"lab_learned_run": result.run_id, "lab_learned_cell": other.id}
    at = app_test(page_path("learned"), query=query)
    assert_no_exception(at)
    assert at.number_input(key="lab_learned_seeds").value == 3
    assert at.query_params["lab_learned_cell"] == other.id
    shown = "\n".join(texts(at, "markdown"))
    assert figures.short_setting(other, "init") in shown.replace("\\", "")
    numbers = at.dataframe[1].value  # the selected cell's comparisons
    assert list(numbers["difference"].round(6)) == [round(c.estimate, 6) for c in other.comparisons]
    assert all(line[:60] in all_text(at).replace("\\", "") for line in result.answer.splitlines())


def test_watch_the_table_form_slider_moves_through_snapshots(lab_dir, no_training):
    result = run_question("learned", store=RunStore(lab_dir))
    steps = [int(s) for s in result.snapshot_steps]
    at = app_test(page_path("learned"))
    assert "Watch the table form" in texts(at, "subheader")
    slider = at.select_slider(key="lab_learned_step")
    assert slider.value == steps[-1]
    slider.set_value(steps[0]).run()
    assert_no_exception(at)
    assert at.query_params["lab_learned_step"] == str(steps[0])
    spec = f"lab:{result.run_id}/learned/0/{steps[0]}"
    links = {
        link.proto.page: urllib.parse.parse_qs(link.proto.query_string)
        for link in at.main.get("page_link")
    }
    assert links["learned"] == {"lrn_a_src": ["lab"], "lrn_a_lab": [spec]}
    assert links["probing"] == {"prb_t_src": ["lab"], "prb_t_lab": [spec]}


def test_one_colour_per_arm_across_every_chart_of_a_page(lab_dir, no_training):
    run_question("rare_rows", store=RunStore(lab_dir))
    at = app_test(page_path("rare_rows"))
    colours: dict[str, set[str]] = {}

    def walk(node):
        if isinstance(node, dict):
            color = node.get("color")
            scale = color.get("scale", {}) if isinstance(color, dict) else {}
            if "domain" in scale and "range" in scale:  # a categorical (arm) scale, not a ramp
                for label, c in zip(color["scale"]["domain"], color["scale"]["range"], strict=True):
                    colours.setdefault(label, set()).add(c)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    specs = chart_specs(at)
    assert len(specs) >= 4
    for spec in specs:
        walk(spec)
    labels = {v.label for v in QUESTIONS["rare_rows"].variants}
    assert labels <= set(colours)
    assert all(len(c) == 1 for c in colours.values()), colours
    assert len({next(iter(colours[label])) for label in labels}) == len(labels)


# --------------------------------------------------------------------------- bad input


def test_bad_link_values_get_messages_not_tracebacks(lab_dir, warm, monkeypatch):
    monkeypatch.setenv("POSVIZ_LAB_WARM_DIR", str(warm[0]))
    query = {
        "lab_learned_steps": "abc",
        "lab_learned_width": "1e400",
        "lab_learned_eval": "12,x,-3",
        "lab_learned_run": "../../etc/passwd",
        "lab_learned_cell": "<script>",
    }
    at = app_test(page_path("learned"), query=query)
    assert_no_exception(at)
    warnings = "\n".join(texts(at, "warning"))
    assert "lab_learned_steps" in warnings
    assert "not a lab run id" in warnings
    assert "Ignored x" in warnings and "3: enter whole numbers from 2" in warnings
    assert "lab_learned_cell" in warnings and "not a cell of this run" in warnings
    assert at.query_params["lab_learned_cell"] == warm[1]["learned"].default_cell.id


def test_heads_not_dividing_width_names_the_setting_above_everything(lab_dir):
    at = app_test(page_path("learned"), query={"lab_learned_width": "32", "lab_learned_heads": "3"})
    assert_no_exception(at)
    errors = "\n".join(texts(at, "error"))
    assert "heads=3" in errors and "width=32" in errors
    assert "cannot run" in verdict(at)
    assert not [b for b in at.button if b.key == "lab_learned_go"]


def test_unknown_run_id_says_so_and_offers_run(lab_dir):
    at = app_test(page_path("learned"), query={"lab_learned_run": "0123456789abcdef"})
    assert_no_exception(at)
    assert any("No stored run" in i for i in texts(at, "info"))
    assert at.button(key="lab_learned_go")


def test_run_of_another_question_is_refused(lab_dir, no_training):
    result = run_question("concat", store=RunStore(lab_dir))
    at = app_test(page_path("learned"), query={"lab_learned_run": result.run_id})
    assert_no_exception(at)
    assert any("another question" in w for w in texts(at, "warning"))


def test_step_that_has_no_snapshot_falls_back_with_a_message(lab_dir, no_training):
    result = run_question("learned", store=RunStore(lab_dir))
    at = app_test(page_path("learned"), query={"lab_learned_step": "999999"})
    assert_no_exception(at)
    last = int(result.snapshot_steps[-1])
    assert any("999999" in w and f"Using {last}" in w for w in texts(at, "warning"))
    assert at.select_slider(key="lab_learned_step").value == last


def test_corrupted_store_entry_is_reported_and_retrained(lab_dir):
    result = run_question("learned", store=RunStore(lab_dir))
    (lab_dir / result.run_id / "result.json").write_text("{not json", encoding="utf-8")
    at = app_test(page_path("learned"))
    assert_no_exception(at)
    assert any("corrupted" in w for w in texts(at, "warning"))
    at = press_run_and_finish(at, "lab_learned_go")
    assert RunStore(lab_dir).load(result.run_id) is not None
    assert len(at.dataframe[0].value) == len(result.cells)
    assert list((lab_dir / ".corrupt").iterdir()), "the bad entry was not kept aside"


def test_a_diverged_run_says_so_and_names_the_setting(lab_dir, tmp_path, no_training):
    trained = run_question("learned", store=RunStore(tmp_path / "elsewhere"))
    seeds = trained.config.seeds
    inst = dataclasses.replace(trained.instances["sinusoid"], diverged_at=(3,) * seeds)
    diverged = dataclasses.replace(trained, instances={**trained.instances, "sinusoid": inst})
    RunStore(lab_dir).save(diverged)
    at = app_test(page_path("learned"))
    assert_no_exception(at)
    warning = "\n".join(texts(at, "warning"))
    assert "diverged" in warning and "fixed sinusoid" in warning and "Learning rate" in warning


def test_lab_pages_do_not_import_torch_for_a_stored_run():
    """Rendering a stored run reads JSON + .npy; only training loads torch."""
    code = "import sys, posviz.ui.lab, posviz.ui.lab_sections; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- liveness


def _job() -> runs.LabJob:
    plan = question_plan("learned", QUESTIONS["learned"].default)
    return runs.LabJob("0" * 16, plan, "/x")


def test_progress_reports_drop_non_finite_losses_and_unknown_ids():
    job = _job()
    job.on_progress(posviz.lab.Progress(3, 10, {"learned": 1.5, "sinusoid": float("nan")}, 2, 6))
    job.on_progress(posviz.lab.Progress(4, 10, {"learned.kback": 1.2}, 3, 5))
    view = job.snapshot()
    assert view.state == runs.RUNNING and view.live.fraction == pytest.approx(3 / 8)
    assert view.live.curves.to_dict("list") == {
        "variant": ["learned table"], "step": [3], "loss": [1.5]
    }  # fmt: skip
    job.on_progress(posviz.lab.Progress(0, 10, {}, 0.5, float("nan"), "", 3))
    assert job.snapshot().live.queue_position == 3
    assert "position 3 in the queue" in job.snapshot().live.text(job.plan)


# --------------------------------------------------------------------------- the index and cards


def test_index_answers_every_question_from_the_store(lab_dir, warm, monkeypatch, no_training):
    at = app_test("pages/lab.py")
    assert_no_exception(at)
    assert f"None of the {len(QUESTIONS)} questions is answered on this server yet" in verdict(at)
    linked = {p.proto.page for p in at.main.get("page_link")}
    assert all(f"lab_{qid}" in linked for qid in QUESTIONS)
    monkeypatch.setenv("POSVIZ_LAB_WARM_DIR", str(warm[0]))
    clear_caches()
    at = app_test("pages/lab.py")
    assert f"All {len(QUESTIONS)} questions are answered on this server" in verdict(at)
    shown = all_text(at).replace("\\", "")
    assert all(answer.plain_answer(r) in shown for r in warm[1].values())  # each in one line


def test_while_the_first_start_computes_the_pages_say_so_never_0_answered(lab_dir):
    """With the warm-up computing (here: a study that waits for this test, then the learned
    preset's, queued), /lab, the paper checks and the queued question's page lead with a verdict
    saying the answers are being computed, then its progress line."""
    release, store = threading.Event(), RunStore(lab_dir)
    studies = [
        runs.WarmStudy(
            q.title,
            "default",
            store.run_id(q, q.default),
            question_plan(q.id, q.default),
            runs._work(work),
        )
        for q, work in (
            (QUESTIONS["concat"], lambda job: release.wait(WAIT_S)),
            (QUESTIONS["learned"], lambda job: None),  # queued behind it; stores nothing
        )
    ]
    warmup = runs.start_warmup(str(lab_dir), studies)
    try:
        said = {
            "pages/lab.py": "being computed now",
            "pages/lab_papers.py": "computed on this server now",
            page_path("learned"): "being computed on this server now, with every other",
        }
        for page, words in said.items():
            at = app_test(page)
            assert_no_exception(at)
            assert words in verdict(at), verdict(at)
            assert "Computing the stored answers: 0 of 2" in progress_text(at)
            assert "0 answered" not in all_text(at) and "None of the" not in all_text(at)
            assert "Not computed" not in all_text(at)  # each question: being computed, in turn
    finally:
        release.set()
        warmup.thread.join(WAIT_S)
        runs._WARMUPS.pop(str(lab_dir), None)
    at = app_test("pages/lab.py")  # done (nothing stored here): no progress, a plain count
    assert not progress_text(at) and "questions is answered on this server yet" in verdict(at)


def test_paper_checks_page_has_a_card_per_check_and_runs_one(lab_dir):
    at = app_test("pages/lab_papers.py")
    assert_no_exception(at)
    assert f"None of the {len(PAPER_CHECKS)} paper checks has run" in verdict(at)
    text = all_text(at).replace("\\", "")
    for check in PAPER_CHECKS.values():
        assert cite(check.reference) in all_text(at)
        assert check.criterion[:60] in text
        plan = card_plan(check.id)
        assert at.button(key=f"lab_papers_{check.id}_go").label.endswith(plan.estimate_text())
    at = press_run_and_finish(at, "lab_papers_haviv_2022_go")
    card = RunStore(lab_dir).load_card(card_run_id(PAPER_CHECKS["haviv_2022"]))
    assert card is not None
    assert card.verdict in verdict(at).replace("\\", "") or "1 cannot be judged" in verdict(at)
    assert cards.differ_text(card)[:40] in all_text(at).replace("\\", "")


def test_what_it_would_take_to_differ_names_the_closest_condition(lab_dir):
    card = run_paper_check("press_2022", store=RunStore(lab_dir))
    close = Condition("A rises above 1.05× (whole interval): …", True, {"low": 0.06, "high": 0.2,
                      "threshold": 0.0488, "estimate": 0.1})  # fmt: skip
    far = Condition("B stays flat (whole interval): …", True, {"low": -0.5, "high": -0.3,
                    "threshold": 0.0488, "estimate": -0.4})  # fmt: skip
    agreeing = dataclasses.replace(card, verdict=AGREES, agrees=True, conditions=(far, close))
    text = cards.differ_text(agreeing)
    assert "Closest to failing: A rises above 1.05×" in text and "1.062×" in text
    judged = dataclasses.replace(card, verdict="cannot be judged", agrees=None, reason="why")
    assert cards.differ_text(judged) == "It cannot be judged yet: why"


# --------------------------------------------------------------------------- figures


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_every_figure_names_its_axes_clips_accuracy_and_wraps_labels(warm, question_id):
    result = warm[1][question_id]
    for cell in (result.default_cell, result.cells[-1]):
        shown = [figures.hero(result, cell.id), *figures.evidence(result, cell.id)]
        for item in shown:
            spec = item.figure.chart.to_dict()
            for layer in spec.get("layer", [spec]):
                for channel in ("x", "y"):
                    enc = layer.get("encoding", {}).get(channel, {})
                    if enc.get("type") == "quantitative" and "field" in enc and "title" in enc:
                        assert enc["title"], (item.key, channel)
                legend = layer.get("encoding", {}).get("color", {}).get("legend")
                if legend:
                    assert legend["labelLimit"] == 0 and "datum.label ===" in legend["labelExpr"]
            data = item.figure.data
            for column in ("low", "high"):
                if column in data and item.key in ("accuracy", "position", "ranking"):
                    values = data[column].dropna()
                    assert ((values >= 0) & (values <= 1)).all(), (item.key, column)


def test_a_longer_budget_or_held_out_cell_draws_from_its_own_training(warm) -> None:
    """A cell merged in from the panel part reads the step arrays of the training it came from
    (the longer budget trains 18× the steps, past every checkpoint of the sweep's own)."""
    from posviz.lab.studies.summarise import with_panel

    root, results = warm
    panel = run_question("induction", store=RunStore(root), part="panel")
    joined = with_panel(results["induction"], panel)
    steps = joined.default_cell.steps
    longest = joined.cell("induction.small.x18")
    assert longest.group == "long" and longest.steps == 18 * steps
    held_out = next(c for c in joined.cells if c.group == "lr_x3")
    for cell in (longest, held_out):
        shown = [figures.hero(joined, cell.id), *figures.evidence(joined, cell.id)]
        assert shown and all(item.figure.data is not None for item in shown)
    assert figures.curves_frame(joined, longest)["step"].max() > 3 * steps  # the long run's
