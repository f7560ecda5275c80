"""A judge's agreement with itself across grading scales (paper 000, Table 1)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ._icc import ICCResult, icc
from ._validation import as_scores, check_nan_policy, check_probability, counted

__all__ = ["InterScaleAgreement", "ScalePair", "inter_scale_agreement"]


@dataclass(frozen=True)
class ScalePair:
    """Absolute-agreement ICC between two scales (scores mapped to [0, 1])."""

    scale_a: Hashable
    scale_b: Hashable
    icc_a1: float
    n_items: int


@dataclass(frozen=True)
class InterScaleAgreement:
    """One judge's agreement with itself across grading scales (paper Table 1).

    Attributes
    ----------
    scales : tuple
        The scales compared, in the given order.
    icc_a1 : float
        ICC(A,1) of the items x scales matrix of rescaled scores (all scales jointly).
    joint : ICCResult
        The full result behind ``icc_a1``.
    n_items : int
        Items scored on every scale.
    pairs : tuple of ScalePair
        Each pair of scales, on the items scored on both.
    """

    scales: tuple[Hashable, ...]
    icc_a1: float
    joint: ICCResult
    n_items: int
    pairs: tuple[ScalePair, ...]


def inter_scale_agreement(
    scores: Any,
    *,
    bounds: Mapping[Hashable, tuple[float, float]],
    confidence: float = 0.95,
    nan_policy: str = "raise",
) -> InterScaleAgreement:
    r"""One judge's absolute agreement with itself across grading scales.

    Each scale's scores are mapped to [0, 1] by its bounds,
    :math:`x' = (x - \min_s) / (\max_s - \min_s)`, and the scales are treated as
    repeated measurements of the same judgment: ICC(A,1) (see :func:`icc`) of the
    items x scales matrix, for all scales jointly and for each pair (grading-scale
    paper, sections 4.3 and 5.1, Table 1).

    Parameters
    ----------
    scores : pandas.DataFrame
        Items x scales, columns named by scale (as in ``bounds``).
    bounds : mapping, keyword-only
        ``{scale: (min, max)}`` for every column of ``scores``.
    confidence : float, keyword-only
        Coverage of the ICC intervals.
    nan_policy : {"raise", "omit"}, keyword-only
        ``"omit"``: the joint ICC uses the items scored on every scale, each pair the
        items scored on both of its scales.

    Returns
    -------
    InterScaleAgreement

    Raises
    ------
    ValueError
        If ``scores`` has fewer than 2 scale columns, a column has no bounds or empty
        bounds, a score lies outside its scale, a score is missing under
        ``nan_policy="raise"``, or fewer than 2 items are left.

    References
    ----------
    Li, W., Zhao, M., Dong, W., et al. (2025). Grading Scale Impact on LLM-as-a-Judge:
    Human-LLM Alignment Is Highest on 0-5 Grading Scale, sections 4.3, 5.1.

    Examples
    --------
    >>> import pandas as pd
    >>> from annotator.metrics import inter_scale_agreement
    >>> frame = pd.DataFrame({"0-5": [1, 2, 4, 5], "0-100": [20, 40, 70, 100]})
    >>> res = inter_scale_agreement(frame, bounds={"0-5": (0, 5), "0-100": (0, 100)})
    >>> round(res.icc_a1, 4)
    0.9902
    """
    check_nan_policy(nan_policy)
    confidence = check_probability(confidence, name="confidence")
    if not isinstance(scores, pd.DataFrame):
        raise ValueError("scores must be a DataFrame with one column per scale")
    if scores.shape[1] < 2:
        raise ValueError(f"scores needs at least 2 scale columns, got {scores.shape[1]}")
    rescaled = {}
    for scale in scores.columns:
        if scale not in bounds:
            raise ValueError(f"bounds has no entry for scale {scale!r}")
        low, high = (float(v) for v in bounds[scale])
        if not high > low:
            raise ValueError(f"bounds of scale {scale!r} must have max > min, got {bounds[scale]}")
        column = as_scores(scores[scale], name=f"scores column {scale!r}")
        if ((column < low) | (column > high)).any():
            raise ValueError(f"scores column {scale!r} holds a score outside [{low:g}, {high:g}]")
        rescaled[scale] = (column - low) / (high - low)
    matrix = np.column_stack(list(rescaled.values()))
    if np.isnan(matrix).any() and nan_policy == "raise":
        raise ValueError(
            f"scores has {counted(int(np.isnan(matrix).any(axis=1).sum()), 'item')} missing a scale; "
            "pass nan_policy='omit'"
        )
    joint = icc(matrix, confidence=confidence, nan_policy="omit")
    pairs = []
    names = list(scores.columns)
    for (i, a), (j, b) in combinations(enumerate(names), 2):
        result = icc(matrix[:, [i, j]], confidence=confidence, nan_policy="omit")
        pairs.append(ScalePair(scale_a=a, scale_b=b, icc_a1=result.icc_a1, n_items=result.n))
    return InterScaleAgreement(
        scales=tuple(names), icc_a1=joint.icc_a1, joint=joint, n_items=joint.n, pairs=tuple(pairs)
    )
