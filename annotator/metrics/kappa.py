"""Cohen's weighted kappa, Fleiss' kappa and percent agreement on integer scales.

Written here rather than imported: scikit-learn and statsmodels, which have reference
versions (and test these to 1e-9), are large installs the app would need for three
short formulas; they stay test dependencies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._validation import as_ratings_matrix, as_scores, first_non_number
from .notes import degenerate

__all__ = [
    "KAPPA_WEIGHTS",
    "PercentAgreement",
    "cohen_kappa",
    "fleiss_kappa",
    "percent_agreement",
    "round_half_up",
]

KAPPA_WEIGHTS = ("quadratic", "linear", "none")


def round_half_up(values: Any) -> np.ndarray:
    """Round to the nearest integer, halves up (2.5 -> 3), unlike numpy's half-to-even.

    The rounded human consensus of :func:`cohen_kappa`'s usual input: the mean of
    raters who gave 2 and 3 reads as 3 on both sides of zero-based scales.
    """
    return np.floor(np.asarray(values, dtype=float) + 0.5)


def _integers(values: np.ndarray, name: str) -> np.ndarray:
    present = values[~np.isnan(values)]
    if present.size and not np.all(present == np.round(present)):
        bad = present[present != np.round(present)][0]
        raise ValueError(
            f"{name} must hold integer scores (got {bad:g}); round them first, e.g. with "
            "round_half_up, or use Krippendorff's alpha for fractional scores"
        )
    return values


def _categories(values: np.ndarray, categories: Any, name: str) -> np.ndarray:
    """The sorted categories of integer ``values``: ``categories``, or the scores given."""
    if categories is None:
        return np.unique(values[~np.isnan(values)])
    cats = np.unique(as_scores(np.asarray(categories), name="categories"))
    outside = ~np.isin(values[~np.isnan(values)], cats)
    if outside.any():
        raise ValueError(
            f"{name} has the score {values[~np.isnan(values)][outside][0]:g}, "
            "which is not among categories"
        )
    return cats


def _kappa_scores(values: Any, name: str, weights: str) -> np.ndarray:
    """One rater's scores: integers as floats, or (``weights="none"``) any labels."""
    if weights == "none" and first_non_number(values) is not None:
        labels = values.to_numpy(dtype=object) if hasattr(values, "to_numpy") else values
        labels = np.asarray(labels, dtype=object)
        if labels.ndim != 1:
            raise ValueError(
                f"{name} must be 1-D (one label per item), got an array of shape {labels.shape}"
            )
        return labels
    bad = first_non_number(values)
    if bad is not None:
        raise ValueError(
            f"{name} must hold integer scores for weights={weights!r} (the weights are "
            f"distances between scores), got {bad[0]!r} at position {bad[1][0]}; "
            "weights='none' takes categorical labels"
        )
    return _integers(as_scores(values, name=name), name)


