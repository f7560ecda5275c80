"""Planning a rating study: how many raters for a target reliability.

From a pilot's items x raters matrix (or stated variance components), a one-facet
D-study of generalizability theory (items x raters, crossed, random) predicts the
reliability of the mean of ``k'`` raters, and the Spearman-Brown prophecy steps a
single-rater reliability up to ``k'`` raters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._icc import icc
from ._validation import check_integer, check_integers

__all__ = [
    "DStudy",
    "IntervalWidths",
    "VarianceComponents",
    "d_study",
    "icc_interval_widths",
    "raters_needed",
    "spearman_brown",
    "variance_components",
]


@dataclass(frozen=True)
class VarianceComponents:
    """Variance components of the items x raters design.

    Attributes
    ----------
    items, raters, residual : float
        :math:`\\sigma^2_i` (true differences between items), :math:`\\sigma^2_r`
        (rater leniency), :math:`\\sigma^2_{e}` (interaction and error); negative ANOVA
        estimates are set to 0 (Cronbach et al. 1972; Brennan 2001, section 3.4).
    n, k : int
        Items and raters of the pilot they were estimated from (0 when stated).
    """

    items: float
    raters: float
    residual: float
    n: int = 0
    k: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return the components as plain Python types (JSON-ready)."""
        return {
            "items": self.items,
            "raters": self.raters,
            "residual": self.residual,
            "n": self.n,
            "k": self.k,
        }


@dataclass(frozen=True)
class DStudy:
    """Predicted reliability of the mean of ``k'`` raters.

    Attributes
    ----------
    raters : tuple of int
        The numbers of raters ``k'``.
    absolute : tuple of float
        :math:`\\Phi(k')`, the dependability (= ICC(A,k')).
    relative : tuple of float
        :math:`E\\rho^2(k')`, the generalizability coefficient (= ICC(C,k')).
    components : VarianceComponents
        The components the prediction uses.
    """

    raters: tuple[int, ...]
    absolute: tuple[float, ...]
    relative: tuple[float, ...]
    components: VarianceComponents

    def to_dict(self) -> dict[str, Any]:
        """Return the table as plain Python types (JSON-ready)."""
        return {
            "components": self.components.to_dict(),
            "rows": [
                {"raters": k, "absolute": a, "relative": r}
                for k, a, r in zip(self.raters, self.absolute, self.relative, strict=True)
            ],
        }


def _check_reliability(value: Any, *, name: str, closed_low: bool = False) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number in (0, 1)") from exc
    low_ok = value >= 0.0 if closed_low else value > 0.0
    if not (low_ok and value < 1.0):
        raise ValueError(f"{name} must be in {'[0' if closed_low else '(0'}, 1), got {value}")
    return value


def spearman_brown(reliability: float, *, factor: float) -> float:
    r"""Spearman-Brown prophecy: reliability of a measure ``factor`` times as long.

    .. math::

        \rho^* = \frac{m \rho}{1 + (m - 1) \rho}

    With the single-rater ICC(A,1) and :math:`m = k'`, this is the predicted ICC(A,k')
    of the mean of :math:`k'` raters (the same as the D-study's :math:`\Phi(k')`).

    Parameters
    ----------
    reliability : float
        Reliability :math:`\rho` of one unit (for instance one rater), in [0, 1).
    factor : float, keyword-only
        Lengthening factor :math:`m > 0`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``reliability`` is outside [0, 1) or ``factor`` is not positive.

    References
    ----------
    Spearman, C. (1910). Correlation calculated from faulty data. British Journal of
    Psychology, 3, 271-295. Brown, W. (1910). Some experimental results in the
    correlation of mental abilities. British Journal of Psychology, 3, 296-322.

    Examples
    --------
    >>> round(spearman_brown(0.5, factor=3), 4)
    0.75
    """
    rho = _check_reliability(reliability, name="reliability", closed_low=True)
    try:
        m = float(factor)
    except (TypeError, ValueError) as exc:
        raise ValueError("factor must be a positive number") from exc
    if not m > 0 or not math.isfinite(m):
        raise ValueError(f"factor must be a positive number, got {factor!r}")
    return m * rho / (1.0 + (m - 1.0) * rho)


