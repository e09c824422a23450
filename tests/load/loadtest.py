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

Beyond one process (``--replicas N``, what ``scripts/scale-smoke.sh`` runs): N replicas sharing one
cookie secret, HF cache and lab store, behind the repository's own HAProxy config
(``deploy/compose/haproxy/haproxy.cfg`` rendered for loopback ports), and sessions that also switch
pages, upload tables (``file_urls_request`` + HTTP PUT, as a browser) and start a lab run where a
lab page exists. ``--kill-after S`` SIGKILLs one replica S seconds into the load (what an OOM kill
does) and restarts it ``--restart-after`` seconds later (what the orchestrator does): sessions on
the other replicas must see nothing, sessions on the killed one must reconnect to a survivor and
get their view back from the URL. Then every entry of the shared lab store must load, every hub
table in the shared HF cache must load offline and equal what the hub served, and a short
second run with the affinity line removed from the proxy config counts the uploads that fail.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import itertools
import math
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: browser_support
from browser_support import free_port, stop_process, wait_healthy
from st_client import ChartPart, RunResult, StreamlitSession

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

    async def prepare(self, session: StreamlitSession) -> None:
        """Open the page and do the setup steps (e.g. pick "hub" to show the model list)."""
        await session.run()
        for kind, key, value in self.setup:
            result = await session.set(kind, key, value)
            if result.exceptions:
                raise RuntimeError(f"{self.name} setup {key}={value!r}: {result.exceptions[0]}")

    async def act(self, session: StreamlitSession, value: object) -> RunResult:
        return await session.set(self.kind, self.key, value)

    def check_usable(self, session: StreamlitSession, result: RunResult) -> None:
        """Raise ``KeyError`` if the widget does not take the values or the page draws nothing."""
        widget = session.widget(self.kind, self.key)
        if self.kind in ("selectbox", "radio"):
            missing = [v for v in self.values if v not in widget.proto.options]
            if missing:
                raise KeyError(f"options {missing} not offered")
        elif self.kind == "slider":
            lo, hi = widget.proto.min, widget.proto.max
            if not all(lo <= v <= hi for v in self.values):
                raise KeyError(f"values outside {lo}…{hi}")
        if not result.charts():
            raise KeyError("the page draws no chart")


@dataclass(frozen=True)
class PageTour:
    """Switch pages in the same session (the sidebar's links): each value is a page's url_path."""

    values: tuple[str, ...]
    page: str = ""

    @property
    def name(self) -> str:
        return "pages:" + ",".join(self.values)

    async def prepare(self, session: StreamlitSession) -> None:
        await session.run()

    async def act(self, session: StreamlitSession, value: object) -> RunResult:
        session.page, session.page_hash, session.query = str(value), "", ""
        return await session.run()

    def check_usable(self, session: StreamlitSession, result: RunResult) -> None:
        """Only the first page ran in :func:`usable_scenarios`; the reference pass runs all."""
        if result.exceptions:
            raise KeyError(f"page {session.page}: {result.exceptions[0]}")


class UploadFailed(Exception):
    """The upload's HTTP PUT was refused (status in ``args[0]``)."""


@dataclass(frozen=True)
class UploadScenario:
    """Upload small .npy tables in turn through the learned page's file uploader."""

    values: tuple[int, ...] = (0, 1, 2)  # which table (see :meth:`table`)
    page: str = "learned"
    source_key: str = "lrn_a_src"
    key: str = "lrn_a_file"

    @property
    def name(self) -> str:
        return f"{self.page}:upload"

    @staticmethod
    def table(value: int) -> bytes:
        """Table ``value``: a seeded random (48 + 16·value) × 16 float32 .npy file."""
        buffer = io.BytesIO()
        rng = np.random.default_rng(1000 + value)
        np.save(buffer, rng.standard_normal((48 + 16 * value, 16)).astype(np.float32))
        return buffer.getvalue()

    async def prepare(self, session: StreamlitSession) -> None:
        await session.run()
        source = session.widget("selectbox", self.source_key)
        label = next((o for o in source.proto.options if o.lower().startswith("upload")), None)
        if label is None:
            raise KeyError(f"{self.source_key} offers no upload")
        # always set it: the element tree cannot read a selectbox's current value without AppTest
        await session.set("selectbox", self.source_key, label)

    async def act(self, session: StreamlitSession, value: object) -> RunResult:
        status, result = await session.upload(self.key, f"table{value}.npy", self.table(int(value)))
        if result is None:
            raise UploadFailed(status)
        return result

    def check_usable(self, session: StreamlitSession, result: RunResult) -> None:
        if not result.charts():
            raise KeyError("an uploaded table draws no chart")


@dataclass(frozen=True)
class LabScenario:
    """Press a lab page's Run button, then rerun the page (as the live view does) until it ends."""

    page: str  # e.g. "lab_learned"
    button: str  # e.g. "lab_learned_go"
    values: tuple[int, ...] = (0,)
    limit_s: float = 120
    #: seconds between the waiting session's reruns: a browser reruns the live view's fragment
    #: every POLL_S (1 s); this client can only rerun the whole page, about ten times the work,
    #: so a burst of many sessions polls less often (cluster smoke: the replicas' full reruns
    #: took 0.95 of a core and starved the training)
    poll_s: float = 1.0

    @property
    def name(self) -> str:
        return f"{self.page}:run"

    async def prepare(self, session: StreamlitSession) -> None:
        await session.run()

    async def act(self, session: StreamlitSession, value: object) -> RunResult:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        result = await session.run()
        buttons = {b.key for b in result.tree.get("button")}
        if self.button not in buttons:  # already stored: a reader looks at it for a while
            await asyncio.sleep(2)  # think time, not a wait for a condition
            return result
        widget = session.widget("button", self.button)
        result = await session.run([WidgetState(id=widget.id, trigger_value=True)])
        deadline = time.monotonic() + self.limit_s
        while {b.key for b in result.tree.get("button")} & {self.button, self.stop_key}:
            if time.monotonic() > deadline or result.exceptions or result.errors:
                break
            await asyncio.sleep(self.poll_s)  # the refresh period (see poll_s)
            result = await session.run()
        return result

    @property
    def stop_key(self) -> str:
        return self.button.removesuffix("go") + "stop"

    def check_usable(self, session: StreamlitSession, result: RunResult) -> None:
        if result.exceptions:
            raise KeyError(result.exceptions[0])


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
    uploads: Counter = field(default_factory=Counter)  # HTTP status of every upload PUT
    lab_runs: Counter = field(default_factory=Counter)  # how each lab run ended
    sessions: dict[int, SessionLog] = field(default_factory=dict)

    def error(self, kind: str, detail: str, log: SessionLog | None = None) -> None:
        self.errors[kind] += 1
        if log is not None:
            log.errors += 1
        if len(self.examples) < 10:
            self.examples.append(f"{kind}: {detail[:400]}")


