"""The anytime-valid alt-test: the test by betting, e-BH and the sequential verdict.

The capital and e-BH are checked against loops written here from the formulas of
Waudby-Smith and Ramdas (2023) and Wang and Ramdas (2022); the level by a small
simulation at the boundary of H0 (the full tables: validation/alttest_betting.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotator.metrics import alt_test, alt_test_sequential
from annotator.metrics.alttest._betting import betting_log_capital, e_bh


def _capital_loop(x, m0, cap):
    mu_sum, sq_sum, log_k, out = 0.0, 0.0, 0.0, []
    mu_prev, var_prev = 0.5, 0.25
    for t, xt in enumerate(x, start=1):
        gap = m0 - mu_prev
        stake = min(max(gap / (var_prev + gap**2), 0.0), cap / (1 - m0))
        log_k += math.log(1 + stake * (m0 - xt))
        out.append(log_k)
        mu_sum += xt
        mu_t = (0.5 + mu_sum) / (t + 1)
        sq_sum += (xt - mu_t) ** 2
        mu_prev, var_prev = mu_t, (0.25 + sq_sum) / (t + 1)
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("epsilon", [0.0, 0.15, 0.3])
def test_capital_matches_loop(seed, epsilon):
    rng = np.random.default_rng(seed)
    d = rng.choice([-1.0, 0.0, 1.0], size=80, p=[0.3, 0.5, 0.2])
    x = (d + 1) / 2
    m0 = (1 + epsilon) / 2
    assert betting_log_capital(x, m0, cap=0.75) == pytest.approx(
        _capital_loop(x, m0, 0.75), rel=1e-12, abs=1e-12
    )


def _e_bh_loop(e, q):
    m = len(e)
    ranked = sorted(range(m), key=lambda j: -e[j])
    k_star = max([k for k in range(1, m + 1) if e[ranked[k - 1]] >= m / (q * k)], default=0)
    return {ranked[i] for i in range(k_star)}


@pytest.mark.parametrize("seed", range(20))
def test_e_bh_matches_definition(seed):
    rng = np.random.default_rng(seed)
    e = np.exp(rng.normal(2.5, 2.0, size=int(rng.integers(1, 12))))
    rejected = e_bh(e, 0.05)
    assert set(np.flatnonzero(rejected)) == _e_bh_loop(list(e), 0.05)


@pytest.mark.parametrize("p_minus", [0.0, 0.25])  # "sparse" and "spread" d
@pytest.mark.parametrize("epsilon", [0.1, 0.2, 0.3])
def test_level_at_the_boundary_of_h0(p_minus, epsilon):
    # E[d] = epsilon exactly; rejection whenever the capital reaches 1/alpha by n = 200.
    reps, alpha = 3000, 0.05
    p_plus = epsilon + p_minus
    rng = np.random.default_rng(int(epsilon * 100) + int(p_minus * 1000))
    u = rng.random((reps, 200))
    d = (u < p_plus).astype(float) - (u > 1 - p_minus).astype(float)
    log_k = betting_log_capital((d + 1) / 2, (1 + epsilon) / 2)
    rate = np.mean(log_k.max(axis=1) >= math.log(1 / alpha))
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


def _agreeing_humans(n_items=20, differ=3):
    scores = [1, 2, 3, 4, 5] * (n_items // 5)
    llm = {f"i{i}": v + (1 if i < differ else 0) for i, v in enumerate(scores)}
    humans = {h: {f"i{i}": v for i, v in enumerate(scores)} for h in ("a", "b", "c")}
    return humans, llm


def test_betting_does_not_pass_the_issue_example():
    humans, llm = _agreeing_humans()
    res = alt_test(humans=humans, llm=llm, epsilon=0.1, min_items_per_human=20, test="betting")
    assert not res.passed and res.winning_rate == 0.0
    assert all(row.test == "betting" and row.p_value == 1.0 for row in res.annotators)


def test_betting_passes_an_llm_that_agrees_and_reports_e_values():
    humans, llm = _agreeing_humans(n_items=100, differ=0)
    res = alt_test(humans=humans, llm=llm, epsilon=0.2, min_items_per_human=1, test="betting")
    assert res.passed and res.winning_rate == 1.0
    # d = 0 on every item: each item multiplies the capital by 1 + stake * 0.6 > 1.
    for row in res.annotators:
        assert row.statistic >= 3 / 0.05 and row.secured
        assert row.p_value == pytest.approx(
            1 / math.exp(betting_log_capital(np.full(100, 0.5), 0.6).max())
        )


def test_betting_refuses_ipw():
    humans, llm = _agreeing_humans()
    with pytest.raises(ValueError, match="inverse_probability_weighting"):
        alt_test(humans=humans, llm=llm, test="betting", inverse_probability_weighting=True)


def test_sequential_verdict_once_decided_stays_decided():
    humans, llm = _agreeing_humans(n_items=150, differ=0)
    first = None
    for n in range(5, 151, 5):
        items = [f"i{i}" for i in range(n)]
        verdict = alt_test_sequential(
            humans={h: {i: anns[i] for i in items} for h, anns in humans.items()},
            llm={i: llm[i] for i in items},
            epsilon=0.2,
        )
        if first is None and verdict.decided:
            first = n
        if first is not None:
            assert verdict.decided, n
            assert verdict.message.startswith("the LLM passes (WR 1.00) and this cannot")
    assert first is not None and first < 150


def test_sequential_not_decided_yet():
    humans, llm = _agreeing_humans()
    verdict = alt_test_sequential(humans=humans, llm=llm, epsilon=0.1)
    assert not verdict.decided and verdict.secured_winning_rate == 0.0
    assert verdict.message.startswith("not decided yet (WR 0.00 now; 0 of 3 annotators secured")
    assert verdict.to_dict()["result"]["test"] == "betting"


def test_domains_with_betting_share_one_e_bh():
    from annotator.metrics import alt_test_domains

    humans, llm = _agreeing_humans(n_items=60, differ=0)
    single = alt_test(humans=humans, llm=llm, min_items_per_human=1, test="betting")
    one = alt_test_domains(
        {"x": {"humans": humans, "llm": llm}}, min_items_per_human=1, test="betting"
    )
    assert one.domains["x"] == single
    two = alt_test_domains(
        {"x": {"humans": humans, "llm": llm}, "y": {"humans": humans, "llm": llm}},
        min_items_per_human=1,
        test="betting",
    )
    # Six annotators in all: an e-value is stopped (secured) at 6 / q = 120, not 60.
    for row in two.domains["x"].annotators:
        assert row.secured == (row.statistic >= 6 / 0.05)
        assert row.statistic == pytest.approx(
            math.exp(
                next(v for v in betting_log_capital(np.full(60, 0.5), 0.6) if v >= math.log(120))
            )
        )