def raters_needed(reliability: float, *, target: float) -> int:
    r"""Raters whose mean reaches ``target``, by inverting the Spearman-Brown prophecy.

    .. math::

        k' = \left\lceil \frac{\rho^* (1 - \rho)}{\rho (1 - \rho^*)} \right\rceil

    Parameters
    ----------
    reliability : float
        Single-rater reliability :math:`\rho` (ICC(A,1)), in (0, 1).
    target : float, keyword-only
        Wanted reliability of the mean :math:`\rho^*`, in (0, 1).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If either value is outside (0, 1).

    References
    ----------
    Shrout, P. E., and Fleiss, J. L. (1979), equation 10.

    Examples
    --------
    >>> raters_needed(0.5, target=0.8)
    4
    """
    rho = _check_reliability(reliability, name="reliability")
    goal = _check_reliability(target, name="target")
    # A hair below the exact ratio, so that an exact integer (0.5 -> 0.8: 4.0) is not
    # rounded up to the next one by floating-point error.
    return max(1, math.ceil(goal * (1 - rho) / (rho * (1 - goal)) - 1e-9))


def variance_components(ratings: Any, *, nan_policy: str = "raise") -> VarianceComponents:
    r"""Variance components of a pilot items x raters matrix, from the ICC's ANOVA.

    .. math::

        \hat\sigma^2_i = \frac{MS_I - MS_E}{k}, \quad
        \hat\sigma^2_r = \frac{MS_R - MS_E}{n}, \quad
        \hat\sigma^2_e = MS_E,

    negative estimates set to 0. Then :math:`\hat\sigma^2_i / (\hat\sigma^2_i +
    \hat\sigma^2_r + \hat\sigma^2_e)` is the pilot's ICC(A,1) (before truncation).

    Parameters
    ----------
    ratings : array_like or pandas.DataFrame
        Items x raters, as for :func:`annotator.metrics.icc`.
    nan_policy : {"raise", "omit"}, keyword-only
        As for :func:`annotator.metrics.icc`.

    Returns
    -------
    VarianceComponents

    Raises
    ------
    ValueError
        As :func:`annotator.metrics.icc`.

    References
    ----------
    Brennan, R. L. (2001). Generalizability Theory. Springer, sections 3.1-3.4.
    McGraw, K. O., and Wong, S. P. (1996).
    """
    res = icc(ratings, nan_policy=nan_policy)
    return VarianceComponents(
        items=max(0.0, (res.ms_items - res.ms_error) / res.k),
        raters=max(0.0, (res.ms_raters - res.ms_error) / res.n),
        residual=max(0.0, res.ms_error),
        n=res.n,
        k=res.k,
    )


def d_study(components: VarianceComponents, *, raters: Any) -> DStudy:
    r"""One-facet D-study: reliability of the mean of ``k'`` raters per item.

    .. math::

        \Phi(k') = \frac{\sigma^2_i}{\sigma^2_i + (\sigma^2_r + \sigma^2_e)/k'}, \qquad
        E\rho^2(k') = \frac{\sigma^2_i}{\sigma^2_i + \sigma^2_e / k'}

    :math:`\Phi` (absolute decisions, rater leniency counts as error) is ICC(A,k');
    :math:`E\rho^2` (relative decisions) is ICC(C,k').

    Parameters
    ----------
    components : VarianceComponents
        From :func:`variance_components` or stated.
    raters : int or sequence of int, keyword-only
        Numbers of raters :math:`k' \ge 1`.

    Returns
    -------
    DStudy

    Raises
    ------
    ValueError
        If a number of raters is not a positive integer, or the components are
        negative or all zero.

    References
    ----------
    Brennan, R. L. (2001). Generalizability Theory, section 4.1 (p x r design).

    Examples
    --------
    >>> comps = VarianceComponents(items=1.0, raters=0.25, residual=0.75)
    >>> [round(v, 3) for v in d_study(comps, raters=[1, 4]).absolute]
    [0.5, 0.8]
    """
    ks = check_integers(raters, name="raters", low=1)
    parts = (components.items, components.raters, components.residual)
    if any(not math.isfinite(v) or v < 0 for v in parts) or sum(parts) == 0:
        raise ValueError("components must be finite, non-negative and not all zero")
    s_i, s_r, s_e = parts
    with np.errstate(invalid="ignore", divide="ignore"):
        absolute = tuple(float(s_i / (s_i + (s_r + s_e) / k)) if s_i else 0.0 for k in ks)
        relative = tuple(float(s_i / (s_i + s_e / k)) if s_i else 0.0 for k in ks)
    return DStudy(
        raters=tuple(int(k) for k in ks),
        absolute=absolute,
        relative=relative,
        components=components,
    )


