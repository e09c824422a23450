"""The performance suite: one command, every ratio measured in the same run.

    .venv/bin/python bench/run_all.py            # ~2-4 min on 2 cores
    .venv/bin/python bench/run_all.py --only cold_start,no_torch --json bench/out/perf.json

Parts (each prints its own lines, then a summary table with the goal of each ratio):

* ``heatmap``     bench/bench_heatmap.py: slider -> repaint of the heatmap vs a trivial chart
                  (goal <= 1.5x), chart payload per view at 1024x1024 and 8192x8192 (<= 1 MB).
* ``load_table``  bench/bench_load_table.py: ``load_table("bundled")`` vs ``AutoModel`` (>= 50x).
* ``hub_bytes``   bytes the loader fetches from a loopback hub serving the real MiniLM checkpoint
                  (87 MB of weights) vs the bytes of the position tensor itself (goal <= 1.1x).
* ``cold_start``  server start -> home page drawn in headless Chromium, posviz vs a bare Streamlit
                  app ("st.title") measured the same way, alternating runs (goal <= 2x).
* ``no_torch``    the home and sinusoid pages, opened in a real server, never load torch (checked
                  in the server's memory maps, not by trust).
* ``lab``         bench/bench_lab.py: each lab question's default preset (<= 60 s), training
                  throughput vs a hand-written torch loop (>= 0.9x), N seeds vs one seed.
* ``lab_render``  bench/bench_lab_render.py: a stored lab run's page vs the Sinusoidal page, load
                  to charts drawn in Chromium (<= 2x).
* ``heavy_probes`` bench/bench_heavy_probes.py: a light page's load time while three heavy probes
                  run, vs idle (<= 1.5x).

The other benches are run as subprocesses; a line ``BENCH {"metric": …, "value": …, "goal": …,
"ok": …}`` in their output joins the summary table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser_support import free_port, stop_process, wait_healthy  # noqa: E402  (tests/ is not a package)

PY = sys.executable
PARTS = (
    "heatmap", "load_table", "hub_bytes", "cold_start", "no_torch", "lab", "lab_render",
    "heavy_probes",
)  # fmt: skip
DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


@dataclass
class Result:
    """One line of the summary table."""

    metric: str
    value: float
    unit: str
    goal: str
    ok: bool | None  # None: informational
    detail: str = ""


# ---------------------------------------------------------------------------------------------
# helpers: a server on a free loopback port, a browser, RSS
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def server(script: Path, *, cwd: Path, env: dict[str, str] | None = None) -> Iterator[tuple]:
    """``streamlit run script`` on a free loopback port; yields (port, Popen); killed on exit."""
    port = free_port()
    cmd = [
        PY, "-m", "streamlit", "run", str(script), "--server.port", str(port),
        "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=cwd, env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        yield port, proc
    finally:
        stop_process(proc)


def chromium_path() -> str:
    for candidate in (os.environ.get("POSVIZ_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):  # fmt: skip
        if candidate and Path(candidate).exists():
            return candidate
    raise RuntimeError("no Chromium found: apt-get install chromium, or set POSVIZ_CHROMIUM")


@contextlib.contextmanager
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_page(page, url: str, *, timeout_ms: int = 120_000) -> None:
    """Load ``url`` and wait until the script has run and a title is drawn."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(DONE, timeout=timeout_ms)
    page.wait_for_selector("h1", timeout=timeout_ms)


def load_ms(page, url: str, drawn: str, *, timeout_ms: int = 120_000) -> float:
    """Milliseconds from opening ``url`` until its script has run, the JavaScript predicate
    ``drawn`` holds and the network is idle."""
    start = time.perf_counter()
    open_page(page, url)
    page.wait_for_function(drawn, timeout=timeout_ms)
    page.wait_for_load_state("networkidle")
    return (time.perf_counter() - start) * 1000


