"""The position lab's pages in AppTest.

Every question renders; Run trains into a temporary store and shows the answer; a stored run
renders from its URL without training; Stop stops; a run nobody watches stops; bad links and bad
settings get messages; corrupted and diverged runs say so.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import urllib.parse

import pytest
from conftest import app_test, assert_no_exception

import posviz.lab
from posviz.jobs import job_slot
from posviz.lab import QUESTIONS, RunStore, run_question
from posviz.lab.answer import metric_name
from posviz.references import cite
from posviz.ui import compat, lab_runs
from posviz.ui.cache import clear_caches
from posviz.ui.lab import page_path, prefix

#: small enough to train in a second or two per question on 2 cores.
TINY = {"seeds": 2, "steps": 4, "width": 8, "heads": 2, "layers": 1, "batch": 4, "eval_batch": 8}
WAIT_S = 180  # join budget for a worker thread (a loaded CI machine is slow)


def tiny_query(question_id: str, **extra: object) -> dict[str, str]:
    """Link parameters of a tiny run of ``question_id`` (page widgets read them on first run)."""
    values = {**TINY, **extra}
    return {f"{prefix(question_id)}{name}": str(value) for name, value in values.items()}


def tiny_config(question_id: str, **extra: object):
    return dataclasses.replace(QUESTIONS[question_id].default, **{**TINY, **extra})


def texts(at, kind: str) -> list[str]:
    return [element.value for element in getattr(at, kind)]


def all_text(at) -> str:
    kinds = ("markdown", "caption", "info", "warning", "error", "subheader", "title")
    return "\n".join(str(v) for kind in kinds for v in texts(at, kind))


@pytest.fixture
def lab_dir(tmp_path, monkeypatch):
    """A private run store; every worker a test starts is joined before the next test."""
    root = tmp_path / "lab"
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(root))
    # AppTest runs no fragment on its timer, so no heartbeat arrives while a test waits for a
    # worker; liveness itself is tested below with the timeout set explicitly.
    monkeypatch.setattr(lab_runs, "HEARTBEAT_TIMEOUT_S", 3600.0)
    clear_caches()
    yield root
    assert lab_runs.wait_for_jobs(WAIT_S), "a lab worker thread outlived its test"


@pytest.fixture
def no_training(monkeypatch):
    """Make any attempt to train fail the test (the page must read the store instead)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the page started training for a stored run")

    monkeypatch.setattr(posviz.lab, "run_question", refuse)
    monkeypatch.setattr(lab_runs, "start_job", refuse)


def progress_text(at) -> str:
    return " ".join(bar.proto.text for bar in at.get("progress"))


def press_run_and_finish(at, question_id: str):
    at.button(key=f"{prefix(question_id)}go").click().run()
    assert_no_exception(at)
    assert any(word in progress_text(at) for word in ("Starting", "Training", "Waiting")) or (
        "Answer" in texts(at, "subheader")  # a very fast run may already be done
    )
    assert lab_runs.wait_for_jobs(WAIT_S)
    at.run()
    assert_no_exception(at)
    return at


# --------------------------------------------------------------------------- rendering


def test_index_lists_every_question_with_its_page(lab_dir):
    at = app_test("pages/lab.py")
    assert_no_exception(at)
    assert texts(at, "title") == ["Position lab"]
    links = {link.proto.page for link in at.get("page_link")}
    for question_id, question in QUESTIONS.items():
        assert f"lab_{question_id}" in links  # the page's url_path
        assert question.question in all_text(at)
    assert "No runs stored" in all_text(at)


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_question_page_states_the_question_sources_variants_and_caps(lab_dir, question_id):
    question = QUESTIONS[question_id]
    at = app_test(page_path(question_id))
    assert_no_exception(at)
    assert not at.error, texts(at, "error")
    assert texts(at, "title") == [question.title]
    text = all_text(at)
    assert question.question in text
    for key in question.source_keys:
        assert cite(key) in text
    assert "POSVIZ_LAB_MAX_STEPS" in text and "POSVIZ_LAB_MAX_WIDTH" in text
    shown = at.dataframe[0].value
    assert list(shown["variant"]) == [v.label for v in question.variants]
    assert at.button(key=f"{prefix(question_id)}go").label == "Run"
    # the run id of these settings is in the URL before anything is trained
    config = question.default
    assert at.query_params[f"{prefix(question_id)}run"] == RunStore().run_id(question_id, config)


