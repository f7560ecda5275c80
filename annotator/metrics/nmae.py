"""Normalised mean absolute error between two sets of scores."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._validation import check_nan_policy

__all__ = ["nmae"]


def _consensus(values: Any, *, name: str) -> np.ndarray:
    if hasattr(values, "to_numpy"):
        try:
            arr = values.to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must hold numbers (NaN for a missing score)") from exc
    else:
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must hold numbers (NaN for a missing score)") from exc
    if arr.ndim == 2:
        # One row per item: the item's consensus is the mean of its available scores.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows stay NaN
            arr = np.nanmean(arr, axis=1)
    elif arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one score per item) or 2-D (items x raters)")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values")
    return arr


def nmae(a: Any, b: Any, *, scale_min: float, scale_max: float, nan_policy: str = "raise") -> float:
    r"""Normalised mean absolute error between two sets of per-item scores.

    .. math::

        \mathrm{nMAE} = \frac{1}{R} \cdot \frac{1}{n} \sum_{i=1}^{n}
        \left| \bar{y}_i^{(a)} - \bar{y}_i^{(b)} \right|,
        \qquad R = \text{scale\_max} - \text{scale\_min}

    (grading-scale paper, equations 4-5), where :math:`\bar{y}_i` is the score of item
    :math:`i` or, for a 2-D input, the mean of its available scores across raters (the
    paper averages over the LLM judges on one side and the human raters on the other).
    It lies in [0, 1] when both sides use the scale.

    Parameters
    ----------
    a, b : array_like or pandas object
        Scores of the same ``n`` items in the same order: 1-D (one score per item) or
        2-D items x raters (averaged per item, ignoring missing cells).
    scale_min, scale_max : float, keyword-only
        Lowest and highest possible score of the rating scale.
    nan_policy : {"raise", "omit"}, keyword-only
        What to do with an item that has no score on one side: raise, or leave it out.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the scale is empty, the inputs have different numbers of items, an item is
        missing under ``nan_policy="raise"``, or no item is left.

    References
    ----------
    Grading Scale Impact on LLM-as-a-Judge: Human-LLM Alignment Is Highest on 0-5
    Grading Scale, section 3, equations 4-5.

    Examples
    --------
    >>> from annotator.metrics import nmae
    >>> nmae([1.0, 2.0, 4.0], [2.0, 2.0, 3.0], scale_min=0, scale_max=5)
    0.13333333333333333
    """
    check_nan_policy(nan_policy)
    try:
        low, high = float(scale_min), float(scale_max)
    except (TypeError, ValueError) as exc:
        raise ValueError("scale_min and scale_max must be numbers") from exc
    if not np.isfinite(low) or not np.isfinite(high) or high <= low:
        raise ValueError(
            f"scale_max must be greater than scale_min, got [{scale_min}, {scale_max}]"
        )
    x = _consensus(a, name="a")
    y = _consensus(b, name="b")
    if x.shape != y.shape:
        raise ValueError(f"a and b must score the same items: {x.shape[0]} != {y.shape[0]} items")
    missing = np.isnan(x) | np.isnan(y)
    if missing.any():
        if nan_policy == "raise":
            raise ValueError(
                f"{int(missing.sum())} item(s) have no score in a or b; pass nan_policy='omit'"
            )
        x, y = x[~missing], y[~missing]
    if x.size == 0:
        raise ValueError("a and b have no item scored on both sides")
    return float(np.mean(np.abs(x - y)) / (high - low))
