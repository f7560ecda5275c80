"""Krippendorff's alpha for items x raters matrices with missing ratings."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from ._names import LEVELS
from ._validation import as_ratings_matrix

__all__ = ["CROSS_LEVELS", "LEVELS", "cross_alpha", "krippendorff_alpha"]

# Upper bound on the size of the temporary pair arrays of the ratio metric, which has no
# closed form: the work stays quadratic in the number of distinct values, the memory not.
_PAIR_BLOCK = 2_000_000


def krippendorff_alpha(ratings: Any, *, level: str) -> float:
    r"""Krippendorff's alpha reliability coefficient.

    .. math::

        \alpha = 1 - \frac{D_o}{D_e}, \qquad
        D_o = \frac{1}{n} \sum_u \frac{1}{m_u - 1} \sum_{i \ne j \in u} \delta^2(v_i, v_j),
        \qquad
        D_e = \frac{1}{n(n-1)} \sum_{c} \sum_{k} n_c n_k \, \delta^2(c, k)

    where only *pairable* items (with at least two ratings) count, :math:`m_u` is the
    number of ratings of item :math:`u`, :math:`n = \sum_u m_u` and :math:`n_c` is the
    number of pairable ratings equal to :math:`c` (Krippendorff 2011, section C).
    The difference functions are: nominal :math:`\delta^2 = [c \ne k]`; interval
    :math:`(c - k)^2`; ratio :math:`((c - k)/(c + k))^2`; ordinal
    :math:`(\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2`.

    No values x values coincidence matrix is built, so continuous scores of any size
    work. For interval data the double sums collapse to sums of squares,

    .. math::

        \alpha_{\text{interval}} = 1 - \frac{n - 1}{n} \,
        \frac{\sum_u m_u \, SS_u / (m_u - 1)}{SS_{\text{total}}},

    with :math:`SS_u` the within-item and :math:`SS_{\text{total}}` the pooled sum of
    squared deviations of the pairable ratings. The ordinal distance is the interval
    distance between mid-ranks of the pooled pairable ratings, so ordinal alpha is
    interval alpha on those mid-ranks. Nominal alpha is computed from the counts of
    equal ratings within items. Ratio alpha is summed over pairs of distinct values in
    bounded blocks: linear memory, quadratic time in the number of distinct values.

    Parameters
    ----------
    ratings : array_like or pandas.DataFrame
        Items x raters (note: the transpose of the ``krippendorff`` package's
        ``reliability_data``), NaN for a missing rating. Nominal labels must be coded
        as numbers.
    level : {"nominal", "ordinal", "interval", "ratio"}, keyword-only
        Level of measurement, which selects the difference function.

    Returns
    -------
    float
        Alpha; NaN when the pairable ratings hold a single distinct value (no
        expected disagreement, alpha undefined).

    Raises
    ------
    ValueError
        If ``level`` is unknown, ``ratings`` is not a 2-D numeric array, no item has
        two ratings, or ratio data hold negative values.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg
    School for Communication, University of Pennsylvania.
    Hayes, A. F., and Krippendorff, K. (2007). Answering the call for a standard
    reliability measure for coding data. Communication Methods and Measures, 1(1).

    Examples
    --------
    >>> from annotator.metrics import krippendorff_alpha
    >>> round(krippendorff_alpha([[1, 1], [2, 2], [3, 4]], level="interval"), 3)
    0.878
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    x = as_ratings_matrix(ratings)
    present = ~np.isnan(x)
    per_item = present.sum(axis=1)
    pairable = per_item >= 2
    if not pairable.any():
        raise ValueError("ratings has no item with at least two ratings; alpha is undefined")
    x = x[pairable]
    present = present[pairable]
    m = per_item[pairable].astype(float)
    n = float(m.sum())

    if level == "nominal":
        return _nominal(x, present, m, n)
    if level == "ordinal":
        ranks = np.full(x.shape, np.nan)
        ranks[present] = stats.rankdata(x[present])
        return _interval(ranks, present, m, n)
    if level == "interval":
        return _interval(x, present, m, n)
    if np.any(x[present] < 0):
        raise ValueError("ratio alpha needs non-negative ratings")
    return _ratio(x, present, m, n)