# --------------------------------------------------------------------------- running


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_run_trains_stores_and_shows_the_answer(lab_dir, question_id):
    at = app_test(page_path(question_id), query=tiny_query(question_id))
    assert_no_exception(at)
    at = press_run_and_finish(at, question_id)
    assert {"Answer", "Results"} <= set(texts(at, "subheader"))
    run_id = at.query_params[f"{prefix(question_id)}run"]
    stored = RunStore(lab_dir).load(run_id)
    assert stored is not None and stored.config == tiny_config(question_id)
    assert all(line in all_text(at) for line in stored.answer.splitlines())
    table = at.dataframe[1].value  # after the variants table: the results table
    assert metric_name(QUESTIONS[question_id], stored.config.eval_lengths) in set(table["metric"])
    assert {r.label for r in stored.summary} == set(table["variant"])


def test_progress_is_shown_while_training(lab_dir, monkeypatch):
    """The page shows the worker's progress (step, loss per variant) from the shared job."""
    seen = []
    real = posviz.lab.run_question

    def observed(*args, on_progress=None, **kwargs):
        def record(progress):
            seen.append(progress)
            on_progress(progress)

        return real(*args, on_progress=record, **kwargs)

    monkeypatch.setattr(posviz.lab, "run_question", observed)
    at = app_test(page_path("learned"), query=tiny_query("learned"))
    at.button(key="lab_learned_go").click().run()
    assert lab_runs.wait_for_jobs(WAIT_S)
    assert seen, "the trainer reported no progress"
    job = lab_runs.get_job(str(lab_dir), at.query_params["lab_learned_run"])
    view = job.snapshot()
    assert view.step == seen[-1].step and view.total_steps == seen[-1].total_steps
    assert set(view.curves) == {k for p in seen for k in p.loss}


def test_queue_position_is_shown_while_another_run_holds_the_slot(lab_dir, monkeypatch):
    monkeypatch.setenv("POSVIZ_MAX_JOBS", "1")
    queued = threading.Event()
    original = lab_runs.LabJob.on_wait

    def on_wait(self, position):
        original(self, position)
        queued.set()

    monkeypatch.setattr(lab_runs.LabJob, "on_wait", on_wait)
    at = app_test(page_path("learned"), query=tiny_query("learned"))
    with job_slot("lab"):  # someone else's run holds the only slot
        at.button(key="lab_learned_go").click().run()
        assert queued.wait(WAIT_S), "the run never reported waiting in the queue"
        at.run()
        assert "position 1 in the queue" in progress_text(at)
    assert lab_runs.wait_for_jobs(WAIT_S)
    at.run()
    assert "Answer" in texts(at, "subheader"), (all_text(at), progress_text(at))


def test_stored_run_renders_from_its_url_without_training(lab_dir, monkeypatch, no_training):
    config = tiny_config("learned")
    result = run_question("learned", config=config, store=RunStore(lab_dir))
    # The link carries only the run id: the settings come from the stored run.
    at = app_test(page_path("learned"), query={"lab_learned_run": result.run_id})
    assert_no_exception(at)
    assert not at.error, texts(at, "error")
    assert "Answer" in texts(at, "subheader")
    assert all(line in all_text(at) for line in result.answer.splitlines())
    assert at.number_input(key="lab_learned_steps").value == config.steps
    assert not [b for b in at.button if b.key == "lab_learned_go"]
    assert lab_runs.get_job(str(lab_dir), result.run_id) is None
    assert "read from the run store (no training)" in all_text(at)


