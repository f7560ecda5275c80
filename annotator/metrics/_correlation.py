"""Pearson, Spearman and Kendall tau-b correlations with Fisher-z confidence intervals.

The coefficients and p-values are scipy's (``pearsonr``, ``spearmanr``,
``kendalltau(variant="b")``); this module adds the intervals scipy does not give for
the rank correlations, and the table of every LLM (and the ensemble) against the
human mean that Langfuse, Potato and the papers report beside ICC.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._validation import as_scores, check_nan_policy, check_probability, counted, json_float
from .agreement import ENSEMBLE, _aligned, _named_columns
from .notes import degenerate

__all__ = ["CORRELATION_METHODS", "Correlation", "correlation", "llm_correlations"]

CORRELATION_METHODS = ("pearson", "spearman", "kendall")

# Variance of Fisher's z of each coefficient, as c / (n - d): Pearson's exact large-sample
# value, and Fieller, Hartley and Pearson's (1957) approximations for the rank coefficients.
_Z_VARIANCE = {"pearson": (1.0, 3), "spearman": (1.06, 3), "kendall": (0.437, 4)}


@dataclass(frozen=True)
class Correlation:
    """One correlation coefficient with its interval.

    Attributes
    ----------
    method : {"pearson", "spearman", "kendall"}
        The coefficient (Kendall's is tau-b, which corrects for ties).
    estimate : float
        The coefficient; NaN when a column is constant.
    ci : tuple of float
        ``(low, high)``: Fisher-z interval (see :func:`correlation`).
    p_value : float
        scipy's two-sided p-value of no association.
    n_items : int
        Pairs used.
    confidence : float
        Coverage of ``ci``.
    model : hashable or None
        In :func:`llm_correlations`, the model (``"ensemble"`` for the mean over models).
    """

    method: str
    estimate: float
    ci: tuple[float, float]
    p_value: float
    n_items: int
    confidence: float
    model: Hashable | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types (JSON-ready; NaN becomes None)."""
        return {
            "model": self.model,
            "method": self.method,
            "estimate": json_float(self.estimate),
            "low": json_float(self.ci[0]),
            "high": json_float(self.ci[1]),
            "p_value": json_float(self.p_value),
            "n_items": self.n_items,
            "confidence": self.confidence,
            "interval": "fisher-z",
        }


def _fisher_interval(r: float, n: int, method: str, confidence: float) -> tuple[float, float]:
    if math.isnan(r):
        return (math.nan, math.nan)
    c, d = _Z_VARIANCE[method]
    if n - d <= 0:
        # No information on the spread: scipy's pearsonr gives (-1, 1) here too.
        return (-1.0, 1.0)
    z = math.atanh(r) if abs(r) < 1.0 else math.copysign(math.inf, r)
    half = stats.norm.ppf(0.5 + confidence / 2.0) * math.sqrt(c / (n - d))
    return (math.tanh(z - half), math.tanh(z + half))


def correlation(
    x: Any,
    y: Any,
    *,
    method: str = "pearson",
    confidence: float = 0.95,
    nan_policy: str = "raise",
) -> Correlation:
    r"""Pearson's r, Spearman's rho or Kendall's tau-b, with a Fisher-z interval.

    The coefficient and p-value are scipy's. The interval back-transforms
    :math:`z = \operatorname{artanh}(r) \pm z_{1-\alpha/2}\, \sigma_z` with

    .. math::

        \sigma_z^2 = \frac{1}{n-3} \text{ (Pearson)}, \quad
        \frac{1.06}{n-3} \text{ (Spearman)}, \quad
        \frac{0.437}{n-4} \text{ (Kendall)}

    (Fisher 1921; Fieller, Hartley and Pearson 1957; Bonett and Wright 2000). The
    Pearson interval equals ``scipy.stats.pearsonr(x, y).confidence_interval()``;
    scipy has none for the rank coefficients, hence this function. With too few pairs
    for the variance (:math:`n \le 3`, Kendall :math:`n \le 4`) the interval is
    :math:`(-1, 1)`, as scipy's; with :math:`|r| = 1` it is :math:`(r, r)`.

    Parameters
    ----------
    x, y : array_like
        Paired scores, one per item.
    method : {"pearson", "spearman", "kendall"}, keyword-only
    confidence : float, keyword-only
        Coverage of the interval.
    nan_policy : {"raise", "omit"}, keyword-only
        ``"omit"`` drops the pairs with a missing value.

    Returns
    -------
    Correlation
        NaN estimate and interval, with a ``RuntimeWarning``, when a column is constant.

    Raises
    ------
    ValueError
        If ``method`` is unknown, the inputs differ in length, a value is missing under
        ``nan_policy="raise"``, or fewer than 2 pairs are left.

    References
    ----------
    Fieller, E. C., Hartley, H. O., and Pearson, E. S. (1957). Tests for rank correlation
    coefficients. I. Biometrika, 44(3/4), 470-481.
    Bonett, D. G., and Wright, T. A. (2000). Sample size requirements for estimating
    Pearson, Kendall and Spearman correlations. Psychometrika, 65(1), 23-28.

    Examples
    --------
    >>> from annotator.metrics import correlation
    >>> res = correlation([1, 2, 3, 4, 5], [1, 3, 2, 5, 4], method="spearman")
    >>> round(res.estimate, 2)
    0.8
    """
    if method not in CORRELATION_METHODS:
        raise ValueError(f"method must be one of {', '.join(CORRELATION_METHODS)}, got {method!r}")
    check_nan_policy(nan_policy)
    confidence = check_probability(confidence, name="confidence")
    a = as_scores(x, name="x")
    b = as_scores(y, name="y")
    if a.size != b.size:
        raise ValueError(f"x and y must have the same length: {a.size} != {b.size}")
    missing = np.isnan(a) | np.isnan(b)
    if missing.any():
        if nan_policy == "raise":
            raise ValueError(
                f"x or y has {counted(int(missing.sum()), 'missing value')}; pass nan_policy='omit'"
            )
        a, b = a[~missing], b[~missing]
    n = int(a.size)
    if n < 2:
        raise ValueError(f"a correlation needs at least 2 pairs, got {n}")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        degenerate(
            f"{'x' if np.ptp(a) == 0 else 'y'} is constant: the {method} correlation is "
            "undefined (NaN)",
            stacklevel=2,
        )
        return Correlation(method, math.nan, (math.nan, math.nan), math.nan, n, confidence)
    if method == "pearson":
        res = stats.pearsonr(a, b)
    elif method == "spearman":
        res = stats.spearmanr(a, b)
    else:
        res = stats.kendalltau(a, b, variant="b")
    r = float(res.statistic)
    return Correlation(
        method=method,
        estimate=r,
        ci=_fisher_interval(r, n, method, confidence),
        p_value=float(res.pvalue),
        n_items=n,
        confidence=confidence,
    )


def llm_correlations(
    humans: Any,
    llm: Any,
    *,
    methods: tuple[str, ...] = CORRELATION_METHODS,
    confidence: float = 0.95,
) -> tuple[Correlation, ...]:
    """Each correlation between the human mean and each LLM, and the LLM ensemble.

    The human mean of an item averages its raters' scores (items with a missing human
    rating are left out); the ensemble averages the models with a score for the item,
    over items every model scored; each model uses the items it scored.

    Parameters
    ----------
    humans : array_like or pandas object
        Items x human raters (or one consensus score per item).
    llm : array_like or pandas object
        Items x models, paired with ``humans`` by index (pandas) or position.
    methods : tuple of str, keyword-only
        Any of ``"pearson"``, ``"spearman"``, ``"kendall"``.
    confidence : float, keyword-only

    Returns
    -------
    tuple of Correlation
        The ensemble's rows first, then each model's, ``model`` set; methods in the
        order given.

    Raises
    ------
    ValueError
        If a method is unknown, the inputs do not cover the same items, fewer than 2
        items have every rater's rating (the message says so), or a model has
        fewer than 2 items with a score.

    References
    ----------
    Li, W., Zhao, M., Dong, W., et al. (2025). Grading Scale Impact on LLM-as-a-Judge:
    Human-LLM Alignment Is Highest on 0-5 Grading Scale, Figure 2.
    Liu, Y., Iter, D., Xu, Y., et al. (2023). G-Eval: NLG Evaluation using GPT-4 with
    Better Human Alignment, as cited by Haldar and Hockenmaier (2025), section 3.3.
    """
    for method in methods:
        if method not in CORRELATION_METHODS:
            raise ValueError(
                f"methods must be among {', '.join(CORRELATION_METHODS)}, got {method!r}"
            )
    h, _, h_index = _named_columns(humans, name="humans", default="human")
    m, models, m_index = _named_columns(llm, name="llm", default="llm")
    m = _aligned(h, h_index, m, m_index, names=("humans", "llm"))
    complete = ~np.isnan(h).any(axis=1)
    if int(complete.sum()) < 2 and not complete.all():
        # Say why, rather than each correlation's "got 0 pairs".
        raise ValueError(
            f"humans: {int(complete.sum())} of {counted(h.shape[0], 'item')} "
            f"{'has' if int(complete.sum()) == 1 else 'have'} every one of "
            f"the {h.shape[1]} raters' ratings; the human mean needs 2 such items"
        )
    h, m = h[complete], m[complete]
    human_mean = h.mean(axis=1)
    columns = [(ENSEMBLE, np.where(np.isnan(m).any(axis=1), np.nan, m.mean(axis=1)))]
    columns += [(model, m[:, j]) for j, model in enumerate(models)]
    rows = []
    for model, scores in columns:
        for method in methods:
            res = correlation(
                human_mean, scores, method=method, confidence=confidence, nan_policy="omit"
            )
            rows.append(
                Correlation(
                    method=res.method,
                    estimate=res.estimate,
                    ci=res.ci,
                    p_value=res.p_value,
                    n_items=res.n_items,
                    confidence=res.confidence,
                    model=model,
                )
            )
    return tuple(rows)
