"""Pilot: does the far context need its order in the lab's character LM, per position scheme?

O'Connor & Andreas, "What Context Features Can Transformer Language Models Use?" (ACL 2021,
https://arxiv.org/abs/2106.08367), §2–3 scaled to the lab (:mod:`posviz.lab.studies.far_context`
holds the windows, the ablations and the interval): windows of ``far`` characters, a separator,
then ``near`` ordered characters whose next-character losses count (mid-range: the first half of
the targets, long-range: the second). Per scheme (NoPE, learned table, RoPE) and seed:

* ``full`` — trained and evaluated on intact windows;
* ``noinfo`` — trained and evaluated on the separator + near part alone (no far context);
* one arm per trained ablation — trained and evaluated with the far context ablated;
* evaluation only — the ``full`` model evaluated on each ablated far context.

Seed ``s`` of every arm starts from the same weights (the engine's :class:`LabModel` members,
paired as the lab pairs them) and sees the same windows; the ablations draw their permutations
from their own streams. Usable information = ``L(noinfo) − L(full)`` (paired interval); share
removed = ``(L(ablated) − L(full)) / (L(noinfo) − L(full))`` (Fieller interval). Losses in nats
per character, held-out windows from the last 10 % of the text.

Run (one at a time, niced: the machine is shared)::

    nice -n 5 .venv/bin/python scripts/pilot_far_context.py --far 32 --near 32 --steps 400 \
        --schemes nope,learned,rope --ablations shuffle_all

Each checkpoint prints one JSON line per scheme; the last lines give the wall time per arm.

Findings (2026-11-28, shared 2-core CPU under a load of 9–23; 2 layers, width 32, 2 heads, batch
16, lr 1e-2, seeds 0–2, 256 held-out windows per seed; far = near = 32 characters; losses in
nats per character; intervals paired 95 %, shares Fieller 95 %):

* **NoPE: the far context hurts, more the longer it trains.** Usable information (no-info −
  full) mid-range −0.127 / −0.167 / −0.243 (−0.303 … −0.184) at 300 / 600 / 1,200 steps,
  long-range −0.300 (−0.394 … −0.206) at 1,200; its full model barely reads the far part
  (evaluation-only shuffle-all +0.022 (+0.006 … +0.039) at 1,200).
* **RoPE gains from it in the mid range from 600 steps** (+0.005 (−0.051 … +0.060) at 300,
  +0.052 (+0.034 … +0.070) at 600, +0.074 (+0.038 … +0.109) at 1,200); a model trained on the
  shuffled far context gains none of it: shuffle-all removes 169 % (53 … 350 %) at 600 and 110 %
  (72 … 187 %) at 1,200 (O'Connor & Andreas: 41 %). Evaluation only, the same shuffle costs the
  full model +0.166 (+0.124 … +0.209), twice the trained model's +0.081 (their Fig. 4 vs 2:
  +0.22 vs +0.10 bits). Within-sentence shuffle +0.153 (+0.069 … +0.238), sentence shuffle
  +0.046 (+0.031 … +0.060) evaluation only (a sentence shuffle changes 11 % of 32-character far
  contexts: the text's sentences average 142 characters).
* **Learned table: undecided** (mid +0.077 (−0.050 … +0.204) at 1,200), although its full model
  reads the far part (evaluation-only shuffle-all +0.159 (+0.145 … +0.173)).
* **Long range: no scheme gains anything** (RoPE −0.042 (−0.127 … +0.044), learned −0.026
  (−0.080 … +0.028) at 1,200): what the far context gives is the characters next to the
  near part's first targets, not anything farther.
* **far = near = 16 characters** (1,200 steps, checks at 600): the learned table and RoPE gain in
  the mid range already at 600 steps (learned +0.126 (+0.063 … +0.189), RoPE +0.132 (+0.039 …
  +0.225); 1,200: +0.162 (+0.102 … +0.223), +0.162 (+0.054 … +0.270)); NoPE is hurt (−0.076
  (−0.096 … −0.057) at 1,200). Trained shuffle-all removes learned 89 % (84 … 101 %) / RoPE 89 %
  (52 … 295 %) at 600, 74 % (54 … 90 %) / 78 % (67 … 137 %) at 1,200; evaluation only it costs
  +0.233 (+0.186 … +0.281) / +0.235 (+0.156 … +0.314) against +0.119 / +0.127 trained. Long range:
  nothing (learned −0.037, RoPE −0.025, NoPE −0.172 (−0.197 … −0.147)). 67.7 s per far + near arm
  of 3 seeds (0.019 s per member-step), 40.7 s per no-information arm, loaded machine.
* Time (this loaded machine, one torch thread): 0.026–0.042 s per member-step for a far + near
  arm (T = 64), 0.012–0.020 s for a no-information arm (T = 32): 31.6 s / 14.7 s per arm of 3
  seeds at 400 steps, 150 s / 74 s at 1,200. The engine's estimate for T = 64 is 0.0128 s.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from torch.nn import functional as F

from posviz.analysis.difference import paired_difference
from posviz.lab.engine import tasks
from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.model import LabModel, Member
from posviz.lab.studies import far_context as fc


def _members(schemes: list[str], arms: list[str], seeds: range, rows: int) -> list[tuple]:
    """``(scheme, arm, seed)`` per member, rotary ones first (the engine rotates leading ones)."""
    ordered = sorted(schemes, key=lambda s: s != "rope")
    return [(s, a, seed) for s in ordered for a in arms for seed in seeds]


def _model(keys: list[tuple], rows: int, args: argparse.Namespace) -> LabModel:
    n_in, n_out, _ = tasks.vocab_sizes(LabConfig(task="lm"))
    members = [
        Member(ModelConfig(kind="decoder", scheme=s), seed, rows, n_in) for s, _, seed in keys
    ]
    return LabModel(members, n_out=n_out, width=args.width, heads=args.heads, layers=args.layers)


def _tokens(keys, windows, ablated) -> torch.Tensor:
    """``(E, B, T)``: each member's inputs (its seed's windows, its arm's far context)."""
    rows = []
    for _, arm, seed in keys:
        w = windows[seed]
        rows.append(w.inputs(None) if arm == "noinfo" else w.inputs(ablated[seed][arm]))
    return torch.from_numpy(np.stack(rows))


