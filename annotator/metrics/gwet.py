"""Gwet's AC1 and AC2 agreement coefficients of several raters, with missing ratings.

Written here, not imported: ``irrCAC`` (the Python port of Gwet's R package) pins old
scipy and pandas releases; it stays the tests' outside reference.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._validation import as_ratings_matrix, as_scores, check_probability, json_float
from .notes import degenerate

__all__ = ["ALTERNATIVES", "GWET_WEIGHTS", "GwetAC", "gwet_ac1", "gwet_ac2"]

#: Gwet's weights (Handbook, 2014, chapter 3; irrCAC's names). "identity" is AC1.
# fmt: off
GWET_WEIGHTS = ("identity", "linear", "quadratic", "ordinal",
                "radical", "ratio", "circular", "bipolar")
# fmt: on
ALTERNATIVES = ("two-sided", "greater", "less")

# A rating matches a category within this relative distance, so that categories such
# as np.arange(0, 5.1, 0.1) (0.30000000000000004) match the scores typed as 0.3.
_MATCH = 1e-9
# Rows of the q x q category pairs summed at a time (the sum of the weights).
_BLOCK = 1_000_000


@dataclass(frozen=True)
class GwetAC:
    """Gwet's AC1 or AC2 with its standard error (Gwet 2008).

    Attributes
    ----------
    coefficient, pa, pe : float
        AC1 (identity weights) or AC2, :math:`(p_a - p_e) / (1 - p_e)`; the (weighted)
        percent agreement and chance agreement.
    se : float
        Standard error over items (Gwet 2008); NaN with a single rated item.
    ci : tuple of float
        ``(low, high)``: ``coefficient`` -/+ t quantile (``n_items - 1`` degrees of
        freedom) times ``se``, ``high`` capped at 1 (as irrCAC).
    statistic, p_value : float
        ``coefficient / se`` and the p-value of its t test (``alternative``).
    n_items, n_pairable, n_raters : int
        Items with a rating (the others are left out), items with 2 or more (over
        which ``pa`` is averaged), columns of the matrix.
    categories : tuple of float
        Sorted: the scores given, or the ``categories`` passed.
    weights, confidence, alternative
        As passed ("identity" for AC1).
    """

    coefficient: float
    pa: float
    pe: float
    se: float
    ci: tuple[float, float]
    statistic: float
    p_value: float
    n_items: int
    n_pairable: int
    n_raters: int
    categories: tuple[float, ...]
    weights: str
    confidence: float
    alternative: str

    def to_dict(self) -> dict[str, Any]:
        """Return the result as plain Python types (JSON-ready; NaN becomes None)."""
        plain = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        return {k: json_float(v) if isinstance(v, float) else v for k, v in plain.items()}


def _distance(name: str, cats: np.ndarray, k: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Gwet's disagreement ``d`` between categories ``k`` and ``m`` (indices in ``cats``).

    Every weight of the Handbook (and irrCAC) is ``w = 1 - d / max(d)`` for one of these.
    """
    if name == "identity":
        return (k != m).astype(float)
    if name == "ordinal":  # positions, not values
        n_km = np.abs(k - m) + 1.0
        return n_km * (n_km - 1.0) / 2.0
    a, b, low, high = cats[k], cats[m], cats[0], cats[-1]
    diff = np.abs(a - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = {
            "linear": lambda: diff,
            "quadratic": lambda: diff**2,
            "radical": lambda: np.sqrt(diff),
            "ratio": lambda: (diff / (a + b)) ** 2,  # 0 / 0 for 0 against 0: agreement
            "circular": lambda: np.sin(np.pi * diff / (high - low + 1.0)) ** 2,
            "bipolar": lambda: diff**2 / ((a + b - 2.0 * low) * (2.0 * high - a - b)),
        }[name]()
    return np.where(k == m, 0.0, d)  # bipolar's ends are 0 / 0 too


def _weight_scale(name: str, cats: np.ndarray) -> tuple[float, float]:
    """``(max d, sum of the weights)`` over the q x q category pairs, in row blocks."""
    q = cats.size
    if q == 1:
        return 1.0, 1.0
    index = np.arange(q)
    largest, total = 0.0, 0.0
    step = max(1, _BLOCK // q)
    for start in range(0, q, step):
        d = _distance(name, cats, index[start : start + step, None], index[None, :])
        largest = max(largest, float(d.max()))
        total += float(d.sum())
    return largest, q * q - total / largest


def _pair_sums(item: np.ndarray, cat: np.ndarray, count: np.ndarray, n: int, w) -> np.ndarray:
    """Per item, sum over k of r_ik r*_ik with r*_ik = sum_l w_kl r_il.

    Pairs the (item, category, count) triples, sorted by item, within each item: a dense
    n x q table times the q x q weights would cost n q^2 on fine scales (0-100 by 0.1).
    """
    sizes = np.bincount(item, minlength=n)
    reps = sizes[item]
    left = np.repeat(np.arange(item.size), reps)
    first = (np.cumsum(sizes) - sizes)[item[left]]
    right = first + np.arange(left.size) - np.repeat(np.cumsum(reps) - reps, reps)
    weight = w(cat[left], cat[right])
    return np.bincount(item[left], weights=count[left] * count[right] * weight, minlength=n)


def _categories(present: np.ndarray, categories: Any) -> np.ndarray:
    """Sorted distinct categories: the scores given, or ``categories`` (checked)."""
    if categories is None:
        return np.unique(present)
    cats = as_scores(np.asarray(categories, dtype=object).ravel(), name="categories")
    if cats.size == 0 or np.isnan(cats).any():
        raise ValueError("categories must be a non-empty list of numbers, without NaN")
    cats = np.unique(cats)
    nearest = _nearest(cats, present)
    far = np.abs(cats[nearest] - present) > _MATCH * np.maximum(1.0, np.abs(present))
    if far.any():
        raise ValueError(
            f"ratings has the score {present[far][0]:g}, which is not among categories; "
            "round the scores to the scale's step, or add the value to categories"
        )
    return cats


def _nearest(cats: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of the category nearest each value."""
    if cats.size == 1:
        return np.zeros(values.size, dtype=np.intp)
    right = np.clip(np.searchsorted(cats, values), 1, cats.size - 1)
    left = right - 1
    return np.where(np.abs(values - cats[left]) <= np.abs(cats[right] - values), left, right)


def _check_options(weights: str, alternative: str, population_size: float) -> None:
    if not isinstance(weights, str) or weights not in GWET_WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(GWET_WEIGHTS)}; got {weights!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"alternative must be one of {', '.join(ALTERNATIVES)}; got {alternative!r}"
        )
    size = population_size
    if isinstance(size, bool) or not isinstance(size, numbers.Real) or not size > 0:
        raise ValueError(f"population_size must be a positive number or math.inf; got {size!r}")


def _gwet(
    ratings: Any,
    weights: str,
    categories: Any,
    confidence: float,
    alternative: str,
    population_size: float,
) -> GwetAC:
    _check_options(weights, alternative, population_size)
    confidence = check_probability(confidence, name="confidence")
    x = as_ratings_matrix(ratings)
    if x.size == 0:
        raise ValueError(f"ratings is empty (shape {x.shape}); it needs items x raters")
    if x.shape[1] < 2:
        raise ValueError(f"ratings needs at least 2 raters (columns), got {x.shape[1]}")
    x = x[~np.isnan(x).all(axis=1)]  # items nobody rated say nothing (irrCAC drops them)
    if not ((~np.isnan(x)).sum(axis=1) >= 2).any():
        raise ValueError("ratings has no item with at least 2 ratings; agreement is undefined")
    n, n_raters = x.shape
    rows, cols = np.nonzero(~np.isnan(x))
    present = x[rows, cols]
    cats = _categories(present, categories)
    q = cats.size
    if weights == "ratio" and cats[0] < 0:
        raise ValueError(f"weights='ratio' needs non-negative categories; got {cats[0]:g}")

    # The item x category counts r_ik as (item, category, count) triples.
    code = _nearest(cats, present)
    keys, count = np.unique(rows.astype(np.int64) * q + code, return_counts=True)
    item, cat, count = keys // q, keys % q, count.astype(float)
    r_i = np.bincount(item, weights=count, minlength=n)
    d_max, w_total = _weight_scale(weights, cats)
    agree = _pair_sums(
        item, cat, count, n, lambda k, m: 1.0 - _distance(weights, cats, k, m) / d_max
    )

    pairable = r_i >= 2
    n2 = int(pairable.sum())
    pa_i = np.zeros(n)
    pa_i[pairable] = (agree[pairable] - r_i[pairable]) / (r_i[pairable] * (r_i[pairable] - 1.0))
    pa = float(pa_i[pairable].mean())

    # Classification probabilities pi_k: the mean over items of each item's shares.
    pi = np.bincount(cat, weights=count / r_i[item], minlength=q) / n
    # T_w / (q (q - 1)). One category: pe = 0 as on any scale around it, where
    # sum_k pi_k (1 - pi_k) = 0 (irrCAC: pe = 1e-15 in R, 1 - 1e-15 in Python; AC = 1).
    factor = w_total / (q * (q - 1.0)) if q > 1 else 0.0
    pe = factor * float(np.dot(pi, 1.0 - pi))
    ac = (pa - pe) / (1.0 - pe)

    # Linearised variance (Gwet 2008; Handbook 4th ed., chapter 5), irrCAC's terms.
    ac_i = (n / n2) * (pa_i - pe * pairable) / (1.0 - pe)
    pe_i = factor * np.bincount(item, weights=count * (1.0 - pi[cat]), minlength=n) / r_i
    ac_i_star = ac_i - 2.0 * (1.0 - ac) * (pe_i - pe) / (1.0 - pe)
    fpc = 1.0 - n / float(population_size)
    if fpc < 0:
        raise ValueError(f"population_size ({population_size:g}) is below the {n} rated items")
    se = math.nan
    if n < 2:
        degenerate("one rated item: the standard error of Gwet's AC is undefined", stacklevel=3)
    else:
        se = math.sqrt(fpc / (n * (n - 1.0)) * float(np.sum((ac_i_star - ac) ** 2)))
    low, high, statistic, p_value = _inference(ac, se, n - 1, confidence, alternative)
    return GwetAC(
        coefficient=ac,
        pa=pa,
        pe=pe,
        se=se,
        ci=(low, high),
        statistic=statistic,
        p_value=p_value,
        n_items=n,
        n_pairable=n2,
        n_raters=n_raters,
        categories=tuple(float(c) for c in cats),
        weights=weights,
        confidence=confidence,
        alternative=alternative,
    )


def _inference(
    ac: float, se: float, df: int, confidence: float, alternative: str
) -> tuple[float, float, float, float]:
    """Interval and test as irrCAC: t on ``df`` degrees of freedom, upper bound capped at 1."""
    if math.isnan(se):
        return math.nan, math.nan, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2.0, df)) * se
    # No spread over items (unanimous items, say): an infinite statistic, or NaN at 0.
    infinite = math.copysign(math.inf, ac) if ac != 0 else math.nan
    statistic = ac / se if se > 0 else infinite
    if alternative == "greater":
        p_value = float(stats.t.sf(statistic, df))
    elif alternative == "less":
        p_value = float(stats.t.cdf(statistic, df))
    else:
        p_value = float(min(1.0, 2.0 * stats.t.sf(abs(statistic), df)))
    return ac - half, min(1.0, ac + half), statistic, p_value


def gwet_ac1(
    ratings: Any,
    *,
    categories: Any = None,
    confidence: float = 0.95,
    alternative: str = "two-sided",
    population_size: float = math.inf,
) -> GwetAC:
    r"""Gwet's AC1: chance-corrected agreement of several raters on nominal categories.

    With :math:`n` items rated at least once, :math:`r_{ik}` ratings of item :math:`i`
    in category :math:`k` (of :math:`q`), :math:`r_i = \sum_k r_{ik}`, the
    :math:`n_2` items with :math:`r_i \ge 2` and
    :math:`\pi_k = \frac{1}{n} \sum_i r_{ik} / r_i`,

    .. math::

        p_a = \frac{1}{n_2} \sum_{i: r_i \ge 2} \sum_k
              \frac{r_{ik} (r_{ik} - 1)}{r_i (r_i - 1)}, \qquad
        p_e = \frac{1}{q - 1} \sum_k \pi_k (1 - \pi_k), \qquad
        \mathrm{AC}_1 = \frac{p_a - p_e}{1 - p_e}

    (Gwet 2008; Handbook, 2014, chapter 4): :func:`gwet_ac2` with
    ``weights="identity"``; see it for the categories, standard error, interval and
    test. Chance agreement is that of two raters on an item hard to rate, so AC1 stays
    high where kappa drops under high agreement on a skewed scale (the kappa
    paradoxes). Categories are nominal: 3 and 3.5 disagree as much as 0 and 5.

    Parameters
    ----------
    ratings : array_like or pandas.DataFrame
        Items x raters (at least 2 columns), NaN for a missing rating.
    categories, confidence, alternative, population_size : keyword-only
        As for :func:`gwet_ac2`.

    Returns
    -------
    GwetAC

    Raises
    ------
    ValueError
        As :func:`gwet_ac2`.

    References
    ----------
    Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the
    presence of high agreement. British Journal of Mathematical and Statistical
    Psychology, 61(1), 29-48.
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced
    Analytics, LLC. Chapters 3-5.

    Examples
    --------
    irrCAC's ``raw_4raters`` (from the Handbook), for which irrCAC prints 0.77544:

    >>> from annotator.metrics import gwet_ac1
    >>> nan = float("nan")
    >>> ratings = [[1, 1, nan, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3],
    ...            [2, 2, 2, 2], [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1],
    ...            [2, 2, 2, 2], [nan, 5, 5, 5], [nan, nan, 1, 1], [nan, nan, 3, nan]]
    >>> result = gwet_ac1(ratings)
    >>> round(result.coefficient, 5), round(result.se, 5)
    (0.77544, 0.14295)
    """
    return _gwet(ratings, "identity", categories, confidence, alternative, population_size)


def gwet_ac2(
    ratings: Any,
    *,
    weights: str = "quadratic",
    categories: Any = None,
    confidence: float = 0.95,
    alternative: str = "two-sided",
    population_size: float = math.inf,
) -> GwetAC:
    r"""Gwet's AC2: weighted chance-corrected agreement of several raters.

    With the notation of :func:`gwet_ac1`, weights :math:`w_{kl}` (1 on the
    diagonal), :math:`r^\star_{ik} = \sum_l w_{kl} r_{il}` and
    :math:`T_w = \sum_{k,l} w_{kl}`,

    .. math::

        p_a = \frac{1}{n_2} \sum_{i: r_i \ge 2} \sum_k
              \frac{r_{ik} (r^\star_{ik} - 1)}{r_i (r_i - 1)}, \qquad
        p_e = \frac{T_w}{q (q - 1)} \sum_k \pi_k (1 - \pi_k), \qquad
        \mathrm{AC}_2 = \frac{p_a - p_e}{1 - p_e}.

    The standard error is Gwet's (2008) linearisation over items, the raters fixed:
    with :math:`p_{a|i}` item :math:`i`'s term of :math:`p_a` (0 if :math:`r_i < 2`)
    and :math:`p_{e|i} = \frac{T_w}{q(q-1)} \sum_k r_{ik} (1 - \pi_k) / r_i`,

    .. math::

        \mathrm{AC}^\star_i = \frac{n}{n_2} \frac{p_{a|i} - p_e [r_i \ge 2]}{1 - p_e}
            - 2 (1 - \mathrm{AC}_2) \frac{p_{e|i} - p_e}{1 - p_e}, \qquad
        \widehat{V} = \frac{1 - n/N}{n (n - 1)} \sum_i (\mathrm{AC}^\star_i - \mathrm{AC}_2)^2;

    the interval is :math:`\mathrm{AC}_2 \pm t_{n-1} \sqrt{\widehat V}`, its upper end
    capped at 1, and the test of :math:`\mathrm{AC}_2 = 0` a t test on :math:`n - 1`
    degrees of freedom, as irrCAC (``irrCAC.raw.CAC(...).gwet()``, 0.4; R
    ``irrCAC::gwet.ac1.raw``, 1.0) computes them. Items rated once inflate this
    standard error, quadratic AC2 at 30 items covers 0.89-0.93: see the simulated
    coverage in ``docs/metrics.md``.

    Weights are :math:`w_{kl} = 1 - d_{kl} / \max d` (Handbook, chapter 3), with
    category values :math:`x_k` at positions :math:`k`: identity :math:`[k \ne l]`;
    linear :math:`|x_k - x_l|`; quadratic :math:`(x_k - x_l)^2`; radical
    :math:`|x_k - x_l|^{1/2}`; ordinal :math:`m (m - 1) / 2`, :math:`m = |k - l| + 1`
    (positions); ratio :math:`((x_k - x_l) / (x_k + x_l))^2` (0 against 0 agrees,
    where irrCAC refuses a 0 category); circular
    :math:`\sin^2(\pi (x_k - x_l) / (x_{\max} - x_{\min} + 1))` (a scale of step 1);
    bipolar :math:`(x_k - x_l)^2 / ((x_k + x_l - 2 x_{\min})(2 x_{\max} - x_k - x_l))`.

    Parameters
    ----------
    ratings : array_like or pandas.DataFrame
        Items x raters (at least 2 columns), NaN for a missing rating. Items nobody
        rated are left out; items rated once count in :math:`\pi_k`, not in :math:`p_a`.
    weights : str, keyword-only
        One of "quadratic", "linear", "ordinal", "radical", "ratio", "circular",
        "bipolar", or "identity" (AC1).
    categories : array_like, optional, keyword-only
        The scale's points, e.g. ``range(0, 6)`` or ``np.arange(0, 5.5, 0.5)``. By
        default the distinct scores given, fractional ones included (3.25 and 3.5 are
        two categories). Chance agreement depends on q and :math:`T_w`, so categories
        nobody used change the coefficient, unlike kappa's: pass the scale when it is
        known, and the value does not depend on which points happened to be used.
        Every score must be one of them (to 1e-9 relative): round fractional scores
        to the scale's step first.
    confidence : float, keyword-only
        Coverage of the interval, strictly between 0 and 1.
    alternative : {"two-sided", "greater", "less"}, keyword-only
        Of the t test that AC is 0 (irrCAC 0.4: "two-sided"; R irrCAC 1.0: "greater").
    population_size : float, keyword-only
        Items in the population (correction :math:`1 - n/N`); infinite by default.

    Returns
    -------
    GwetAC
        One rated item gives NaN ``se``, ``ci`` and ``p_value`` (with a
        ``RuntimeWarning``). All ratings in one category: AC = 1 (``pa`` 1, ``pe``
        0), as on any scale around it. Perfect agreement on complete data: ``se`` 0,
        interval (1, 1), p-value 0 (no spread seen, none proven).

    Raises
    ------
    ValueError
        If ``ratings`` is empty, not 2-D, not numbers, has fewer than 2 raters or no
        item with 2 ratings; a score is not among ``categories``; ``weights`` is
        unknown (or "ratio" with a negative category); another option is invalid.

    References
    ----------
    Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the
    presence of high agreement. British Journal of Mathematical and Statistical
    Psychology, 61(1), 29-48.
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced
    Analytics, LLC. Chapters 3-5.

    Examples
    --------
    The scores given as categories, then the whole 0-5 scale in halves (irrCAC
    0.4.4 gives the same, 0.94517 and 0.94175):

    >>> import numpy as np
    >>> from annotator.metrics import gwet_ac2
    >>> scores = [[0, 0.5], [3, 3], [4.5, 5], [2, 1]]
    >>> round(gwet_ac2(scores).coefficient, 4)
    0.9452
    >>> round(gwet_ac2(scores, categories=np.arange(0, 5.5, 0.5)).coefficient, 4)
    0.9417
    """
    return _gwet(ratings, weights, categories, confidence, alternative, population_size)