def cohen_kappa(a: Any, b: Any, *, weights: str = "quadratic", categories: Any = None) -> float:
    r"""Cohen's kappa between two raters, unweighted or with linear or quadratic weights.

    With the :math:`K \times K` table of observed proportions :math:`p_{ck}`, its
    margins :math:`p_{c\cdot}, p_{\cdot k}` and disagreement weights
    :math:`w_{ck} = |x_c - x_k|` (linear), :math:`(x_c - x_k)^2` (quadratic) or
    :math:`[c \ne k]` (none), where :math:`x_c` is category :math:`c`'s score (by
    default) or its position among ``categories`` (when given),

    .. math::

        \kappa_w = 1 - \frac{\sum_{c,k} w_{ck}\, p_{ck}}{\sum_{c,k} w_{ck}\, p_{c\cdot}\, p_{\cdot k}}

    (Cohen 1968). Quadratic-weighted kappa is close to ICC(C,1) of the two raters
    (Fleiss and Cohen 1973). Equals ``sklearn.metrics.cohen_kappa_score(a, b,
    labels=categories, weights=...)``, and by default ``cohen_kappa_score`` with
    ``labels`` every integer from the lowest to the highest score.

    Parameters
    ----------
    a, b : array_like
        One score per item each (1-D), of the same items: integers (e.g. the rounded
        human consensus from :func:`round_half_up`, and an LLM's score) or, with
        ``weights="none"``, any labels (``"yes"``, ``"no"``).
    weights : {"quadratic", "linear", "none"}, keyword-only
    categories : array_like, optional, keyword-only
        The scale's points, e.g. ``range(0, 6)``; the weights then count positions in
        it, as scikit-learn's ``labels``. By default the scores given, weighted by
        their distances: as if every integer from the lowest to the highest score were
        a category (categories nobody used add nothing to either sum), so that 1 and 5
        stay four points apart when no one gave 2-4, without a table of every integer
        between them.

    Returns
    -------
    float
        NaN, with a ``RuntimeWarning``, when no disagreement is expected by chance
        (both raters gave one and the same score throughout).

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not 1-D, holds a value that is not a number (labels are
        taken with ``weights="none"`` only) or a fractional or missing score, a score
        lies outside ``categories``, the lengths differ, or ``weights`` is unknown.

    References
    ----------
    Cohen, J. (1968). Weighted kappa: nominal scale agreement with provision for scaled
    disagreement or partial credit. Psychological Bulletin, 70(4), 213-220.
    Fleiss, J. L., and Cohen, J. (1973). The equivalence of weighted kappa and the
    intraclass correlation coefficient as measures of reliability. Educational and
    Psychological Measurement, 33(3), 613-619.

    Examples
    --------
    >>> from annotator.metrics import cohen_kappa
    >>> cohen_kappa(["yes", "no", "no", "yes"], ["yes", "no", "yes", "yes"], weights="none")
    0.5
    """
    if weights not in KAPPA_WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(KAPPA_WEIGHTS)}, got {weights!r}")
    x = _kappa_scores(a, "a", weights)
    y = _kappa_scores(b, "b", weights)
    if x.size != y.size:
        raise ValueError(f"a and b must score the same items: {x.size} != {y.size}")
    if x.size == 0:
        raise ValueError("a and b are empty")
    if pd.isna(x).any() or pd.isna(y).any():
        raise ValueError("a and b must have no missing score; drop those items first")
    if x.dtype == object or y.dtype == object:
        # Labels: compared by equality only (unweighted).
        if categories is None:
            cats = pd.unique(np.concatenate([x, y]).astype(object))
        else:
            cats = pd.unique(np.asarray(categories, dtype=object).ravel())
        i, j = (pd.Index(cats).get_indexer(v) for v in (x, y))
        if (i < 0).any() or (j < 0).any():
            bad = x[i < 0][0] if (i < 0).any() else y[j < 0][0]
            raise ValueError(f"a or b has the label {bad!r}, which is not among categories")
        position = np.arange(cats.size, dtype=float)
    else:
        cats = _categories(np.concatenate([x, y]), categories, "a or b")
        i, j = np.searchsorted(cats, x), np.searchsorted(cats, y)
        position = cats if categories is None else np.arange(cats.size, dtype=float)
    k = cats.size
    observed = np.zeros((k, k))
    np.add.at(observed, (i, j), 1.0)
    observed /= x.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    distance = np.abs(position[:, None] - position[None, :])
    w = {"quadratic": distance**2, "linear": distance, "none": (distance > 0).astype(float)}[
        weights
    ]
    chance = float(np.sum(w * expected))
    if chance == 0.0:
        degenerate(
            "both raters gave one and the same score to every item: no disagreement is "
            "expected by chance, kappa is undefined (NaN)",
            stacklevel=2,
        )
        return math.nan
    return 1.0 - float(np.sum(w * observed)) / chance


def _counts(ratings: Any, categories: Any) -> tuple[np.ndarray, np.ndarray]:
    x = _integers(as_ratings_matrix(ratings), "ratings")
    cats = _categories(x, categories, "ratings")
    counts = np.zeros((x.shape[0], cats.size))
    rows, cols = np.nonzero(~np.isnan(x))
    np.add.at(counts, (rows, np.searchsorted(cats, x[rows, cols])), 1.0)
    return x, counts


