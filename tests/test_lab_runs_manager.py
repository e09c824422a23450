"""The lab's runs manager (posviz.lab_jobs): a started run finishes and is stored whoever
watches it, Stop stops it, the first start's warm-up stores every study it is given, and the
estimates follow the pace measured on this machine. Tiny configs: each run takes seconds."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from posviz import lab_jobs as runs
from posviz.lab import QUESTIONS, RunStore
from posviz.lab.present import live
from posviz.lab.present.live import question_plan
from posviz.lab.studies.questions import QuestionStudy

WAIT_S = 300.0


def _tiny(question_id: str, **changes):
    base = QUESTIONS[question_id].default
    return replace(
        base, **{"steps": 4, "width": 16, "batch": 8, "eval_batch": 16, "seeds": 2, **changes}
    )


def _start(root: Path, config, question_id: str = "learned") -> runs.LabJob:
    q = QUESTIONS[question_id]
    run_id = QuestionStudy(q, config).run_id
    return runs.start_job(
        run_id, question_plan(q.id, config), store_root=str(root),
        work=runs.question_work(q.id, config),
    )  # fmt: skip


@pytest.fixture
def pace(monkeypatch):
    """A private measured pace (no other test's run leaks into these estimates)."""
    fresh = live._Pace()
    monkeypatch.setattr(live, "PACE", fresh)
    return fresh


@pytest.mark.slow
def test_a_run_nobody_watches_finishes_and_is_stored_for_the_next_visitor(tmp_path, pace) -> None:
    """No session ever beats for it (its tab closed at once): it still trains, stores, and a
    later visitor of the same settings gets the stored answer from the store."""
    config = _tiny("learned")
    job = _start(tmp_path, config)
    assert not job.should_stop()  # no watcher is no reason to stop
    job.thread.join(WAIT_S)
    view = job.snapshot()
    assert view.state == runs.DONE, view.message
    store = RunStore(tmp_path)
    assert store.exists(job.run_id) and store.load(job.run_id).answer == view.result.answer
    again = _start(tmp_path, config)  # the next visitor presses Run: the store answers at once
    again.thread.join(WAIT_S)
    assert again.snapshot().result.wall_s == view.result.wall_s


def test_stop_stops_a_run_and_nothing_is_stored(tmp_path, pace) -> None:
    import posviz.lab

    q, config = QUESTIONS["learned"], _tiny("learned", steps=200)
    trained = threading.Event()

    def train(job: runs.LabJob):
        def report(progress) -> None:
            job.on_progress(progress)
            if not progress.queue_position:
                trained.set()  # it trains: now press Stop

        return posviz.lab.run_question(
            q.id, config=config, store=RunStore(job.store_root), on_progress=report,
            should_stop=job.should_stop,
        )  # fmt: skip

    job = runs.start_job(
        QuestionStudy(q, config).run_id, question_plan(q.id, config), store_root=str(tmp_path),
        work=runs._work(train),
    )  # fmt: skip
    assert trained.wait(WAIT_S)
    assert job.stoppable  # a visitor's run: its page shows Stop
    job.stop()
    job.thread.join(WAIT_S)
    view = job.snapshot()
    assert view.state == runs.STOPPED and "Stop button" in view.message, view.message
    assert not RunStore(tmp_path).exists(job.run_id)


def test_the_warm_up_stores_every_study_cheapest_first_and_says_how_far_it_is(
    tmp_path, pace
) -> None:
    studies = []
    for question_id in ("learned", "concat"):
        q, config = QUESTIONS[question_id], _tiny(question_id)
        studies.append(
            runs.WarmStudy(
                q.title,
                "default",
                QuestionStudy(q, config).run_id,
                question_plan(q.id, config),
                runs.question_work(q.id, config),
            )
        )
    warmup = runs.Warmup(str(tmp_path), studies)
    before = warmup.view()
    assert (before.stored, before.total) == (0, 2) and before.pending == {s.run_id for s in studies}
    assert "Computing the stored answers: 0 of 2, about" in before.text()
    warmup.thread.start()
    warmup.thread.join(WAIT_S)
    after = warmup.view()
    assert (after.stored, after.total, after.failed, after.text()) == (2, 2, {}, "")
    store = RunStore(tmp_path)
    assert all(store.exists(s.run_id) for s in studies)
    # the warm-up's answers are everyone's: no visitor gets a Stop button for them
    assert not any(runs.get_job(str(tmp_path), s.run_id).stoppable for s in studies)


def test_the_real_warm_up_covers_every_default_answer_and_paper_check() -> None:
    from posviz.lab.studies.papers import PAPER_CHECKS

    studies = runs.default_studies()
    defaults = [s for s in studies if s.part == "default"]
    assert len(defaults) == len(QUESTIONS) + len(PAPER_CHECKS)
    # every question before any paper check (the 5-minute goal is the questions'), each group
    # cheapest first, the panels last
    questions, checks = defaults[: len(QUESTIONS)], defaults[len(QUESTIONS) :]
    assert all(not s.title.startswith("paper check") for s in questions)
    assert all(s.title.startswith("paper check") for s in checks)
    for group in (questions, checks):
        assert [s.plan.estimate_s for s in group] == sorted(s.plan.estimate_s for s in group)
    assert studies[: len(defaults)] == defaults
    store = RunStore()
    expected = {store.run_id(q, q.default) for q in QUESTIONS.values()}
    assert expected <= {s.run_id for s in defaults}


def test_before_any_run_the_machine_is_measured_by_a_probe_and_its_least_reading_kept(
    monkeypatch,
) -> None:
    """A machine 1.6× faster than the one the work model was fitted on read every first
    estimate 1.6× high; the probe says how fast this one is. A probe slowed by other work is
    outvoted by a later, quicker one; one outside 0.25–4× the reference is clamped."""
    real = live._probe()
    assert 0.0 < real < 1.0  # a few milliseconds of numpy, no torch
    readings = iter([2.0, 0.5, 1.5, 100.0])
    monkeypatch.setattr(live, "_probe", lambda: next(readings) * live.PROBE_REF_S)
    monkeypatch.setattr(live, "_SPEED", [])

    def later() -> float:  # the last probe, PROBE_EVERY_S ago
        live._SPEED[1] -= live.PROBE_EVERY_S
        return live.machine_factor()

    assert live.machine_factor() == pytest.approx(2.0)
    assert live.machine_factor() == pytest.approx(2.0)  # within PROBE_EVERY_S: not probed again
    assert later() == pytest.approx(0.5)  # a quicker reading wins
    assert later() == pytest.approx(0.5)  # a slower one never raises it
    monkeypatch.setattr(live, "_SPEED", [])
    assert live.machine_factor() == 4.0  # clamped


def test_estimates_follow_the_pace_measured_on_this_machine(pace, monkeypatch) -> None:
    plan = question_plan("learned", QUESTIONS["learned"].default)
    monkeypatch.setattr(live, "machine_factor", lambda: 1.0)  # the fitted machine's speed
    monkeypatch.setattr(live, "_load", lambda: 0.0)
    idle, source = plan.estimate_now()
    assert idle == pytest.approx(plan.estimate_s) and "load average 0.0" in source
    monkeypatch.setattr(live, "_load", lambda: 6.0)  # six other busy threads
    busy, _ = plan.estimate_now()
    assert busy > idle
    # this server's own training (a held job slot) is not counted as load on the next run
    monkeypatch.setattr(live.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(live, "_load", lambda: 3.0)  # all of it this server's own two jobs
    monkeypatch.setattr(live.jobs, "running_ages", lambda: [600.0, 900.0])
    assert plan.estimate_now()[0] == pytest.approx(idle)
    # ... but a job that took its slot a second ago is not in the 1-minute average yet: the load
    # there is other work's (the first start's line took the spinners' load for its own job's)
    monkeypatch.setattr(live, "_load", lambda: 2.0)
    monkeypatch.setattr(live.jobs, "running_ages", lambda: [1.0])
    just_started = plan.estimate_now()[0]
    # two other busy threads: the run's two get half the cores each, and a unit of work costs
    # more CPU on cores shared by four threads than on idle ones
    monkeypatch.setattr(live, "_load", lambda: 2.0)
    monkeypatch.setattr(live.jobs, "running_ages", lambda: [])
    shared = live.START_S + plan.work * live.CONTENTION
    assert plan.estimate_now()[0] == pytest.approx(shared)
    assert just_started == pytest.approx(shared, rel=0.05)
    monkeypatch.setattr(live, "machine_factor", lambda: 0.6)  # a machine faster than the fit's
    assert plan.estimate_now()[0] == pytest.approx(live.START_S + 0.6 * plan.work * live.CONTENTION)
    monkeypatch.setattr(live, "machine_factor", lambda: 1.0)
    monkeypatch.setattr(live, "_load", lambda: 3.0)
    unmeasured = plan.estimate_now()[0]
    progress = live.LiveProgress(plan)
    import posviz.lab

    # its first report 20 s in at 1 % (building its models took most of that), 20 % at 80 s (its
    # first steps run slow: not yet a pace), then 40 % at 220 s: 39 % of the work in 200 s of
    # training, so the whole run trains in 200 / 0.39 s
    progress.update(posviz.lab.Progress(1, 10, {}, 20.0, 1980.0))
    progress.update(posviz.lab.Progress(2, 10, {}, 80.0, 320.0))
    assert plan.estimate_now()[0] == unmeasured  # under PACE_AFTER since: nothing measured yet
    progress.update(posviz.lab.Progress(3, 10, {}, 220.0, 330.0))
    measured, source = plan.estimate_now()
    assert "measured" in source
    assert measured == pytest.approx(live.START_S + 200.0 / 0.39)
    text = progress.view().text(plan)
    assert f"each model takes {plan.steps:,} optimiser steps" in text and "model-steps" in text
    assert "about 6 min left at the pace measured so far" in text  # 330 s
    # a second run, twice as slow per unit of work: the pace pools both (work-weighted), so one
    # study's error in the work model is not every other study's estimate
    other = live.LiveProgress(plan)
    other.update(posviz.lab.Progress(1, 10, {}, 0.0, 1000.0))
    other.update(posviz.lab.Progress(2, 10, {}, 120.0, 180.0))  # 40 % in 120 s
    pooled = (200.0 + 120.0) / ((0.39 + 0.4) * plan.work)
    assert plan.estimate_now()[0] == pytest.approx(live.START_S + plan.work * pooled)


def test_a_stopping_server_waits_for_its_runs_only_until_the_grace_after_the_signal(
    monkeypatch,
) -> None:
    """The grace counts from the signal, not from the end of Streamlit's own stop: at load 10
    the two in turn took 5.7 s, past the 5 s a Ctrl-C and a container's stop expect."""
    import time

    from posviz import jobs

    monkeypatch.setattr(jobs, "_shutdown", threading.Event())  # this process's server goes on
    monkeypatch.setattr(jobs, "_shutdown_at", [time.monotonic() - 2.0])  # the signal, 2 s ago
    waited: list[float] = []
    monkeypatch.setattr(runs, "wait_for_jobs", lambda timeout: waited.append(timeout) or True)
    assert runs.stop_for_shutdown(grace_s=2.5)
    assert jobs.shutting_down()
    (timeout,) = waited
    assert 0.0 < timeout <= 0.5  # what is left of the 2.5 s, not 2.5 s more
