"""Which of the lab's tensor operations round differently on another CPU's kernels.

PyTorch picks its vectorised CPU kernels by the instruction set (``ATEN_CPU_CAPABILITY``:
``avx512``, ``avx2``, ``default``). This script runs the operations the lab trains with on fixed
random inputs once per capability, each in a fresh process (the variable is read at start-up),
and prints, per operation, whether the outputs are bit-identical to the machine's own kernels'
and the largest difference. Why the answers tier's pins hold within the seeds' spread, not to
the last digit (tests/pin_support.py; docs/benchmarks.md, "The answers on another CPU").

    .venv/bin/python bench/probe_kernels.py [--capabilities avx2 default]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

#: softmax row widths probed: the attention keys (the engine pads to 16s), a character vocabulary
WIDTHS = (4, 8, 12, 16, 17, 32, 33, 48, 64, 65, 67, 128)


def outputs(path: str) -> None:
    """Run every probed operation with this process's kernels; save the outputs to ``path``."""
    import torch
    from torch.nn import functional as F

    torch.set_num_threads(1)  # the lab trains on one thread (posviz.lab.engine.train)
    g = torch.Generator().manual_seed(0)

    def draw(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g)

    out: dict[str, torch.Tensor] = {}
    for w in WIDTHS:
        a = draw(200, w).requires_grad_()
        s = a.softmax(-1)
        s.backward(draw(200, w))
        out[f"softmax, {w} wide"] = s
        out[f"softmax backward, {w} wide"] = a.grad
        b = draw(200, w).requires_grad_()
        y = torch.randint(0, w, (200,), generator=g)
        ce = F.cross_entropy(b, y, reduction="none")
        ce.sum().backward()
        out[f"cross-entropy, {w} classes"] = ce
        out[f"cross-entropy backward, {w} classes"] = b.grad
    x = draw(40, 33, 32)
    out["sum over the last axis"] = x.sum(-1)
    out["mean over two axes"] = x.mean((1, 2))
    out["exp"], out["tanh"], out["gelu"] = x.exp(), x.tanh(), F.gelu(x)
    out["layer norm"] = F.layer_norm(x, (32,))
    q, k = draw(20, 33, 8), draw(20, 8, 33)
    out["bmm"] = torch.bmm(q, k)
    out["baddbmm"] = torch.baddbmm(draw(20, 33, 33), q, k, alpha=0.3)
    weights = [draw(9, 32, 32).requires_grad_() for _ in range(3)]
    adam = torch.optim.Adam(weights, lr=0.02, foreach=True)
    for _ in range(3):
        adam.zero_grad()
        sum((w**2).sum() for w in weights).backward()
        adam.step()
    out["Adam, 3 steps"] = weights[0]
    np.savez(path, **{k: v.detach().numpy() for k, v in out.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capabilities", nargs="+", default=["avx2", "default"])
    parser.add_argument("--save", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.save:
        outputs(args.save)
        return
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for capability in ["(own)", *args.capabilities]:
            env = dict(os.environ)
            if capability != "(own)":
                env["ATEN_CPU_CAPABILITY"] = capability
            path = str(Path(tmp) / f"{capability}.npz")
            subprocess.run([sys.executable, __file__, "--save", path], env=env, check=True)
            runs[capability] = np.load(path)
        own = runs.pop("(own)")
        import torch

        print(f"torch {torch.__version__}; this machine's kernels: "
              f"{torch.backends.cpu.get_cpu_capability()}")  # fmt: skip
        print("| operation | " + " | ".join(runs) + " |")
        print("|---|" + "---|" * len(runs))
        for name in own.files:
            cells = []
            for other in runs.values():
                diff = float(np.abs(own[name] - other[name]).max())
                cells.append(
                    "identical" if np.array_equal(own[name], other[name]) else f"{diff:.1e}"
                )
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
