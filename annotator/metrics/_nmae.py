"""Normalised mean absolute error between two sets of scores."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_float_array, check_nan_policy, counted

__all__ = ["nmae"]


def _scores(values: Any, *, name: str) -> tuple[np.ndarray, Any]:
    """``values`` as a float array (1-D or 2-D) and its pandas index (None for arrays)."""
    index = getattr(values, "index", None) if hasattr(values, "to_numpy") else None
    arr = as_float_array(values, name=name, ndim=(1, 2))
    return arr, index


def _check_bounds(arr: np.ndarray, index: Any, *, name: str, low: float, high: float) -> None:
    outside = (arr < low) | (arr > high)  # NaN compares False: missing is not outside
    if outside.any():
        pos = np.argwhere(outside)[0]
        item = index[pos[0]] if index is not None else int(pos[0])
        raise ValueError(
            f"{name} holds {counted(int(outside.sum()), 'score')} outside the scale "
            f"[{low:g}, {high:g}], "
            f"first {arr[tuple(pos)]:g} for item {item!r}"
        )


def _align(x: np.ndarray, x_index: Any, y: np.ndarray, y_index: Any) -> np.ndarray:
    """Reorder ``y`` to the items of ``x`` when both are pandas objects."""
    if x_index is None or y_index is None:
        return y  # an array has no labels: pair by position
    for name, index in (("a", x_index), ("b", y_index)):
        if index.has_duplicates:
            raise ValueError(f"{name}'s index repeats item {index[index.duplicated()][0]!r}")
    only_a = x_index.difference(y_index)
    only_b = y_index.difference(x_index)
    if len(only_a) or len(only_b):
        raise ValueError(
            f"a and b index different items ({len(only_a)} only in a, {len(only_b)} only in "
            f"b, e.g. {(list(only_a) + list(only_b))[0]!r}); select the common items first"
        )
    return y[y_index.get_indexer(x_index)]


def _consensus(arr: np.ndarray) -> np.ndarray:
    if arr.ndim == 2:
        # One row per item: the item's consensus is the mean of its available scores;
        # an all-NaN row stays NaN. numpy.nanmean's sum and count, without its
        # "Mean of empty slice" warning (catching it is not thread-safe).
        present = ~np.isnan(arr)
        counts = present.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            arr = np.where(present, arr, 0.0).sum(axis=1) / counts
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
        Scores of the same ``n`` items: 1-D (one score per item) or 2-D items x raters
        (averaged per item, ignoring missing cells). Two pandas objects are paired by
        their index (which must hold the same items, in any order); otherwise by
        position.
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
        If the scale is empty, a score lies outside it, the inputs have different
        numbers of items or (pandas) different index labels, an item is missing under
        ``nan_policy="raise"``, or no item is left.

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
    x, x_index = _scores(a, name="a")
    y, y_index = _scores(b, name="b")
    _check_bounds(x, x_index, name="a", low=low, high=high)
    _check_bounds(y, y_index, name="b", low=low, high=high)
    x, y = _consensus(x), _consensus(y)
    y = _align(x, x_index, y, y_index)
    if x.shape != y.shape:
        raise ValueError(f"a and b must score the same items: {x.shape[0]} != {y.shape[0]} items")
    missing = np.isnan(x) | np.isnan(y)
    if missing.any():
        if nan_policy == "raise":
            raise ValueError(
                f"{counted(int(missing.sum()), 'item')} "
                f"{'has' if int(missing.sum()) == 1 else 'have'} no score in a or b; "
                "pass nan_policy='omit'"
            )
        x, y = x[~missing], y[~missing]
    if x.size == 0:
        raise ValueError("a and b have no item scored on both sides")
    return float(np.mean(np.abs(x - y)) / (high - low))
