"""Load test: many concurrent sessions moving sliders and switching tables against ONE server.

    .venv/bin/python tests/load/loadtest.py                      # 20 sessions, 60 s (~90 s total)
    .venv/bin/python tests/load/loadtest.py --sessions 40 --seconds 120 --url http://127.0.0.1:8501

What it does (loopback only, bounded in time, stops by itself):

1. starts a loopback hub serving tiny checkpoints under real model ids (gpt2, bert, distilbert),
   then ``streamlit run app.py`` on a free 127.0.0.1 port with the hosted profile
   (``POSVIZ_HOSTED=1``), a private HF cache and ``HF_ENDPOINT`` at that hub (nothing leaves the
   machine), unless ``--url``;
2. reference pass: for every scenario (a page and one widget on it: a slider to move, a table
   source or hub model to switch) one session sets each value in turn and records a digest of
   every chart on the page (Vega-Lite spec + data bytes) — the right answer for that value;
3. load: ``--sessions`` sessions at once (websocket clients speaking Streamlit's own protocol, see
   st_client.py), session ``i`` running scenario ``i mod n`` and starting at a different value, each
   setting the next value as soon as its previous chart arrived, for ``--seconds``;
4. checks: 0 errors (uncaught exceptions, error boxes, timeouts, dropped connections) and every
   chart a session received equals the reference for the value *that session* set (so no session
   ever sees another session's chart); reports runs/s, latency percentiles and the server's RSS
   before, at peak and after.

Exit status 0 only if there were no errors and no wrong charts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from st_client import StreamlitSession

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Scenario:
    """One page and one widget on it, with the values sessions cycle through."""

    page: str  # url_path
    kind: str  # "slider", "selectbox", "radio", "number_input", "checkbox"
    key: str
    values: tuple  # for selectbox/radio: option labels as shown
    setup: tuple = ()  # (kind, key, value) steps that make the widget appear, done once

    @property
    def name(self) -> str:
        return f"{self.page}:{self.key}"


BUNDLED, SINUSOID = "Bundled MiniLM-L6 (offline)", "Sinusoid (computed)"
HUB = "Hugging Face hub model"
#: Tiny checkpoints served by a loopback hub under real model ids: (config, tensor name, shape).
TINY_HUB_MODELS = {
    "openai-community/gpt2": (
        {"model_type": "gpt2", "n_positions": 64, "n_embd": 48, "vocab_size": 50},
        "wpe.weight", (64, 48),
    ),
    "google-bert/bert-base-uncased": (
        {"model_type": "bert", "max_position_embeddings": 80, "hidden_size": 32, "vocab_size": 50},
        "embeddings.position_embeddings.weight", (80, 32),
    ),
    "distilbert/distilbert-base-uncased": (
        {"model_type": "distilbert", "max_position_embeddings": 40, "dim": 24, "vocab_size": 50},
        "embeddings.position_embeddings.weight", (40, 24),
    ),
}  # fmt: skip
#: Moving sliders on the sinusoid page, and switching the learned page's table (bundled MiniLM
#: vs computed sinusoids, both offline) and its view. Scenarios whose widget is missing (pages
#: change) are reported and skipped.
SCENARIOS: tuple[Scenario, ...] = (
    Scenario("sinusoidal", "slider", "sin_pos", (0, 7, 31, 64, 100)),
    Scenario("sinusoidal", "slider", "sin_n", (32, 64, 128, 256)),
    Scenario("sinusoidal", "radio", "sin_layout", ("interleaved", "split", "tensor2tensor")),
    Scenario("learned", "selectbox", "lrn_a_src", (BUNDLED, SINUSOID)),
    Scenario(
        "learned",
        "selectbox",
        "lrn_a_hub",
        tuple(TINY_HUB_MODELS),
        setup=(("selectbox", "lrn_a_src", HUB),),
    ),
    Scenario("learned", "radio", "lrn_view", ("Cosine similarity", "PCA trajectory 2-D")),
    Scenario("learned", "number_input", "lrn_b_n", (64, 128, 256, 512)),
    Scenario("nope", "slider", "nope_n", (16, 64, 128, 256)),
)


@dataclass
class Stats:
    runs: int = 0
    checked: int = 0  # runs whose chart was compared with the reference
    latencies: list[float] = field(default_factory=list)
    bytes: int = 0
    errors: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def error(self, kind: str, detail: str) -> None:
        self.errors[kind] += 1
        if len(self.examples) < 10:
            self.examples.append(f"{kind}: {detail[:300]}")


# ---------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def app_server(env: dict[str, str]) -> Iterator[tuple[str, int]]:
    """posviz on a free loopback port; yields (base URL, server pid); stopped on exit."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true",
           "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/_stcore/health", timeout=2
                ) as response,
            ):
                if response.read() == b"ok":
                    break
            if time.monotonic() > deadline:
                raise TimeoutError("server did not become healthy in 120 s")
            time.sleep(0.1)  # polling a port: nothing to wait on but time
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def tiny_hub() -> Iterator[str]:
    """A loopback hub serving :data:`TINY_HUB_MODELS`; yields its URL (for ``HF_ENDPOINT``)."""
    import json
    import tempfile

    import numpy as np
    from safetensors.numpy import save_file

    sys.path.insert(0, str(ROOT / "tests"))
    from hub_server import FakeHub, HubServer

    hub = FakeHub()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (repo, (config, tensor, shape)) in enumerate(TINY_HUB_MODELS.items()):
            folder = Path(tmp) / str(i)
            folder.mkdir()
            (folder / "config.json").write_text(json.dumps(config))
            table = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
            save_file({tensor: table}, folder / "model.safetensors")
            hub.add_dir(repo, folder)
        with HubServer(hub) as server:
            yield server.url


