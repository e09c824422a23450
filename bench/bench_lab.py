"""The lab's training speed, every ratio measured side by side in this one run.

    .venv/bin/python bench/bench_lab.py [--steps 40] [--repeats 3]
        [--only batching,throughput,reference,threads,presets,flops]

* ``batching``    each reference arm set trained as ONE call of
                  :func:`posviz.lab.engine.train.train_arms`
                  (every arm × seed of one shape in one batched model) vs the per-variant
                  training the lab did before: one model per arm with its seeds, the engine as
                  of commit ``BASELINE_COMMIT`` (loaded from git history into a temporary module;
                  skipped without git). Same arms, seeds and steps, alternating runs, best of
                  ``--repeats``: member-steps per second and the gain (goal > 1).
* ``throughput``  ms per member-step (one seed of one arm, one Adam step, its data included) of
                  ``train_arms`` at the reference shapes — reverse length 12 (encoder, 2 heads),
                  k-back lengths 8–16 (decoder, 8 heads), character LM length 32 (decoder) — at
                  E = 1, 10 and 30 members (1 arm × 1 seed, 2 × 5, 6 × 5).
* ``reference``   one member (E = 1) of the engine vs a minimal hand-written torch loop of the same
                  model (pre-LN, plain ``nn.Linear``/``nn.Embedding``, ``torch.optim.Adam``):
                  what the batching machinery costs a single model.
* ``threads``     a batched reverse model (E = 10) on 1 vs 2 torch threads, as found and beside
                  one busy process: why the lab trains on one thread (``use_one_thread``).
* ``flops``       the training's achieved FLOP/s against this machine's measured matmul peak, in
                  the same run: FLOPs of one Adam step counted by torch's ``FlopCounterMode``
                  (every matmul of the forward and backward pass), the step timed without the
                  counter; the peak is the best float32 ``torch.mm`` of square matrices (256 to
                  2048) on the same thread count. Then a ``torch.profiler`` breakdown of a step's
                  CPU time: matrix products, element-wise maths, copies and indexing, the
                  optimiser, the rest.
* ``presets``     each question from an empty store in a fresh process (``python -m posviz lab
                  run Q --store <empty dir>``: Python start, torch import and the whole sweep
                  included): wall seconds (goal ≤ 60 on 2 quiet cores).

Times are wall-clock (``time.perf_counter``) and CPU time (``time.process_time``, or the child's
``getrusage`` for the presets), on one torch thread per training thread; the load average is
printed beside them. On a shared machine the wall time waits for cores that other processes hold
and moves with the load; the CPU time does not wait, so it is the better estimate of a quiet
machine's time (it still includes caches shared with the others). Prints a markdown table and
``BENCH {...}`` lines for ``bench/run_all.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from posviz.lab import QUESTIONS  # noqa: E402
from posviz.lab.engine.config import LabConfig, ModelConfig  # noqa: E402
from posviz.lab.engine.tasks import make_batch, sample_lengths, train_rng, vocab_sizes  # noqa: E402
from posviz.lab.engine.train import Arm, train_arms, use_one_thread  # noqa: E402

#: The last commit whose lab engine trained one model per variant (hand-written Adam).
BASELINE_COMMIT = "65d797e"
SEEDS = 5
REVERSE = LabConfig(task="reverse", min_len=12, max_len=12, eval_lengths=(12,), lr=1e-2)
KBACK = LabConfig(task="kback", k=2, min_len=8, max_len=16, eval_lengths=(16, 32), heads=8, lr=1e-2)
LM = LabConfig(task="lm", min_len=32, max_len=32, eval_lengths=(32,), lr=5e-3)
MATCHED = 0.5**0.5  # the token embeddings' std: the sweep's second table scale


def _reverse_arms() -> list[ModelConfig]:
    return [
        ModelConfig(scheme="learned"),
        ModelConfig(scheme="sinusoidal"),
        ModelConfig(scheme="nope"),
        ModelConfig(scheme="learned", pos_init_std=MATCHED),
        ModelConfig(scheme="learned", injection="concat"),
        ModelConfig(scheme="learned", injection="every_layer"),
    ]


def _decoder_arms() -> list[ModelConfig]:
    schemes = ("learned", "sinusoidal", "rope", "alibi", "t5", "nope")
    return [ModelConfig(kind="decoder", scheme=s) for s in schemes]


SHAPES: dict[str, tuple[LabConfig, list[ModelConfig]]] = {
    "reverse, length 12 (encoder, 2 heads)": (REVERSE, _reverse_arms()),
    "k-back, lengths 8–16 (decoder, 8 heads)": (KBACK, _decoder_arms()),
    "character LM, length 32 (decoder, 2 heads)": (LM, _decoder_arms()),
}


def _arms(config: LabConfig, models: list[ModelConfig], n_arms: int, seeds: int) -> list[Arm]:
    return [Arm(f"arm{i}", m, replace(config, seeds=seeds)) for i, m in enumerate(models[:n_arms])]


class _Clock:
    """Wall and CPU seconds of a block: on a shared machine the wall time waits for cores other
    processes hold, the CPU time (this process, all its threads) does not."""

    def __enter__(self) -> _Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


def _batched_seconds(arms: list[Arm], steps: int) -> _Clock:
    with _Clock() as clock:
        train_arms(arms, steps=steps, checkpoints=())
    return clock


def _baseline_engine() -> ModuleType | None:
    """The per-variant engine of :data:`BASELINE_COMMIT` as a module, or None without git."""
    folder = Path(tempfile.mkdtemp(prefix="posviz-baseline-"))
    try:
        for name in ("model", "train"):
            source = subprocess.run(
                ["git", "show", f"{BASELINE_COMMIT}:posviz/lab/{name}.py"],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            # the baseline commit's layout: posviz/lab/model.py, before the engine package
            source = source.replace("from posviz.lab.model import", "from baseline_model import")
            (folder / f"baseline_{name}.py").write_text(source, encoding="utf-8")
    except (OSError, subprocess.CalledProcessError):
        return None
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("baseline_train", folder / "baseline_train.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_train"] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def _per_variant_seconds(baseline: ModuleType, arms: list[Arm], steps: int) -> _Clock:
    with _Clock() as clock:
        for arm in arms:
            baseline.train_variant(arm.model, replace(arm.config, steps=steps))
    return clock


def bench_batching(baseline: ModuleType | None, steps: int, repeats: int) -> list[dict]:
    if baseline is None:
        print("batching: skipped (no git history to load the per-variant engine from)")
        return []
    rows = []
    for name, (config, models) in SHAPES.items():
        arms = _arms(config, models, len(models), SEEDS)
        members = len(arms) * SEEDS
        _batched_seconds(arms, 2)  # warm-up: first calls allocate and fill caches
        _per_variant_seconds(baseline, arms, 2)
        batched, per_variant = [], []
        for _ in range(repeats):  # alternate, so drift in machine load hits both alike
            batched.append(_batched_seconds(arms, steps))
            per_variant.append(_per_variant_seconds(baseline, arms, steps))
        for clock in ("wall", "cpu"):
            new = min(getattr(c, clock) for c in batched)
            old = min(getattr(c, clock) for c in per_variant)
            rows.append(
                {
                    "metric": f"batched / per-variant runs/s ({clock} time), {name}, "
                    f"{len(arms)} arms × {SEEDS} seeds",
                    "value": round(old / new, 2),
                    "unit": "×",
                    "goal": "> 1",
                    "ok": old / new > 1,
                    "detail": f"{members * steps / new:.0f} vs {members * steps / old:.0f} "
                    "member-steps/s",
                }
            )
            print(f"{rows[-1]['metric']}: {rows[-1]['value']}× ({rows[-1]['detail']})", flush=True)
    return rows


def bench_throughput(steps: int, repeats: int) -> list[dict]:
    rows = []
    for name, (config, models) in SHAPES.items():
        for n_arms, seeds in ((1, 1), (2, 5), (6, 5)):
            arms = _arms(config, models, n_arms, seeds)
            e = n_arms * seeds
            _batched_seconds(arms, 2)
            clocks = [_batched_seconds(arms, steps) for _ in range(repeats)]
            for clock in ("wall", "cpu"):
                best = min(getattr(c, clock) for c in clocks)
                rows.append(
                    {
                        "metric": f"ms per member-step ({clock}), {name}, E = {e}",
                        "value": round(best / steps / e * 1e3, 3),
                        "unit": "ms",
                    }
                )
                print(f"{rows[-1]['metric']}: {rows[-1]['value']} ms", flush=True)
    return rows


class _Block(nn.Module):
    """The hand-written reference: a textbook pre-LN block, one model, no member axis."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, -1).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).softmax(-1)
        x = x + self.out((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class _Reference(nn.Module):
    def __init__(self, config: LabConfig) -> None:
        super().__init__()
        n_in, n_out, _ = vocab_sizes(config)
        self.tok = nn.Embedding(n_in, config.width)
        self.pos = nn.Embedding(config.max_len, config.width)
        self.blocks = nn.ModuleList(
            _Block(config.width, config.heads) for _ in range(config.layers)
        )
        self.ln = nn.LayerNorm(config.width)
        self.head = nn.Linear(config.width, n_out, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def _reference_seconds(config: LabConfig, steps: int) -> float:
    """Wall seconds of ``steps`` steps of the hand-written loop (same data stream)."""
    torch.manual_seed(0)
    model = _Reference(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, foreach=True)
    rng = train_rng(0)
    start = time.process_time()
    for _ in range(steps):
        batch = make_batch(config, rng, sample_lengths(config, rng, config.batch))
        tokens, targets = torch.from_numpy(batch.inputs), torch.from_numpy(batch.targets)
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return time.process_time() - start


def bench_reference(steps: int, repeats: int) -> list[dict]:
    config = replace(REVERSE, seeds=1)
    arms = [Arm("learned", ModelConfig(scheme="learned"), config)]
    lab, ref = [], []
    for _ in range(repeats):
        lab.append(_batched_seconds(arms, steps).cpu)
        ref.append(_reference_seconds(config, steps))
    ratio = min(ref) / min(lab)
    return [
        {
            "metric": "engine at E = 1 / hand-written torch loop (steps/s, cpu time)",
            "value": round(ratio, 2),
            "unit": "×",
        }
    ]


def _thread_seconds(arms: list[Arm], steps: int) -> dict[int, float]:
    """Best of 2 alternating runs on 1 and on 2 torch threads."""
    seconds: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(2):
        for threads in (1, 2):
            torch.set_num_threads(threads)
            seconds[threads].append(_batched_seconds(arms, steps).wall)
    use_one_thread()
    return {n: min(values) for n, values in seconds.items()}


def bench_threads(steps: int) -> list[dict]:
    """E = 10 reverse members on 1 vs 2 torch threads, alone and beside one busy process.

    The busy process (a Python spin loop) stands in for another session or test run on the
    shared 2-core server: an OpenMP thread then waits for a core the OS gave to someone else.
    """
    arms = _arms(REVERSE, _reverse_arms(), 2, 5)
    rows = []
    quiet = _thread_seconds(arms, steps)
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        busy = _thread_seconds(arms, max(5, steps // 4))
    finally:
        spin.kill()
        spin.wait()
    for name, measured in (("load as found", quiet), ("plus one busy process", busy)):
        rows.append(
            {
                "metric": f"2 threads / 1 thread (time), {name}",
                "value": round(measured[2] / measured[1], 2),
                "unit": "×",
            }
        )
        print(f"{rows[-1]['metric']}: {rows[-1]['value']} ×", flush=True)
    return rows


def bench_presets() -> list[dict]:
    rows = []
    for q in QUESTIONS.values():
        with tempfile.TemporaryDirectory() as root:
            command = [sys.executable, "-m", "posviz", "lab", "run", q.id, "--store", root]
            cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
        if done.returncode:
            print(f"preset {q.id}: failed ({done.stderr.strip().splitlines()[-1:]})", flush=True)
            continue
        rows.append(
            {
                "metric": f"preset {q.id} with its sweep (fresh process, empty store)",
                "value": round(wall, 1),
                "unit": "s",
                "goal": "≤ 60",
                "ok": wall <= 60,
                "detail": f"{cpu_s:.1f} s of CPU time",
            }
        )
        print(f"{rows[-1]['metric']}: {rows[-1]['value']} s ({rows[-1]['detail']})", flush=True)
    return rows


_MATMUL_OPS = ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::linear")
_COPY_OPS = (
    "aten::copy_", "aten::cat", "aten::index", "aten::index_select", "aten::clone",
    "aten::contiguous", "aten::to", "aten::_to_copy", "aten::embedding", "aten::gather",
    "aten::scatter", "aten::index_put_", "aten::expand", "aten::reshape", "aten::view",
    "aten::_reshape_alias", "aten::embedding_backward", "aten::embedding_dense_backward",
    "aten::index_fill_", "aten::fill_", "aten::zero_", "aten::zeros", "aten::empty",
)  # fmt: skip


def matmul_peak(threads: int, repeats: int = 5) -> tuple[float, int]:
    """Best float32 ``torch.mm`` GFLOP/s over square sizes 256–2048 on ``threads`` threads."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    best, best_n = 0.0, 0
    try:
        for n in (256, 512, 1024, 2048):
            a, b = torch.randn(n, n), torch.randn(n, n)
            torch.mm(a, b)
            for _ in range(repeats):
                t = time.perf_counter()
                torch.mm(a, b)
                rate = 2 * n**3 / (time.perf_counter() - t) / 1e9
                if rate > best:
                    best, best_n = rate, n
    finally:
        torch.set_num_threads(before)
    return best, best_n


def _step_flops(arms: list[Arm]) -> float:
    """FLOPs of one training step of these arms (forward + backward matmuls), counted by torch."""
    from torch.utils.flop_counter import FlopCounterMode

    counts = []
    for steps in (2, 4):  # the difference removes anything counted once per call
        with FlopCounterMode(display=False) as counter:
            train_arms(arms, steps=steps, checkpoints=())
        counts.append(counter.get_total_flops())
    return (counts[1] - counts[0]) / 2


def _profile_shares(arms: list[Arm], steps: int) -> dict[str, float]:
    """Share of a training run's self CPU time per kind of operator."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        train_arms(arms, steps=steps, checkpoints=())
    totals = {"matrix products": 0.0, "copies and indexing": 0.0, "optimiser": 0.0,
              "element-wise and reductions": 0.0}  # fmt: skip
    for event in prof.key_averages():
        name, t = event.key, event.self_cpu_time_total
        if name in _MATMUL_OPS:
            totals["matrix products"] += t
        elif name in _COPY_OPS:
            totals["copies and indexing"] += t
        elif "_foreach_" in name or "Optimizer" in name:
            totals["optimiser"] += t
        elif name.startswith("aten::"):
            totals["element-wise and reductions"] += t
    whole = sum(e.self_cpu_time_total for e in prof.key_averages())
    shares = {k: v / whole for k, v in totals.items()}
    shares["Python and dispatch (the rest)"] = 1 - sum(shares.values())
    return shares


def bench_flops(steps: int, repeats: int) -> list[dict]:
    threads = torch.get_num_threads()
    peak, peak_n = matmul_peak(threads)
    rows = [
        {
            "metric": f"matmul peak, float32, {threads} thread(s)",
            "value": round(peak, 1),
            "unit": "GFLOP/s",
            "detail": f"best at {peak_n}×{peak_n}",
        }
    ]
    print(f"matmul peak: {peak:.1f} GFLOP/s at n = {peak_n}, {threads} thread(s)", flush=True)
    for name, (config, models) in SHAPES.items():
        arms = _arms(config, models, len(models), SEEDS)
        flops = _step_flops(arms)
        _batched_seconds(arms, 2)
        best = min(_batched_seconds(arms, steps).wall for _ in range(repeats))
        achieved = flops * steps / best / 1e9
        rows.append(
            {
                "metric": f"achieved / peak, {name}, {len(arms)} arms × {SEEDS} seeds",
                "value": round(achieved / peak, 3),
                "unit": "of peak",
                "detail": f"{achieved:.1f} GFLOP/s; {flops / 1e6:.1f} MFLOP per step "
                f"({flops / len(arms) / SEEDS / 1e6:.2f} per member-step), "
                f"{best / steps * 1e3:.1f} ms per step",
            }
        )
        print(f"{rows[-1]['metric']}: {rows[-1]['value']} ({rows[-1]['detail']})", flush=True)
        shares = _profile_shares(arms, max(5, steps // 4))
        rows.append(
            {
                "metric": f"where a step's CPU time goes, {name}",
                "value": "; ".join(f"{k} {v:.0%}" for k, v in shares.items()),
                "unit": "",
            }
        )
        print(f"  {rows[-1]['value']}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="batching,throughput,reference,threads,presets,flops")
    args = parser.parse_args()
    threads = use_one_thread()
    parts = set(args.only.split(","))
    before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    rows: list[dict] = []
    if "batching" in parts:
        rows += bench_batching(_baseline_engine(), args.steps, args.repeats)
    if "throughput" in parts:
        rows += bench_throughput(args.steps, args.repeats)
    if "reference" in parts:
        rows += bench_reference(args.steps * 2, args.repeats)
    if "threads" in parts:
        rows += bench_threads(args.steps)
    if "presets" in parts:
        rows += bench_presets()
    if "flops" in parts:
        rows += bench_flops(args.steps, args.repeats)
    after = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\ntorch {torch.__version__}, {threads} torch thread(s), numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs; load average before {before}, after {after}\n"
    )
    print("| measure | value | goal |\n|---|---|---|")
    for row in rows:
        detail = f" ({row['detail']})" if "detail" in row else ""
        print(f"| {row['metric']} | {row['value']} {row['unit']}{detail} | {row.get('goal', '')} |")
    for row in rows:
        if "goal" in row:
            print("BENCH " + json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