def test_watch_the_table_form_slider_moves_through_snapshots(lab_dir, no_training):
    result = run_question("learned", config=tiny_config("learned"), store=RunStore(lab_dir))
    steps = [int(s) for s in result.snapshot_steps]
    at = app_test(page_path("learned"), query={"lab_learned_run": result.run_id})
    assert "Watch the table form" in texts(at, "subheader")
    slider = at.select_slider(key="lab_learned_step")
    assert slider.value == steps[-1]
    slider.set_value(steps[0]).run()
    assert_no_exception(at)
    assert at.query_params["lab_learned_step"] == str(steps[0])
    spec = f"lab:{result.run_id}/learned/0/{steps[0]}"
    links = {
        link.proto.page: urllib.parse.parse_qs(link.proto.query_string)
        for link in at.get("page_link")
    }
    assert links["learned"] == {"lrn_a_src": ["lab"], "lrn_a_lab": [spec]}
    assert links["probing"] == {"prb_t_src": ["lab"], "prb_t_lab": [spec]}


def test_stop_button_stops_the_run_and_stores_nothing(lab_dir):
    query = tiny_query("learned", steps=3000)
    at = app_test(page_path("learned"), query=query)
    at.button(key="lab_learned_go").click().run()
    run_id = at.query_params["lab_learned_run"]
    at.button(key="lab_learned_stop").click().run()
    assert lab_runs.wait_for_jobs(WAIT_S)
    at.run()
    assert_no_exception(at)
    assert lab_runs.get_job(str(lab_dir), run_id).snapshot().state == lab_runs.STOPPED
    assert not RunStore(lab_dir).exists(run_id)
    warnings = texts(at, "warning")
    assert any("Stop button was pressed" in w for w in warnings), warnings
    assert any("Nothing was stored" in w for w in warnings)
    assert at.button(key="lab_learned_go")  # and it can be started again


@pytest.mark.parametrize(
    ("elapsed", "eta", "expected"),
    [
        (3.0, 1.0, 0.75),
        (0.0, 0.0, 0.0),
        (5.0, None, 0.0),
        (5.0, float("nan"), 0.0),
        (5.0, float("inf"), 0.0),
        (float("nan"), 2.0, 0.0),
        (5.0, -9.0, 0.0),
        (5.0, 0.0, 1.0),
    ],
)
def test_progress_fraction_is_always_a_number_in_0_1(elapsed, eta, expected):
    from posviz.ui.lab import progress_fraction

    assert progress_fraction(elapsed, eta) == pytest.approx(expected)


# --------------------------------------------------------------------------- liveness


def _job() -> lab_runs.LabJob:
    return lab_runs.LabJob(run_id="0" * 16, question_id="learned", config=None, store_root="/x")


def test_a_watched_job_goes_on():
    job = _job()
    job.beat("session-a")
    assert not job.should_stop()


def test_a_job_nobody_watches_stops(monkeypatch):
    job = _job()
    job.beat("session-a")
    monkeypatch.setattr(lab_runs, "HEARTBEAT_TIMEOUT_S", 0.0)  # the heartbeat is now too old
    assert job.should_stop()
    assert "nobody was watching" in job.snapshot().message


def test_a_job_whose_session_closed_stops_at_once(monkeypatch):
    class Runtime:
        @staticmethod
        def is_active_session(session_id: str) -> bool:
            return session_id != "closed"

    monkeypatch.setattr(compat.st.runtime, "exists", lambda: True)
    monkeypatch.setattr(compat.st.runtime, "get_instance", lambda: Runtime)
    job = _job()
    job.beat("closed")
    assert job.should_stop()
    job = _job()
    job.beat("open")
    assert not job.should_stop()


def test_one_of_two_watchers_keeps_a_shared_run_alive(monkeypatch):
    class Runtime:
        @staticmethod
        def is_active_session(session_id: str) -> bool:
            return session_id == "still-here"

    monkeypatch.setattr(compat.st.runtime, "exists", lambda: True)
    monkeypatch.setattr(compat.st.runtime, "get_instance", lambda: Runtime)
    job = _job()
    job.beat("gone")
    job.beat("still-here")
    assert not job.should_stop()


def test_progress_copies_losses_and_drops_non_finite():
    job = _job()
    progress = posviz.lab.Progress(
        step=3,
        total_steps=10,
        loss={"a": 1.5, "b": float("nan")},
        elapsed_s=2.0,
        eta_s=5.0,
        variant="a",
    )
    job.on_progress(progress)
    view = job.snapshot()
    assert (view.state, view.step, view.total_steps, view.variant) == ("running", 3, 10, "a")
    assert view.curves == {"a": [(3, 1.5)]}


