"""Lab training on a Dask ``distributed`` cluster instead of in the web replicas.

Set ``POSVIZ_LAB_CLUSTER`` to a scheduler's address (``tcp://scheduler:8786``) and every lab run
a page asks for — a question's answer, its held-out panel, a paper check, a visitor's own
settings — becomes one task on that cluster; the web replica only submits it, follows its
progress and draws the stored result. Unset (the default), runs train in the server's own
threads as before and nothing here imports Dask.

* **One computation per run id, by the scheduler.** The task's key is the run id
  (:func:`task_key`): every replica that asks for a run id while it is computed gets the same
  task (Dask deduplicates keyed futures), so N visitors on M replicas cause one training.
* **Workers store the answer.** The task runs :func:`posviz.lab.run_question` (or
  :func:`~posviz.lab.studies.cards.run_paper_check`) on the worker, which trains, signs and saves
  the entry in the lab store — the same volume, at the same path, as the replicas'
  (``POSVIZ_LAB_DIR``); the worker also holds the store's claim while it trains, so a worker
  killed mid-run leaves a claim that the scheduler's retry on another worker takes over (its pid
  is gone on one host, its heartbeat stale across hosts) and the run is stored once.
* **Progress and Stop** travel as the scheduler's metadata (the latest progress as JSON) and a Dask
  ``Event`` (set by the replica when a visitor presses Stop), both named after the run id.
* **Same code, same numbers.** The worker recomputes the run id from its own code and refuses a
  task whose id differs (a worker on another image would store under the wrong key). CPU
  training is deterministic, so a run trained on a worker equals the in-process one bit for bit.

Security: Dask moves pickled functions and arguments between its processes, so anyone who can
reach the scheduler can run code on the workers. Run it on a private network only (compose's
internal network, a Kubernetes ClusterIP service), never on a public address; for traffic between
hosts use Dask's TLS (``tls://`` addresses with ``--tls-ca-file/--tls-cert/--tls-key`` on the
scheduler and workers, and ``DASK_DISTRIBUTED__COMM__TLS__*`` settings on the replicas).
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from posviz import lab
from posviz.lab.studies import cards
from posviz.lab.studies.papers import PAPER_CHECKS
from posviz.lab.studies.presets import QUESTIONS
from posviz.lab.studies.questions import QuestionStudy

#: the scheduler's address; empty or unset: train in the server's own threads (the default).
CLUSTER_ENV = "POSVIZ_LAB_CLUSTER"
#: how often the replica looks at the task and its progress, and a worker publishes progress.
POLL_S = 0.5

_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def cluster_address() -> str:
    """``$POSVIZ_LAB_CLUSTER`` (stripped): the scheduler to train on, or "" for in-process."""
    return os.environ.get(CLUSTER_ENV, "").strip()


def task_key(run_id: str) -> str:
    """The Dask key of a run id's task (the scheduler's single flight)."""
    return f"posviz-lab-{run_id}"


def _client(address: str) -> Any:
    """One Dask client per process and scheduler (thread-safe; created on first use)."""
    with _clients_lock:
        client = _clients.get(address)
        if client is None or client.status in ("closed", "closing"):
            # Lazy: Dask only where a cluster is configured.
            from distributed import Client

            client = Client(address, set_as_default=False, timeout="30s")
            _clients[address] = client
        return client


def close_clients() -> None:
    """Close this process's clients (tests; a stopping server)."""
    with _clients_lock:
        clients = list(_clients.values())
        _clients.clear()
    for client in clients:
        client.close()


def study_spec(kind: str, study_id: str, *, config: Any = None, part: str = "default") -> dict:
    """What a worker needs to rebuild a study: plain JSON-able data, never a live object."""
    spec: dict[str, Any] = {"kind": kind, "id": study_id, "part": part}
    if config is not None:
        spec["config"] = config.to_dict()
    return spec


def run_locally(spec: dict, store: Any, **callbacks: Any) -> Any:
    """Run (or load) the study of ``spec`` in this process (``callbacks``: ``on_progress``,
    ``should_stop``)."""

    if spec["kind"] == "paper_check":
        return cards.run_paper_check(spec["id"], store=store, **callbacks)
    config = lab.LabConfig.from_dict(spec["config"]) if "config" in spec else None
    return lab.run_question(spec["id"], config=config, store=store, part=spec["part"], **callbacks)


