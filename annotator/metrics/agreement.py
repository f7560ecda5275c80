"""Agreement between human raters and LLM judges, between scales, and by rater group.

The analysis of the grading-scale paper (Li et al. 2025, section 3.2 and
Tables 1-6) as pure functions on arrays and DataFrames, built on :func:`icc` and
:func:`nmae`. Agreement of a judge with itself across scales is in
:mod:`.interscale`; bootstrap intervals over items in :mod:`.bootstrap`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._icc import ICCResult, icc
from ._nmae import nmae
from ._validation import as_float_array, check_nan_policy, check_probability, counted

__all__ = [
    "GroupAgreement",
    "HumanLLMAgreement",
    "ModelAgreement",
    "grouped_agreement",
    "human_llm_agreement",
]

ENSEMBLE = "ensemble"


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class ModelAgreement:
    """Agreement of one LLM (or the LLM ensemble) with the human consensus.

    Attributes
    ----------
    model : hashable
        The model's name (``"ensemble"`` for the mean over models).
    icc_a1 : float
        ICC(A,1) of the items x 2 matrix [human mean, model score].
    ci_a1 : tuple of float
        Its ``(low, high)`` confidence interval.
    nmae : float
        Mean absolute difference between the human mean and the model score, over the
        scale's range.
    pearson_r : float
        Pearson correlation of the two columns (Figure 2 of the paper: a high
        correlation with a low ICC shows an offset or a variance mismatch); NaN when a
        column is constant.
    n_items : int
        Items used.
    """

    model: Hashable
    icc_a1: float
    ci_a1: tuple[float, float]
    nmae: float
    pearson_r: float
    n_items: int


@dataclass(frozen=True)
class HumanLLMAgreement:
    """Human-LLM agreement on one scale: the LLM ensemble and each model.

    Attributes
    ----------
    ensemble : ModelAgreement
        The human mean against the mean over models (``model == "ensemble"``).
    models : tuple of ModelAgreement
        The human mean against each model, in the column order of ``llm``.
    n_raters : int
        Human raters averaged into the human mean.
    """

    ensemble: ModelAgreement
    models: tuple[ModelAgreement, ...]
    n_raters: int

    def model(self, name: Hashable) -> ModelAgreement:
        """The row of one model; ``KeyError`` if it was not given."""
        for row in self.models:
            if row.model == name:
                return row
        raise KeyError(name)


@dataclass(frozen=True)
class GroupAgreement:
    """One rater group's agreement with the LLMs and within itself (paper Table 5).

    Attributes
    ----------
    group : hashable
        The group's label (a demographic answer).
    raters : tuple
        The group's raters.
    agreement : HumanLLMAgreement
        The group's mean against the LLM ensemble and each model.
    within : ICCResult or None
        ICC of the group's items x raters matrix; None with fewer than 2 raters.
    reason : str or None
        Why ``within`` is None.
    """

    group: Hashable
    raters: tuple[Hashable, ...]
    agreement: HumanLLMAgreement
    within: ICCResult | None
    reason: str | None


# ----------------------------------------------------------------- inputs


def _named_columns(values: Any, *, name: str, default: str) -> tuple[np.ndarray, list, Any]:
    """``values`` as a 2-D float array, its column names and its index (None: array)."""
    index = getattr(values, "index", None) if hasattr(values, "to_numpy") else None
    if isinstance(values, pd.DataFrame):
        columns = list(values.columns)
    elif isinstance(values, pd.Series):
        columns = [values.name if values.name is not None else default]
    else:
        columns = None
    arr = as_float_array(values, name=name, ndim=(1, 2))
    if arr.ndim == 1:
        arr = arr[:, None]
    if columns is None:
        columns = [default] if arr.shape[1] == 1 else list(range(arr.shape[1]))
    return arr, columns, index


def _aligned(
    a: np.ndarray, a_index: Any, b: np.ndarray, b_index: Any, *, names: tuple[str, str]
) -> np.ndarray:
    """``b``'s rows in the order of ``a``'s items (pandas) or as they are (arrays)."""
    if a_index is not None and b_index is not None:
        for label, index in zip(names, (a_index, b_index), strict=True):
            if index.has_duplicates:
                raise ValueError(f"{label}'s index repeats item {index[index.duplicated()][0]!r}")
        missing = a_index.difference(b_index)
        if len(missing):
            raise ValueError(
                f"{names[1]} has no row for {counted(len(missing), 'item')} of {names[0]}, "
                f"e.g. {missing[0]!r}"
            )
        return b[b_index.get_indexer(a_index)]
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{names[0]} and {names[1]} must score the same items: "
            f"{a.shape[0]} != {b.shape[0]} rows"
        )
    return b


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def _pair(
    model: Hashable,
    human: np.ndarray,
    llm: np.ndarray,
    *,
    scale_min: float,
    scale_max: float,
    confidence: float,
) -> ModelAgreement:
    if human.size < 2:
        raise ValueError(f"model {model!r}: at least 2 items with a score on both sides are needed")
    result = icc(np.column_stack([human, llm]), confidence=confidence)
    return ModelAgreement(
        model=model,
        icc_a1=result.icc_a1,
        ci_a1=result.ci_a1,
        nmae=nmae(human, llm, scale_min=scale_min, scale_max=scale_max),
        pearson_r=_pearson(human, llm),
        n_items=int(human.size),
    )


# -------------------------------------------------------------- functions


def human_llm_agreement(
    humans: Any,
    llm: Any,
    *,
    scale_min: float,
    scale_max: float,
    confidence: float = 0.95,
    nan_policy: str = "raise",
) -> HumanLLMAgreement:
    r"""Agreement between the human consensus and the LLM ensemble, and each LLM.

    With the human mean :math:`\bar y^{(h)}_i = \frac{1}{R}\sum_r y_{ir}` and the
    ensemble mean :math:`\bar y^{(m)}_i = \frac{1}{L}\sum_\ell y_{i\ell}` of item
    :math:`i`, the ensemble agreement is ICC(A,1) of the :math:`n \times 2` matrix
    :math:`[\bar y^{(h)}, \bar y^{(m)}]` (see :func:`icc`) and

    .. math::

        \mathrm{nMAE} = \frac{1}{R_s}\cdot\frac{1}{n}\sum_i
        \left|\bar y^{(m)}_i - \bar y^{(h)}_i\right|,

    :math:`R_s` the scale's range; each model's agreement is the same with its own
    score in place of :math:`\bar y^{(m)}` (grading-scale paper, section 3.2 and
    equations 2, 5).

    Parameters
    ----------
    humans : array_like or pandas object
        Items x human raters (or one consensus score per item).
    llm : array_like or pandas object
        Items x models (columns named by model; or one score per item). Two pandas
        objects are paired by index (``llm`` must cover ``humans``' items); otherwise
        by position.
    scale_min, scale_max : float, keyword-only
        The scale's bounds.
    confidence : float, keyword-only
        Coverage of the ICC intervals.
    nan_policy : {"raise", "omit"}, keyword-only
        ``"omit"`` drops an item with a missing human rating everywhere, an item with a
        missing model score from the ensemble, and from that model's row.

    Returns
    -------
    HumanLLMAgreement

    Raises
    ------
    ValueError
        If a score is missing under ``nan_policy="raise"``, lies outside the scale,
        the inputs do not cover the same items, or fewer than 2 items are left (the
        message says so when it is because few items have every rater's rating).

    References
    ----------
    Li, W., Zhao, M., Dong, W., et al. (2025). Grading Scale Impact on LLM-as-a-Judge:
    Human-LLM Alignment Is Highest on 0-5 Grading Scale, section 3.2.
    McGraw, K. O., and Wong, S. P. (1996). Psychological Methods, 1(1), 30-46.

    Examples
    --------
    >>> from annotator.metrics import human_llm_agreement
    >>> humans = [[1, 2], [3, 3], [4, 5], [0, 1]]
    >>> llm = [[1.5, 2.0], [3.0, 3.5], [4.0, 4.0], [1.0, 0.5]]
    >>> res = human_llm_agreement(humans, llm, scale_min=0, scale_max=5)
    >>> round(res.ensemble.icc_a1, 4), round(res.ensemble.nmae, 4)
    (0.9789, 0.0625)
    """
    check_nan_policy(nan_policy)
    confidence = check_probability(confidence, name="confidence")
    h, _, h_index = _named_columns(humans, name="humans", default="human")
    m, models, m_index = _named_columns(llm, name="llm", default="llm")
    m = _aligned(h, h_index, m, m_index, names=("humans", "llm"))
    complete_h = ~np.isnan(h).any(axis=1)
    if not complete_h.all() and nan_policy == "raise":
        raise ValueError(
            f"humans has {counted(int((~complete_h).sum()), 'item')} with a missing rating; "
            "pass nan_policy='omit' to drop them"
        )
    complete_m = ~np.isnan(m).any(axis=1)
    if not complete_m.all() and nan_policy == "raise":
        raise ValueError(
            f"llm has {counted(int((~complete_m).sum()), 'item')} with a missing score; "
            "pass nan_policy='omit' to drop them"
        )
    if int(complete_h.sum()) < 2 and not complete_h.all():
        # Say why, rather than a model's "at least 2 items" below.
        raise ValueError(
            f"humans: {int(complete_h.sum())} of {counted(h.shape[0], 'item')} "
            f"{'has' if int(complete_h.sum()) == 1 else 'have'} every one of "
            f"the {h.shape[1]} raters' ratings; the human mean needs 2 such items"
        )
    h, m = h[complete_h], m[complete_h]
    human_mean = h.mean(axis=1)
    options = {"scale_min": scale_min, "scale_max": scale_max, "confidence": confidence}
    keep = ~np.isnan(m).any(axis=1)
    ensemble = _pair(ENSEMBLE, human_mean[keep], m[keep].mean(axis=1), **options)
    rows = []
    for j, model in enumerate(models):
        present = ~np.isnan(m[:, j])
        rows.append(_pair(model, human_mean[present], m[present, j], **options))
    return HumanLLMAgreement(ensemble=ensemble, models=tuple(rows), n_raters=int(h.shape[1]))


def grouped_agreement(
    humans: pd.DataFrame,
    llm: Any,
    *,
    groups: Mapping[Hashable, Hashable],
    scale_min: float,
    scale_max: float,
    confidence: float = 0.95,
) -> tuple[GroupAgreement, ...]:
    r"""Agreement split by a rater attribute: each group against the LLMs and within.

    For each group :math:`g` of raters (e.g. by self-reported gender), the group's
    mean :math:`\bar y^{(g)}_i` replaces the human mean in
    :func:`human_llm_agreement`, and the group's own items x raters matrix gives its
    within-group ICC (grading-scale paper, Table 5).

    Parameters
    ----------
    humans : pandas.DataFrame
        Items x raters (a complete matrix), columns named by rater.
    llm : array_like or pandas object
        Items x models, as in :func:`human_llm_agreement`.
    groups : mapping, keyword-only
        ``{rater: group}``; raters without an entry (or with a None/NaN group) are
        left out.
    scale_min, scale_max, confidence : keyword-only
        As in :func:`human_llm_agreement`.

    Returns
    -------
    tuple of GroupAgreement
        One per group, sorted by group label (as strings).

    Raises
    ------
    ValueError
        If ``humans`` is not a DataFrame, has a missing rating, or no rater has a
        group; and as :func:`human_llm_agreement`.

    References
    ----------
    Li, W., Zhao, M., Dong, W., et al. (2025). Grading Scale Impact on LLM-as-a-Judge:
    Human-LLM Alignment Is Highest on 0-5 Grading Scale, section 5.2, Table 5.
    """
    if not isinstance(humans, pd.DataFrame):
        raise ValueError("humans must be a DataFrame with one column per rater")
    if humans.isna().any().any():
        raise ValueError("humans has a missing rating; pass a complete items x raters matrix")
    members: dict[Hashable, list[Hashable]] = {}
    for rater in humans.columns:
        label = groups.get(rater)
        if label is None or (isinstance(label, float) and math.isnan(label)):
            continue
        members.setdefault(label, []).append(rater)
    if not members:
        raise ValueError("groups gives no group for any rater of humans")
    out = []
    for label in sorted(members, key=str):
        raters = members[label]
        sub = humans[raters]
        agreement = human_llm_agreement(
            sub, llm, scale_min=scale_min, scale_max=scale_max, confidence=confidence
        )
        within, reason = None, None
        if len(raters) < 2:
            reason = f"group {label!r} has {len(raters)} rater; within-group ICC needs 2"
        else:
            within = icc(sub, confidence=confidence)
        out.append(
            GroupAgreement(
                group=label, raters=tuple(raters), agreement=agreement, within=within, reason=reason
            )
        )
    return tuple(out)
