"""The per-annotator tests and the false-discovery correction."""

from __future__ import annotations

import numpy as np
from scipy import special, stats


def _t_tests(
    w_f: np.ndarray,
    w_h: np.ndarray,
    annot: np.ndarray,
    m: int,
    epsilon: float | np.ndarray,
    pi: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One-sided t-tests of mean(W_h - W_f) < epsilon for all annotators at once.

    Unweighted, this is ``scipy.stats.ttest_1samp(d, epsilon, alternative="less")``
    per annotator, zero variance included (t = -inf, +inf or NaN as in scipy), in
    closed form. Weighted (IPW), the paper's weighted mean, weighted standard deviation
    and effective sample size, with ``n_eff - 1`` degrees of freedom.

    ``epsilon`` may be a column of margins, shape (e, 1): the statistic and p-value
    then have a row per margin, each as the call with that margin alone gives it (the
    alt-test curves test every resample at every epsilon).
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
    """Benjamini-Yekutieli rejections along the last axis (one family per row).

    A NaN p-value counts in m but is never rejected. The alt-test curves pass a
    2-D array, one row per epsilon, so that scipy runs once per resample rather
    than once per epsilon: its input checks cost about 20 times the arithmetic on
    a handful of p-values.
    """
    p_values = np.asarray(p_values, dtype=float)
    if p_values.shape[-1] == 0:
        return np.zeros(p_values.shape, dtype=bool)
    finite = ~np.isnan(p_values)
    if not np.any(p_values[finite] <= q):
        # BY-adjusted p-values are never below the raw ones: nothing can be rejected.
        return np.zeros(p_values.shape, dtype=bool)
    # A NaN sorts last in the reference and fails every comparison: the same as p = 1.
    adjusted = stats.false_discovery_control(np.where(finite, p_values, 1.0), method="by", axis=-1)
    return finite & (adjusted <= q)
