"""The per-annotator tests and the false-discovery correction."""

from __future__ import annotations

import numpy as np
from scipy import special


def _t_tests(
    w_f: np.ndarray,
    w_h: np.ndarray,
    annot: np.ndarray,
    m: int,
    epsilon: float,
    pi: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One-sided t-tests of mean(W_h - W_f) < epsilon for all annotators at once.

    Unweighted, this is ``scipy.stats.ttest_1samp(d, epsilon, alternative="less")``
    per annotator, zero variance included (t = -inf, +inf or NaN as in scipy), in
    closed form. Weighted (IPW), the paper's weighted mean, weighted standard deviation
    and effective sample size, with ``n_eff - 1`` degrees of freedom.
    """
    d = w_h - w_f
    weight = np.ones_like(d) if pi is None else pi
    n_items = np.bincount(annot, minlength=m)
    sum_w = np.bincount(annot, weights=weight, minlength=m)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho_f = np.bincount(annot, weights=weight * w_f, minlength=m) / sum_w
        rho_h = np.bincount(annot, weights=weight * w_h, minlength=m) / sum_w
        mean_d = np.bincount(annot, weights=weight * d, minlength=m) / sum_w
        ss = np.bincount(annot, weights=weight * (d - mean_d[annot]) ** 2, minlength=m)
        if pi is None:
            sd = np.sqrt(ss / (n_items - 1))
            n_eff = n_items.astype(float)
        else:
            sd = np.sqrt(ss / sum_w)
            n_eff = sum_w**2 / np.bincount(annot, weights=pi * pi, minlength=m)
        t_stat = (mean_d - epsilon) / (sd / np.sqrt(n_eff))
        df = n_eff - 1.0
        p_value = np.where(df > 0, special.stdtr(np.where(df > 0, df, 1.0), t_stat), np.nan)
    return t_stat, p_value, rho_f, rho_h


def _by_rejections(p_values: np.ndarray, q: float) -> np.ndarray:
    """Benjamini-Yekutieli rejections; a NaN p-value counts in m but is never rejected."""
    if p_values.size == 0:
        return np.zeros(0, dtype=bool)
    finite = ~np.isnan(p_values)
    if not np.any(p_values[finite] <= q):
        # BY-adjusted p-values are never below the raw ones: nothing can be rejected.
        return np.zeros(p_values.size, dtype=bool)
    # A NaN sorts last in the reference and fails every comparison: the same as p = 1.
    adjusted = by_adjusted(np.where(finite, p_values, 1.0))
    return finite & (adjusted <= q)


def by_adjusted(p_values: np.ndarray) -> np.ndarray:
    """Benjamini-Yekutieli adjusted p-values of a 1-D array.

    ``scipy.stats.false_discovery_control(p_values, method="by")``, the same operations
    in the same order (so the same floats), written out because the alt-test curves
    call it thousands of times on a handful of p-values, where scipy's input checks
    and array-API dispatch cost about 20 times the arithmetic (a quarter of a second
    of a 150-item report). ``tests/metrics/test_alttest.py`` compares it with scipy.
    """
    m = p_values.size
    if m <= 1:
        return p_values
    order = np.argsort(p_values, kind="stable")
    i = np.arange(1, m + 1, dtype=float)
    ps = p_values[order] * (m / i)
    ps *= np.sum(1 / i)
    np.minimum.accumulate(ps[::-1], out=ps[::-1])
    adjusted = np.empty_like(ps)
    adjusted[order] = ps
    return np.clip(adjusted, 0.0, 1.0)
