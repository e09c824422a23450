"""Cluster smoke: the lab on Dask workers behind three web replicas, on loopback, without Docker.

    .venv/bin/python tests/load/cluster_smoke.py          # what scripts/cluster-smoke.sh runs

Starts ``dask scheduler`` and two ``dask worker`` processes (niced: on one machine they stand in
for worker machines), three posviz replicas with ``POSVIZ_LAB_CLUSTER`` pointing at the scheduler,
and HAProxy in front (the repository's config). Then, bounded in time, loopback only:

1. **burst**: 10 sessions press Run on one lab page at once → one task, one training, one store
   entry, every session answered with the same charts;
2. **a worker SIGKILLed mid-training** (a second page's burst): the scheduler runs the task again
   on a worker that is left, which takes over the dead one's claim; stored once, every session
   answered;
3. **the pages while the cluster trains**: a light page's median latency on the replicas while a
   third run trains, against the same page with the cluster idle, side by side (≤ 1.2×).

Exit status 0 only if every promise held. Prints one JSON summary line last.

``--compose "<docker compose command line>" --url <proxy> --lab-dir <the lab volume on the host>``
runs steps 1 and 2 against a running ``deploy/compose`` project instead (what
``scripts/compose-smoke.sh`` does after its replica kill): the worker that trains is found by the
container hostname its claim records and its training process SIGKILLed inside that container.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from browser_support import free_port, stop_process
from loadtest import ROOT, cluster, lab_burst
from proxy import haproxy
from st_client import StreamlitSession

BIN = Path(sys.executable).parent
BURST_PAGE, KILL_PAGE, BUSY_PAGE = "lab_learned", "lab_need_positions", "lab_concat"
LIGHT_PAGE, LIGHT_RUNS = "alibi", 12
MAX_SLOWDOWN = 1.2


def _start_dask(lab_dir: Path, workdir: Path) -> tuple[str, list[subprocess.Popen]]:
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "POSVIZ_LAB_DIR": str(lab_dir)}
    log = (workdir / "dask.log").open("ab")
    scheduler = [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                 "--no-dashboard"]  # fmt: skip
    procs = [subprocess.Popen(scheduler, env=env, stdout=log, stderr=log)]
    for i in range(2):
        worker = ["nice", "-n", "10", str(BIN / "dask"), "worker", address, "--nthreads", "1",
                  "--nworkers", "1", "--name", f"w{i}", "--no-dashboard",
                  "--local-directory", str(workdir / f"w{i}")]  # fmt: skip
        procs.append(subprocess.Popen(worker, env=env, stdout=log, stderr=log))
    return address, procs


def _wait_workers(address: str, n: int, timeout: float = 120) -> None:
    from distributed import Client

    with Client(address, timeout="60s") as client:
        client.wait_for_workers(n, timeout=timeout)


def _training(lab_dir: Path, after: int, timeout: float = 180) -> tuple[str, int]:
    """The host name and process id the first "training" line after line ``after`` records."""
    log = lab_dir / ".claims" / "claims.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = log.read_text().splitlines()[after:] if log.exists() else []
        for line in lines:
            if " training " in f" {line} ":
                host = line.split("host=", 1)[1].split()[0]
                return host, int(line.rsplit("pid=", 1)[1].split()[0])
        time.sleep(0.2)  # polling a log another process writes; the condition is its line
    raise TimeoutError("no worker started training")


def _training_pid(lab_dir: Path, after: int, timeout: float = 180) -> int:
    return _training(lab_dir, after, timeout)[1]


async def _light_latency(url: str) -> float:
    """Median seconds of a light page's reruns (a fresh session, then LIGHT_RUNS reruns)."""
    async with StreamlitSession(url, LIGHT_PAGE) as session:
        await session.run()
        times = []
        for _ in range(LIGHT_RUNS):
            times.append((await session.run()).seconds)
    return statistics.median(times)


async def _scenario(url: str, lab_dir: Path) -> dict:
    out: dict = {}
    out["burst"] = await lab_burst(url, BURST_PAGE, 10, lab_dir, limit_s=600)
    log = lab_dir / ".claims" / "claims.log"
    before = len(log.read_text().splitlines())
    burst = asyncio.create_task(lab_burst(url, KILL_PAGE, 4, lab_dir, limit_s=600))
    pid = await asyncio.to_thread(_training_pid, lab_dir, before)
    os.kill(pid, 9)
    out["killed_worker_pid"] = pid
    out["kill"] = await burst
    out["idle_s"] = await _light_latency(url)
    before = len(log.read_text().splitlines())
    busy = asyncio.create_task(lab_burst(url, BUSY_PAGE, 1, lab_dir, limit_s=600))
    await asyncio.to_thread(_training_pid, lab_dir, before)
    out["busy_s"] = await _light_latency(url)
    out["busy_run"] = await busy
    return out