def spec_run_id(spec: dict) -> str:
    """The run id this process's code gives the study of ``spec``."""

    if spec["kind"] == "paper_check":
        return cards.card_run_id(PAPER_CHECKS[spec["id"]])
    question = QUESTIONS[spec["id"]]
    config = lab.LabConfig.from_dict(spec["config"]) if "config" in spec else question.default
    return QuestionStudy(question, config, spec["part"]).run_id


def train_on_worker(spec: dict, run_id: str, store_root: str) -> str:
    """The task: run the study of ``spec`` on this worker into the store at ``store_root``.

    Progress goes to the scheduler's metadata under the run id; the run stops at its next step once
    the run id's ``Event`` is set. Returns the run id once its entry is stored.

    Raises:
        ValueError: this worker's code gives another run id (a different image).
        LabStopped: a visitor stopped it.
    """
    from distributed import Event, get_client

    mine = spec_run_id(spec)
    if mine != run_id:
        raise ValueError(
            f"This lab worker runs other code than the app (run id {mine} here, {run_id} asked "
            "for): run the workers from the same posviz image as the web replicas."
        )
    client = get_client()  # here, in the task's thread: training threads report through it
    stop = Event(f"posviz-stop-{run_id}", client=client)
    last = {"sent": 0.0, "checked": 0.0, "stop": False}

    def publish(report: Any) -> None:
        now = time.monotonic()
        if now - last["sent"] >= POLL_S:
            last["sent"] = now
            client.set_metadata(
                _progress_key(run_id), json.dumps(dataclasses.asdict(report), default=float)
            )

    def stopped() -> bool:
        now = time.monotonic()
        if not last["stop"] and now - last["checked"] >= POLL_S:
            last["checked"], last["stop"] = now, stop.is_set()
        return bool(last["stop"])

    try:
        run_locally(spec, lab.RunStore(store_root), on_progress=publish, should_stop=stopped)
    finally:
        client.set_metadata(_progress_key(run_id), "")  # the next run starts without this report
    return run_id


def run_on_cluster(
    spec: dict,
    *,
    store: Any,
    on_progress: Callable[[Any], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    address: str | None = None,
) -> Any:
    """Load the study of ``spec`` from ``store``, or have the cluster train and store it, then
    load it; the replica itself never trains.

    Raises:
        ValueError: the worker's code differs, or the worker stored the run where this replica
            cannot read it (the message says which volume to share).
        LabStopped: stopped (by ``should_stop``, or by another replica's visitor).
    """
    run_id = spec_run_id(spec)
    if store.exists(run_id):
        return run_locally(spec, store)  # stored: load (and judge) it here
    from distributed import Event

    client = _client(address or cluster_address())
    stop = Event(f"posviz-stop-{run_id}", client=client)
    stop.clear()  # a run stopped earlier must not stop this one at its first step
    future = client.submit(train_on_worker, spec, run_id, str(store.root), key=task_key(run_id))
    ended = threading.Event()
    future.add_done_callback(lambda _: ended.set())
    try:
        while not _finished(future, ended):
            if should_stop is not None and should_stop():
                stop.set()
            if on_progress is not None:
                _forward(client, run_id, on_progress)
        future.result()  # the worker's exception (LabStopped, ValueError) is raised here
    finally:
        future.release()
    if not store.exists(run_id):
        raise ValueError(
            f"The lab cluster trained run {run_id} but this server cannot find it in "
            f"{store.root}: mount the same lab store at the same path (POSVIZ_LAB_DIR) on the "
            "workers and the web replicas."
        )
    return run_locally(spec, store)


def _finished(future: Any, ended: threading.Event) -> bool:
    """Wait up to :data:`POLL_S` for the task; whether it has ended (well or not)."""
    return ended.wait(POLL_S) or future.done()


def _progress_key(run_id: str) -> list[str]:
    """Where the scheduler keeps a run's latest progress (its metadata store)."""
    return ["posviz-progress", run_id]


def _forward(client: Any, run_id: str, on_progress: Callable[[Any], None]) -> None:
    """The worker's latest progress (if any), as a :class:`posviz.lab.Progress`."""
    text = client.get_metadata(_progress_key(run_id), default="")
    if text:
        on_progress(lab.Progress(**json.loads(text)))