def test_a_queued_progress_report_is_a_queue_position():
    job = _job()
    job.on_progress(posviz.lab.Progress(0, 10, {}, 0.5, float("nan"), "", 3))
    view = job.snapshot()
    assert (view.state, view.queue_position, view.eta_s) == (lab_runs.QUEUED, 3, None)


def test_queue_position_is_reported():
    job = _job()
    job.on_wait(2)
    view = job.snapshot()
    assert (view.state, view.queue_position) == (lab_runs.QUEUED, 2)
    from posviz.ui.lab import _progress_text

    assert "position 2" in _progress_text(view)


# --------------------------------------------------------------------------- bad input


def test_bad_link_values_get_messages_not_tracebacks(lab_dir):
    query = {
        "lab_learned_steps": "abc",
        "lab_learned_width": "1e400",
        "lab_learned_eval": "12,x,-3",
        "lab_learned_run": "../../etc/passwd",
    }
    at = app_test(page_path("learned"), query=query)
    assert_no_exception(at)
    warnings = "\n".join(texts(at, "warning"))
    assert "lab_learned_steps" in warnings
    assert "not a lab run id" in warnings
    assert "Ignored x" in warnings and "3: enter whole numbers from 2" in warnings
    assert at.button(key="lab_learned_go")


def test_heads_not_dividing_width_names_the_setting(lab_dir):
    at = app_test(page_path("learned"), query={"lab_learned_width": "32", "lab_learned_heads": "3"})
    assert_no_exception(at)
    errors = "\n".join(texts(at, "error"))
    assert "heads=3" in errors and "width=32" in errors
    assert not [b for b in at.button if b.key == "lab_learned_go"]


def test_unknown_run_id_says_so_and_offers_run(lab_dir):
    at = app_test(page_path("learned"), query={"lab_learned_run": "0123456789abcdef"})
    assert_no_exception(at)
    assert any("No stored run" in i for i in texts(at, "info"))
    assert at.button(key="lab_learned_go")


def test_run_of_another_question_is_refused(lab_dir, no_training):
    result = run_question("concat", config=tiny_config("concat"), store=RunStore(lab_dir))
    at = app_test(page_path("learned"), query={"lab_learned_run": result.run_id})
    assert_no_exception(at)
    assert any("another question" in w for w in texts(at, "warning"))


def test_step_that_has_no_snapshot_falls_back_with_a_message(lab_dir, no_training):
    result = run_question("learned", config=tiny_config("learned"), store=RunStore(lab_dir))
    query = {"lab_learned_run": result.run_id, "lab_learned_step": "999999"}
    at = app_test(page_path("learned"), query=query)
    assert_no_exception(at)
    last = int(result.snapshot_steps[-1])
    assert any(
        "999999" in w and f"0 … {last}" in w and f"Using {last}" in w for w in texts(at, "warning")
    )
    assert at.select_slider(key="lab_learned_step").value == int(result.snapshot_steps[-1])


def test_corrupted_store_entry_is_reported_and_retrained(lab_dir):
    config = tiny_config("learned")
    result = run_question("learned", config=config, store=RunStore(lab_dir))
    (lab_dir / result.run_id / "result.json").write_text("{not json", encoding="utf-8")
    # a corrupted entry cannot say what its settings were: the link carries them too
    query = {**tiny_query("learned"), "lab_learned_run": result.run_id}
    at = app_test(page_path("learned"), query=query)
    assert_no_exception(at)
    assert any("corrupted" in w for w in texts(at, "warning"))
    assert at.query_params["lab_learned_run"] == result.run_id
    at = press_run_and_finish(at, "learned")
    assert "Answer" in texts(at, "subheader")
    assert RunStore(lab_dir).load(result.run_id) is not None
    assert list((lab_dir / ".corrupt").iterdir()), "the bad entry was not kept aside"