def fleiss_kappa(ratings: Any, *, categories: Any = None) -> float:
    r"""Fleiss' kappa of several raters on an integer (or nominal, coded) scale.

    With :math:`N` items, :math:`n` ratings per item, :math:`n_{ic}` ratings of item
    :math:`i` in category :math:`c` and :math:`p_c = \sum_i n_{ic} / (N n)`,

    .. math::

        \bar P = \frac{1}{N n (n-1)} \sum_i \sum_c n_{ic}(n_{ic} - 1), \qquad
        \bar P_e = \sum_c p_c^2, \qquad
        \kappa = \frac{\bar P - \bar P_e}{1 - \bar P_e}

    (Fleiss 1971). Categories are nominal: a 1-point and a 4-point disagreement count
    the same (use Krippendorff's alpha, ordinal or interval, to weigh them). Equals
    ``statsmodels.stats.inter_rater.fleiss_kappa(aggregate_raters(ratings)[0])``.

    Parameters
    ----------
    ratings : array_like or pandas.DataFrame
        Items x raters of integer scores; every item needs the same number of ratings
        (at least 2), so rows with a missing rating must be dropped first.
    categories : array_like, optional, keyword-only
        The scale's points; by default the scores given (categories nobody used change
        nothing).

    Returns
    -------
    float
        NaN, with a ``RuntimeWarning``, when every rating is the same category.

    Raises
    ------
    ValueError
        If a rating is missing or fractional, or there are fewer than 2 raters.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin, 76(5), 378-382.
    Siro, C., Aliannejadi, P., and Aliannejadi, M. (2025). Learning to Judge: LLMs
    Designing and Applying Evaluation Rubrics, Tables 6-9.
    Calderon, N., Reichart, R., and Dror, R. (2025). The Alternative Annotator Test for
    LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs, Table 1.
    """
    x = as_ratings_matrix(ratings)
    if np.isnan(x).any():
        raise ValueError(
            "ratings has a missing rating; Fleiss' kappa needs the same number of ratings "
            "per item (drop incomplete items, or use Krippendorff's alpha)"
        )
    if x.shape[1] < 2:
        raise ValueError(f"ratings needs at least 2 raters, got {x.shape[1]}")
    if x.shape[0] < 1:
        raise ValueError("ratings has no item")
    _, counts = _counts(x, categories)
    n_items, n = x.shape
    p_bar = float(np.sum(counts * (counts - 1.0))) / (n_items * n * (n - 1.0))
    p = counts.sum(axis=0) / (n_items * n)
    p_e = float(np.dot(p, p))
    if p_e == 1.0:
        degenerate(
            "every rating is the same category: Fleiss' kappa is undefined (NaN)",
            stacklevel=2,
        )
        return math.nan
    return (p_bar - p_e) / (1.0 - p_e)


@dataclass(frozen=True)
class PercentAgreement:
    """Raw (not chance-corrected) agreement among raters.

    Attributes
    ----------
    pairwise : float
        Mean over items of the share of rater pairs that gave the same score (Fleiss'
        :math:`\\bar P`, with each item's own number of ratings).
    unanimous : float
        Share of items on which every rating is the same.
    n_items : int
        Items with at least 2 ratings (the others are left out).
    """

    pairwise: float
    unanimous: float
    n_items: int


def percent_agreement(ratings: Any) -> PercentAgreement:
    r"""Percent agreement among raters: pairwise and unanimous.

    For item :math:`i` with :math:`m_i \ge 2` ratings, :math:`n_{ic}` of them equal to
    :math:`c`,

    .. math::

        P_i = \frac{\sum_c n_{ic} (n_{ic} - 1)}{m_i (m_i - 1)}, \qquad
        \text{pairwise} = \frac{1}{N} \sum_i P_i,

    and ``unanimous`` is the share of items with :math:`P_i = 1`. Not corrected for
    chance: with few categories or a skewed distribution high values come cheap (the
    Rating Roulette paper, Haldar and Hockenmaier 2025, section 3.3); report it beside a kappa or
    alpha. On complete data ``pairwise`` is Fleiss' :math:`\bar P`.

    Parameters
    ----------
    ratings : array_like or pandas.DataFrame
        Items x raters, NaN for a missing rating. Scores are compared exactly, so
        fractional scores agree only when equal.

    Returns
    -------
    PercentAgreement

    Raises
    ------
    ValueError
        If no item has 2 ratings.

    References
    ----------
    Siro, C., Aliannejadi, P., and Aliannejadi, M. (2025). Learning to Judge: LLMs
    Designing and Applying Evaluation Rubrics, Tables 6-9.
    Haldar, R., and Hockenmaier, J. (2025). Rating Roulette: Self-Inconsistency in
    LLM-As-A-Judge Frameworks, section 5.3 (MT-Bench agreement).
    """
    x = as_ratings_matrix(ratings)
    m = (~np.isnan(x)).sum(axis=1)
    keep = m >= 2
    if not keep.any():
        raise ValueError("ratings has no item with at least 2 ratings")
    x, m = x[keep], m[keep].astype(float)
    # Equal pairs per item from the sorted row: runs of equal values, NaN sorted last.
    ordered = np.sort(x, axis=1)
    agree = np.zeros(x.shape[0])
    for i, row in enumerate(ordered):
        _, counts = np.unique(row[~np.isnan(row)], return_counts=True)
        agree[i] = float(np.sum(counts * (counts - 1.0)))
    share = agree / (m * (m - 1.0))
    return PercentAgreement(
        pairwise=float(share.mean()),
        unanimous=float(np.mean(share == 1.0)),
        n_items=int(x.shape[0]),
    )
