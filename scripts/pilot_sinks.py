"""Pilot: does an attention sink (Sink₁^0.3, Gu et al. 2025) form in the lab's character LM?

Trains causal character LMs on the lab's KJV text (:mod:`posviz.lab.engine.tasks`, task ``lm``)
with the lab's own model and one attention (:class:`posviz.lab.attention_variants.VariantModel`),
AdamW with weight decay (the engine's trainer has none, and Gu et al. Table 2 find it matters),
and reads Sink₁^0.3 on held-out windows at checkpoints (:func:`sink_metrics`: α₁ over all ``T``
queries, ε = 0.3, ``T = 64`` or the training length if shorter).

Run (one at a time, niced: the machine is shared)::

    nice -n 5 .venv/bin/python scripts/pilot_sinks.py --layers 4 --width 64 --len 128 \
        --steps 3000 --lr 3e-3 --wd 0.1 --schemes nope,learned,rope --attentions softmax

Each line: attention, step, the members (scheme:seed), training loss, held-out loss, Sink₁ per
member, the largest α₁ of any head and the mean α₁ over heads (per member; a uniform causal head
has α₁ = H_T / T, printed first).

Findings (2026-11-28, shared 2-core CPU; 4 heads; batch 16 at T = 128, 32 at T = 64; 100 held-out
windows of 64 characters; Sink₁ over layers × heads; "max α₁" the largest head's score, uniform
causal attention gives 0.074):

* No fixed first token, lr 3e-3, weight decay 0.5, 4 layers, width 64, T = 128: Sink₁ = 0 at
  250 / 500 / 1,000 / 1,500 steps for NoPE and RoPE (max α₁ NoPE 0.076 / 0.090 / 0.158 / 0.152,
  RoPE 0.061 / 0.057 / 0.051 / 0.052; stopped at 1,500 of 2,500); NoPE at lr 1e-2 the same (2
  seeds, 150–600 steps: max α₁ ≤ 0.11).
* The lab's affordable size (2 layers, width 32, T = 64, lr 1e-2, wd 0.5, with a BOS, 600 steps):
  Sink₁ = 0 for NoPE, learned and RoPE (max α₁ 0.091 / 0.058 / 0.066).
* With a BOS, lr 3e-3, wd 0.5, 4 layers: Sink₁ = 0 at 250 / 500 / 1,000 steps (max α₁ NoPE
  0.227 / 0.269 / 0.258, RoPE 0.090 / 0.189 / 0.110).
* With a BOS, lr 1e-2, NoPE, 4 layers: one head of 16 (Sink₁ = 0.062, α₁ 0.36–0.40) in seed 0
  only — at wd 0.1 from step 300 to 600, at wd 0.5 only around steps 450–495 (gone by 600, 1,005
  and 1,500); seed 1 none (max α₁ 0.27 / 0.18).
* The same setting (BOS, lr 1e-2, wd 0.1, NoPE, seeds 0 / 1, 600 steps) with the other attentions:
  the key-bias slot Sink₁ 0 / 0.062 (max α₁ 0.123 / 0.308; the slot keeps 7 % / 24 % of each row),
  sigmoid without normalisation 0 / 0.062 (proxy α₁ 0.134 / 0.338; rows sum to 14.4 / 9.4);
  softmax 0.062 / 0. One head of 16 in one seed of two, in every attention: a fluctuation at ε,
  not a sink the three could be told apart by. Softmax on four fresh seeds (``--first-seed 2
  --seeds 4``): Sink₁ = 0 at 300 and 600 steps in all four (max α₁ 0.12–0.20): one seed of six
  has a sink head at the most sink-prone setting found.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from torch.nn import functional as F

from posviz.lab.attention_variants import ATTENTIONS, SINK_LENGTH, VariantModel, sink_metrics
from posviz.lab.engine import tasks
from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.model import Member

NO_DECAY = ("ln1", "ln2", "ln_f", "up_bias", "down_bias")


def _config(args: argparse.Namespace) -> LabConfig:
    return LabConfig(
        task="lm", min_len=args.len, max_len=args.len, eval_lengths=(args.len,),
        width=args.width, heads=args.heads, layers=args.layers, steps=args.steps,
        batch=args.batch, lr=args.lr, seeds=args.seeds, first_seed=args.first_seed,
    )  # fmt: skip


def _model(schemes: list[str], attention: str, config: LabConfig) -> VariantModel:
    """One model: every scheme × seed a member (rotary ones first, as the engine packs them)."""
    n_in, n_out, _ = tasks.vocab_sizes(config)
    ordered = sorted(schemes, key=lambda s: s != "rope")
    members = [
        Member(ModelConfig(kind="decoder", scheme=s), seed, config.max_len, n_in)
        for s in ordered
        for seed in config.seed_ids
    ]
    return VariantModel(
        members, n_out=n_out, width=config.width, heads=config.heads, layers=config.layers,
        attention=attention,
    )  # fmt: skip


def _optimiser(model: VariantModel, lr: float, wd: float) -> torch.optim.Optimizer:
    decay = [p for n, p in model.named_parameters() if not n.endswith(NO_DECAY)]
    rest = [p for n, p in model.named_parameters() if n.endswith(NO_DECAY)]
    groups = [{"params": decay, "weight_decay": wd}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr)


BOS = False  # --bos: every window starts with one fixed token (the unused padding id)


def _batch(config: LabConfig, rngs: list, n: int, length: int, held_out: bool) -> tuple:
    batches = [tasks.make_batch(config, rng, np.full(n, length), held_out=held_out) for rng in rngs]
    inputs = np.stack([b.inputs for b in batches])
    if BOS:
        inputs[..., 0] = tasks.vocab_sizes(config)[2]
    x = torch.from_numpy(inputs)
    y = torch.from_numpy(np.stack([b.targets for b in batches]))
    return x, y


def _loss(model: VariantModel, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    logits = model(x)
    # the sum over members of each member's mean loss: every member's gradient is its own
    flat = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
    return flat.view(len(logits), -1).mean(1).sum()


def _evaluate(model: VariantModel, config: LabConfig, n: int) -> dict:
    length = min(SINK_LENGTH, config.max_len)
    rngs = [tasks.eval_rng(m.seed, length) for m in model.members]
    x, y = _batch(config, rngs, n, length, held_out=True)
    with torch.no_grad():
        loss = float(_loss(model, x, y)) / model.n_members
    maps = np.concatenate([model.attention_maps(x[:, i : i + 25]) for i in range(0, n, 25)], axis=3)
    found = sink_metrics(maps, model.attention)
    alpha = found["alpha"]  # (members, layers, heads)
    return {
        "members": [f"{m.model.scheme}:{m.seed}" for m in model.members],
        "heldout_loss": round(loss, 3),
        "sink": found["sink"].round(3).tolist(),
        "max_alpha": alpha.reshape(len(alpha), -1).max(1).round(3).tolist(),
        "mean_alpha": alpha.reshape(len(alpha), -1).mean(1).round(3).tolist(),
        "row_sum": found["row_sum"].round(3).tolist(),
    }


def run_arm(args: argparse.Namespace, schemes: list[str], attention: str) -> list[dict]:
    config = _config(args)
    torch.manual_seed(0)
    model = _model(schemes, attention, config)
    optimiser = _optimiser(model, args.lr, args.wd)
    rngs = [tasks.train_rng(m.seed) for m in model.members]
    checks = {round(args.steps * f) for f in args.checks}
    rows, running, start = [], [], time.perf_counter()
    for step in range(1, args.steps + 1):
        x, y = _batch(config, rngs, config.batch, config.max_len, held_out=False)
        loss = _loss(model, x, y)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        running.append(float(loss.detach()))
        if step in checks:
            row = {"attention": attention, "step": step,
                   "train_loss": round(float(np.mean(running[-50:])) / model.n_members, 3),
                   **_evaluate(model, config, args.eval_n),
                   "wall_s": round(time.perf_counter() - start, 1)}  # fmt: skip
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--len", type=int, default=64)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--wd", type=float, default=0.1)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--schemes", default="nope")
    parser.add_argument("--attentions", default="softmax")
    parser.add_argument("--checks", type=lambda s: [float(f) for f in s.split(",")],
                        default=[0.25, 0.5, 1.0])  # fmt: skip
    parser.add_argument("--eval-n", type=int, default=100)
    parser.add_argument("--bos", action="store_true", help="a fixed first token (a BOS)")
    args = parser.parse_args()
    global BOS
    BOS = args.bos
    torch.set_num_threads(1)
    t = min(SINK_LENGTH, args.len)
    print(f"# uniform causal head: alpha_1 = H_T/T = {np.sum(1 / np.arange(1, t + 1)) / t:.3f}")
    print(f"# {vars(args)}", flush=True)
    for attention in args.attentions.split(","):
        if attention not in ATTENTIONS:
            raise SystemExit(f"unknown attention {attention!r}; choose from {ATTENTIONS}")
        run_arm(args, args.schemes.split(","), attention)


if __name__ == "__main__":
    main()
