"""The lab's speed, every ratio measured in this one run.

    .venv/bin/python bench/bench_lab.py [--steps 100] [--only presets,throughput,seeds]

* ``presets``     each question's default preset (all variants and seeds) from an empty store:
                  wall seconds (goal ≤ 60 s on 2 cores).
* ``throughput``  training steps/s of :func:`posviz.lab.train.train_variant` (one seed) vs a
                  minimal hand-written torch loop of the same model (pre-LN, same sizes, same
                  data, plain ``nn.Linear``/``nn.Embedding``, Adam): ratio (goal ≥ 0.9×).
* ``seeds``       wall time of N seeds trained as one batched model vs one seed: ratio (goal
                  well under N×).

* ``threads``     the learned arm of ``learned`` (3 seeds, ``--steps``) on 1 torch thread vs 2:
                  why the lab trains on one thread (:func:`posviz.lab.train.use_one_thread`).

Presets run each in a fresh process (``python -m posviz lab run Q --store <empty dir>``), so the
wall time includes starting Python and importing torch, as a first run on a fresh server does.
Threads: the lab trains on one torch thread (``taskset -c 0,1`` pins the 2-core target).
Prints a markdown table and ``BENCH {...}`` lines for ``bench/run_all.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from posviz.lab import QUESTIONS  # noqa: E402
from posviz.lab.config import LabConfig, ModelConfig  # noqa: E402
from posviz.lab.tasks import make_batch, sample_lengths, train_rng, vocab_sizes  # noqa: E402
from posviz.lab.train import train_variant, use_one_thread  # noqa: E402


class _Block(nn.Module):
    """The hand-written reference: a textbook pre-LN block, one model, no seed axis."""

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


def _reference_seconds(config: LabConfig) -> float:
    """Wall seconds of ``config.steps`` steps of the hand-written loop (same data stream)."""
    torch.manual_seed(0)
    model = _Reference(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    rng = train_rng(0)
    start = time.perf_counter()
    for _ in range(config.steps):
        batch = make_batch(config, rng, sample_lengths(config, rng, config.batch))
        tokens, targets = torch.from_numpy(batch.inputs), torch.from_numpy(batch.targets)
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start


def _lab_seconds(config: LabConfig, seeds: int) -> float:
    start = time.perf_counter()
    train_variant(ModelConfig(scheme="learned"), replace(config, seeds=seeds))
    return time.perf_counter() - start


def bench_presets() -> list[dict]:
    rows = []
    for q in QUESTIONS.values():
        with tempfile.TemporaryDirectory() as root:
            command = [sys.executable, "-m", "posviz", "lab", "run", q.id, "--store", root]
            start = time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
            wall = time.perf_counter() - start
        variants, seeds = len(q.variants), q.default.seeds
        rows.append(
            {
                "metric": f"preset {q.id} ({variants} variants × {seeds} seeds, "
                f"{q.default.steps} steps; fresh process)",
                "value": round(wall, 1),
                "unit": "s",
                "goal": "≤ 60",
                "ok": wall <= 60,
            }
        )
        print(f"{rows[-1]['metric']}: {rows[-1]['value']} s", flush=True)
    return rows


def _thread_seconds(config: LabConfig) -> dict[int, float]:
    """Best of 2 alternating runs of the learned arm on 1 and on 2 torch threads."""
    seconds: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(2):
        for threads in (1, 2):
            torch.set_num_threads(threads)
            seconds[threads].append(_lab_seconds(config, config.seeds))
    use_one_thread()
    return {n: min(values) for n, values in seconds.items()}


def bench_threads(config: LabConfig) -> list[dict]:
    """The learned arm on 1 vs 2 torch threads, alone and beside one busy process.

    The busy process (a Python spin loop) stands in for another session or test run on the
    shared 2-core server: an OpenMP thread then waits for a core the OS gave to someone else.
    """
    rows = []
    quiet = _thread_seconds(config)
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        busy = _thread_seconds(replace(config, steps=max(10, config.steps // 4)))
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


def bench_throughput(config: LabConfig, repeats: int) -> list[dict]:
    lab, ref = [], []
    for _ in range(repeats):  # alternate, so drift in machine load hits both alike
        lab.append(_lab_seconds(config, 1))
        ref.append(_reference_seconds(config))
    ratio = statistics.median(ref) / statistics.median(lab)
    steps = config.steps
    return [
        {
            "metric": "lab loop, 1 seed",
            "value": round(steps / statistics.median(lab), 1),
            "unit": "steps/s",
        },
        {
            "metric": "hand-written torch loop",
            "value": round(steps / statistics.median(ref), 1),
            "unit": "steps/s",
        },
        {
            "metric": "throughput lab / hand-written",
            "value": round(ratio, 2),
            "unit": "×",
            "goal": "≥ 0.9",
            "ok": ratio >= 0.9,
        },
    ]


def bench_seeds(config: LabConfig, n: int, repeats: int) -> list[dict]:
    one = statistics.median(_lab_seconds(config, 1) for _ in range(repeats))
    many = statistics.median(_lab_seconds(config, n) for _ in range(repeats))
    ratio = many / one
    return [
        {
            "metric": f"{n} seeds batched / 1 seed (time)",
            "value": round(ratio, 2),
            "unit": "×",
            "goal": f"well under {n}",
            "ok": ratio < 0.75 * n,
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", default="presets,throughput,seeds,threads")
    args = parser.parse_args()
    threads = use_one_thread()
    config = replace(QUESTIONS["learned"].default, steps=args.steps)
    parts = set(args.only.split(","))
    rows: list[dict] = []
    if "throughput" in parts:
        rows += bench_throughput(config, args.repeats)
    if "seeds" in parts:
        rows += bench_seeds(config, args.seeds, args.repeats)
    if "threads" in parts:
        rows += bench_threads(config)
    if "presets" in parts:
        rows += bench_presets()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"torch {torch.__version__}, {threads} threads, numpy {np.__version__}; load {load}\n")
    print("| measure | value | goal |\n|---|---|---|")
    for row in rows:
        print(f"| {row['metric']} | {row['value']} {row['unit']} | {row.get('goal', '')} |")
    for row in rows:
        if "goal" in row:
            print("BENCH " + json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
