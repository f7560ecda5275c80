"""Stop when decided: the error rate under optional stopping, and the ratings it saves.

Run from the repository root (about 20 s of CPU; --quick: about 5 s):

    .venv/bin/python validation/stop_when_decided.py [--reps 2000] [--seed 20261127]

The design is the seed protocol's, fully crossed: m raters rate each of N items on
one scale (0-5 in steps of 0.1). An item's true score is uniform on [0.5, 4.5]; a
rater gives it plus N(0, 0.8) and the judge plus N(0, sigma_f), both rounded to the
step and kept in [0, 5]. Items arrive one at a time with all m ratings, and the
study looks after every item (every m ratings), and separately after every block of
10 items, stopping as ``[validation] stop_when_decided`` does
(:mod:`annotator.analysis.stop_rule`): the judge *passes* once ceil(m/2) raters'
betting capitals (the library's default strategy) reached m / (q ceil(m/2)), and
*cannot pass* once too few
raters can still get there within the N items: those given up by the futility bet
(margin 0.1 on d, level 0.025 per rater) or unable to reach it even winning every
item left.

The winning indicators of an item depend only on that item's ratings, so one pass
computes them and each rater's capital path (the library's ``betting_log_capital``);
the verdict at look t is then read off the paths' first t items. ``--check`` (on in
--quick) confirms this against the library end to end: it runs
``alt_test_sequential`` and ``judge_verdict`` at every look of a few replications and
requires the same verdict at every look.

Error rate: sigma_f is set by bisection on 200,000 simulated items (20,000 with --quick) so that each
rater's E[W_h - W_f] equals epsilon: every H0 is exactly at its boundary. A pass is
then an error; its rate must stay at or below q = 0.05 (Monte Carlo standard error
sqrt(0.05 * 0.95 / reps), 0.005 at 2000 replications). For contrast, the paper's
t-test (winning rate over Benjamini-Yekutieli rejections, at least 10 items) applied
at the same looks, which optional stopping invalidates.

Savings: in typical cases (a judge better than the raters, as good, at the boundary,
clearly worse) the share of studies that pass, cannot pass or run to the end, and the
median number of ratings at the decision (the full N * m when undecided) beside the
full design's N * m.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotator.analysis.stop_rule import FUTILITY_MARGIN, most_log_gain_per_item  # noqa: E402
from annotator.metrics.alttest._betting import sequential_log_capital  # noqa: E402
from annotator.metrics.alttest._sequential import (  # noqa: E402
    FUTILITY_BETA,
    SEQUENTIAL_STRATEGY,
    secure_threshold,
)

Q = 0.05
EPSILON = 0.2
HUMAN_SD = 0.8
STEP_UNITS = 10  # ratings in tenths: integer arithmetic, so ties are exact
BLOCK = 10


def ratings(rng, reps: int, n: int, m: int, judge_sd: float) -> tuple[np.ndarray, np.ndarray]:
    """Humans (reps, n, m) and judge (reps, n) scores in tenths of the 0-5 scale."""
    truth = rng.uniform(0.5, 4.5, (reps, n, 1))

    def rate(sd: float, size: tuple[int, ...]) -> np.ndarray:
        value = truth if len(size) == 3 else truth[..., 0]
        noisy = value + rng.normal(0.0, sd, size)
        return np.clip(np.round(noisy * STEP_UNITS), 0, 5 * STEP_UNITS).astype(np.int64)

    return rate(HUMAN_SD, (reps, n, m)), rate(judge_sd, (reps, n))


def indicators(humans: np.ndarray, judge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W_f and W_h (reps, n, m): neg_rmse against the other raters, ties to both.

    -sqrt(mean((x - r)^2)) orders as the sum of squares (the count of references is
    the same on both sides), compared exactly in integers.
    """
    m = humans.shape[-1]
    own = np.zeros(humans.shape, dtype=np.int64)
    llm = np.zeros(humans.shape, dtype=np.int64)
    for k in range(m):
        ref = humans[..., k : k + 1]
        mask = np.arange(m) != k  # rater k is a reference for every other rater
        own[..., mask] += (humans[..., mask] - ref) ** 2
        llm[..., mask] += (judge[..., None] - ref) ** 2
    return (llm <= own).astype(float), (own <= llm).astype(float)