@dataclass(frozen=True)
class IntervalWidths:
    """Expected confidence-interval widths of ICC(A,1) and ICC(A,k) per study size.

    Attributes
    ----------
    rows : tuple of dict
        One per (items, raters): ``n_items``, ``n_raters``, the median width of the
        ICC(A,1) and ICC(A,k) intervals (``width_a1``, ``width_ak``), and the share of
        simulated intervals that covered the components' ICC (``coverage_a1``).
    confidence : float
        Coverage the intervals are built for.
    reps, seed : int
        Simulated studies per size, and the seed.
    """

    rows: tuple[dict[str, Any], ...]
    confidence: float
    reps: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """Return the table as plain Python types (JSON-ready)."""
        return {
            "confidence": self.confidence,
            "reps": self.reps,
            "seed": self.seed,
            "rows": list(self.rows),
        }


def icc_interval_widths(
    components: VarianceComponents,
    *,
    n_items: Any,
    n_raters: Any,
    confidence: float = 0.95,
    reps: int = 200,
    seed: int = 0,
) -> IntervalWidths:
    r"""Median width of the ICC(A,1) and ICC(A,k) intervals against items and raters.

    Simulates ``reps`` studies per size from the normal random-effects model with the
    given components, :math:`y_{ij} = \mu + a_i + b_j + e_{ij}`,
    :math:`a_i \sim N(0, \sigma^2_i)`, :math:`b_j \sim N(0, \sigma^2_r)`,
    :math:`e_{ij} \sim N(0, \sigma^2_e)`, and computes the McGraw and Wong intervals
    of :func:`annotator.metrics.icc` (``numpy.random.default_rng(seed)``).

    Parameters
    ----------
    components : VarianceComponents
        From :func:`variance_components` or stated.
    n_items, n_raters : int or sequence of int, keyword-only
        Study sizes (at least 2 each).
    confidence : float, keyword-only
        Coverage of the intervals.
    reps : int, keyword-only
        Simulated studies per size.
    seed : int, keyword-only
        Seed of the simulation.

    Returns
    -------
    IntervalWidths

    Raises
    ------
    ValueError
        If a size is below 2, ``reps`` is not positive, or the components are invalid.

    References
    ----------
    McGraw, K. O., and Wong, S. P. (1996). Psychological Methods, 1(1), 30-46.
    Bonett, D. G. (2002). Sample size requirements for estimating intraclass
    correlations with desired precision. Statistics in Medicine, 21(9), 1331-1335.
    """
    items = check_integers(n_items, name="n_items", low=2)
    raters = check_integers(n_raters, name="n_raters", low=2)
    reps = check_integer(reps, name="reps", low=1)
    truth = d_study(components, raters=1).absolute[0]
    s_i, s_r, s_e = (
        math.sqrt(v) for v in (components.items, components.raters, components.residual)
    )
    rng = np.random.default_rng(seed)
    rows = []
    for k in raters:
        for n in items:
            w1, wk, covered = [], [], 0
            for _ in range(reps):
                y = (
                    rng.normal(0, s_i, (n, 1))
                    + rng.normal(0, s_r, (1, k))
                    + rng.normal(0, s_e, (n, k))
                )
                res = icc(y, confidence=confidence)
                w1.append(res.ci_a1[1] - res.ci_a1[0])
                wk.append(res.ci_ak[1] - res.ci_ak[0])
                covered += res.ci_a1[0] <= truth <= res.ci_a1[1]
            rows.append(
                {
                    "n_items": n,
                    "n_raters": k,
                    "width_a1": float(np.nanmedian(w1)),
                    "width_ak": float(np.nanmedian(wk)),
                    "coverage_a1": covered / reps,
                }
            )
    return IntervalWidths(rows=tuple(rows), confidence=float(confidence), reps=reps, seed=seed)