def test_a_diverged_run_says_so_and_names_the_setting(lab_dir, tmp_path, no_training):
    config = tiny_config("learned")
    trained = run_question("learned", config=config, store=RunStore(tmp_path / "elsewhere"))
    inst = dataclasses.replace(trained.instances["sinusoid"], diverged_at=(3,) * config.seeds)
    diverged = dataclasses.replace(trained, instances={**trained.instances, "sinusoid": inst})
    RunStore(lab_dir).save(diverged)
    at = app_test(page_path("learned"), query={"lab_learned_run": diverged.run_id})
    assert_no_exception(at)
    warning = "\n".join(texts(at, "warning"))
    assert "diverged" in warning and "fixed sinusoid" in warning and "Learning rate" in warning


def test_lab_pages_do_not_import_torch_for_a_stored_run(lab_dir):
    """Rendering a stored run reads JSON + .npy; only training loads torch."""
    code = "import sys, posviz.ui.lab; print('torch' in sys.modules)"
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_run_store_json_is_what_the_page_shows(lab_dir, no_training):
    """The results table on the page is the stored summary (no recomputation on render)."""
    result = run_question("learned", config=tiny_config("learned"), store=RunStore(lab_dir))
    data = json.loads((lab_dir / result.run_id / "result.json").read_text(encoding="utf-8"))
    at = app_test(page_path("learned"), query={"lab_learned_run": result.run_id})
    table = at.dataframe[1].value
    summary = data["cells"][0]["summary"]  # the preset's own cell comes first
    stored_means = sorted(round(r["mean"], 6) for r in summary if r["mean"] is not None)
    shown_means = sorted(round(float(m), 6) for m in table["mean"] if m == m)
    assert shown_means == stored_means


# --------------------------------------------------------------------------- chart builders


def _layers(chart) -> list[dict]:
    spec = chart.to_dict()
    return spec.get("layer", [spec])


def test_metric_chart_draws_the_interval_and_marks_the_control():
    import pandas as pd

    from posviz.charts.lab import metric_chart

    frame = pd.DataFrame(
        {"variant": ["a", "b"], "mean": [0.5, 0.9], "low": [0.4, 0.8], "high": [0.6, 1.0]}
    ).assign(role=["variant", "control"])
    bars, points = _layers(metric_chart(frame, metric="accuracy"))
    assert (bars["encoding"]["y"]["field"], bars["encoding"]["y2"]["field"]) == ("low", "high")
    assert points["encoding"]["y"]["field"] == "mean"
    assert points["encoding"]["shape"]["field"] == "role"
    with pytest.raises(ValueError, match="missing"):
        metric_chart(frame.drop(columns="low"), metric="accuracy")


def test_band_chart_marks_the_longest_training_length():
    import pandas as pd

    from posviz.charts.lab import band_chart

    frame = pd.DataFrame(
        {"variant": ["a"] * 2, "length": [16, 32], "mean": [1.0, 0.5], "low": [0.9, 0.4]}
    ).assign(high=[1.0, 0.6])
    layers = _layers(band_chart(frame, x="length", x_title="n", metric="acc", rule_at=16))
    rule = layers[-1]
    assert rule["mark"]["type"] == "rule" and rule["encoding"]["x"]["field"] == "length"
    assert len(_layers(band_chart(frame, x="length", x_title="n", metric="acc"))) == 2


def test_step_score_chart_keeps_a_perfect_score_on_the_axis():
    import pandas as pd

    from posviz.charts.lab import step_score_chart

    frame = pd.DataFrame({"variant": ["a", "a"], "step": [0, 10], "score": [-0.1, -0.05]})
    line, rule = _layers(step_score_chart(frame, score="R²", current=10, best=1.0))
    assert line["encoding"]["y"]["scale"]["domainMax"] == 1.0
    assert rule["mark"]["type"] == "rule"


def test_landing_page_sends_every_lab_question_to_its_page() -> None:
    from conftest import app_test, assert_no_exception

    from posviz.lab import QUESTIONS

    at = app_test("pages/home.py")
    assert_no_exception(at)
    linked = {link.proto.page for link in at.get("page_link")}
    assert {f"lab_{question_id}" for question_id in QUESTIONS} <= linked