def _per_target(model: LabModel, x: torch.Tensor, near: np.ndarray, n: int) -> torch.Tensor:
    """``(E, B, n)`` cross-entropy of the last ``n`` positions against ``near`` ``(E, B, n)``."""
    logits = model(x)[:, :, -n:]
    y = torch.from_numpy(near)
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
    return ce.view(y.shape)


def _draw(seeds, rngs, abl_rngs, arms, batch, args, held_out) -> tuple[dict, dict]:
    windows, ablated = {}, {}
    for s in seeds:
        w = fc.sample_windows(rngs[s], batch, args.far, args.near, held_out=held_out)
        windows[s] = w
        ablated[s] = {"full": w.far}
        for a in arms:
            ablated[s][a] = fc.ablate(w.far, a, abl_rngs[s][a])
    return windows, ablated


def _evaluate(models, keys, windows, ablated, args) -> dict:
    """Held-out per-seed losses: ``(scheme, arm, eval ablation) → (mid (S,), long (S,))``."""
    out: dict = {}
    with torch.no_grad():
        for model, ks in zip(models, keys, strict=True):
            sets = [("own", ks)]
            if ks[0][1] != "noinfo":  # the full model on each ablated far context
                fulls = [k for k in ks if k[1] == "full"]
                sets += [(a, fulls) for a in args.eval_ablations]
            for what, kk in sets:
                chunks = []
                for lo in range(0, args.eval_n, 64):
                    part = {s: fc.Windows(w.far[lo : lo + 64], w.near[lo : lo + 64])
                            for s, w in windows.items()}  # fmt: skip
                    abl = {
                        s: {a: v[lo : lo + 64] for a, v in d.items()} for s, d in ablated.items()
                    }
                    if what != "own":
                        abl = {s: {**d, "full": d[what]} for s, d in abl.items()}
                    x = _tokens(kk if what == "own" else ks, part, abl)
                    near = np.stack([part[seed].near for _, _, seed in ks])
                    chunks.append(_per_target(model, x, near, args.near))
                ce = torch.cat(chunks, dim=1).numpy()  # (E, M, n)
                mid, long = fc.range_means(ce.mean(1))
                for i, (scheme, arm, _seed) in enumerate(ks):
                    if what != "own" and arm != "full":
                        continue
                    key = (scheme, arm if what == "own" else f"eval:{what}")
                    out.setdefault(key, ([], []))
                    out[key][0].append(mid[i])
                    out[key][1].append(long[i])
    return {k: (np.array(m), np.array(lg)) for k, (m, lg) in out.items()}


