"""What a page says while it follows a heavy computation (``jobs.DetachedView.lines``): queued, it
says what it waits for and for how long it has waited; running, its step, the step's own time
through a long step (a checkpoint dequantised), the time elapsed and the time left."""

from __future__ import annotations

from posviz import jobs

WHAT = "SmolLM2-135M at 32 tokens (five passes per length: about 45 s on two cores)"


def _view(**changes) -> jobs.DetachedView:
    fields = {"what": WHAT, "position": 0, "fraction": 0.0, "step": "", "elapsed_s": 0.0,
              "step_s": 0.0, "started": False}  # fmt: skip
    return jobs.DetachedView(**(fields | changes))


def test_a_queued_computation_says_what_it_waits_for_by_its_name(monkeypatch) -> None:
    ahead = jobs.QueueAhead((("the lab's warm-up, training “Q”", 50.0),), (), slots=1)
    monkeypatch.setattr(jobs, "queue_ahead", lambda position: ahead)
    line, bar = _view(position=1, queued_s=12.4).lines()
    assert line == (
        "Computing SmolLM2-135M at 32 tokens waits for its turn. This server runs one heavy "
        "computation at a time: the lab's warm-up, training “Q” (about 50 s left) is running. "
        "It should start in about 50 s."
    )
    assert bar == "Waiting for its turn (12 s so far) …"


def test_a_long_step_shows_its_own_time_and_the_elapsed_time(monkeypatch) -> None:
    monkeypatch.setattr(jobs, "running", lambda: 1)
    monkeypatch.setattr(jobs, "_load_average", lambda: 0.0)
    step = "32-token windows (1 of 1): Checking SmolLM2's file and dequantising it (once) …"
    line, bar = _view(started=True, fraction=0.02, step=step, elapsed_s=95.0, step_s=93.0).lines()
    assert line == f"Computing {WHAT} …"
    assert bar == f"{step} (this step 93 s so far; 95 s elapsed)"
    _, later = _view(
        started=True, fraction=0.6, step="passes", elapsed_s=120.0, step_s=1.0, left_s=80.0
    ).lines()
    assert later == "passes (120 s elapsed; about 80 s left)"