def verdict_paths(w_f: np.ndarray, w_h: np.ndarray, n_budget: int):
    """Per look t = 1..n: passed (reps, n) and cannot-pass (reps, n) of the stop rule."""
    reps, n, m = w_f.shape
    m0 = (1.0 + EPSILON) / 2.0
    x = np.moveaxis((w_h - w_f + 1.0) / 2.0, -1, 1)  # (reps, m, n)
    log_k = sequential_log_capital(x, m0, strategy=SEQUENTIAL_STRATEGY)
    log_threshold = math.log(secure_threshold(m, Q))
    reached = np.maximum.accumulate(log_k, axis=-1) >= log_threshold
    passed = reached.sum(axis=1) >= math.ceil(m / 2)
    # The capital is stopped at the threshold: a secured rater's e-value is its level.
    first = np.where(reached, np.arange(n), n).min(axis=-1, keepdims=True)
    stopped = np.where(np.arange(n) >= first, log_threshold, log_k)
    left = n_budget - np.arange(1, n + 1)
    # The futility bet (judge_verdict's default): a rater given up cannot count.
    other = 1.0 - (m0 - FUTILITY_MARGIN / 2.0)
    back = sequential_log_capital(1.0 - x, other, strategy=SEQUENTIAL_STRATEGY)
    given_up = np.maximum.accumulate(back, axis=-1) >= math.log(1.0 / FUTILITY_BETA)
    possible = ~given_up & (stopped + left * most_log_gain_per_item(EPSILON) >= log_threshold)
    reachable = reached | possible
    futile = reachable.sum(axis=1) < math.ceil(m / 2)
    return passed, futile


def decision_looks(passed, futile, looks: np.ndarray):
    """The first look (1-based item count) with a decision, and which; n when none."""
    reps, n = passed.shape
    at = np.full(reps, n)
    outcome = np.full(reps, "undecided", dtype=object)
    for t in looks:
        fresh = outcome == "undecided"
        done_pass = fresh & passed[:, t - 1]
        done_futile = fresh & ~done_pass & futile[:, t - 1]
        outcome[done_pass], outcome[done_futile] = "passes", "cannot pass"
        at[done_pass | done_futile] = t
    return at, outcome


