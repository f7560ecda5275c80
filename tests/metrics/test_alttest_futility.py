"""The conditional-power futility bound: its confidence sequences cover, its hitting
bound is above the simulated chance, and alt_test_sequential / judge_verdict use it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from annotator.analysis.stop_rule import Outcome, judge_verdict
from annotator.metrics import alt_test_sequential
from annotator.metrics.alttest._betting import BET_CAP, MIXTURE_SHARES
from annotator.metrics.alttest._futility import (
    bernoulli_upper_bounds,
    hit_chance_bound,
    pass_chance_bound,
)


def test_the_mixture_matches_a_numerical_integral():
    # All zeros: the bound is the largest grid u with K_t(u) < 1/alpha, K_t(u) =
    # [int_0^u (1-p)^t pi(p) dp / Pi(u)] / (1-u)^t, integrated here with quad.
    t, alpha = 12, 0.05
    bound = bernoulli_upper_bounds(np.zeros(t), alpha)[-1]

    def k(u):
        beta = lambda p: p**-0.5 * (1 - p) ** -0.5  # noqa: E731
        num = integrate.quad(lambda p: (1 - p) ** t * beta(p), 0, u)[0]
        return num / integrate.quad(beta, 0, u)[0] / (1 - u) ** t

    assert k(bound - 0.006) < 1 / alpha  # the last grid point kept, rounded up by one
    assert k(bound + 0.01) >= 1 / alpha or bound >= 0.99


@pytest.mark.parametrize("p", [0.05, 0.4])
def test_the_upper_sequence_covers_at_every_time(p):
    rng = np.random.default_rng(3)
    alpha, reps = 0.1, 150
    misses = sum((bernoulli_upper_bounds(rng.random(80) < p, alpha) < p).any() for _ in range(reps))
    assert misses / reps <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


@pytest.mark.parametrize(("probs", "left"), [((0.5, 0.3, 0.2), 40), ((0.6, 0.3, 0.1), 25)])
def test_the_hitting_bound_is_above_the_simulated_chance(probs, left):
    m0 = 0.6
    stakes = np.asarray(MIXTURE_SHARES) * BET_CAP / (1 - m0)
    start = np.full(stakes.size, 0.5)  # log capitals now
    log_c = math.log(30.0)
    rng = np.random.default_rng(5)
    x = rng.choice([0.0, 0.5, 1.0], p=probs, size=(20_000, left))
    logs = start[None, :, None] + np.cumsum(np.log1p(stakes[None, :, None] * (m0 - x)[:, None]), -1)
    mixture = np.log(np.mean(np.exp(logs), axis=1))
    simulated = float((mixture.max(axis=1) >= log_c).mean())
    bound = hit_chance_bound(start, stakes, m0, probs[0], probs[2], left, log_c)
    assert simulated <= bound <= 1.0
    assert simulated > 0.0  # a case where the judge can still get there


def test_pass_chance_counts_raters_to_come_and_needs_items():
    x = np.full(30, 0.5)  # ties only: no growth
    common = {"m0": 0.6, "log_threshold": math.log(30.0), "need": 1}
    assert pass_chance_bound([x], remaining=[0], **common) == 0.0
    assert pass_chance_bound([x], remaining=[0], to_come=1, **common) == 1.0
    many = pass_chance_bound([x], remaining=[200], **common)
    few = pass_chance_bound([x], remaining=[20], **common)
    assert few <= many


def _ties(n_items: int, seed: int = 0):
    """Three raters right 70% of the time (else a random label), a judge right 30%."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 4, n_items)
    noisy = lambda: np.where(rng.random(n_items) < 0.7, truth, rng.integers(1, 4, n_items))  # noqa: E731
    humans = {f"r{j}": dict(enumerate(noisy().tolist())) for j in range(3)}
    judge = np.where(rng.random(n_items) < 0.3, truth, rng.integers(1, 4, n_items))
    return humans, dict(enumerate(judge.tolist()))


def test_alt_test_sequential_bounds_the_chance_only_when_asked():
    humans, llm = _ties(60)
    opts = {"humans": humans, "llm": llm, "scoring": "accuracy", "epsilon": 0.2}
    assert alt_test_sequential(**opts).pass_chance is None
    chances = [alt_test_sequential(**opts, items_left=k).pass_chance for k in (2, 20, 400)]
    # 2 items cannot make up the gap; 20 could, but only by a run of luck the data so
    # far make unlikely; 400 items left leave every chance open.
    assert chances[0] == 0.0 and 0.0 < chances[1] < 0.025 and chances[2] == 1.0
    per_rater = alt_test_sequential(**opts, items_left={"r0": 20, "r1": 20, "r2": 20})
    assert per_rater.pass_chance == pytest.approx(chances[1])


def test_judge_verdict_stops_a_judge_that_cannot_pass_in_time():
    humans, llm = _ties(60)
    common = {"scale": "s", "judge": "j", "humans": humans, "llm": llm, "scoring": "accuracy"}
    stopped = judge_verdict(**common, budget_items=80, raters_to_come=0)
    assert stopped.outcome == Outcome.CANNOT_PASS and "chance to pass" in stopped.why
    # Without the bound (and with no rater given up by the bet) it stays open.
    off = judge_verdict(**common, budget_items=80, raters_to_come=0, futility_chance=None)
    assert off.outcome == Outcome.UNDECIDED
    # Plenty of items left: open either way.
    assert judge_verdict(**common, budget_items=2000, raters_to_come=0).outcome == (
        Outcome.UNDECIDED
    )
