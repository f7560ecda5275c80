"""Property tests of the alt-test: the optimal judges of Theorem 1 (paper, section 3.4)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.metrics import alt_test


@st.composite
def studies(draw, labels=False):
    n_items = draw(st.integers(3, 25))
    n_humans = draw(st.integers(2, 6))
    values = st.sampled_from("abcd") if labels else st.integers(0, 10)
    humans = {f"h{j}": {} for j in range(n_humans)}
    for i in range(n_items):
        raters = draw(
            st.lists(st.integers(0, n_humans - 1), min_size=2, max_size=n_humans, unique=True)
        )
        for j in raters:
            humans[f"h{j}"][f"i{i}"] = draw(values)
    return {h: a for h, a in humans.items() if a}


def _item_annotations(humans):
    per_item = {}
    for anns in humans.values():
        for item, value in anns.items():
            per_item.setdefault(item, []).append(value)
    return per_item


@settings(max_examples=50, deadline=None)
@given(humans=studies())
def test_mean_judge_is_optimal_under_neg_rmse(humans):
    if len(humans) < 2:
        return
    llm = {item: float(np.mean(v)) for item, v in _item_annotations(humans).items()}
    res = alt_test(humans=humans, llm=llm, scoring="neg_rmse", min_items_per_human=1)
    assert res.advantage_probability == 1.0
    assert all(r.rho_f == 1.0 for r in res.annotators if r.tested)


@settings(max_examples=50, deadline=None)
@given(humans=studies(labels=True), pick=st.randoms(use_true_random=False))
def test_majority_vote_is_optimal_under_accuracy(humans, pick):
    if len(humans) < 2:
        return
    llm = {}
    for item, labels in _item_annotations(humans).items():
        counts = Counter(labels)
        top = max(counts.values())
        llm[item] = pick.choice(sorted(lab for lab, c in counts.items() if c == top))
    res = alt_test(humans=humans, llm=llm, scoring="accuracy", min_items_per_human=1)
    assert res.advantage_probability == 1.0
