"""The stop rule's pieces: the bound on one item's gain, and its three outcomes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotator.analysis.stop_rule import (
    Outcome,
    complete_items,
    judge_verdict,
    most_log_gain_per_item,
)
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
    # The impossibility bound alone (no futility bet, no conditional-power bound).
    humans, llm = _data(40, 3.0)
    common = {
        "scale": "s",
        "judge": "j",
        "humans": humans,
        "llm": llm,
        "futility_margin": None,
        "futility_chance": None,
    }
    # No items left for anyone, nobody to come: no rater can still be secured.
    spent = judge_verdict(**common, budget_items=40, raters_to_come=0)
    assert spent.outcome == Outcome.CANNOT_PASS
    assert "at most 0 of 4 raters" in spent.why
    # Items left for every rater to make up their losses and reach m/q: undecided.
    assert judge_verdict(**common, budget_items=1000, raters_to_come=0).outcome == (
        Outcome.UNDECIDED
    )
    # Raters who may still come and could be secured on the 40 items not complete yet
    # keep it open; without a cap, always.
    assert judge_verdict(**common, budget_items=80, raters_to_come=4).outcome == (Outcome.UNDECIDED)
    assert judge_verdict(**common, budget_items=80, raters_to_come=math.inf).outcome == (
        Outcome.UNDECIDED
    )
    # Every item has entered complete: raters to come can enter none of them.
    assert judge_verdict(**common, budget_items=40, raters_to_come=4).outcome == (
        Outcome.CANNOT_PASS
    )


def test_nothing_to_test_is_undecided_and_bad_budgets_are_refused():
    verdict = judge_verdict(
        scale="s", judge="j", humans={}, llm={}, budget_items=0, raters_to_come=0
    )
    assert verdict.outcome == Outcome.UNDECIDED and "not testable yet" in verdict.why
    with pytest.raises(ValueError, match="budget_items and raters_to_come"):
        judge_verdict(scale="s", judge="j", humans={}, llm={}, budget_items=-1, raters_to_come=0)


def _frame(rows):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame(rows, columns=["item", "rater", "value", "submitted_at"])


def test_an_item_enters_complete_with_its_first_ratings_in_completion_order():
    ratings = _frame(
        [
            ("a", "r1", 1.0, 1),
            ("b", "r2", 2.0, 2),
            ("b", "r3", 3.0, 3),  # b complete at 3 (k = 2)
            ("a", "r2", 4.0, 4),  # a complete at 4
            ("a", "r3", 5.0, 5),  # a third rating: never enters
            ("c", "r4", 1.0, 6),  # c not complete
        ]
    )
    humans, order = complete_items(ratings, raters_per_item=2)
    assert order == ["b", "a"]
    assert humans == {"r1": {"a": 1.0}, "r2": {"b": 2.0, "a": 4.0}, "r3": {"b": 3.0}, "r4": {}}
    # Ties in time go by rater, whatever the rows' order.
    tied = _frame([("a", "r2", 1.0, 1), ("a", "r1", 2.0, 1), ("a", "r3", 3.0, 1)])
    assert complete_items(tied, raters_per_item=2)[0] == {
        "r1": {"a": 2.0},
        "r2": {"a": 1.0},
        "r3": {},
    }


@pytest.mark.parametrize(
    ("k", "columns", "message"),
    [
        (1, None, "raters_per_item must be at least 2"),
        (2.5, None, "raters_per_item must be an integer"),
        (2, ["item", "rater", "value"], r"ratings lacks the column submitted_at"),
    ],
)
def test_complete_items_names_what_is_wrong(k, columns, message):
    ratings = _frame([("a", "r1", 1.0, 1)])
    if columns:
        ratings = ratings[columns]
    with pytest.raises(ValueError, match=message):
        complete_items(ratings, raters_per_item=k)


def test_a_pass_is_never_reversed_by_later_ratings():
    # Ratings arrive interleaved, 3 of 5 raters per item; the check runs after every
    # rating. Once it passes, every later look passes too (issue 39: fed every rating
    # with items placed by their latest one, 190 ratings passed and 195 did not).
    rng = np.random.default_rng(39)
    n, raters = 60, [f"r{j}" for j in range(5)]
    truth = rng.uniform(0.5, 4.5, n)
    llm = {i: float(truth[i]) for i in range(n)}
    rows = []
    for i in range(n):
        for r in rng.choice(raters, 3, replace=False):
            rows.append((i, r, float(np.clip(truth[i] + rng.normal(0, 0.8), 0, 5))))
    times = rng.permutation(len(rows))  # interleaved: any order of arrival
    rows = [(*row, int(t)) for row, t in zip(rows, times, strict=True)]
    rows.sort(key=lambda row: row[3])
    outcomes = []
    for look in range(20, len(rows) + 1, 3):
        humans, order = complete_items(_frame(rows[:look]), raters_per_item=3)
        verdict = judge_verdict(
            scale="s",
            judge="j",
            humans=humans,
            llm={i: llm[i] for i in order},
            budget_items=n,
            raters_to_come=5 - len(humans),
        )
        outcomes.append(verdict.outcome)
    assert Outcome.PASSES in outcomes
    first = outcomes.index(Outcome.PASSES)
    assert all(o == Outcome.PASSES for o in outcomes[first:])


def test_the_futility_bet_stops_a_poor_judge_before_the_budget_is_spent():
    humans, llm = _data(150, 3.0)
    common = {"scale": "s", "judge": "j", "humans": humans, "llm": llm}
    verdict = judge_verdict(**common, budget_items=1000, raters_to_come=0)
    assert verdict.outcome == Outcome.CANNOT_PASS
    assert "given up by the futility bet" in verdict.why
    # A judge that beats the raters is given up on nobody.
    good_humans, good_llm = _data(60, 0.2)
    good = judge_verdict(
        scale="s", judge="j", humans=good_humans, llm=good_llm, budget_items=1000, raters_to_come=0
    )
    assert good.outcome == Outcome.PASSES


@pytest.mark.parametrize("p_minus", [0.0, 0.2])
def test_the_futility_bet_rarely_gives_up_a_rater_the_judge_beats_by_the_margin(p_minus):
    # d = W_h - W_f with E[d] = epsilon - margin exactly: each rater is given up with
    # probability at most FUTILITY_BETA (Ville), looked at after every item.
    from annotator.metrics.alttest._betting import sequential_log_capital
    from annotator.metrics.alttest._sequential import FUTILITY_BETA

    reps, epsilon, margin = 2000, 0.2, 0.1
    rng = np.random.default_rng(int(p_minus * 10))
    u = rng.random((reps, 200))
    d = (u < epsilon - margin + p_minus).astype(float) - (u > 1 - p_minus).astype(float)
    other = 1 - ((1 + epsilon) / 2 - margin / 2)
    back = sequential_log_capital(1 - (d + 1) / 2, other, strategy="mixture")
    rate = np.mean(back.max(axis=1) >= math.log(1 / FUTILITY_BETA))
    assert rate <= FUTILITY_BETA + 3 * math.sqrt(FUTILITY_BETA / reps)