@contextlib.contextmanager
def load_target() -> Iterator[tuple[str, int]]:
    """The server under load: hosted profile, a private HF cache, hub ids from a loopback hub."""
    import tempfile

    with tiny_hub() as hub_url, tempfile.TemporaryDirectory() as hf_home:
        env = {"POSVIZ_HOSTED": "1", "HF_ENDPOINT": hub_url, "HF_HOME": hf_home,
               "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip
        with app_server(env) as target:
            yield target


def rss_mb(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------------------------------------


async def prepare(session: StreamlitSession, sc: Scenario) -> None:
    """Open the scenario's page and do its setup steps (e.g. pick "hub" to show the model list)."""
    await session.run()
    for kind, key, value in sc.setup:
        result = await session.set(kind, key, value)
        if result.exceptions:
            raise RuntimeError(f"{sc.name} setup {key}={value!r}: {result.exceptions[0]}")


async def usable_scenarios(url: str, scenarios: tuple[Scenario, ...]) -> list[Scenario]:
    """Scenarios whose page and widget exist (and whose values the widget accepts)."""
    usable = []
    for sc in scenarios:
        try:
            async with StreamlitSession(url, sc.page) as session:
                await prepare(session, sc)
                result = await session.set(sc.kind, sc.key, sc.values[0])
                widget = session.widget(sc.kind, sc.key)
                if sc.kind in ("selectbox", "radio"):
                    missing = [v for v in sc.values if v not in widget.proto.options]
                    if missing:
                        raise KeyError(f"options {missing} not offered")
                elif sc.kind == "slider":
                    lo, hi = widget.proto.min, widget.proto.max
                    if not all(lo <= v <= hi for v in sc.values):
                        raise KeyError(f"values outside {lo}…{hi}")
                if not result.charts():
                    raise KeyError("the page draws no chart")
            usable.append(sc)
        except (KeyError, RuntimeError) as exc:
            print(f"  skip {sc.name}: {exc}")
    return usable


async def reference(url: str, sc: Scenario) -> dict[object, str]:
    """The chart digest for each value, from one session with the server otherwise idle.

    Pages may keep state across values (a dependent slider clamped when a range shrinks), so the
    values are cycled twice in the order the load sessions use and the second cycle is recorded:
    that is the state every load session reaches after its own first cycle.
    """
    digests = {}
    async with StreamlitSession(url, sc.page) as session:
        await prepare(session, sc)
        for value in sc.values + sc.values:
            result = await session.set(sc.kind, sc.key, value)
            if result.exceptions or result.errors:
                raise RuntimeError(f"{sc.name}={value!r}: {result.exceptions or result.errors}")
            digests[value] = result.chart_digest()
    if len(set(digests.values())) < len(digests):
        print(f"  note: {sc.name}: some values draw identical charts")
    return digests


async def one_session(url: str, sc: Scenario, refs: dict, offset: int, deadline: float,
                      stats: Stats) -> None:  # fmt: skip
    """Cycle through the scenario's values until the deadline; check every chart."""
    try:
        async with StreamlitSession(url, sc.page, timeout=90) as session:
            await prepare(session, sc)
            for step in itertools.count():
                if time.monotonic() >= deadline:
                    break
                value = sc.values[(offset + step) % len(sc.values)]
                result = await session.set(sc.kind, sc.key, value)
                stats.runs += 1
                warming_up = step < len(sc.values)  # history differs until one full cycle
                stats.latencies.append(result.seconds)
                stats.bytes += result.bytes_received
                if result.exceptions:
                    stats.error("exception", f"{sc.name}={value!r}: {result.exceptions[0]}")
                elif result.errors:
                    stats.error("error box", f"{sc.name}={value!r}: {result.errors[0]}")
                elif not warming_up:
                    stats.checked += 1
                    if result.chart_digest() != refs[value]:
                        stats.error("wrong chart", f"{sc.name}={value!r}")
    except TimeoutError:
        stats.error("timeout", f"{sc.name}: no answer within 90 s")
    except (OSError, websockets.exceptions.WebSocketException) as exc:
        stats.error("connection", f"{sc.name}: {type(exc).__name__}: {exc}")
    except Exception as exc:
        stats.error(type(exc).__name__, f"{sc.name}: {exc}")


async def sample_rss(pid: int | None, until: float, peak: list[float], timeline: list) -> None:
    """Peak RSS (sampled each second) and a coarse timeline (every 10 s) of the server."""
    start = time.monotonic()
    while time.monotonic() < until:
        rss = rss_mb(pid)
        peak[0] = max(peak[0], rss)
        if len(timeline) <= (time.monotonic() - start) // 10:
            timeline.append(round(rss))
        await asyncio.sleep(1)  # a sampling period, not a wait for a condition


async def run_load(url: str, pid: int | None, sessions: int, seconds: float,
                   scenarios: tuple[Scenario, ...]) -> dict:  # fmt: skip
    print(f"server {url} (pid {pid}), {sessions} sessions for {seconds:.0f} s")
    usable = await usable_scenarios(url, scenarios)
    if not usable:
        raise SystemExit("no usable scenario: none of the pages/widgets exist")
    refs = {}
    for sc in usable:
        refs[sc] = await reference(url, sc)
        print(f"  reference {sc.name}: {len(refs[sc])} values, "
              f"{len(set(refs[sc].values()))} distinct charts")  # fmt: skip
    rss_before = rss_mb(pid)
    stats = Stats()
    start = time.monotonic()
    deadline = start + seconds
    peak, timeline = [rss_before], []
    tasks = [
        one_session(url, usable[i % len(usable)], refs[usable[i % len(usable)]], i, deadline, stats)
        for i in range(sessions)
    ]
    await asyncio.gather(sample_rss(pid, deadline, peak, timeline), *tasks)
    took = time.monotonic() - start
    rss_after = rss_mb(pid)
    lat = sorted(stats.latencies) or [float("nan")]
    report = {
        "sessions": sessions,
        "scenarios": [sc.name for sc in usable],
        "seconds": round(took, 1),
        "runs": stats.runs,
        "charts_checked": stats.checked,
        "runs_per_s": round(stats.runs / took, 2),
        "latency_p50_s": round(statistics.median(lat), 3),
        "latency_p95_s": round(lat[int(0.95 * (len(lat) - 1))], 3),
        "latency_max_s": round(lat[-1], 3),
        "mb_received": round(stats.bytes / 2**20, 1),
        "errors": dict(stats.errors),
        "rss_before_mb": round(rss_before, 1),
        "rss_peak_mb": round(peak[0], 1),
        "rss_after_mb": round(rss_after, 1),
        "rss_every_10s_mb": timeline,
    }
    for line in stats.examples:
        print(f"  ! {line}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--url", help="an already running server (RSS is then not measured)")
    args = parser.parse_args(argv)
    if not (1 <= args.sessions <= 200 and 1 <= args.seconds <= 600):
        parser.error("keep it bounded: 1-200 sessions, 1-600 seconds")
    if args.url:
        report = asyncio.run(run_load(args.url, None, args.sessions, args.seconds, SCENARIOS))
    else:
        with load_target() as (url, pid):
            report = asyncio.run(run_load(url, pid, args.sessions, args.seconds, SCENARIOS))
    for key, value in report.items():
        print(f"{key:>16s}: {value}")
    return 0 if not report["errors"] and report["charts_checked"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
