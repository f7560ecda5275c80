"""Intra-rater (test-retest) reliability from repeated ratings of the same items."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._icc import icc
from ._names import LEVELS
from .alpha import krippendorff_alpha

__all__ = ["RaterRetest", "RetestResult", "retest_reliability"]


@dataclass(frozen=True)
class RaterRetest:
    """One rater's agreement with themselves.

    Attributes
    ----------
    rater : hashable
        The rater.
    n_items : int
        Items this rater rated at least twice (the pairs used).
    alpha : float
        Krippendorff's alpha between the first and the second rating of those items
        (NaN with fewer than 2 items or no variation).
    icc_a1 : float
        ICC(A,1) of the items x 2 occasions matrix (NaN with fewer than 2 items).
    """

    rater: Hashable
    n_items: int
    alpha: float
    icc_a1: float

    def to_dict(self) -> dict[str, Any]:
        """Return the row as plain Python types (JSON-ready; NaN becomes None)."""
        return {
            "rater": self.rater,
            "n_items": self.n_items,
            "alpha": _json(self.alpha),
            "icc_a1": _json(self.icc_a1),
        }


@dataclass(frozen=True)
class RetestResult:
    """Test-retest reliability per rater and pooled over raters.

    Attributes
    ----------
    raters : tuple of RaterRetest
        One row per rater with at least one repeated item, in order of first
        appearance.
    alpha : float
        Krippendorff's alpha over every (rater, item) pair of first and second rating.
    icc_a1 : float
        ICC(A,1) of the (rater, item) pairs x 2 occasions matrix.
    n_pairs : int
        (rater, item) pairs with a first and a second rating.
    n_single : int
        (rater, item) pairs rated only once (not used).
    n_extra : int
        Ratings beyond the second of a (rater, item) pair (not used).
    level : str
        Krippendorff's alpha metric.
    """

    raters: tuple[RaterRetest, ...]
    alpha: float
    icc_a1: float
    n_pairs: int
    n_single: int
    n_extra: int
    level: str

    def to_dict(self) -> dict[str, Any]:
        """Return the result as plain Python types (JSON-ready)."""
        return {
            "alpha": _json(self.alpha),
            "icc_a1": _json(self.icc_a1),
            "n_pairs": self.n_pairs,
            "n_single": self.n_single,
            "n_extra": self.n_extra,
            "level": self.level,
            "raters": [row.to_dict() for row in self.raters],
        }


def _json(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _pair_statistics(pairs: np.ndarray, level: str) -> tuple[float, float]:
    """Alpha and ICC(A,1) of an n x 2 (first, second) matrix; NaN where undefined."""
    if pairs.shape[0] < 2:
        return float("nan"), float("nan")
    alpha = krippendorff_alpha(pairs, level=level)
    icc_a1 = icc(pairs).icc_a1
    return float(alpha), float(icc_a1)


def retest_reliability(
    ratings: Any,
    *,
    rater: str = "rater",
    item: str = "item",
    score: str = "score",
    occasion: str = "occasion",
    level: str = "interval",
) -> RetestResult:
    r"""Intra-rater reliability: each rater's first rating of an item against the second.

    The app collects test-retest repeats (the same item rated again in a later
    session). For each (rater, item) pair the ratings are ordered by ``occasion`` and
    the first two are kept: :math:`(y^{(1)}_{ri}, y^{(2)}_{ri})`. Per rater, the
    :math:`n_r \times 2` matrix of their pairs gives Krippendorff's alpha (units =
    items, coders = occasions),

    .. math::

        \alpha = 1 - \frac{D_o}{D_e},

    and the two-way ICC(A,1) with the two occasions as raters (McGraw and Wong 1996,
    case 2A),

    .. math::

        \mathrm{ICC}(A,1) = \frac{MS_I - MS_E}{MS_I + MS_E + \frac{2}{n}(MS_O - MS_E)};

    pooled, the same on the matrix stacking every rater's pairs (units = (rater, item)
    pairs, so differences between raters count as true variation between units, as in
    Rating Roulette's self-reliability of a judge over runs). Alpha is computed by
    :func:`krippendorff_alpha` and the ICC by :func:`icc`.

    Parameters
    ----------
    ratings : pandas.DataFrame or mapping of equal-length sequences
        A long table, one row per rating.
    rater, item, score, occasion : str, keyword-only
        Column names: who rated, what, the numeric score, and a sortable order of the
        ratings of a pair (a session number or a timestamp).
    level : {"nominal", "ordinal", "interval", "ratio"}, keyword-only
        Krippendorff's alpha metric (interval for fractional scales).

    Returns
    -------
    RetestResult

    Raises
    ------
    ValueError
        If a column is missing, a score is not a number or missing, ``level`` is
        unknown, or fewer than 2 (rater, item) pairs were rated twice.

    References
    ----------
    Haldar, R., and Hockenmaier, J. (2025). Rating Roulette: Self-Inconsistency in LLM-As-A-Judge
    Frameworks (intra-rater reliability with Krippendorff's alpha; Appendix B).
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.
    McGraw, K. O., and Wong, S. P. (1996). Forming inferences about some intraclass
    correlation coefficients. Psychological Methods, 1(1), 30-46.

    Examples
    --------
    >>> from annotator.metrics import retest_reliability
    >>> long = {
    ...     "rater": ["a"] * 6,
    ...     "item": [1, 2, 3, 1, 2, 3],
    ...     "score": [1.0, 3.0, 5.0, 1.5, 3.0, 4.5],
    ...     "occasion": [1, 1, 1, 2, 2, 2],
    ... }
    >>> round(retest_reliability(long).raters[0].alpha, 3)
    0.967
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    if isinstance(ratings, Mapping):
        try:
            ratings = pd.DataFrame(dict(ratings))
        except ValueError as exc:
            raise ValueError(f"ratings columns must have equal lengths ({exc})") from exc
    if not isinstance(ratings, pd.DataFrame):
        raise ValueError("ratings must be a DataFrame or a mapping of columns")
    missing = [c for c in (rater, item, score, occasion) if c not in ratings.columns]
    if missing:
        raise ValueError(
            f"ratings lacks the {'column' if len(missing) == 1 else 'columns'} "
            f"{', '.join(map(repr, missing))} (see rater=, item=, ...)"
        )
    try:
        values = pd.to_numeric(ratings[score], errors="raise").astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"column {score!r} holds a score that is not a number") from exc
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise ValueError(f"column {score!r} has a missing score (row {row})")
    frame = pd.DataFrame(
        {"rater": ratings[rater], "item": ratings[item], "score": values, "occ": ratings[occasion]}
    )
    frame = frame.sort_values("occ", kind="stable")
    frame["rank"] = frame.groupby(["rater", "item"], sort=False).cumcount()
    counts = frame.groupby(["rater", "item"], sort=False).size()
    first = frame[frame["rank"] == 0].set_index(["rater", "item"])["score"]
    second = frame[frame["rank"] == 1].set_index(["rater", "item"])["score"]
    pairs = pd.concat([first.rename("first"), second.rename("second")], axis=1, join="inner")
    if len(pairs) < 2:
        raise ValueError(
            # metrics imports nothing of the app (not annotator.words): the plural here.
            f"ratings has {len(pairs)} (rater, item) pair{'' if len(pairs) == 1 else 's'} "
            "rated twice; "
            "at least 2 are needed"
        )
    order = pd.unique(ratings[rater])
    rows = []
    for code in order:
        if code not in pairs.index.get_level_values(0):
            continue
        mine = pairs.xs(code, level=0).to_numpy()
        alpha, icc_a1 = _pair_statistics(mine, level)
        rows.append(RaterRetest(rater=code, n_items=len(mine), alpha=alpha, icc_a1=icc_a1))
    alpha, icc_a1 = _pair_statistics(pairs.to_numpy(), level)
    return RetestResult(
        raters=tuple(rows),
        alpha=alpha,
        icc_a1=icc_a1,
        n_pairs=len(pairs),
        n_single=int((counts == 1).sum()),
        n_extra=int((counts - 2).clip(lower=0).sum()),
        level=level,
    )