def _interval(x: np.ndarray, present: np.ndarray, m: np.ndarray, n: float) -> float:
    values = x[present]
    # Centre first: the sums of squares are then free of the magnitude of the scores.
    shift = values.mean()
    centred = np.where(present, x - shift, 0.0)
    item_means = centred.sum(axis=1) / m
    within = np.where(present, centred - item_means[:, None], 0.0)
    ss_items = np.einsum("ij,ij->i", within, within)
    ss_total = float(np.dot(values - shift, values - shift))
    if ss_total == 0.0:
        return float("nan")
    observed = float(np.sum(m * ss_items / (m - 1.0)))
    return 1.0 - (n - 1.0) * observed / (n * ss_total)


def _nominal(x: np.ndarray, present: np.ndarray, m: np.ndarray, n: float) -> float:
    values = x[present]
    _, codes, totals = np.unique(values, return_inverse=True, return_counts=True)
    item_index = np.nonzero(present)[0]
    # Count each (item, value) pair once; int64 keys cannot overflow for any real matrix.
    keys = item_index.astype(np.int64) * (int(codes.max()) + 1) + codes
    pair_keys, pair_counts = np.unique(keys, return_counts=True)
    pair_items = pair_keys // (int(codes.max()) + 1)
    agree = float(np.sum(pair_counts * (pair_counts - 1.0) / (m[pair_items] - 1.0)))
    totals = totals.astype(float)
    expected = n * n - float(np.dot(totals, totals))
    if expected == 0.0:
        return float("nan")
    return 1.0 - (n - 1.0) * (n - agree) / expected


def _ratio_delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(total > 0, (a - b) / total, 0.0)
    return delta * delta


