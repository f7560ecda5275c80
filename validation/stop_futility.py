"""The conditional-power futility stop: how often it stops a judge that would pass.

Run from the repository root (about 10 minutes; --quick, 100 studies: about 3):

    .venv/bin/python validation/stop_futility.py [--reps 300] [--seed 20261128] [--quick]

The stop rule (:func:`annotator.analysis.stop_rule.judge_verdict`) says a judge *cannot
pass within the budget* when the bound of
:func:`annotator.metrics.alttest._futility.pass_chance_bound` on its chance to pass
with the items left is at most ``FUTILITY_CHANCE`` (0.025); the bound holds when each
rater's two confidence sequences cover (miscoverage ``FUTILITY_COVER``, 0.025 in all),
so a judge that would pass within the budget is stopped so with probability at most
0.05. This script measures that chance at the sizes users have: fully crossed studies
of m = 3, 5 and 8 raters and N = 30, 60 and 100 items (the design and the scores of
``validation/stop_when_decided.py``: truth uniform on [0.5, 4.5], raters N(0, 0.8),
the judge N(0, sd), tenths of 0-5, epsilon 0.2, q 0.05), items arriving complete, the
check after every 10 items and at the end.

Per design and judge (sd 0.4: better than the raters; 0.8: as good; 1.0: a little
worse; the boundary sd; 2.0: clearly worse) and ``reps`` studies: *would pass* is the
share that the pass rule (half of the raters' capitals at m / (q ceil(m/2))) passes
within the N items without any futility stop; *stopped, would pass* the share stopped
by the bound before that pass (the error this rule can make; at most 0.05); *stopped*
the share stopped before the end, and the median share of the N * m ratings spent until the
decision (pass or stop; N * m when neither).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotator.metrics.alttest._betting import BET_CAP, MIXTURE_SHARES  # noqa: E402
from annotator.metrics.alttest._futility import (  # noqa: E402
    FUTILITY_CHANCE,
    FUTILITY_COVER,
    bernoulli_upper_bounds,
    hit_chance_bound,
)
from annotator.metrics.alttest._sequential import secure_threshold  # noqa: E402

SIZES = ((3, 30), (3, 100), (5, 60), (8, 100))
JUDGES = (0.4, 0.8, 1.0, "boundary", 2.0)
LOOK_EVERY = 10


def _sim():
    """validation/stop_when_decided.py: its ratings, indicators and boundary."""
    path = ROOT / "validation" / "stop_when_decided.py"
    spec = importlib.util.spec_from_file_location("stop_when_decided", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def study(x: np.ndarray, n: int, epsilon: float, q: float) -> tuple[float, float]:
    """One study's x (m, n): the look of the pass (inf if none) and of the stop."""
    m = x.shape[0]
    m0 = (1.0 + epsilon) / 2.0
    stakes = np.asarray(MIXTURE_SHARES) * BET_CAP / (1.0 - m0)
    logs = np.cumsum(np.log1p(stakes[None, :, None] * (m0 - x)[:, None, :]), axis=-1)
    top = logs.max(axis=1)
    mixture = top + np.log(np.mean(np.exp(logs - top[:, None, :]), axis=1))  # (m, n)
    log_c = math.log(secure_threshold(m, q))
    hit = np.maximum.accumulate(mixture >= log_c, axis=-1)
    need = math.ceil(m / 2)
    passed = hit.sum(axis=0) >= need
    pass_at = float(np.argmax(passed) + 1) if passed.any() else math.inf
    alpha = FUTILITY_COVER / (2 * m)
    u0 = [bernoulli_upper_bounds(row == 0.0, alpha) for row in x]
    u1 = [bernoulli_upper_bounds(row < 1.0, alpha) for row in x]
    looks = range(LOOK_EVERY, n, LOOK_EVERY)  # at N the study ends anyway
    for t in looks:
        if t >= pass_at:
            break
        open_raters = [j for j in range(m) if not hit[j, t - 1]]
        still = need - (m - len(open_raters))
        total = sum(
            hit_chance_bound(
                logs[j, :, t - 1], stakes, m0, u0[j][t - 1], 1.0 - u1[j][t - 1], n - t, log_c
            )
            for j in open_raters
        )
        if min(total / still, 1.0) <= FUTILITY_CHANCE:
            return pass_at, float(t)
    return pass_at, math.inf


def run(rng, sim, m: int, n: int, judge, reps: int) -> dict:
    sd = sim.boundary_sd(rng, m, 50_000) if judge == "boundary" else float(judge)
    humans, llm = sim.ratings(rng, reps, n, m, sd)
    w_f, w_h = sim.indicators(humans, llm)
    x = np.moveaxis((w_h - w_f + 1.0) / 2.0, -1, 1)  # (reps, m, n)
    would, wrong, stopped, spent = 0, 0, 0, []
    for r in range(reps):
        pass_at, stop_at = study(x[r], n, sim.EPSILON, sim.Q)
        would += math.isfinite(pass_at)
        wrong += math.isfinite(pass_at) and stop_at < pass_at
        stopped += stop_at < pass_at
        spent.append(min(pass_at, stop_at, n) / n)
    return {
        "sd": sd,
        "would": would / reps,
        "wrong": wrong / reps,
        "stopped": stopped / reps,
        "spent": float(np.median(spent)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    reps = 100 if args.quick else args.reps
    rng = np.random.default_rng(args.seed)
    sim = _sim()
    print(
        f"{reps} studies per row, seed {args.seed}; stop when the bounded chance to pass "
        f"is <= {FUTILITY_CHANCE} (cover {FUTILITY_COVER}): stated bound on "
        f"'stopped, would pass' {FUTILITY_CHANCE + FUTILITY_COVER:.2f}\n"
    )
    print("| m | N | judge sd | would pass | stopped, would pass | stopped | median spent |")
    print("|---|---|---|---|---|---|---|")
    for m, n in SIZES:
        for judge in JUDGES:
            row = run(rng, sim, m, n, judge, reps)
            print(
                f"| {m} | {n} | {row['sd']:.2f} | {row['would']:.3f} | {row['wrong']:.3f} | "
                f"{row['stopped']:.3f} | {row['spent']:.2f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
