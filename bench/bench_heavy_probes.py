"""Benchmark: does a light page stay fast while heavy probes run?

    .venv/bin/python bench/bench_heavy_probes.py [--loads 5] [--heavy 3] [--jobs 1]

Starts posviz on a free loopback port (``tests/load/loadtest.py``'s ``app_server``) and talks to
it over its own websocket as a browser does (``tests/load/st_client.py``). It times a fresh
session's first run of a light page (the sinusoid page, ``--loads`` times, median) with the server
idle, then opens ``--heavy`` sessions on the heavy probe link of the issue
(``/probing?prb_t_src=sinusoid&prb_t_n=8192&prb_t_d=2048&prb_folds=10``, each with its own seed so
that no run is a cache hit) and, once every one of them has started, times the light page again.
Prints both medians, the ratio (goal ≤ 1.5×), what the heavy sessions saw (queue place shown,
progress shown) and one ``BENCH {...}`` line for ``bench/run_all.py``.

``--jobs`` sets ``POSVIZ_MAX_JOBS`` for the server (default 1, the hosted default): heavy probes
beyond it wait in the queue instead of taking more cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "load"), str(ROOT / "tests")]

from loadtest import app_server  # noqa: E402
from st_client import StreamlitSession  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

LIGHT_PAGE = "sinusoidal"
HEAVY_QUERY = "prb_t_src=sinusoid&prb_t_n=8192&prb_t_d=2048&prb_folds=10&prb_seed={seed}"
GOAL = 1.5


async def light_load(url: str) -> float:
    """Seconds from asking for a fresh session's first run of the light page to its last delta."""
    async with StreamlitSession(url, LIGHT_PAGE, timeout=300) as session:
        start = time.perf_counter()
        result = await session.run()
        if result.exceptions:
            raise RuntimeError(f"light page raised: {result.exceptions[0]}")
        return time.perf_counter() - start


async def light_loads(url: str, count: int) -> list[float]:
    return [await light_load(url) for _ in range(count)]


async def heavy_probe(url: str, seed: int, started: asyncio.Event, seen: dict) -> None:
    """Open the heavy probe link and read its messages until the run ends or the bench is done.

    Records whether the page showed its place in the job queue and its progress bar.
    """
    session = StreamlitSession(url, "probing", HEAVY_QUERY.format(seed=seed), timeout=3600)
    await session.connect()
    back = BackMsg()
    back.rerun_script.query_string = session.query
    back.rerun_script.page_name = session.page
    seen[seed] = {"queued": False, "progress": False, "finished": False}
    try:
        await session._ws.send(back.SerializeToString())  # as StreamlitSession.run, unawaited
        while True:
            raw = await session._ws.recv()
            seen[seed]["queued"] |= b"in the queue" in raw
            seen[seed]["progress"] |= b"Table 1 of" in raw
            if seen[seed]["queued"] or seen[seed]["progress"]:
                started.set()  # past the page's set-up: fitting, or waiting for a slot
            if ForwardMsg.FromString(raw).WhichOneof("type") == "script_finished":
                seen[seed]["finished"] = True
                started.set()
                return
    finally:
        await session.close()


async def main_async(args: argparse.Namespace, url: str) -> dict:
    await light_load(url)  # warm the page's imports and caches, as any visitor after the first
    idle = await light_loads(url, args.loads)
    seen: dict[int, dict[str, bool]] = {}
    events = [asyncio.Event() for _ in range(args.heavy)]
    tasks = [
        asyncio.create_task(heavy_probe(url, seed + 1, event, seen))
        for seed, event in enumerate(events)
    ]
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 600)
    busy = await light_loads(url, args.loads)
    still_running = sum(not t.done() for t in tasks)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {"idle": idle, "busy": busy, "still_running": still_running, "seen": seen}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5, help="light page loads per phase")
    parser.add_argument("--heavy", type=int, default=3, help="heavy probe links in flight")
    parser.add_argument("--jobs", type=int, default=1, help="POSVIZ_MAX_JOBS for the server")
    args = parser.parse_args(argv)
    env = {"POSVIZ_MAX_JOBS": str(args.jobs)}
    with app_server(env) as (url, _pid):
        out = asyncio.run(main_async(args, url))
    idle, busy = statistics.median(out["idle"]), statistics.median(out["busy"])
    ratio = busy / idle
    print(f"cores: {os.cpu_count()}, POSVIZ_MAX_JOBS={args.jobs}, heavy links: {args.heavy}")
    print(f"light page ({LIGHT_PAGE}) idle: median {idle:.2f} s over {args.loads}: "
          + ", ".join(f"{s:.2f}" for s in out["idle"]))  # fmt: skip
    print(f"light page with heavy probes in flight: median {busy:.2f} s: "
          + ", ".join(f"{s:.2f}" for s in out["busy"]))  # fmt: skip
    print(f"heavy probes still running when the light loads ended: {out['still_running']}")
    for seed, flags in sorted(out["seen"].items()):
        print(f"heavy link seed {seed}: " + ", ".join(f"{k}={v}" for k, v in flags.items()))
    print(f"ratio busy/idle: {ratio:.2f}x (goal <= {GOAL}x)")
    line = {"metric": "light page under 3 heavy probes", "value": round(ratio, 2), "goal": GOAL,
            "ok": ratio <= GOAL}  # fmt: skip
    print("BENCH " + json.dumps(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
