"""Lab runs on a Dask cluster (:mod:`posviz.lab_cluster`), on a loopback ``LocalCluster``.

The cluster path stores what the in-process path stores, bit for bit; a second ask for the same
run id joins the first task (one training); a worker killed mid-training loses nothing: the
scheduler runs the task again on the other worker, which takes over the dead worker's claim, and
the run is stored once.
"""

from __future__ import annotations

import json
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from posviz import lab_cluster
from posviz.lab import QUESTIONS, RunStore, run_question
from posviz.lab.engine.config import LabConfig

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow


def _tiny(**changes) -> LabConfig:
    base = QUESTIONS["learned"].default
    return replace(
        base, **{"steps": 6, "width": 16, "batch": 8, "eval_batch": 16, "seeds": 2, **changes}
    )


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, silence_logs=50,
    ) as local:  # fmt: skip
        yield local
    lab_cluster.close_clients()


def _arrays(store: RunStore, run_id: str) -> dict[str, bytes]:
    entry = store.path(run_id)
    return {p.name: p.read_bytes() for p in sorted(entry.glob("*.npy"))}


def test_a_run_on_the_cluster_equals_the_run_in_process_bit_for_bit(cluster, tmp_path) -> None:
    config = _tiny()
    spec = lab_cluster.study_spec("question", "learned", config=config)
    remote_store, local_store = RunStore(tmp_path / "remote"), RunStore(tmp_path / "local")
    remote = lab_cluster.run_on_cluster(spec, store=remote_store, address=cluster.scheduler_address)
    local = run_question("learned", config=config, store=local_store)
    assert remote.run_id == local.run_id == lab_cluster.spec_run_id(spec)
    got, want = _arrays(remote_store, remote.run_id), _arrays(local_store, local.run_id)
    assert got.keys() == want.keys() and len(got) > 3
    assert all(got[name] == want[name] for name in want), "the cluster trained other numbers"
    assert [f.text for f in remote.findings] == [f.text for f in local.findings]


def test_two_asks_for_one_run_id_train_once(cluster, tmp_path) -> None:
    store = RunStore(tmp_path)
    spec = lab_cluster.study_spec("question", "learned", config=_tiny(steps=40))
    with ThreadPoolExecutor(2) as pool:  # two replicas' sessions asking at once
        runs = list(pool.map(lambda _: lab_cluster.run_on_cluster(
            spec, store=store, address=cluster.scheduler_address), range(2)))  # fmt: skip
    assert runs[0].run_id == runs[1].run_id
    log = (store.root / ".claims" / "claims.log").read_text().splitlines()
    assert sum(line.split()[1] == "training" for line in log) == 1


def _training_pid(store: RunStore, run_id: str, deadline_s: float = 120) -> int:
    claim = store.root / ".claims" / f"{run_id}.claim"
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        log = store.root / ".claims" / "claims.log"
        if log.exists() and f"training {run_id}" in log.read_text() and claim.exists():
            return int(json.loads(claim.read_text())["pid"])
        time.sleep(0.1)  # polling files the worker writes; the condition is the training note
    raise AssertionError("no worker started training")


def test_a_worker_killed_mid_training_loses_nothing(cluster, tmp_path) -> None:
    store = RunStore(tmp_path)
    spec = lab_cluster.study_spec("question", "learned", config=_tiny(steps=200))
    run_id = lab_cluster.spec_run_id(spec)
    reports = []
    with ThreadPoolExecutor(1) as pool:
        asked = pool.submit(
            lab_cluster.run_on_cluster,
            spec,
            store=store,
            on_progress=reports.append,
            address=cluster.scheduler_address,
        )
        os.kill(_training_pid(store, run_id), signal.SIGKILL)
        result = asked.result(timeout=300)
    assert result.run_id == run_id and store.exists(run_id)
    assert [s.run_id for s in store.list()] == [run_id]  # stored once
    log = (store.root / ".claims" / "claims.log").read_text()
    assert log.count(f"training {run_id}") == 2  # trained again on the surviving worker
    assert reports and all(r.total_steps > 0 for r in reports)  # the worker's progress arrived


def test_no_cluster_configured_means_no_dask_import(tmp_path) -> None:
    import subprocess
    import sys

    code = (
        "import sys, posviz.lab_jobs as j; from posviz.lab_cluster import cluster_address;"
        "assert cluster_address() == '';"
        "print('distributed' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != lab_cluster.CLUSTER_ENV}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[1])  # fmt: skip
    assert out.stdout.strip() == "False"
