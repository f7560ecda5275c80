"""alt_test_pair gives exactly what alt_test and alt_test_sequential give separately."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.metrics import (
    TooFewItemsError,
    alt_test,
    alt_test_pair,
    alt_test_sequential,
)


def _data(n_items: int, n_raters: int, seed: int):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 6, n_items)
    humans = {
        f"r{j}": {
            i: float(np.clip(truth[i] + rng.integers(-1, 2), 0, 5))
            for i in range(n_items)
            if rng.random() > 0.1
        }
        for j in range(n_raters)
    }
    llm = {i: float(np.clip(truth[i] + rng.normal(0, 0.8), 0, 5)) for i in range(n_items)}
    return humans, llm


@pytest.mark.parametrize(
    ("n_items", "scoring", "epsilon"),
    [(80, "neg_rmse", 0.2), (60, "accuracy", 0.1), (120, "neg_rmse", 0.0)],
)
def test_pair_equals_the_two_tests(n_items, scoring, epsilon):
    humans, llm = _data(n_items, 5, seed=n_items)
    options = {"scoring": scoring, "epsilon": epsilon, "q": 0.05}
    both = alt_test_pair(humans=humans, llm=llm, **options)
    assert both.error is None and both.sequential_error is None
    assert both.result == alt_test(humans=humans, llm=llm, **options)
    assert both.sequential == alt_test_sequential(humans=humans, llm=llm, **options)


def test_too_few_items_for_the_ttest_but_not_for_the_sequential_test():
    humans, llm = _data(12, 4, seed=3)
    both = alt_test_pair(humans=humans, llm=llm)
    with pytest.raises(TooFewItemsError) as caught:
        alt_test(humans=humans, llm=llm)
    assert isinstance(both.error, TooFewItemsError) and both.result is None
    assert str(both.error) == str(caught.value)
    assert both.error.most_items == caught.value.most_items
    assert both.sequential == alt_test_sequential(humans=humans, llm=llm)


def test_bad_input_is_returned_for_both_and_bad_options_raise():
    both = alt_test_pair(humans={"a": {1: 1.0}}, llm={2: 3.0})
    with pytest.raises(ValueError) as caught:
        alt_test(humans={"a": {1: 1.0}}, llm={2: 3.0})
    assert str(both.error) == str(caught.value) == str(both.sequential_error)
    with pytest.raises(ValueError, match="epsilon"):
        alt_test_pair(humans={"a": {1: 1.0}}, llm={1: 1.0}, epsilon=-1)