def _ratio(x: np.ndarray, present: np.ndarray, m: np.ndarray, n: float) -> float:
    k = x.shape[1]
    observed = 0.0
    step = max(1, _PAIR_BLOCK // (k * k))
    for start in range(0, x.shape[0], step):
        block = x[start : start + step]
        mask = present[start : start + step]
        pairs = _ratio_delta(block[:, :, None], block[:, None, :])
        both = mask[:, :, None] & mask[:, None, :]
        per_item = np.where(both, pairs, 0.0).sum(axis=(1, 2))
        observed += float(np.sum(per_item / (m[start : start + step] - 1.0)))

    values, counts = np.unique(x[present], return_counts=True)
    counts = counts.astype(float)
    expected = 0.0
    step = max(1, _PAIR_BLOCK // len(values))
    for start in range(0, len(values), step):
        block = values[start : start + step]
        pairs = _ratio_delta(block[:, None], values[None, :])
        expected += float(counts[start : start + step] @ pairs @ counts)
    if expected == 0.0:
        return float("nan")
    # alpha = 1 - D_o / D_e with D_o = observed / n and D_e = expected / (n (n - 1)).
    return 1.0 - (n - 1.0) * observed / expected


# Levels whose difference function is a squared Euclidean distance between embedded
# values, which lets the cross-group sums collapse to sums of squares (see cross_alpha).
CROSS_LEVELS = ("nominal", "ordinal", "interval")


def _embed(values: np.ndarray, level: str) -> np.ndarray:
    """Values as vectors phi(v) with delta^2(c, k) = |phi(c) - phi(k)|^2 (one row each)."""
    if level == "interval":
        return values[:, None]
    if level == "ordinal":
        # Krippendorff's ordinal distance is the squared difference of mid-ranks.
        return stats.rankdata(values)[:, None]
    _, codes = np.unique(values, return_inverse=True)
    onehot = np.zeros((values.size, int(codes.max()) + 1))
    onehot[np.arange(values.size), codes] = np.sqrt(0.5)
    return onehot


def cross_alpha(a: Any, b: Any, *, level: str) -> float:
    r"""Krippendorff's alpha between two groups of raters, counting only cross-group pairs.

    The agreement "between cross-category judge pairs only, excluding intra-category
    comparisons" of the Rating Roulette paper (Haldar and Hockenmaier 2025, section 3.3 and
    Figures 6-7: LLM vs. human, expert vs. crowd). With :math:`A_u` and :math:`B_u` the
    ratings of item :math:`u` by the two groups, only items rated by both count, and

    .. math::

        D_o = \frac{\sum_u \sum_{a \in A_u} \sum_{b \in B_u} \delta^2(a, b)}
                   {\sum_u |A_u|\,|B_u|}, \qquad
        D_e = \frac{1}{n(n-1)} \sum_{c} \sum_{k} n_c n_k \, \delta^2(c, k),
        \qquad \alpha = 1 - D_o / D_e,

    where :math:`n_c` counts the values equal to :math:`c` among the :math:`n` ratings
    of those items by both groups pooled (the paper's Appendix B: :math:`D_e` from the
    frequency of each value "across all units and coders"). :math:`D_o` is the mean
    disagreement of a cross-group pair of the same item; :math:`D_e` that of two
    ratings drawn at random. With one rater per group this is the ordinary alpha of
    the two raters.

    The difference functions are those of :func:`krippendorff_alpha`. They are squared
    distances between embedded values (the value, its mid-rank among the pooled
    ratings, or a one-hot vector), so the sums over pairs are sums of squares, linear in
    the number of ratings. The ratio metric is no such distance and is not offered.

    Parameters
    ----------
    a, b : array_like or pandas.DataFrame
        Items x raters of each group, the same items in the same rows; NaN for a missing
        rating.
    level : {"nominal", "ordinal", "interval"}, keyword-only

    Returns
    -------
    float
        NaN when the pooled ratings hold one distinct value.

    Raises
    ------
    ValueError
        If ``level`` is not offered, the groups cover different numbers of items, or no
        item is rated by both groups.

    References
    ----------
    Haldar, R., and Hockenmaier, J. (2025). Rating Roulette: Self-Inconsistency in
    LLM-As-A-Judge Frameworks, section 3.3, Appendix B.
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.

    Examples
    --------
    >>> from annotator.metrics.alpha import cross_alpha
    >>> round(cross_alpha([[1, 1], [3, 3], [5, 4]], [[1], [3], [5]], level="interval"), 3)
    0.968
    """
    if level not in CROSS_LEVELS:
        raise ValueError(f"level must be one of {', '.join(CROSS_LEVELS)}; got {level!r}")
    x = as_ratings_matrix(a, name="a")
    y = as_ratings_matrix(b, name="b")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"a and b must rate the same items: {x.shape[0]} != {y.shape[0]} rows")
    in_a, in_b = ~np.isnan(x), ~np.isnan(y)
    both = in_a.any(axis=1) & in_b.any(axis=1)
    if not both.any():
        raise ValueError("no item is rated by both groups; cross-group alpha is undefined")
    x, y, in_a, in_b = x[both], y[both], in_a[both], in_b[both]
    values = np.concatenate([x[in_a], y[in_b]])
    n = float(values.size)
    phi = _embed(values, level)
    phi = phi - phi.mean(axis=0)
    ss_total = float(np.sum(phi * phi))
    if ss_total == 0.0:
        return float("nan")
    # Per item: counts, sums and sums of squares of each group's embedded values.
    items_a, items_b = np.nonzero(in_a)[0], np.nonzero(in_b)[0]
    phi_a, phi_b = phi[: items_a.size], phi[items_a.size :]
    n_items = x.shape[0]
    count_a = np.bincount(items_a, minlength=n_items).astype(float)
    count_b = np.bincount(items_b, minlength=n_items).astype(float)
    sq_a = np.bincount(items_a, weights=np.sum(phi_a * phi_a, axis=1), minlength=n_items)
    sq_b = np.bincount(items_b, weights=np.sum(phi_b * phi_b, axis=1), minlength=n_items)
    sum_a = np.stack(
        [np.bincount(items_a, weights=phi_a[:, d], minlength=n_items) for d in range(phi.shape[1])],
        axis=1,
    )
    sum_b = np.stack(
        [np.bincount(items_b, weights=phi_b[:, d], minlength=n_items) for d in range(phi.shape[1])],
        axis=1,
    )
    # sum_{a in A, b in B} |phi_a - phi_b|^2 = |B| sum |phi_a|^2 + |A| sum |phi_b|^2 - 2 S_A.S_B
    cross = count_b * sq_a + count_a * sq_b - 2.0 * np.sum(sum_a * sum_b, axis=1)
    observed = float(cross.sum()) / float(np.sum(count_a * count_b))
    # sum over ordered pairs of all values |phi_i - phi_j|^2 = 2 n SS_total.
    expected = 2.0 * n * ss_total / (n * (n - 1.0))
    return 1.0 - observed / expected