def python_json(code: str, env: dict[str, str] | None = None, *, timeout: float | None = None):
    """Run ``code`` in a fresh Python at the repository root (``env`` added to this process's);
    its last line of output, read as JSON. Raises ``CalledProcessError`` if it fails."""
    out = subprocess.run([PY, "-c", code], cwd=ROOT, env={**os.environ, **(env or {})},
                         capture_output=True, text=True, timeout=timeout, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# parts
# ---------------------------------------------------------------------------------------------


def run_other_bench(name: str, script: str) -> list[Result]:
    """Run bench/<script> as a subprocess, echo its output, collect its ``BENCH {...}`` lines."""
    path = ROOT / "bench" / script
    if not path.exists():
        print(f"[{name}] {script} is not there yet: skipped")
        return [Result(f"{name}: {script}", float("nan"), "", "", None, "missing")]
    start = time.perf_counter()
    proc = subprocess.run([PY, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - start
    results = []
    for line in proc.stdout.splitlines():
        print(f"  {line}")
        if line.startswith("BENCH "):
            with contextlib.suppress(ValueError, KeyError, TypeError):
                data = json.loads(line[6:])
                results.append(Result(data["metric"], float(data["value"]), data.get("unit", ""),
                                      str(data.get("goal", "")), data.get("ok"),
                                      data.get("detail", "")))  # fmt: skip
    if not results and name == "heatmap":
        results = _heatmap_table(proc.stdout)
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
        results.append(Result(f"{name}: exit code", proc.returncode, "", "0", False))
    print(f"[{name}] {script} took {took:.0f} s")
    return results


def _heatmap_table(stdout: str) -> list[Result]:
    """Goals for bench_heatmap.py's markdown table (used when it prints no ``BENCH`` lines).

    Columns: view | chart JSON | websocket bytes / repaint | repaint median | p90 | × trivial.
    Goals (issue 6, item 8): repaint <= 1.5x the trivial chart; chart payload <= 1 MB per view.
    """
    results = []
    for line in stdout.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not cells[0].startswith("heatmap"):
            continue
        with contextlib.suppress(ValueError):
            ratio = float(cells[5].replace(",", ""))
            kb = float(cells[1].split()[0].replace(",", ""))
            results.append(Result(f"repaint / trivial: {cells[0]}", ratio, "x", "<= 1.5",
                                  ratio <= 1.5))  # fmt: skip
            results.append(Result(f"chart payload (kB): {cells[0]}", kb, "", "<= 1000",
                                  kb <= 1000))  # fmt: skip
    return results


def hub_bytes() -> list[Result]:
    """Serve the real MiniLM checkpoint from a loopback hub; count what load_table fetches."""
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT))
    from hub_server import FakeHub, HubServer

    from posviz.tables.bundled import bundled_model_dir

    repo = "sentence-transformers/all-MiniLM-L6-v2"
    fake = FakeHub()
    fake.add_dir(repo, bundled_model_dir())
    weights = (bundled_model_dir() / "model.safetensors").stat().st_size
    with tempfile.TemporaryDirectory() as home, HubServer(fake) as hub:
        env = {"HF_ENDPOINT": hub.url, "HF_HOME": home, "HF_HUB_OFFLINE": "0"}
        code = (
            "import json, time; from posviz.tables import load_table; t0 = time.perf_counter(); "
            f"t = load_table({repo!r}); "
            "print(json.dumps({'shape': t.matrix.shape, 'nbytes': t.matrix.nbytes, "
            "'seconds': time.perf_counter() - t0}))"
        )
        info = python_json(code, env, timeout=300)
        served = fake.bytes_for(repo)
    tensor = info["nbytes"]  # float32 rows; the stored tensor is float32 too
    ratio = served / tensor
    print(f"[hub_bytes] table {info['shape']}: fetched {served:,} B over HTTP for a {tensor:,} B "
          f"tensor in a {weights / 2**20:.0f} MiB file ({info['seconds']:.2f} s)")  # fmt: skip
    return [Result("hub bytes read / tensor bytes (MiniLM, loopback hub)", ratio, "x", "<= 1.1",
                   ratio <= 1.1, f"{served:,} B for {tensor:,} B")]  # fmt: skip


BARE_APP = 'import streamlit as st\n\nst.title("Hello")\nst.write("A bare Streamlit app.")\n'


def _cold_start_once(pw_browser, script: Path, cwd: Path, path: str) -> tuple[float, float]:
    """Seconds from launching the server to the page drawn, and the server's RSS then."""
    page = pw_browser.new_page()
    try:
        start = time.perf_counter()
        with server(script, cwd=cwd) as (port, proc):
            wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=120)
            open_page(page, f"http://127.0.0.1:{port}/{path}")
            took = time.perf_counter() - start
            return took, rss_mb(proc.pid)
    finally:
        page.close()