@dataclass
class SessionLog:
    """What one session went through: where it was pinned, lost connections, rebuilt views."""

    scenario: str
    affinity: str = ""  # the proxy's affinity cookie (one value per replica)
    errors: int = 0
    checked: int = 0  # runs whose chart was compared with the reference
    disconnects: int = 0
    reconnect_seconds: list[float] = field(default_factory=list)
    rebuilt_same: int = 0  # after a reconnect, the view from the URL equals the reference
    rebuilt_other: int = 0  # ... or it does not (the URL does not hold all of the view)
    rebuilt_other_how: list[str] = field(default_factory=list)  # how each differs, per value seen
    retries: list[str] = field(default_factory=list)  # failed reconnect attempts, and why


# ---------------------------------------------------------------------------------------------


def start_app(port: int, env: dict[str, str]) -> subprocess.Popen:
    """``streamlit run app.py`` on ``127.0.0.1:port`` (not waited for)."""
    cmd = [sys.executable, "-m", "posviz.ui.launch", "run", "app.py", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true",
           "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]  # fmt: skip
    return subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip


@contextlib.contextmanager
def app_server(env: dict[str, str]) -> Iterator[tuple[str, int]]:
    """posviz on a free loopback port; yields (base URL, server pid); stopped on exit."""
    port = free_port()
    proc = start_app(port, env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=120)
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        stop_process(proc, timeout=15)


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


def hosted_env(hub_url: str, hf_home: str) -> dict[str, str]:
    """The hosted profile with a private HF cache and hub ids served by the loopback hub."""
    return {"POSVIZ_HOSTED": "1", "HF_ENDPOINT": hub_url, "HF_HOME": hf_home,
            "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip


@contextlib.contextmanager
def load_target() -> Iterator[tuple[str, int]]:
    """The server under load: hosted profile, a private HF cache, hub ids from a loopback hub."""
    with (
        tiny_hub() as hub_url,
        tempfile.TemporaryDirectory() as hf_home,
        app_server(hosted_env(hub_url, hf_home)) as target,
    ):
        yield target


@dataclass
class Cluster:
    """N loopback replicas sharing secret, HF cache and lab store, and the proxy in front."""

    env: dict[str, str]
    ports: list[int]
    procs: list[subprocess.Popen]
    lab_dir: Path
    workdir: Path
    url: str = ""

    def pids(self) -> list[int | None]:
        return [p.pid if p.poll() is None else None for p in self.procs]

    def kill(self, i: int) -> None:
        """SIGKILL replica ``i``: no goodbye to its sessions, as the kernel's OOM killer does."""
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait()

    def restart(self, i: int) -> None:
        """Start replica ``i`` again on its port (the orchestrator's restart policy)."""
        self.procs[i] = start_app(self.ports[i], self.env)


@contextlib.contextmanager
def cluster(replicas: int) -> Iterator[Cluster]:
    """``replicas`` servers on free loopback ports, hosted profile, shared state; then stopped."""
    with (
        tiny_hub() as hub_url,
        tempfile.TemporaryDirectory() as hf_home,
        tempfile.TemporaryDirectory() as lab_dir,
        tempfile.TemporaryDirectory() as workdir,
    ):
        env = hosted_env(hub_url, hf_home) | {
            "POSVIZ_LAB_DIR": lab_dir,
            "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32),  # one secret for all
        }
        ports = [free_port() for _ in range(replicas)]
        procs = [start_app(port, env) for port in ports]
        group = Cluster(env, ports, procs, Path(lab_dir), Path(workdir))
        try:
            for port, proc in zip(ports, procs, strict=True):
                wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=120)
            yield group
        finally:
            for proc in group.procs:
                stop_process(proc, timeout=15)


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def rss_mb(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------------------------------------


async def usable_scenarios(url: str, scenarios: tuple, skipped: dict | None = None) -> list:
    """Scenarios whose page and widget exist (and whose values the widget accepts); the others
    go to ``skipped`` (name -> why)."""
    usable = []
    for sc in scenarios:
        try:
            async with StreamlitSession(url, sc.page) as session:
                await sc.prepare(session)
                result = await sc.act(session, sc.values[0])
                sc.check_usable(session, result)
            usable.append(sc)
        except (KeyError, RuntimeError, UploadFailed) as exc:
            print(f"  skip {sc.name}: {exc}")
            if skipped is not None:
                skipped[sc.name] = str(exc)[:300]
    return usable


async def reference(url: str, sc) -> dict[object, str]:
    """The chart digest for each value, from one session with the server otherwise idle.

    Pages may keep state across values (a dependent slider clamped when a range shrinks), so the
    values are cycled twice in the order the load sessions use and the second cycle is recorded:
    that is the state every load session reaches after its own first cycle.
    """
    digests = {}
    async with StreamlitSession(url, sc.page) as session:
        await sc.prepare(session)
        for value in sc.values + sc.values:
            result = await sc.act(session, value)
            if result.exceptions or result.errors:
                raise RuntimeError(f"{sc.name}={value!r}: {result.exceptions or result.errors}")
            digests[value] = result.chart_digest()
            REFERENCE_PARTS[(sc.name, value)] = result.chart_parts()
    if len(set(digests.values())) < len(digests):
        print(f"  note: {sc.name}: some values draw identical charts")
    return digests


#: each reference run's charts, ``(scenario name, value) → chart parts``: what a wrong chart is
#: compared with, chart by chart, to say which one differs and how (:func:`chart_difference`)
REFERENCE_PARTS: dict[tuple[str, object], list[ChartPart]] = {}


def _frame(data: bytes):
    """A dataset's Arrow IPC stream (as Streamlit sends it) as a pandas frame."""
    import pyarrow as pa

    return pa.ipc.open_stream(data).read_all().to_pandas()


def dataset_difference(got: bytes, want: bytes) -> str:
    """How two datasets differ, in numbers: their shapes, or per column the largest |Δ| (numeric
    columns; NaN equals NaN) or the count of differing cells (the others)."""
    a, b = _frame(got), _frame(want)
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return f"{len(a)} rows × {list(a.columns)} vs reference {len(b)} rows × {list(b.columns)}"
    said = []
    for column in a.columns:
        x, y = a[column].to_numpy(), b[column].to_numpy()
        if x.dtype.kind in "fiub" and y.dtype.kind in "fiub":
            x, y = x.astype(np.float64), y.astype(np.float64)
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            if not same.all():
                delta = np.abs(np.where(same, 0.0, x - y))
                scale = float(np.nanmax(np.abs(y))) if np.isfinite(y).any() else 0.0
                said.append(
                    f"{column}: {int((~same).sum())} of {len(x)} values, max |Δ| "
                    f"{float(np.nanmax(delta)):.3g} (|reference| ≤ {scale:.3g})"
                )
        else:
            differ = int((a[column].astype(str) != b[column].astype(str)).sum())
            if differ:
                said.append(f"{column}: {differ} of {len(x)} values")
    return "; ".join(said) or "equal values, other bytes (Arrow metadata or types)"


def _data_difference(got: ChartPart, want: ChartPart) -> str:
    """Why one chart's data bytes differ from the reference's, with the same spec."""
    got_sets, want_sets = list(got.datasets), list(want.datasets)
    if sorted(got_sets) == sorted(want_sets):
        return "the same datasets in another order"
    extra = [(n, d) for n, d in got_sets if (n, d) not in want_sets]
    missing = [(n, d) for n, d in want_sets if (n, d) not in got_sets]
    if not missing:
        unused = [f"{len(_frame(d))} rows × {list(_frame(d).columns)}" for _, d in extra]
        drawn = [n for n, _ in extra if n and f'"{n}"' in got.spec]
        return (
            f"{len(extra)} dataset(s) more than the reference, "
            f"{'drawn' if drawn else 'not named in the spec (another chart’s data)'}: "
            + ", ".join(unused)
        )
    if len(got_sets) == len(want_sets):  # same places in the spec (see chart_difference)
        return "; ".join(
            f"dataset {k + 1} of {len(want_sets)}: {dataset_difference(g, w)}"
            for k, ((_, g), (_, w)) in enumerate(zip(got_sets, want_sets, strict=True))
            if g != w
        )
    return f"{len(got_sets)} datasets, reference {len(want_sets)} ({len(missing)} missing)"


def _unnamed(part: ChartPart) -> str:
    """The spec with each dataset's name (Streamlit names a dataset by a hash of its bytes)
    replaced by its place, so that other data is told apart from another spec."""
    spec = part.spec
    for k, (name, _) in enumerate(part.datasets):
        if name:
            spec = spec.replace(f'"{name}"', f'"dataset {k + 1}"')
    return spec


def chart_difference(got: list[ChartPart], want: list[ChartPart]) -> str:
    """Where a run's charts differ from the reference's: their count, or the first chart whose
    spec (with the first differing stretch of both) or data differs, and by how much (the
    largest |Δ| of the decoded data, or the datasets that are not the reference's): a last-bit
    difference reads ~1e-16, another session's chart reads as other shapes or values."""
    if len(got) != len(want):
        return f"{len(got)} charts, reference {len(want)}"
    for i, (part, ref) in enumerate(zip(got, want, strict=True)):
        spec, ref_spec = _unnamed(part), _unnamed(ref)
        if spec != ref_spec:
            at = next(
                (k for k, (a, b) in enumerate(zip(spec, ref_spec, strict=False)) if a != b),
                min(len(spec), len(ref_spec)),
            )
            return (
                f"chart {i + 1} of {len(got)}: spec differs at {at}: "
                f"{spec[max(at - 40, 0) : at + 60]!r} vs {ref_spec[max(at - 40, 0) : at + 60]!r}"
            )
        if part.data != ref.data:
            return (
                f"chart {i + 1} of {len(got)}: same spec, other data: {_data_difference(part, ref)}"
            )
    return "same charts (the digest differs only in order)"


def _judge(
    result: RunResult, sc, value: object, refs: dict, stats: Stats, log: SessionLog, *, check: bool
) -> None:
    """Count one run: errors on the page, and (when ``check``) its charts against the reference."""
    stats.runs += 1
    stats.latencies.append(result.seconds)
    stats.bytes += result.bytes_received
    if result.exceptions:
        stats.error("exception", f"{sc.name}={value!r}: {result.exceptions[0]}", log)
    elif result.errors:
        stats.error("error box", f"{sc.name}={value!r}: {result.errors[0]}", log)
    elif isinstance(sc, LabScenario):
        stats.lab_runs["finished" if result.charts() else "unfinished"] += 1
    elif check and value in refs:
        stats.checked += 1
        log.checked += 1
        if result.chart_digest() != refs[value]:
            want = REFERENCE_PARTS.get((sc.name, value))
            how = f" ({chart_difference(result.chart_parts(), want)})" if want else ""
            stats.error("wrong chart", f"{sc.name}={value!r}{how}", log)


async def first_cycle(url: str, sc, path: tuple) -> set[str]:
    """The chart digests a session can show when it is lost during its first cycle through the
    values, after ``path`` (the values it has set so far, the one in flight last): the view
    before the last value (when one was set before it) and the view after it, replayed in a fresh
    session.

    The reference (:func:`reference`) is the state after a whole cycle, and a page may keep state
    across values: on /learned the 40-row tiny hub model clamps the Position to 39 and the larger
    tables keep it, so a session that has not yet visited that table shows 63 where the reference
    shows 39 (scale-smoke run 10: both "other" views were such sessions). Compared with the
    reference, such a session's rebuilt view is another view although the URL rebuilt it exactly.
    """
    digests = set()
    async with StreamlitSession(url, sc.page) as session:
        await sc.prepare(session)
        for i, value in enumerate(path):
            result = await sc.act(session, value)
            if i >= len(path) - 2:
                digests.add(result.chart_digest())
    return digests


async def _recover(session: StreamlitSession, sc, seen: tuple, refs: dict, stats: Stats,
                   log: SessionLog, *, url: str = "", path: tuple = ()) -> None:  # fmt: skip
    """Reconnect after a lost connection and check the view the URL rebuilds.

    ``seen``: the values the view may show, the last finished one and the one in flight (the
    URL changes when the server has taken the new value, which the lost run may or may not have
    reached); none when the connection was lost before the first view was drawn. ``path``: set
    when the loss came during the session's first cycle through the values, the values it set
    so far (the state it may show is then that path's, replayed at ``url``: :func:`first_cycle`).
    """
    log.disconnects += 1
    lost = time.monotonic()
    for attempt in range(10):
        try:
            result = await session.reconnect()
            rebuilt = time.monotonic()  # the view is back; what follows is this client's own setup
            if isinstance(sc, UploadScenario | Scenario):
                await sc.prepare(session)  # uploads are not in the URL; setup steps may not be
            break
        except (
            OSError,
            websockets.exceptions.WebSocketException,
            TimeoutError,
            RuntimeError,
        ) as exc:
            log.retries.append(f"{time.monotonic() - lost:.1f}s {type(exc).__name__}: {exc}"[:160])
            await asyncio.sleep(0.5 * (attempt + 1))  # back off while the proxy notices
    else:
        raise ConnectionError(f"{sc.name}: no replica took the session back")
    log.reconnect_seconds.append(rebuilt - lost)
    if result.exceptions:
        stats.error("exception after reconnect", f"{sc.name}: {result.exceptions[0]}", log)
    wanted = {refs[v] for v in seen if v in refs}
    if isinstance(sc, Scenario | PageTour) and wanted and path:
        wanted = await first_cycle(url, sc, path)
        same = result.chart_digest() in wanted
        log.rebuilt_same += same
        log.rebuilt_other += not same
        if not same:  # against each value the view may show: which chart moved, and how much
            log.rebuilt_other_how.append(f"{sc.name}, seen {seen!r}: " + "; ".join(
                f"vs {v!r}: {chart_difference(result.chart_parts(), REFERENCE_PARTS[(sc.name, v)])}"
                for v in seen if (sc.name, v) in REFERENCE_PARTS
            ))  # fmt: skip


async def one_session(
    url: str,
    sc,
    refs: dict,
    offset: int,
    deadline: float,
    stats: Stats,
    log: SessionLog,
    *,
    reconnect: bool = False,
    checks: int | None = None,
) -> None:
    """Cycle through the scenario's values until the deadline (or, with ``checks``, until that
    many charts were checked); check every chart.

    With ``reconnect`` a lost connection is not the end: the session reconnects (as a browser
    does), the rebuilt view is checked, and the session goes on; the loss is logged, and judged by
    the caller (expected only on a replica that was killed).
    """
    session = StreamlitSession(url, sc.page, timeout=90)
    last = None
    try:
        await session.connect()
        log.affinity = session.cookies.get("posviz_affinity", "")
        try:
            await sc.prepare(session)
        except (OSError, websockets.exceptions.WebSocketException):
            # the replica died during the page's first run (a loaded machine takes 30 s and more
            # for a lab page's first run): a browser reconnects then too
            if not reconnect:
                raise
            await _recover(session, sc, (), refs, stats, log)
        # the first time through the values only draws (a chart is checked from the second on)
        last_step = None if checks is None else len(sc.values) + checks
        for step in itertools.count():
            if time.monotonic() >= deadline or step == last_step:
                break
            value = sc.values[(offset + step) % len(sc.values)]
            try:
                result = await sc.act(session, value)
            except UploadFailed as failed:
                stats.uploads[failed.args[0]] += 1
                stats.error("upload refused", f"{sc.name}: HTTP {failed.args[0]}", log)
                continue
            except (OSError, websockets.exceptions.WebSocketException):
                if not reconnect:
                    raise
                if isinstance(sc, LabScenario):
                    stats.lab_runs["interrupted"] += 1
                first = tuple(sc.values[(offset + i) % len(sc.values)] for i in range(step + 1))
                await _recover(session, sc, (last, value), refs, stats, log, url=url,
                               path=first if step < len(sc.values) else ())  # fmt: skip
                continue
            if isinstance(sc, UploadScenario):
                stats.uploads[204] += 1
            last = value
            _judge(result, sc, value, refs, stats, log, check=step >= len(sc.values))
    except TimeoutError:
        stats.error("timeout", f"{sc.name}: no answer within 90 s", log)
    except (OSError, websockets.exceptions.WebSocketException) as exc:
        stats.error("connection", f"{sc.name}: {type(exc).__name__}: {exc}", log)
    except Exception as exc:
        stats.error(type(exc).__name__, f"{sc.name}: {exc}", log)
    finally:
        with contextlib.suppress(OSError, websockets.exceptions.WebSocketException):
            await session.close()


async def sample_rss(pids, until: float, peak: list[float], timeline: list,
                     peaks: list[float] | None = None,
                     finished: asyncio.Event | None = None) -> None:  # fmt: skip
    """Peak RSS (sampled each second) and a coarse timeline (every 10 s), summed over ``pids``,
    until ``until`` or ``finished``; ``peaks`` gets each pid's own peak (by position)."""
    start = time.monotonic()
    while time.monotonic() < until and not (finished and finished.is_set()):
        # a replica killed a moment ago (the compose run's kill: Docker reports its old pid
        # until the restart) has no /proc entry: it holds nothing, not NaN (the compose smoke
        # failed on round(nan) when a sample fell in that window)
        current = [_finite(rss_mb(p)) for p in pids()]
        if peaks is not None:
            peaks[:] = [
                max(a, b) for a, b in zip(peaks or [0.0] * len(current), current, strict=True)
            ]
        rss = sum(current)
        peak[0] = max(peak[0], rss)
        if len(timeline) <= (time.monotonic() - start) // 10:
            timeline.append(round(rss))
        await asyncio.sleep(1)  # a sampling period, not a wait for a condition


def _assign(usable: list, sessions: int) -> list:
    """Session i's scenario: a lab scenario (heavy: training) gets one session, the rest cycle."""
    labs = [sc for sc in usable if isinstance(sc, LabScenario)][:1]
    rest = [sc for sc in usable if not isinstance(sc, LabScenario)] or labs
    return labs + [rest[i % len(rest)] for i in range(sessions - len(labs))]


async def run_load(
    url: str,
    pid,
    sessions: int,
    seconds: float,
    scenarios: tuple,
    *,
    fault=None,
    reconnect: bool = False,
    known: dict | None = None,
    checks: int | None = None,
) -> dict:
    """Load ``url`` with ``sessions`` sessions for ``seconds``; ``pid``: one pid, or a callable
    returning the replicas' pids. ``fault``: an async callable run alongside (e.g. a kill).
    ``checks``: each session ends once it has checked that many charts (the condition;
    ``seconds`` is then the limit)."""
    print(f"server {url}, {sessions} sessions for {seconds:.0f} s")
    skipped: dict[str, str] = {}
    if known is not None:  # scenarios and references from an earlier run (no checks here)
        usable, refs = list(known), dict(known)
    else:
        usable = await usable_scenarios(url, scenarios, skipped)
        refs = {}
    if not usable:
        raise SystemExit("no usable scenario: none of the pages/widgets exist")
    for sc in usable:
        if sc not in refs:
            refs[sc] = {} if isinstance(sc, LabScenario) else await reference(url, sc)
        print(
            f"  reference {sc.name}: {len(refs[sc])} values, "
            f"{len(set(refs[sc].values()))} distinct charts"
        )
    pids = pid if callable(pid) else (lambda: [pid])
    rss_before = sum(rss_mb(p) for p in pids() if p is not None)
    stats = Stats()
    start = time.monotonic()
    deadline = start + seconds
    peak, timeline = [rss_before], []
    tasks = []
    for i, sc in enumerate(_assign(usable, sessions)):
        stats.sessions[i] = SessionLog(sc.name)
        log = stats.sessions[i]
        session = one_session(url, sc, refs[sc], i, deadline, stats, log, reconnect=reconnect,
                              checks=checks)  # fmt: skip
        tasks.append(session)
    extra = [fault(stats)] if fault else []
    peaks: list[float] = []
    finished = asyncio.Event()

    async def sessions_then_done() -> None:
        await asyncio.gather(*tasks)
        finished.set()

    await asyncio.gather(
        sample_rss(pids, deadline, peak, timeline, peaks, finished), sessions_then_done(), *extra
    )
    took = time.monotonic() - start
    rss_after = sum(rss_mb(p) for p in pids() if p is not None)
    lat = sorted(stats.latencies) or [float("nan")]
    report = {
        "sessions": sessions,
        "scenarios": [sc.name for sc in usable],
        "skipped_scenarios": skipped,
        "seconds": round(took, 1),
        "runs": stats.runs,
        "charts_checked": stats.checked,
        "runs_per_s": round(stats.runs / took, 2),
        "latency_p50_s": round(statistics.median(lat), 3),
        "latency_p95_s": round(lat[int(0.95 * (len(lat) - 1))], 3),
        "latency_max_s": round(lat[-1], 3),
        "mb_received": round(stats.bytes / 2**20, 1),
        "errors": dict(stats.errors),
        "uploads_by_status": dict(stats.uploads),
        "lab_runs": dict(stats.lab_runs),
        "rss_before_mb": round(rss_before, 1),
        "rss_peak_mb": round(peak[0], 1),
        "rss_after_mb": round(rss_after, 1),
        "rss_every_10s_mb": timeline,
        "_stats": stats,
        "_refs": refs,
        "_peaks": peaks,
    }
    for line in stats.examples:
        print(f"  ! {line}")
    return report


# --------------------------------------------------------------------------------------------- N


_SCENARIO = {sc.name: sc for sc in SCENARIOS}
SCALE_SCENARIOS: tuple = (
    *(
        _SCENARIO[name]
        for name in (
            "sinusoidal:sin_pos",
            "sinusoidal:sin_layout",
            "nope:nope_n",
            "learned:lrn_a_src",
            "learned:lrn_a_hub",  # every replica fills the one shared HF cache
        )
    ),
    PageTour(("sinusoidal", "nope", "alibi", "t5_buckets", "")),  # "": the default page (home)
    UploadScenario(),
)


def lab_pages() -> list[str]:
    """The url paths of the lab question pages (``lab_<question>``)."""
    sys.path.insert(0, str(ROOT))
    from posviz.navigation import all_pages

    return [spec.url_path for spec in all_pages() if spec.url_path.startswith("lab_")]


def lab_scenarios() -> tuple:
    """A Run on the first lab question page the app navigates to (none while the lab has none)."""
    sys.path.insert(0, str(ROOT))
    from posviz.navigation import all_pages

    for spec in all_pages():
        if spec.url_path.startswith("lab_"):
            return (LabScenario(spec.url_path, f"{spec.url_path}_go"),)
    return ()


#: the question burst's own settings: a short run (the property, one training across the
#: replicas, does not depend on its size) that a busy machine still trains in minutes
BURST_SETTINGS = {"steps": "60", "seeds": "2"}
#: how long a burst may wait for its training on a busy machine (at load ≈ 8 on 2 cores the
#: preset question took 621 s and the cheapest paper check longer)
BURST_LIMIT_S = 1800


def burst_targets(loaded: set[str]) -> list[tuple[str, str, str]]:
    """``(page, Run button, query)`` of the lab bursts: the last question page the load did not
    train, at :data:`BURST_SETTINGS` (set through its link), and the paper checks' page with its
    cheapest check (questions and paper checks share one runner and one run id; both must train
    once across the replicas)."""
    sys.path.insert(0, str(ROOT))
    from posviz.lab.present.live import card_plan
    from posviz.lab.studies.papers import PAPER_CHECKS

    pages = lab_pages()
    questions = [p for p in pages if p not in loaded and p not in ("lab", "lab_papers")]
    targets = []
    if questions:
        page = questions[-1]
        query = "&".join(f"{page}_{name}={value}" for name, value in BURST_SETTINGS.items())
        targets.append((page, f"{page}_go", query))
    if "lab_papers" in pages and PAPER_CHECKS:
        cheapest = min(PAPER_CHECKS, key=lambda c: card_plan(c).estimate_s)
        targets.append(("lab_papers", f"lab_papers_{cheapest}_go", ""))
    return targets


def verify_lab_store(lab_dir: Path) -> dict:
    """Every entry of the shared lab store loads (none half-written by a killed replica)."""
    try:
        from posviz.lab.engine.store import RunStore
        from posviz.labfiles import SECRET, CorruptEntry, NoEntry, find_root, read_entry
    except ImportError as exc:  # the lab is being built: report instead of failing
        return {"checked": False, "why": f"posviz.lab.store not importable: {exc}"}
    store = RunStore(lab_dir)
    folders = [p for p in lab_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]

    def loads(run_id: str) -> bool:
        """A question's run or a paper check's (the bursts store both), loaded whole."""
        try:
            meta, _ = read_entry(find_root(lab_dir, run_id), run_id)
            load = store.load_card if meta.get("type") == "paper_check" else store.load
            return load(run_id) is not None
        except (CorruptEntry, NoEntry):
            return False

    loaded = [f.name for f in folders if loads(f.name)]
    # the store's write lock, the replicas' run claims and the store's integrity key
    kept = {".lock", ".claims", SECRET}
    temps = [p.name for p in lab_dir.iterdir() if p.name.startswith(".") and p.name not in kept]
    return {
        "checked": True,
        "entries": len(folders),
        "loaded": len(loaded),
        "unloadable": sorted(set(f.name for f in folders) - set(loaded)),
        "leftovers": temps,
    }


def verify_hf_cache(env: dict[str, str]) -> dict:
    """Every hub table in the shared HF cache loads offline and equals what the hub served.

    The replicas fetched them concurrently (and one was killed mid-run); the tiny hub's tables
    are seeded by their index, so the right answer is known exactly.
    """
    from posviz.tables import load_table

    keys = ("HF_HOME", "HF_ENDPOINT", "HF_HUB_OFFLINE")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update({"HF_HOME": env["HF_HOME"], "HF_ENDPOINT": env["HF_ENDPOINT"],
                       "HF_HUB_OFFLINE": "1"})  # fmt: skip
    equal, problems = 0, []
    try:
        for i, (repo, (_config, _tensor, shape)) in enumerate(TINY_HUB_MODELS.items()):
            expected = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
            try:
                table = load_table(repo)
            except ValueError as exc:  # not cached (no session fetched it) or unreadable
                problems.append(f"{repo}: {exc}"[:200])
                continue
            rows = table.matrix.shape[0]
            # registry families may set rows aside (none of these three do)
            if np.array_equal(table.matrix, expected[-rows:]):
                equal += 1
            else:
                problems.append(f"{repo}: cached table differs from the hub's")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return {"models": len(TINY_HUB_MODELS), "equal": equal, "problems": problems}


def judge_kill(stats: Stats, victim_group: set[str]) -> dict:
    """Sessions on the killed replica reconnected and rebuilt; the others saw nothing."""
    on_victim = [log for log in stats.sessions.values() if log.affinity in victim_group]
    others = [log for log in stats.sessions.values() if log.affinity not in victim_group]
    waits = sorted(s for log in on_victim for s in log.reconnect_seconds)
    return {
        "killed_sessions": len(on_victim),
        "killed_reconnected": sum(log.disconnects > 0 for log in on_victim),
        "killed_errors": sum(log.errors for log in on_victim),
        "killed_rebuilt_same_view": sum(log.rebuilt_same for log in on_victim),
        "killed_rebuilt_other_view": sum(log.rebuilt_other for log in on_victim),
        "rebuilt_other_how": [how for log in on_victim for how in log.rebuilt_other_how][:4],
        "lost_to_rebuilt_view_s_median": round(statistics.median(waits), 2) if waits else None,
        "lost_to_rebuilt_view_s_max": round(waits[-1], 2) if waits else None,
        "failed_reconnect_attempts": [r for log in on_victim for r in log.retries][:6],
        "other_sessions": len(others),
        "other_disconnected": sum(log.disconnects > 0 for log in others),
        "other_errors": sum(log.errors for log in others),
    }


async def _kill_and_restart(
    group: Cluster, stats: Stats, *, after: float, restart_after: float, events: dict
) -> None:
    """Kill the replica serving session 0's affinity group, restart it later, note who it was."""
    await asyncio.sleep(after)  # a point in the run, not a wait for a condition
    # the replica behind a cookie is not visible to a client; kill one, then see whose cookies broke
    victim = 0
    before = {i: log.disconnects for i, log in stats.sessions.items()}
    group.kill(victim)
    events["killed"] = {"replica": victim, "port": group.ports[victim], "at_s": after}
    await asyncio.sleep(restart_after)
    group.restart(victim)
    events["restarted_after_s"] = restart_after
    broken = {
        stats.sessions[i].affinity for i, n in before.items() if stats.sessions[i].disconnects > n
    }
    events["victim_cookies"] = broken


#: a burst's sessions rerun the whole page this often while they wait (see LabScenario.poll_s)
POLL_BURST_S = 10.0


async def lab_burst(
    url: str,
    page: str,
    sessions: int,
    lab_dir: Path,
    limit_s: float,
    *,
    button: str = "",
    query: str = "",
) -> dict:
    """``sessions`` tabs (spread over the replicas by the proxy) open ``page`` at ``query`` and
    press Run (``button``, default ``<page>_go``) at once: one training should serve them all (one
    job per replica, the store's claim across replicas). Counts this burst's trainings and claims
    in the claims log and the store's new entries, and compares what every session shows at the
    end."""
    scenario = LabScenario(page, button or f"{page}_go", limit_s=limit_s, poll_s=POLL_BURST_S)
    clients = [StreamlitSession(url, page, query, timeout=limit_s + 60) for _ in range(sessions)]
    log = lab_dir / ".claims" / "claims.log"
    before = len(log.read_text().splitlines()) if log.exists() else 0
    had = {p.name for p in lab_dir.iterdir()} if lab_dir.exists() else set()
    start = time.monotonic()
    try:
        for client in clients:
            await client.connect()
        await asyncio.gather(*(client.run() for client in clients))
        await asyncio.gather(*(scenario.act(client, 0) for client in clients))
        finals = await asyncio.gather(*(client.run() for client in clients))
    finally:
        for client in clients:
            with contextlib.suppress(OSError, websockets.exceptions.WebSocketException):
                await client.close()
    lines = (log.read_text().splitlines() if log.exists() else [])[before:]
    entries = [
        p.name
        for p in lab_dir.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name not in had
    ]
    replicas = {c.cookies.get("posviz_affinity", "") for c in clients}
    return {
        "page": page,
        "button": scenario.button,
        "sessions": sessions,
        "replicas_used": len(replicas),
        "seconds": round(time.monotonic() - start, 1),
        "trainings": sum(" training " in f" {line} " for line in lines),
        "claims": sum(" claimed " in f" {line} " for line in lines),
        "store_entries": len(entries),
        "distinct_answers": len({final.chart_digest() for final in finals}),
        "with_charts": sum(bool(final.charts()) for final in finals),
        # the stored answer is shown where the Run button was (the page offers Run only without it)
        "answered": sum(
            scenario.button not in {b.key for b in final.tree.get("button")} for final in finals
        ),
        "errors": [e for final in finals for e in (final.exceptions + final.errors)][:3],
    }


#: how long a browser wait of the scale run may take on a busy machine (a condition, not a pause)
BUSY_WAIT_MS = 300_000


def browser_reconnect(group: Cluster, url: str) -> dict:
    """A real Chromium tab through the proxy survives every replica being killed in turn.

    The tab opens a page from a link (``nope_n=64``); each replica is SIGKILLed, restarted and
    waited for, one after the other, so the tab's own replica dies exactly once and a survivor is
    always up. Then the tab must still show the linked value with no exception box, and a click
    on another page in the sidebar must reach a live session (that page runs and sets its URL).
    """
    sys.path.insert(0, str(ROOT / "tests"))
    from browser_support import browser_page, find_chromium, wait_for_app

    if find_chromium() is None:
        return {"checked": False, "why": "no Chromium (apt-get install chromium)"}
    slider = '[data-testid="stSlider"] input[type="range"]'
    with browser_page() as page:
        # conditions, waited for as long as a busy machine needs (load ≈ 11 on 2 cores took more
        # than the 60 s default for the first page of replicas that had just trained under load)
        page.set_default_timeout(BUSY_WAIT_MS)
        page.goto(f"{url}/nope?nope_n=64&nope_d=32")
        wait_for_app(page, timeout_ms=BUSY_WAIT_MS)
        start = page.locator(slider).first.input_value()
        for i in range(len(group.procs)):
            group.kill(i)
            time.sleep(2)  # the tab notices and reconnects while the replica is gone
            group.restart(i)
            wait_healthy(f"http://127.0.0.1:{group.ports[i]}", group.procs[i], timeout=120)
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
        kept = page.locator(slider).first.input_value()
        exceptions = page.locator('[data-testid="stException"]').count()
        # a live session: a page switch (it needs the websocket) runs and writes its own URL
        page.get_by_role("link", name="Sinusoidal").click()
        page.wait_for_function("() => location.search.includes('sin_n=')")
        wait_for_app(page, timeout_ms=BUSY_WAIT_MS)
        exceptions += page.locator('[data-testid="stException"]').count()
        return {"checked": True, "value_before": start, "value_after_kills": kept,
                "exception_boxes": exceptions, "live_after": page.url.split("?")[-1]}  # fmt: skip


def scale_main(args: argparse.Namespace) -> int:
    """Replicas + proxy on loopback: load with a kill, the store check, then affinity off."""
    from proxy import haproxy

    scenarios = SCALE_SCENARIOS + lab_scenarios()
    summary: dict = {"replicas": args.replicas}
    with cluster(args.replicas) as group:
        proxy_port = free_port()
        with haproxy(group.workdir / "proxy", port=proxy_port, ports=group.ports) as url:
            events: dict = {}
            fault = None
            if args.kill_after:

                async def fault(stats):
                    await _kill_and_restart(
                        group,
                        stats,
                        after=args.kill_after,
                        restart_after=args.restart_after,
                        events=events,
                    )

            report = asyncio.run(
                run_load(
                    url,
                    group.pids,
                    args.sessions,
                    args.seconds,
                    scenarios,
                    fault=fault,
                    reconnect=True,
                )
            )
            stats: Stats = report.pop("_stats")
            refs = report.pop("_refs")
            summary["examples"] = stats.examples
            summary["load"] = report
            summary["rss_per_replica_mb"] = {
                f"replica{i + 1}": {"peak": round(peak, 1), "after": round(rss_mb(pid), 1)}
                for i, (peak, pid) in enumerate(
                    zip(report.pop("_peaks"), group.pids(), strict=True)
                )
            }
            if args.kill_after:
                victims = events.get("victim_cookies", set())
                summary["kill"] = {
                    **{k: v for k, v in events.items() if k != "victim_cookies"},
                    **judge_kill(stats, victims),
                }
        if args.lab_burst:  # a question the load did not train (uncached), then a paper check
            with haproxy(group.workdir / "proxy-lab", port=free_port(), ports=group.ports) as url:
                summary["lab_burst"] = [
                    asyncio.run(
                        lab_burst(
                            url,
                            page,
                            args.lab_burst,
                            group.lab_dir,
                            limit_s=BURST_LIMIT_S,
                            button=button,
                            query=query,
                        )
                    )
                    for page, button, query in burst_targets({sc.page for sc in scenarios})
                ]
        summary["lab_store"] = verify_lab_store(group.lab_dir)
        summary["hf_cache"] = verify_hf_cache(group.env)
        if args.browser:
            with haproxy(
                group.workdir / "proxy-browser", port=free_port(), ports=group.ports
            ) as url:
                summary["browser"] = browser_reconnect(group, url)
        if args.no_affinity_seconds:
            with haproxy(
                group.workdir / "proxy-off", port=free_port(), ports=group.ports, affinity=False
            ) as url:
                off = asyncio.run(
                    run_load(
                        url,
                        group.pids,
                        6,
                        args.no_affinity_seconds,
                        (),
                        reconnect=True,
                        known={UploadScenario(): refs.get(UploadScenario(), {})},
                    )
                )
                summary["affinity_off"] = {
                    "uploads_by_status": off["uploads_by_status"],
                    "errors": off["errors"],
                }
    return report_scale(summary)


def kill_problems(kill: dict) -> list[str]:
    """What went wrong around a killed replica (the same promises in the scale and compose runs)."""
    problems = []
    if kill["other_disconnected"] or kill["other_errors"]:
        problems.append("sessions on the surviving replicas were disturbed")
    if kill["killed_sessions"] == 0:
        problems.append("no session was on the killed replica (nothing was shown)")
    if kill["killed_reconnected"] != kill["killed_sessions"]:
        problems.append("not every session on the killed replica reconnected")
    if kill["killed_errors"] or kill["killed_rebuilt_other_view"]:
        problems.append("sessions on the killed replica did not get their view back")
    return problems


def verdict(problems: list[str], examples) -> int:
    """Print each problem, the example lines, then PASS or FAILED; return 0 only if none."""
    for problem in problems:
        print(f"FAIL: {problem}")
    for line in examples:
        print(f"  example: {line}")
    print("PASS" if not problems else "FAILED")
    return 0 if not problems else 1


def report_scale(summary: dict) -> int:
    """Print the summary; 0 only if everything the smoke test promises held."""
    import json

    print(json.dumps(summary, indent=2, default=sorted))
    load, problems = summary["load"], []
    kill = summary.get("kill")
    errors = dict(load["errors"])
    if kill:
        problems += kill_problems(kill)
    if errors:
        problems.append(f"errors: {errors}")
    store = summary["lab_store"]
    if store.get("checked") and (store["unloadable"] or store["loaded"] != store["entries"]):
        problems.append(f"lab store: {store}")
    cache = summary["hf_cache"]
    if cache["equal"] != cache["models"]:
        problems.append(f"shared HF cache: {cache}")
    browser = summary.get("browser")
    if (
        browser
        and browser.get("checked")
        and (browser["exception_boxes"] or browser["value_before"] != browser["value_after_kills"])
    ):
        problems.append(f"the browser tab did not come back whole: {browser}")
    for burst in summary.get("lab_burst") or []:
        if not (
            # one claim and one training: the other replicas wait, then read the store
            burst["trainings"] == 1 and burst["claims"] == 1
            and burst["distinct_answers"] == 1
            and not burst["errors"] and burst["answered"] == burst["sessions"]
        ):  # fmt: skip
            problems.append(f"lab burst: not one training with one answer for all: {burst}")
    off = summary.get("affinity_off")
    if off is not None and not any(code != 204 for code in off["uploads_by_status"]):
        problems.append("with affinity off no upload failed: the smoke cannot show the failure")
    return verdict(problems, summary.get("examples", []))


# --------------------------------------------------------------------------------------- compose

#: The scale scenarios without the loopback hub (containers reach no hub here).
COMPOSE_SCENARIOS: tuple = tuple(sc for sc in SCALE_SCENARIOS if sc.name != "learned:lrn_a_hub")


@dataclass
class ComposeGroup:
    """The app replicas of a running compose project, seen from the host as containers."""

    compose: list[str]  # the compose command line, e.g. docker compose -p P -f F --env-file E
    containers: list[str]

    @classmethod
    def find(cls, compose: list[str]) -> ComposeGroup:
        ids = subprocess.run([*compose, "ps", "-q", "app"], capture_output=True, text=True,
                             check=True).stdout.split()  # fmt: skip
        if not ids:
            raise SystemExit("no running app container in the compose project")
        return cls(compose, sorted(ids))

    def _inspect(self, i: int, field: str) -> str:
        done = subprocess.run(["docker", "inspect", "-f", field, self.containers[i]],
                              capture_output=True, text=True, check=True)  # fmt: skip
        return done.stdout.strip()

    def pids(self) -> list[int | None]:
        pids = [int(self._inspect(i, "{{.State.Pid}}") or 0) for i in range(len(self.containers))]
        return [pid or None for pid in pids]

    def health(self, i: int) -> str:
        return self._inspect(i, "{{.State.Health.Status}}")

    def restarts(self, i: int) -> int:
        return int(self._inspect(i, "{{.RestartCount}}"))

    def kill(self, i: int) -> None:
        """SIGKILL the replica's server process from the host, as the kernel's OOM killer would;
        Docker's restart policy (``restart: unless-stopped``) is what brings it back."""
        pid = self.pids()[i]
        if pid is None:
            raise RuntimeError(f"container {self.containers[i][:12]} is not running")
        os.kill(pid, signal.SIGKILL)


async def _kill_container(group: ComposeGroup, stats: Stats, *, after: float, events: dict) -> None:
    """Kill replica 0 ``after`` seconds in; wait for the restart policy to bring it back healthy."""
    await asyncio.sleep(after)  # a point in the run, not a wait for a condition
    before = {i: log.disconnects for i, log in stats.sessions.items()}
    restarts = group.restarts(0)
    group.kill(0)
    killed = time.monotonic()
    events["killed"] = {"container": group.containers[0][:12], "at_s": after}
    while group.restarts(0) == restarts and time.monotonic() - killed < 120:
        await asyncio.sleep(0.5)  # polling Docker: its restart policy starts the container again
    events["restarted_after_s"] = round(time.monotonic() - killed, 1)
    while group.health(0) != "healthy" and time.monotonic() - killed < 240:
        await asyncio.sleep(1)  # polling Docker's health status (starting -> healthy)
    events["back_healthy_after_s"] = round(time.monotonic() - killed, 1)
    events["restart_count"] = group.restarts(0) - restarts
    events["victim_cookies"] = {
        stats.sessions[i].affinity for i, n in before.items() if stats.sessions[i].disconnects > n
    }


def compose_main(args: argparse.Namespace) -> int:
    """Sessions through a running compose deployment's proxy, one replica container killed."""
    import json
    import shlex

    group = ComposeGroup.find(shlex.split(args.compose))
    events: dict = {}

    async def fault(stats):
        await _kill_container(group, stats, after=args.kill_after, events=events)

    load = run_load(
        args.url,
        group.pids,
        args.sessions,
        args.seconds,
        COMPOSE_SCENARIOS,
        fault=fault if args.kill_after else None,
        reconnect=True,
    )
    report = asyncio.run(load)
    stats: Stats = report.pop("_stats")
    report.pop("_refs")
    report.pop("_peaks")
    summary: dict = {"replicas": len(group.containers), "load": report}
    if args.kill_after:
        victims = events.pop("victim_cookies", set())
        summary["kill"] = {**events, **judge_kill(stats, victims)}
    summary["health_after"] = [group.health(i) for i in range(len(group.containers))]
    print(json.dumps(summary, indent=2, default=sorted))
    problems = []
    if report["errors"]:
        problems.append(f"errors: {report['errors']}")
    kill = summary.get("kill")
    if kill:
        problems += kill_problems(kill)
        if kill["restart_count"] < 1:
            problems.append("Docker did not restart the killed replica")
    if any(status != "healthy" for status in summary["health_after"]):
        problems.append(f"not every replica is healthy at the end: {summary['health_after']}")
    return verdict(problems, stats.examples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--url", help="an already running server (RSS is then not measured)")
    parser.add_argument(
        "--replicas",
        type=int,
        default=0,
        help="N loopback replicas behind the repo's HAProxy config",
    )
    parser.add_argument(
        "--kill-after",
        type=float,
        default=0,
        help="with --replicas: SIGKILL one replica after this many seconds",
    )
    parser.add_argument(
        "--restart-after",
        type=float,
        default=8,
        help="... and start it again this many seconds later",
    )
    parser.add_argument(
        "--browser",
        action="store_true",
        help="with --replicas: a Chromium tab must survive every replica being killed in turn",
    )
    parser.add_argument(
        "--lab-burst",
        type=int,
        default=0,
        help="with --replicas: then N sessions press Run on one uncached lab config at once",
    )
    parser.add_argument(
        "--compose",
        help="with --url: the compose command line of a running deployment (its app containers "
        "are the replicas; --kill-after kills one; scripts/compose-smoke.sh)",
    )
    parser.add_argument(
        "--no-affinity-seconds",
        type=float,
        default=0,
        help="with --replicas: then upload this long with affinity off",
    )
    args = parser.parse_args(argv)
    if not (1 <= args.sessions <= 200 and 1 <= args.seconds <= 600 and 0 <= args.replicas <= 10):
        parser.error("keep it bounded: 1-200 sessions, 1-600 seconds, 0-10 replicas")
    if args.replicas:
        return scale_main(args)
    if args.compose:
        if not args.url:
            parser.error("--compose needs --url (the proxy's address)")
        return compose_main(args)
    if args.url:
        report = asyncio.run(run_load(args.url, None, args.sessions, args.seconds, SCENARIOS))
    else:
        with load_target() as (url, pid):
            report = asyncio.run(run_load(url, pid, args.sessions, args.seconds, SCENARIOS))
    for key, value in report.items():
        if key.startswith("_"):
            continue
        print(f"{key:>16s}: {value}")
    return 0 if not report["errors"] and report["charts_checked"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
