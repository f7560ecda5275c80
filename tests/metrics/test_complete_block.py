"""The largest complete crossed block, against a brute-force search."""

from itertools import combinations

import numpy as np
import pytest

from annotator.metrics.matrix import largest_complete_block


def brute_force_cells(present: np.ndarray) -> int:
    n_items, n_raters = present.shape
    best = 0
    for size in range(1, n_raters + 1):
        for raters in combinations(range(n_raters), size):
            complete = sum(all(present[i, j] for j in raters) for i in range(n_items))
            best = max(best, complete * size)
    return best


@pytest.mark.parametrize("seed", range(25))
def test_exact_search_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    present = rng.random((int(rng.integers(1, 12)), int(rng.integers(1, 7)))) < rng.uniform(
        0.4, 0.95
    )
    rows, columns = largest_complete_block(present)
    assert present[np.ix_(rows, columns)].all()
    assert len(rows) * len(columns) == brute_force_cells(present)


def test_complete_matrix_is_kept_whole():
    present = np.ones((5, 4), dtype=bool)
    rows, columns = largest_complete_block(present)
    assert list(rows) == [0, 1, 2, 3, 4] and columns == [0, 1, 2, 3]


def test_greedy_search_above_the_exact_limit_returns_a_complete_block():
    rng = np.random.default_rng(3)
    present = rng.random((300, 24)) < 0.97
    present[:, 5] = False
    present[:150, 5] = True
    rows, columns = largest_complete_block(present)
    assert present[np.ix_(rows, columns)].all()
    assert 5 not in columns
    assert (
        len(rows) * len(columns)
        >= present[:, [c for c in range(24) if c != 5]].all(axis=1).sum() * 23
    )