def t_test_passes(w_f, w_h, looks: np.ndarray) -> np.ndarray:
    """The paper's t-test (BY at q, winning rate >= 0.5) at each look: ever passed."""
    reps, n, m = w_f.shape
    d = w_h - w_f
    cum, cum2 = np.cumsum(d, axis=1), np.cumsum(d * d, axis=1)
    ever = np.zeros(reps, dtype=bool)
    for t in looks:
        if t < 10:
            continue
        mean = cum[:, t - 1] / t
        var = (cum2[:, t - 1] - t * mean**2) / (t - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = (mean - EPSILON) / np.sqrt(var / t)
        p = np.where(np.isnan(stat), 1.0, special.stdtr(t - 1, stat))
        rejected = stats.false_discovery_control(p, axis=1, method="by") <= Q
        ever |= rejected.sum(axis=1) * 2 >= m
    return ever


def boundary_sd(rng, m: int, n_items: int) -> float:
    """The judge's noise at which E[W_h - W_f] = epsilon for each rater (bisection)."""
    low, high = HUMAN_SD, 4 * HUMAN_SD
    for _ in range(30):
        mid = (low + high) / 2
        humans, judge = ratings(np.random.default_rng(rng.integers(2**32)), 1, n_items, m, mid)
        w_f, w_h = indicators(humans, judge)
        if (w_h - w_f).mean() < EPSILON:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def check_against_library(rng, m: int, n: int, judge_sd: float, reps: int) -> int:
    """Looks where the library's verdict differs from the vectorised one (0 expected)."""
    from annotator.analysis.stop_rule import Outcome, judge_verdict

    humans, judge = ratings(rng, reps, n, m, judge_sd)
    passed, futile = verdict_paths(*indicators(humans, judge), n)
    differ = 0
    for r in range(reps):
        for t in range(1, n + 1):
            verdict = judge_verdict(
                scale="s",
                judge="j",
                humans={k: {i: humans[r, i, k] / STEP_UNITS for i in range(t)} for k in range(m)},
                llm={i: judge[r, i] / STEP_UNITS for i in range(t)},
                budget_items=n,
                raters_to_come=0,
                epsilon=EPSILON,
                q=Q,
                # The conditional-power stop has its own check (validation/stop_futility.py).
                futility_chance=None,
            )
            expected = (
                Outcome.PASSES
                if passed[r, t - 1]
                else Outcome.CANNOT_PASS
                if futile[r, t - 1]
                else Outcome.UNDECIDED
            )
            differ += verdict.outcome != expected
    return differ


def simulate(rng, reps: int, n: int, m: int, judge_sd: float) -> dict:
    humans, judge = ratings(rng, reps, n, m, judge_sd)
    w_f, w_h = indicators(humans, judge)
    passed, futile = verdict_paths(w_f, w_h, n)
    every = np.arange(1, n + 1)
    blocks = np.arange(BLOCK, n + 1, BLOCK)
    at, outcome = decision_looks(passed, futile, every)
    at_block, outcome_block = decision_looks(passed, futile, blocks)
    return {
        "d": float((w_h - w_f).mean()),
        "pass_item": float(np.mean(outcome == "passes")),
        "pass_block": float(np.mean(outcome_block == "passes")),
        "futile": float(np.mean(outcome == "cannot pass")),
        "undecided": float(np.mean(outcome == "undecided")),
        "median_ratings": float(np.median(at * m)),
        "median_ratings_block": float(np.median(at_block * m)),
        "ttest_item": float(np.mean(t_test_passes(w_f, w_h, every))),
        "ttest_block": float(np.mean(t_test_passes(w_f, w_h, blocks))),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200 replications, with --check")
    parser.add_argument("--check", action="store_true", help="compare with the library")
    args = parser.parse_args(argv)
    reps = 200 if args.quick else args.reps
    n, m = args.items, args.raters
    rng = np.random.default_rng(args.seed)
    at_boundary = boundary_sd(rng, m, 20_000 if args.quick else 200_000)
    print(
        f"replications {reps}, seed {args.seed}; {m} raters x {n} items, full design "
        f"{n * m} ratings; epsilon {EPSILON}, q {Q}; rater noise sd {HUMAN_SD}; "
        f"judge noise sd at the boundary {at_boundary:.3f}\n"
    )
    if args.check or args.quick:
        differ = check_against_library(rng, m, 40, at_boundary * 0.6, reps=3)
        print(
            f"library check (alt_test_sequential and judge_verdict at every look): "
            f"{differ} look(s) differ\n"
        )
        if differ:
            return 1
    cases = {
        "better (sd 0.4)": 0.4,
        "a little better (sd 0.6)": 0.6,
        "as good (sd 0.8)": HUMAN_SD,
        f"at the boundary (sd {at_boundary:.2f})": at_boundary,
        "worse (sd 2.4)": 2.4,
    }
    print(
        "| judge | E[d] | passes, look every item | passes, every 10 items | t-test peeking, "
        "every item / 10 items | cannot pass | undecided at N | median ratings at the "
        "decision (every item / 10 items) | full design |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, sd in cases.items():
        row = simulate(rng, reps, n, m, sd)
        print(
            f"| {label} | {row['d']:.3f} | {row['pass_item']:.3f} | {row['pass_block']:.3f} | "
            f"{row['ttest_item']:.3f} / {row['ttest_block']:.3f} | {row['futile']:.3f} | "
            f"{row['undecided']:.3f} | {row['median_ratings']:.0f} / "
            f"{row['median_ratings_block']:.0f} | {n * m} |"
        )
    print(f"\nMonte Carlo standard error at 0.05: {math.sqrt(0.05 * 0.95 / reps):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
