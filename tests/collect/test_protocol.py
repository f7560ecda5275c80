"""Block orders and item orders as pure functions of stored numbers and seeds."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.collect import protocol


@pytest.mark.parametrize("n", range(1, 9))
def test_williams_rows_are_latin_and_balanced(n):
    rows = protocol.williams_rows(n)
    assert len(rows) == (n if n % 2 == 0 or n == 1 else 2 * n)
    for row in rows:
        assert sorted(row) == list(range(n))
    for position in range(n):
        column = Counter(row[position] for row in rows)
        assert set(column.values()) == {len(rows) // n}


def test_random_block_order_reaches_every_permutation():
    seen = Counter(tuple(protocol.random_block_order(seed, 3)) for seed in range(600))
    assert set(seen) == set(itertools.permutations(range(3)))
    assert min(seen.values()) > 60  # roughly uniform: 100 expected each


def test_item_order_is_a_function_of_the_seed():
    items = list(range(100, 140))
    first = protocol.item_order(7, items, attention_per_session=0)
    assert protocol.item_order(7, items) == first
    assert protocol.item_order(7, list(reversed(items))) == first
    assert protocol.item_order(8, items) != first
    assert sorted(e["item"] for e in first) == items


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=protocol.SEED_LIMIT - 1),
    n_regular=st.integers(min_value=1, max_value=60),
    n_gold=st.integers(min_value=0, max_value=5),
    per_session=st.integers(min_value=0, max_value=4),
    share=st.floats(min_value=0, max_value=1),
    distance=st.integers(min_value=1, max_value=15),
)
def test_item_order_properties(seed, n_regular, n_gold, per_session, share, distance):
    regular = list(range(1, n_regular + 1))
    gold = list(range(1000, 1000 + n_gold))
    order = protocol.item_order(
        seed,
        regular,
        gold,
        attention_per_session=per_session,
        retest_share=share,
        retest_min_distance=distance,
    )
    firsts = [e for e in order if not e["repeat"] and not e["attention"]]
    assert sorted(e["item"] for e in firsts) == regular
    checks = [e for e in order if e["attention"]]
    assert len(checks) == min(per_session, n_gold)
    assert {e["item"] for e in checks} <= set(gold)
    assert len({e["item"] for e in checks}) == len(checks)
    repeats = [i for i, e in enumerate(order) if e["repeat"]]
    assert len(repeats) <= round(share * n_regular)
    for index in repeats:
        item = order[index]["item"]
        first = next(i for i, e in enumerate(order) if e["item"] == item and not e["repeat"])
        assert index - first - 1 >= distance
    assert len({order[i]["item"] for i in repeats}) == len(repeats)


def test_repeats_are_placed_when_the_session_is_long_enough():
    order = protocol.item_order(3, list(range(40)), retest_share=0.1, retest_min_distance=10)
    assert sum(e["repeat"] for e in order) == 4