def _report(step: int, losses: dict, schemes: list[str], args, wall: float) -> None:
    for scheme in schemes:
        row: dict = {"step": step, "scheme": scheme, "wall_s": round(wall, 1)}
        full, none = losses[(scheme, "full")], losses[(scheme, "noinfo")]
        for r, name in enumerate(("mid", "long")):
            usable = paired_difference(none[r], full[r])
            part = {"L_full": round(float(full[r].mean()), 4),
                    "L_noinfo": round(float(none[r].mean()), 4),
                    "usable": usable.interval_text(4)}  # fmt: skip
            for arm in args.ablations:
                a = losses[(scheme, arm)][r]
                part[f"L_{arm}"] = round(float(a.mean()), 4)
                part[f"removed_{arm}"] = fc.fieller_ratio(
                    a - full[r], none[r] - full[r]
                ).percent_text()
            for arm in args.eval_ablations:
                a = losses[(scheme, f"eval:{arm}")][r]
                part[f"evalonly_{arm}"] = paired_difference(a, full[r]).interval_text(4)
                ratio = fc.fieller_ratio(a - full[r], none[r] - full[r])
                part[f"evalonly_removed_{arm}"] = ratio.percent_text()
            row[name] = part
        print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--far", type=int, default=32)
    parser.add_argument("--near", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--schemes", default="nope,learned,rope")
    parser.add_argument("--ablations", default="shuffle_all")
    parser.add_argument("--eval-ablations", default="shuffle_all,within_sentences,sentences")
    parser.add_argument("--checks", default="0.5,1.0")
    parser.add_argument("--eval-n", type=int, default=256)
    args = parser.parse_args()
    args.ablations = [a for a in args.ablations.split(",") if a]
    args.eval_ablations = [a for a in args.eval_ablations.split(",") if a]
    for a in set(args.ablations) | set(args.eval_ablations):
        fc.ablation(a)
    schemes = args.schemes.split(",")
    torch.set_num_threads(1)
    print(f"# {vars(args)}", flush=True)
    seeds = range(args.seeds)
    long_keys = _members(schemes, ["full", *args.ablations], seeds, args.far + args.near)
    short_keys = _members(schemes, ["noinfo"], seeds, args.near)
    models = [_model(long_keys, args.far + args.near, args), _model(short_keys, args.near, args)]
    keys = [long_keys, short_keys]
    opts = [torch.optim.Adam(m.parameters(), lr=args.lr, foreach=True) for m in models]
    every = sorted({*args.ablations, *args.eval_ablations})
    train = {s: np.random.default_rng([s, 0, args.far, args.near]) for s in seeds}
    train_abl = {
        s: {a: np.random.default_rng([s, 2, i]) for i, a in enumerate(every)} for s in seeds
    }
    held = {s: np.random.default_rng([s, 1, args.far, args.near]) for s in seeds}
    held_abl = {
        s: {a: np.random.default_rng([s, 3, i]) for i, a in enumerate(every)} for s in seeds
    }
    eval_windows, eval_ablated = _draw(seeds, held, held_abl, every, args.eval_n, args, True)
    for a in every:
        changed = np.mean(
            [fc.changed_fraction(eval_windows[s].far, eval_ablated[s][a]) for s in seeds]
        )
        print(f"# held-out far contexts changed by {a}: {changed:.3f}", flush=True)
    checks = {round(args.steps * float(f)) for f in args.checks.split(",")}
    walls = [0.0, 0.0]
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        windows, ablated = _draw(seeds, train, train_abl, args.ablations, args.batch, args, False)
        for i, (model, ks, opt) in enumerate(zip(models, keys, opts, strict=True)):
            t0 = time.perf_counter()
            x = _tokens(ks, windows, ablated)
            near = np.stack([windows[seed].near for _, _, seed in ks])
            loss = _per_target(model, x, near, args.near).mean((1, 2)).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            walls[i] += time.perf_counter() - t0
        if step in checks:
            losses = _evaluate(models, keys, eval_windows, eval_ablated, args)
            _report(step, losses, schemes, args, time.perf_counter() - start)
    per_member = [w / (len(k) * args.steps) for w, k in zip(walls, keys, strict=True)]
    arm_s = {"windowed arm (far + near)": per_member[0] * args.seeds * args.steps,
             "noinfo arm (near only)": per_member[1] * args.seeds * args.steps}  # fmt: skip
    print(json.dumps({"train_wall_s": [round(w, 1) for w in walls],
                      "s_per_member_step": [round(p, 5) for p in per_member],
                      "s_per_arm_all_seeds": {k: round(v, 1) for k, v in arm_s.items()},
                      "total_s": round(time.perf_counter() - start, 1)}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