def cold_start(repeat: int) -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp, browser() as b:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_APP)
        _cold_start_once(b, bare, Path(tmp), "")  # warm the OS file cache for both
        _cold_start_once(b, ROOT / "app.py", ROOT, "")
        runs: dict[str, list[float]] = {"posviz": [], "bare": []}
        rss: dict[str, float] = {}
        for _ in range(repeat):  # alternate so drift in machine load hits both alike
            seconds, rss["bare"] = _cold_start_once(b, bare, Path(tmp), "")
            runs["bare"].append(seconds)
            seconds, rss["posviz"] = _cold_start_once(b, ROOT / "app.py", ROOT, "")
            runs["posviz"].append(seconds)
    med = {name: statistics.median(values) for name, values in runs.items()}
    ratio = med["posviz"] / med["bare"]
    for name, values in runs.items():
        print(f"[cold_start] {name:6s} " + " ".join(f"{v:.2f}" for v in values)
              + f" s (median {med[name]:.2f} s, server RSS {rss[name]:.0f} MB)")  # fmt: skip
    return [
        Result("cold start: posviz home page (s)", med["posviz"], "s", "", None),
        Result("cold start: bare Streamlit (s)", med["bare"], "s", "", None),
        Result("cold start posviz / bare", ratio, "x", "<= 2", ratio <= 2),
    ]


def _maps_mention(pid: int, needle: str) -> bool:
    return needle in Path(f"/proc/{pid}/maps").read_text()


def no_torch() -> list[Result]:
    """Open home, then the sinusoid page, in one fresh server; torch must not be mapped."""
    results = []
    with browser() as b, server(ROOT / "app.py", cwd=ROOT) as (port, proc):
        wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=120)
        page = b.new_page()
        for path in ("home", "sinusoidal"):
            open_page(page, f"http://127.0.0.1:{port}/{path}")
            loaded = _maps_mention(proc.pid, "libtorch")
            print(f"[no_torch] after /{path}: torch {'LOADED' if loaded else 'not loaded'}; "
                  f"server RSS {rss_mb(proc.pid):.0f} MB")  # fmt: skip
            results.append(Result(f"torch loaded after /{path}", float(loaded), "", "0",
                                  not loaded))  # fmt: skip
        page.close()
    return results


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(PARTS), help=f"comma list of {PARTS}")
    parser.add_argument("--repeat", type=int, default=3, help="cold-start runs per app")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    wanted = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(wanted) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {PARTS}")
    print(f"posviz performance suite — {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}")  # fmt: skip
    results: list[Result] = []
    for part in wanted:
        print(f"\n== {part} ==")
        start = time.perf_counter()
        if part == "heatmap":
            results += run_other_bench(part, "bench_heatmap.py")
        elif part == "load_table":
            results += run_other_bench(part, "bench_load_table.py")
        elif part == "hub_bytes":
            results += hub_bytes()
        elif part == "cold_start":
            results += cold_start(args.repeat)
        elif part == "no_torch":
            results += no_torch()
        elif part == "lab":
            results += run_other_bench(part, "bench_lab.py")
        elif part == "lab_render":
            results += run_other_bench(part, "bench_lab_render.py")
        elif part == "heavy_probes":
            results += run_other_bench(part, "bench_heavy_probes.py")
        print(f"[{part}] {time.perf_counter() - start:.0f} s")
    print("\n== summary ==")
    print(f"{'metric':66s} {'measured':>12s}  {'goal':>8s}  result")
    for r in results:
        verdict = {True: "PASS", False: "FAIL", None: ""}[r.ok]
        print(f"{r.metric[:66]:66s} {r.value:>11.3g}{r.unit[:1]:1s}  {r.goal:>8s}  {verdict}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 1 if any(r.ok is False for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
