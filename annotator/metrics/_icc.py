"""Intraclass correlation for a crossed items x raters design."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import special

from ._validation import as_ratings_matrix, check_nan_policy, check_probability, counted
from .notes import degenerate

__all__ = ["ICCResult", "icc"]


@dataclass(frozen=True)
class ICCResult:
    """Intraclass correlations of a two-way design and the ANOVA they come from.

    Attributes
    ----------
    icc_a1, icc_ak : float
        Absolute agreement, single rater and mean of ``k`` raters (ICC(A,1), ICC(A,k)).
    ci_a1, ci_ak : tuple of float
        ``(low, high)`` confidence intervals of ``icc_a1`` and ``icc_ak``.
    icc_c1, icc_ck : float
        Consistency, single rater and mean of ``k`` raters (ICC(C,1), ICC(C,k)).
    ci_c1, ci_ck : tuple of float
        ``(low, high)`` confidence intervals of ``icc_c1`` and ``icc_ck``.
    ms_items, ms_raters, ms_error : float
        Mean squares of the items (rows), the raters (columns) and the residual.
    f_items, p_value : float
        ``ms_items / ms_error`` and its upper-tail p-value on ``(n - 1, (n - 1)(k - 1))``
        degrees of freedom (the test that the ICC is zero).
    n, k : int
        Items and raters used.
    n_omitted : int
        Incomplete items dropped by ``nan_policy="omit"``.
    confidence : float
        Coverage of the confidence intervals.
    """

    icc_a1: float
    icc_ak: float
    ci_a1: tuple[float, float]
    ci_ak: tuple[float, float]
    icc_c1: float
    icc_ck: float
    ci_c1: tuple[float, float]
    ci_ck: tuple[float, float]
    ms_items: float
    ms_raters: float
    ms_error: float
    f_items: float
    p_value: float
    n: int
    k: int
    n_omitted: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        """Return the result as plain Python types (JSON-ready)."""
        return {
            key: list(val) if isinstance(val, tuple) else val for key, val in asdict(self).items()
        }


def _f_ppf(prob: float, dfn: float, dfd: float) -> float:
    # The ufunc rather than scipy.stats.f.ppf: same quantile, without the
    # distribution-object overhead that dominates on large matrices.
    return float(special.fdtri(dfn, dfd, prob))


def icc(ratings: Any, *, confidence: float = 0.95, nan_policy: str = "raise") -> ICCResult:
    r"""Two-way random-effects intraclass correlations (absolute agreement and consistency).

    With :math:`n` items (rows) and :math:`k` raters (columns), the two-way ANOVA of
    :math:`Y_{ij} = \mu + \alpha_i + \beta_j + \varepsilon_{ij}` gives the mean squares
    :math:`MS_I` (items), :math:`MS_R` (raters) and :math:`MS_E` (residual), and

    .. math::

        \mathrm{ICC}(A,1) &= \frac{MS_I - MS_E}{MS_I + (k-1) MS_E + \frac{k}{n}(MS_R - MS_E)} \\
        \mathrm{ICC}(A,k) &= \frac{MS_I - MS_E}{MS_I + \frac{1}{n}(MS_R - MS_E)} \\
        \mathrm{ICC}(C,1) &= \frac{MS_I - MS_E}{MS_I + (k-1) MS_E} \\
        \mathrm{ICC}(C,k) &= \frac{MS_I - MS_E}{MS_I}

    (grading-scale paper, equations 1-3; McGraw and Wong 1996, cases 2A and 3A).
    The confidence intervals are the F-based ones of McGraw and Wong (1996), with
    Satterthwaite's degrees of freedom for the absolute-agreement forms, computed as
    R's ``psych::ICC`` and ``pingouin.intraclass_corr`` do; the ICC(A,k) interval is the
    Spearman-Brown step-up of the ICC(A,1) bounds.

    Two degenerate matrices give NaN, each with a ``RuntimeWarning``: a constant matrix
    (all mean squares 0) has every ICC and interval NaN; perfect agreement
    (:math:`MS_E = 0`) has ICC(C,1) = ICC(C,k) = 1 (and ICC(A,.) = 1 when the raters also
    share their means) but undefined F-based intervals, returned as ``(nan, nan)``
    (their limit as :math:`MS_E \to 0` is (1, 1) for the consistency forms).

    Parameters
    ----------
    ratings : array_like or pandas.DataFrame
        Items x raters, NaN for a missing rating.
    confidence : float, keyword-only
        Coverage of the confidence intervals, in (0, 1).
    nan_policy : {"raise", "omit"}, keyword-only
        ``"raise"``: a missing rating is an error. ``"omit"``: drop every item with a
        missing rating (listwise deletion, as pingouin does).

    Returns
    -------
    ICCResult

    Raises
    ------
    ValueError
        If ``ratings`` is not a 2-D numeric array, has missing values under
        ``nan_policy="raise"``, or leaves fewer than 2 items or 2 raters.

    References
    ----------
    Shrout, P. E., and Fleiss, J. L. (1979). Intraclass correlations: uses in assessing
    rater reliability. Psychological Bulletin, 86(2), 420-428.
    McGraw, K. O., and Wong, S. P. (1996). Forming inferences about some intraclass
    correlation coefficients. Psychological Methods, 1(1), 30-46.
    Koo, T. K., and Li, M. Y. (2016). A guideline of selecting and reporting intraclass
    correlation coefficients for reliability research. J. Chiropractic Medicine 15(2).

    Examples
    --------
    >>> from annotator.metrics import icc
    >>> table = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> round(icc(table).icc_a1, 4)
    0.2898
    """
    check_nan_policy(nan_policy)
    confidence = check_probability(confidence, name="confidence")
    x = as_ratings_matrix(ratings)
    n_total = x.shape[0]
    missing = np.isnan(x)
    if missing.any():
        if nan_policy == "raise":
            raise ValueError(
                f"ratings has {counted(int(missing.sum()), 'missing value')}; pass nan_policy='omit' to "
                "drop incomplete items"
            )
        x = x[~missing.any(axis=1)]
    n, k = x.shape
    if n < 2:
        raise ValueError(f"ratings needs at least 2 complete items, got {n}")
    if k < 2:
        raise ValueError(f"ratings needs at least 2 raters (columns), got {k}")

    grand = x.mean()
    row_means = x.mean(axis=1)
    col_means = x.mean(axis=0)
    df_items, df_raters, df_error = n - 1, k - 1, (n - 1) * (k - 1)
    ss_items = k * np.sum((row_means - grand) ** 2)
    ss_raters = n * np.sum((col_means - grand) ** 2)
    # The residual sum of squares straight from the residuals, not SST - SSR - SSC, so
    # that nearly-perfect agreement does not lose its digits to cancellation.
    resid = x - row_means[:, None] - col_means[None, :] + grand
    ss_error = float(np.sum(resid * resid))
    # numpy scalars, so that perfect agreement (MS_E = 0) divides to inf, not an error.
    msr = np.float64(ss_items / df_items)
    msc = np.float64(ss_raters / df_raters)
    mse = np.float64(ss_error / df_error)

    if ss_items == 0 and ss_raters == 0 and ss_error == 0:
        degenerate(
            "ratings are constant (every mean square is 0): every ICC is 0/0 and returned "
            "as NaN, with NaN confidence intervals",
            stacklevel=2,
        )
    elif ss_error == 0:
        degenerate(
            "ratings have no residual variance (the raters agree perfectly, up to a constant "
            "offset per rater): ICC(C,1) = ICC(C,k) = 1 and the F-based confidence intervals "
            "are undefined (F = MS_I / MS_E is infinite), returned as (NaN, NaN)",
            stacklevel=2,
        )
    alpha = 1.0 - confidence
    upper = 1.0 - alpha / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        icc_a1 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        icc_ak = (msr - mse) / (msr + (msc - mse) / n)
        icc_c1 = (msr - mse) / (msr + (k - 1) * mse)
        icc_ck = (msr - mse) / msr
        f_items = msr / mse
        p_value = float(special.fdtrc(df_items, df_error, f_items))

        # Consistency: exact F intervals (McGraw and Wong 1996, table 7, case 3).
        f_low = f_items / _f_ppf(upper, df_items, df_error)
        f_high = f_items * _f_ppf(upper, df_error, df_items)
        ci_c1 = ((f_low - 1) / (f_low + k - 1), (f_high - 1) / (f_high + k - 1))
        ci_ck = (1 - 1 / f_low, 1 - 1 / f_high)

        # Absolute agreement: approximate F with Satterthwaite's denominator df
        # (McGraw and Wong 1996, table 7, case 2A), written as psych and pingouin write it.
        f_raters = msc / mse
        v_num = df_error * (k * icc_a1 * f_raters + n * (1 + (k - 1) * icc_a1) - k * icc_a1) ** 2
        v_den = (
            df_items * k**2 * icc_a1**2 * f_raters**2
            + (n * (1 + (k - 1) * icc_a1) - k * icc_a1) ** 2
        )
        v = v_num / v_den
        f_star_high = _f_ppf(upper, df_items, v)
        f_star_low = _f_ppf(upper, v, df_items)
        common = k * msc + (k * n - k - n) * mse
        low_a1 = n * (msr - f_star_high * mse) / (f_star_high * common + n * msr)
        high_a1 = n * (f_star_low * msr - mse) / (common + n * f_star_low * msr)
        ci_a1 = (low_a1, high_a1)
        ci_ak = (low_a1 * k / (1 + low_a1 * (k - 1)), high_a1 * k / (1 + high_a1 * (k - 1)))

    def pair(bounds: tuple[float, float]) -> tuple[float, float]:
        return (float(bounds[0]), float(bounds[1]))

    return ICCResult(
        icc_a1=float(icc_a1),
        icc_ak=float(icc_ak),
        ci_a1=pair(ci_a1),
        ci_ak=pair(ci_ak),
        icc_c1=float(icc_c1),
        icc_ck=float(icc_ck),
        ci_c1=pair(ci_c1),
        ci_ck=pair(ci_ck),
        ms_items=float(msr),
        ms_raters=float(msc),
        ms_error=float(mse),
        f_items=float(f_items),
        p_value=p_value,
        n=int(n),
        k=int(k),
        n_omitted=int(n_total - n),
        confidence=confidence,
    )
