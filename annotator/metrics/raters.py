r"""Rater quality during collection: agreement with the others, straight-lining, speeding.

What a lead checks before the analysis to decide whether to exclude a rater: each
rater against the leave-one-out mean of the other raters (ICC(A,1) and the mean absolute
difference as a share of the scale's range), the share of items given the rater's most
frequent value (straight-lining), and the median seconds per item against the study's
(speeding). Pure functions on items x raters frames; no database.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._icc import icc
from ._validation import as_ratings_matrix
from .notes import quiet

__all__ = [
    "SPEEDING_FRACTION",
    "STRAIGHT_LINING_SHARE",
    "RaterQuality",
    "RaterQualityResult",
    "rater_quality",
]

#: Flag straight-lining when one value is given to at least this share of the items.
STRAIGHT_LINING_SHARE = 0.8
#: Flag speeding when the rater's median seconds per item is below this fraction of
#: the median over every rater's items.
SPEEDING_FRACTION = 0.3


@dataclass(frozen=True)
class RaterQuality:
    """One rater's quality figures on one scale.

    Attributes
    ----------
    rater : hashable
        The rater (column of the matrix).
    n_items : int
        Items the rater rated.
    n_compared : int
        Of those, items at least one other rater rated (the leave-one-out comparison).
    loo_icc_a1 : float
        ICC(A,1) of [the rater, the mean of the other raters] over the compared items;
        NaN with fewer than 2 of them.
    loo_mae_share : float
        Mean of ``|rater - mean of the others|`` over the compared items, divided by
        the scale's range; NaN without a compared item.
    modal_value : float
        The rater's most frequent value (ties: the smallest).
    modal_share : float
        Share of the rater's items given ``modal_value``.
    median_seconds : float
        Median seconds per item (NaN without timings).
    straight_lining, speeding : bool
        The flags: ``modal_share >= straight_share``; ``median_seconds`` below
        ``speed_fraction`` times the study median.
    """

    rater: Hashable
    n_items: int
    n_compared: int
    loo_icc_a1: float
    loo_mae_share: float
    modal_value: float
    modal_share: float
    median_seconds: float
    straight_lining: bool
    speeding: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types (NaN becomes None)."""
        return {k: _json(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class RaterQualityResult:
    """Every rater's :class:`RaterQuality` and the thresholds that flagged them.

    Attributes
    ----------
    raters : tuple of RaterQuality
        In the matrix's column order.
    study_median_seconds : float
        Median seconds per item over every rater's timed items (NaN without timings).
    straight_share, speed_fraction : float
        The thresholds used.
    """

    raters: tuple[RaterQuality, ...]
    study_median_seconds: float
    straight_share: float
    speed_fraction: float

    def rater(self, name: Hashable) -> RaterQuality:
        """The row of rater ``name``; ``KeyError`` when absent."""
        for row in self.raters:
            if row.rater == name:
                return row
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "study_median_seconds": _json(self.study_median_seconds),
            "straight_share": self.straight_share,
            "speed_fraction": self.speed_fraction,
            "raters": [r.to_dict() for r in self.raters],
        }


def _json(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _loo(values: np.ndarray, j: int, span: float) -> tuple[int, float, float]:
    """Compared items, ICC(A,1) and MAE share of column ``j`` against the others' mean."""
    own = values[:, j]
    others = np.delete(values, j, axis=1)
    counts = (~np.isnan(others)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, np.nansum(others, axis=1) / np.maximum(counts, 1), np.nan)
    both = ~np.isnan(own) & ~np.isnan(mean)
    n = int(both.sum())
    if n == 0:
        return 0, math.nan, math.nan
    mae = float(np.mean(np.abs(own[both] - mean[both]))) / span
    if n < 2:
        return n, math.nan, mae
    with quiet():
        # A constant pair (no variance) gives NaN, which is the honest value here.
        value = icc(np.column_stack([own[both], mean[both]])).icc_a1
    return n, float(value), mae


def _mode(values: np.ndarray) -> tuple[float, float]:
    present = values[~np.isnan(values)]
    if present.size == 0:
        return math.nan, math.nan
    found, counts = np.unique(present, return_counts=True)
    best = int(np.argmax(counts))  # np.unique sorts: ties go to the smallest value
    return float(found[best]), float(counts[best] / present.size)


def rater_quality(
    ratings: pd.DataFrame,
    *,
    scale_min: float,
    scale_max: float,
    seconds: pd.DataFrame | None = None,
    straight_share: float = STRAIGHT_LINING_SHARE,
    speed_fraction: float = SPEEDING_FRACTION,
) -> RaterQualityResult:
    r"""Per-rater agreement with the others, straight-lining and speeding.

    For rater :math:`j` with ratings :math:`x_{ij}` and :math:`\bar x_{i,-j}` the mean
    of the other raters of item :math:`i` (items rated by :math:`j` and by at least one
    other), the leave-one-out agreement is

    .. math::

        \mathrm{ICC}(A,1)\bigl([x_{\cdot j}, \bar x_{\cdot,-j}]\bigr),\qquad
        \mathrm{MAE}_j = \frac{1}{n_j}\sum_i \frac{|x_{ij} - \bar x_{i,-j}|}{\max - \min},

    the two-way absolute-agreement ICC of McGraw and Wong (1996, case 2A) with the
    rater and the others' mean as the two columns, and the nMAE of the grading-scale
    paper (section 3.2). A rater who disagrees with the consensus has a low ICC and a
    high MAE share. Straight-lining: the share :math:`\max_v \#\{i: x_{ij} = v\} / n_j`
    of the rater's items given one value is at least ``straight_share``. Speeding: the
    rater's median seconds per item is below ``speed_fraction`` times the median over
    every timed rating (Curran 2016, "Methods for the detection of carelessly invalid
    responses in survey data", recommends response time and long-string indices).

    Parameters
    ----------
    ratings : pandas.DataFrame
        Items x raters, NaN for a missing rating.
    scale_min, scale_max : float, keyword-only
        The scale's bounds (the MAE is divided by their difference).
    seconds : pandas.DataFrame, optional, keyword-only
        Seconds spent on each rating, same labels as ``ratings`` (NaN: unknown).
    straight_share : float, keyword-only
        In (0, 1]; default :data:`STRAIGHT_LINING_SHARE` (0.8).
    speed_fraction : float, keyword-only
        In (0, 1); default :data:`SPEEDING_FRACTION` (0.3).

    Returns
    -------
    RaterQualityResult

    Raises
    ------
    ValueError
        If ``ratings`` is not a DataFrame, ``scale_max <= scale_min``, or a threshold is
        out of range.
    References
    ----------
    McGraw, K. O. and Wong, S. P. (1996). Forming inferences about some intraclass
    correlation coefficients. Psychological Methods 1(1), 30-46.
    Curran, P. G. (2016). Methods for the detection of carelessly invalid responses in
    survey data. Journal of Experimental Social Psychology 66, 4-19.

    Examples
    --------
    >>> import pandas as pd
    >>> wide = pd.DataFrame({"a": [1, 2, 3, 4.0], "b": [1, 2, 4, 4.0], "c": [3, 3, 3, 3.0]})
    >>> result = rater_quality(wide, scale_min=0, scale_max=5)
    >>> [r.rater for r in result.raters if r.straight_lining]
    ['c']
    >>> # |a - mean(b, c)| = 1, 0.5, 0.5, 0.5: a mean of 0.625 over a range of 5
    >>> round(result.rater("a").loo_mae_share, 3)
    0.125
    """
    if not isinstance(ratings, pd.DataFrame):
        raise ValueError("ratings must be an items x raters pandas DataFrame")
    if not scale_max > scale_min:
        raise ValueError(f"scale_max ({scale_max}) must exceed scale_min ({scale_min})")
    if not 0.0 < straight_share <= 1.0:
        raise ValueError(f"straight_share must be in (0, 1], got {straight_share}")
    if not 0.0 < speed_fraction < 1.0:
        raise ValueError(f"speed_fraction must be in (0, 1), got {speed_fraction}")
    values = as_ratings_matrix(ratings)
    span = float(scale_max - scale_min)
    medians = pd.Series(np.nan, index=ratings.columns, dtype=float)
    study_median = math.nan
    if seconds is not None:
        timed = seconds.reindex(index=ratings.index, columns=ratings.columns).astype(float)
        timed = timed.where(ratings.notna())
        medians = timed.median(axis=0, skipna=True)
        pooled = timed.to_numpy().ravel()
        pooled = pooled[~np.isnan(pooled)]
        study_median = float(np.median(pooled)) if pooled.size else math.nan
    rows = []
    for j, rater in enumerate(ratings.columns):
        n_compared, loo_icc, mae = _loo(values, j, span)
        modal_value, modal_share = _mode(values[:, j])
        median = float(medians[rater])
        rows.append(
            RaterQuality(
                rater=rater,
                n_items=int((~np.isnan(values[:, j])).sum()),
                n_compared=n_compared,
                loo_icc_a1=loo_icc,
                loo_mae_share=mae,
                modal_value=modal_value,
                modal_share=modal_share,
                median_seconds=median,
                straight_lining=bool(modal_share >= straight_share),
                speeding=bool(median < speed_fraction * study_median),
            )
        )
    return RaterQualityResult(
        raters=tuple(rows),
        study_median_seconds=study_median,
        straight_share=float(straight_share),
        speed_fraction=float(speed_fraction),
    )