async def _compose_scenario(url: str, lab_dir: Path, compose: list[str]) -> dict:
    """Steps 1 and 2 through a compose project's proxy; the kill happens inside the worker's
    container (its hostname is the container id's prefix, which the claim records)."""
    out: dict = {"burst": await lab_burst(url, BURST_PAGE, 10, lab_dir, limit_s=900)}
    print(json.dumps({"burst": out["burst"]}, default=str), flush=True)
    log = lab_dir / ".claims" / "claims.log"
    if not log.exists():
        out["kill"] = {"skipped": "no claims log: the burst trained nothing on the workers"}
        return out
    before = len(log.read_text().splitlines())
    burst = asyncio.create_task(lab_burst(url, KILL_PAGE, 4, lab_dir, limit_s=900))
    host, pid = await asyncio.to_thread(_training, lab_dir, before, 600)
    workers = subprocess.run([*compose, "ps", "-q", "lab-worker"], capture_output=True,
                             text=True, check=True).stdout.split()  # fmt: skip
    container = next((c for c in workers if c.startswith(host)), None)
    if container is None:
        raise RuntimeError(f"the training host {host} is not a lab-worker container {workers}")
    subprocess.run(["docker", "exec", container, "sh", "-c", f"kill -9 {pid}"], check=True)
    out["killed_worker"] = {"container": container[:12], "pid": pid, "workers": len(workers)}
    out["kill"] = await burst
    return out


def _promises(out: dict) -> list[str]:
    broken = []
    for name in ("burst", "kill"):
        run = out[name]
        if "skipped" in run:
            broken.append(f"{name}: {run['skipped']}")
            continue
        if run["errors"] or run["answered"] != run["sessions"]:
            broken.append(
                f"{name}: {run['answered']} of {run['sessions']} answered {run['errors']}"
            )
        if run["store_entries"] != 1 or run["distinct_answers"] != 1:
            broken.append(
                f"{name}: {run['store_entries']} entries, {run['distinct_answers']} answers"
            )
    if out["burst"]["trainings"] != 1:
        broken.append(f"burst: {out['burst']['trainings']} trainings, not 1")
    if out["kill"].get("trainings", 2) != 2:  # the killed one, and the one that finished
        broken.append(f"kill: {out['kill']['trainings']} trainings, not 2")
    if "busy_s" in out and out["busy_s"] > MAX_SLOWDOWN * out["idle_s"]:
        broken.append(f"light page {out['busy_s']:.3f} s busy vs {out['idle_s']:.3f} s idle")
    return broken


def compose_main(argv: list[str]) -> int:
    import argparse
    import shlex

    parser = argparse.ArgumentParser(description="the lab promises through a compose project")
    parser.add_argument("--compose", required=True, help="the project's compose command line")
    parser.add_argument("--url", required=True, help="the proxy's address")
    parser.add_argument("--lab-dir", required=True, type=Path, help="the lab volume, from the host")
    args = parser.parse_args(argv)
    start = time.monotonic()
    out = asyncio.run(_compose_scenario(args.url, args.lab_dir, shlex.split(args.compose)))
    out["seconds"] = round(time.monotonic() - start, 1)
    broken = _promises(out)
    print("PASS" if not broken else "FAILED: " + "; ".join(broken))
    print(json.dumps(out | {"broken": broken}, default=str))
    return 0 if not broken else 1


def main() -> int:
    if len(sys.argv) > 1:
        return compose_main(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        lab_dir = workdir / "lab"
        lab_dir.mkdir()
        address, dask_procs = _start_dask(lab_dir, workdir)
        try:
            _wait_workers(address, 2)
            # the replicas inherit it; they send their store's path with each task (one machine)
            os.environ["POSVIZ_LAB_CLUSTER"] = address
            with cluster(3) as group, haproxy(workdir, port=free_port(), ports=group.ports) as url:
                start = time.monotonic()
                out = asyncio.run(_scenario(url, group.lab_dir))
                out["seconds"] = round(time.monotonic() - start, 1)
        finally:
            for proc in reversed(dask_procs):
                stop_process(proc, timeout=15)
    broken = _promises(out)
    print("PASS" if not broken else "FAILED: " + "; ".join(broken))
    print(json.dumps(out | {"broken": broken}, default=str))
    return 0 if not broken else 1


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
