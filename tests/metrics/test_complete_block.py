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


def first_best_subset(present: np.ndarray) -> list[int]:
    """The raters of the first subset (in bitmask order) with the most cells, then the
    most raters: the tie rule of the exact search."""
    n_raters = present.shape[1]
    key = []
    for s in range(1 << n_raters):
        raters = [j for j in range(n_raters) if s >> j & 1]
        n = int(present[:, raters].all(axis=1).sum()) if raters else len(present)
        key.append((n * len(raters), len(raters)))
    best = max(range(1 << n_raters), key=key.__getitem__)
    return [j for j in range(n_raters) if best >> j & 1]


@pytest.mark.parametrize("seed", range(25))
def test_exact_search_breaks_ties_as_the_first_best_subset(seed):
    # Small, sparse matrices: several subsets share the most cells.
    rng = np.random.default_rng(100 + seed)
    present = rng.random((int(rng.integers(1, 8)), int(rng.integers(1, 8)))) < 0.6
    assert largest_complete_block(present)[1] == first_best_subset(present)


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
