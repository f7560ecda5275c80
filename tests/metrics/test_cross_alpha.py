"""Cross-group alpha against a brute force over pairs, and the krippendorff package."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats

from annotator.metrics import cross_alpha

TOL = 1e-9


def _brute_force(a: np.ndarray, b: np.ndarray, level: str) -> float:
    """The definition, pair by pair: D_o over cross-group pairs of an item, D_e over all
    ordered pairs of the pooled ratings of the items both groups rated."""
    both = ~np.isnan(a).all(axis=1) & ~np.isnan(b).all(axis=1)
    a, b = a[both], b[both]
    pooled = np.concatenate([a[~np.isnan(a)], b[~np.isnan(b)]])
    if level == "ordinal":
        # Krippendorff's ordinal distance from the pooled frequencies n_g.
        values, counts = np.unique(pooled, return_counts=True)
        freq = dict(zip(values, counts, strict=True))

        def delta(c, k):
            lo, hi = min(c, k), max(c, k)
            between = sum(n for v, n in freq.items() if lo <= v <= hi)
            return (between - (freq[c] + freq[k]) / 2) ** 2
    elif level == "interval":

        def delta(c, k):
            return (c - k) ** 2
    else:

        def delta(c, k):
            return float(c != k)

    observed, pairs = 0.0, 0
    for row_a, row_b in zip(a, b, strict=True):
        for va in row_a[~np.isnan(row_a)]:
            for vb in row_b[~np.isnan(row_b)]:
                observed += delta(va, vb)
                pairs += 1
    n = pooled.size
    expected = sum(delta(pooled[i], pooled[j]) for i in range(n) for j in range(n) if i != j) / (
        n * (n - 1)
    )
    return 1 - (observed / pairs) / expected


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(4))
def test_equals_brute_force(level, seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, (12, 1))
    a = np.clip(truth + rng.integers(-1, 2, (12, 3)), 1, 5).astype(float)
    b = np.clip(truth + rng.integers(-2, 2, (12, 2)), 1, 5).astype(float)
    a[rng.random(a.shape) < 0.25] = np.nan
    b[rng.random(b.shape) < 0.25] = np.nan
    assert cross_alpha(a, b, level=level) == pytest.approx(_brute_force(a, b, level), abs=TOL)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_one_rater_per_group_is_ordinary_alpha(level):
    rng = np.random.default_rng(5)
    x = rng.integers(0, 5, (25, 1)).astype(float)
    y = np.clip(x + rng.integers(-1, 2, (25, 1)), 0, 4)
    ref = krippendorff.alpha(reliability_data=np.hstack([x, y]).T, level_of_measurement=level)
    assert cross_alpha(x, y, level=level) == pytest.approx(ref, abs=TOL)


def test_within_group_disagreement_does_not_count():
    # Group a disagrees internally on every item; its ratings average to b's. Only the
    # a-b pairs enter D_o, so alpha is the same whatever a's raters do among themselves
    # as long as the cross pairs and the pooled values are unchanged.
    a = np.array([[1.0, 3.0], [3.0, 5.0], [2.0, 4.0]])
    b = np.array([[2.0], [4.0], [3.0]])
    swapped = a[:, ::-1]
    assert cross_alpha(a, b, level="interval") == pytest.approx(
        cross_alpha(swapped, b, level="interval"), abs=TOL
    )
    assert cross_alpha(a, b, level="interval") == pytest.approx(
        _brute_force(a, b, "interval"), abs=TOL
    )


def test_degenerate_cases():
    assert math.isnan(cross_alpha([[2, 2], [2, 2]], [[2], [2]], level="interval"))
    # Two items, one rater per group: the two-rater alpha.
    ref = krippendorff.alpha(reliability_data=[[1, 3], [2, 3]], level_of_measurement="interval")
    assert cross_alpha([[1], [3]], [[2], [3]], level="interval") == pytest.approx(ref, abs=TOL)
    with pytest.raises(ValueError, match="both groups"):
        cross_alpha([[1], [np.nan]], [[np.nan], [2]], level="interval")
    with pytest.raises(ValueError, match="level"):
        cross_alpha([[1]], [[1]], level="ratio")
    with pytest.raises(ValueError, match="same items"):
        cross_alpha([[1], [2]], [[1]], level="interval")


def test_ordinal_uses_pooled_mid_ranks():
    a = np.array([[1.0], [2.0], [2.0], [5.0]])
    b = np.array([[1.0], [3.0], [2.0], [4.0]])
    ranks = stats.rankdata(np.concatenate([a.ravel(), b.ravel()]))
    ra, rb = ranks[:4, None], ranks[4:, None]
    assert cross_alpha(a, b, level="ordinal") == pytest.approx(
        cross_alpha(ra, rb, level="interval"), abs=TOL
    )
