"""Betting strategies of the sequential alt-test (issue 39): each against a plain loop,
each at the level at the boundary of H0, and the e-BH threshold that secures a pass."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotator.metrics import alt_test_sequential
from annotator.metrics.alttest._betting import (
    BET_CAP,
    MIXTURE_SHARES,
    STRATEGIES,
    betting_log_capital,
    e_bh,
    sequential_log_capital,
)
from annotator.metrics.alttest._sequential import secure_threshold


def _ons_loop(x, m0):
    # Cutkosky and Orabona's online Newton step as Waudby-Smith and Ramdas (2023,
    # section 5.3) write it, one item at a time.
    most = BET_CAP / (1 - m0)
    lam, a, log_k, out = 0.0, 1.0, 0.0, []
    for xi in x:
        g = m0 - xi
        log_k += math.log(1 + lam * g)
        out.append(log_k)
        z = g / (1 + lam * g)
        a += z * z
        lam = min(max(lam + 2 / (2 - math.log(3)) * z / a, 0.0), most)
    return np.array(out)


def _mixture_loop(x, m0):
    most = BET_CAP / (1 - m0)
    capitals = [np.cumprod([1 + s * most * (m0 - xi) for xi in x]) for s in MIXTURE_SHARES]
    return np.log(np.mean(capitals, axis=0))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("epsilon", [0.1, 0.2])
def test_strategies_match_plain_loops(seed, epsilon):
    rng = np.random.default_rng(seed)
    x = rng.choice([0.0, 0.5, 1.0], size=60, p=[0.3, 0.6, 0.1])
    m0 = (1 + epsilon) / 2
    assert np.allclose(sequential_log_capital(x, m0, strategy="ons"), _ons_loop(x, m0))
    assert np.allclose(sequential_log_capital(x, m0, strategy="mixture"), _mixture_loop(x, m0))
    assert np.array_equal(
        sequential_log_capital(x, m0, strategy="agrapa"), betting_log_capital(x, m0)
    )
    # Vectorised over leading axes: each row as on its own.
    rows = np.stack([x, x[::-1]])
    for strategy in STRATEGIES:
        both = sequential_log_capital(rows, m0, strategy=strategy)
        assert np.allclose(both[1], sequential_log_capital(x[::-1], m0, strategy=strategy))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("p_minus", [0.0, 0.25])
def test_each_strategy_holds_the_level_at_the_boundary(strategy, p_minus):
    reps, alpha, epsilon = 2000, 0.05, 0.2
    rng = np.random.default_rng(int(p_minus * 100) + len(strategy))
    u = rng.random((reps, 150))
    d = (u < epsilon + p_minus).astype(float) - (u > 1 - p_minus).astype(float)
    log_k = sequential_log_capital((d + 1) / 2, (1 + epsilon) / 2, strategy=strategy)
    rate = np.mean(log_k.max(axis=1) >= math.log(1 / alpha))
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


@pytest.mark.parametrize("m", range(1, 14))
def test_half_the_family_at_the_secure_threshold_is_rejected_by_e_bh(m):
    q, h = 0.05, math.ceil(m / 2)
    rng = np.random.default_rng(m)
    e = rng.uniform(0, secure_threshold(m, q), m)  # below: anything
    e[rng.choice(m, h, replace=False)] = secure_threshold(m, q)
    assert e_bh(e, q).sum() >= h
    # One less than h at the threshold does not settle it alone.
    assert secure_threshold(m, q) == pytest.approx(m / (q * h))


def test_an_unknown_strategy_is_named():
    humans = {h: {i: i % 5 for i in range(10)} for h in "abc"}
    with pytest.raises(ValueError, match="strategy must be one of agrapa, ons, mixture"):
        alt_test_sequential(humans=humans, llm={i: i % 5 for i in range(10)}, strategy="kelly")
    with pytest.raises(ValueError, match="strategy must be one of"):
        sequential_log_capital(np.zeros(3), 0.6, strategy="kelly")
