"""The stop rule's pieces: the bound on one item's gain, and its three outcomes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotator.analysis.stop_rule import Outcome, judge_verdict, most_log_gain_per_item
from annotator.metrics.alttest._betting import betting_log_capital


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.2, 0.5])
def test_no_item_raises_the_capital_by_more_than_the_bound(epsilon):
    m0 = (1 + epsilon) / 2
    rng = np.random.default_rng(1)
    # Random paths, paths the judge always wins (x = 0), and mixtures of both.
    paths = [rng.random((200, 60)), np.zeros((1, 60)), (rng.random((200, 60)) < 0.3) * 1.0]
    gain = most_log_gain_per_item(epsilon)
    # By hand: F = 1 + 0.75 / (1 - m0) * m0.
    assert gain == pytest.approx(math.log(1 + 0.75 / (1 - m0) * m0))
    for x in paths:
        steps = np.diff(betting_log_capital(x, m0), prepend=0.0, axis=-1)
        assert steps.max() <= gain + 1e-12


def _data(n_items: int, judge_noise: float, n_raters: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 5, n_items)
    humans = {
        f"r{j}": dict(enumerate(np.clip(truth + rng.normal(0, 0.8, n_items), 0, 5)))
        for j in range(n_raters)
    }
    llm = dict(enumerate(np.clip(truth + rng.normal(0, judge_noise, n_items), 0, 5)))
    return humans, llm


def test_an_exact_judge_passes():
    humans, llm = _data(40, 0.0)
    verdict = judge_verdict(
        scale="s", judge="j", humans=humans, llm=llm, budget_items=40, raters_to_come=0
    )
    assert verdict.outcome == Outcome.PASSES and verdict.decided


def test_futility_needs_the_budget_spent():
    humans, llm = _data(40, 3.0)
    common = {"scale": "s", "judge": "j", "humans": humans, "llm": llm}
    # No items left for anyone, nobody to come: no rater can still be secured.
    spent = judge_verdict(**common, budget_items=40, raters_to_come=0)
    assert spent.outcome == Outcome.CANNOT_PASS
    assert "at most 0 of 4 raters" in spent.why
    # Items left for every rater to make up their losses and reach m/q: undecided.
    assert judge_verdict(**common, budget_items=1000, raters_to_come=0).outcome == (
        Outcome.UNDECIDED
    )
    # Raters who may still come and could be secured keep it open; without a cap, always.
    assert judge_verdict(**common, budget_items=40, raters_to_come=4).outcome == (Outcome.UNDECIDED)
    assert judge_verdict(**common, budget_items=40, raters_to_come=3).outcome == (
        Outcome.CANNOT_PASS
    )
    assert judge_verdict(**common, budget_items=40, raters_to_come=math.inf).outcome == (
        Outcome.UNDECIDED
    )


def test_nothing_to_test_is_undecided_and_bad_budgets_are_refused():
    verdict = judge_verdict(
        scale="s", judge="j", humans={}, llm={}, budget_items=0, raters_to_come=0
    )
    assert verdict.outcome == Outcome.UNDECIDED and "not testable yet" in verdict.why
    with pytest.raises(ValueError, match="budget_items and raters_to_come"):
        judge_verdict(scale="s", judge="j", humans={}, llm={}, budget_items=-1, raters_to_come=0)
