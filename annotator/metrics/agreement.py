"""Agreement between human raters and LLM judges, between scales, and by rater group.

The analysis of the grading-scale paper (``shared/papers/000_*``, section 3.2 and
Tables 1-6) as pure functions on arrays and DataFrames, built on :func:`icc` and
:func:`nmae`, plus percentile-bootstrap intervals over items.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ._validation import check_integer, check_nan_policy, check_probability
from .icc import ICCResult, icc
from .nmae import nmae

__all__ = [
    "BootstrapInterval",
    "GroupAgreement",
    "HumanLLMAgreement",
    "InterScaleAgreement",
    "ModelAgreement",
    "ScalePair",
    "bootstrap_icc_difference",
    "bootstrap_nmae",
    "grouped_agreement",
    "human_llm_agreement",
    "inter_scale_agreement",
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


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile bootstrap interval over items.

    Attributes
    ----------
    estimate : float
        The statistic on the items as given.
    low, high : float
        The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
        statistic over the resamples where it is defined.
    confidence : float
        Coverage of the interval.
    n_resamples : int
        Resamples drawn.
    n_undefined : int
        Resamples where the statistic is undefined (a constant column), left out.
    n_items : int
        Items resampled.
    seed : int
        Seed of ``numpy.random.default_rng``.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    n_undefined: int
    n_items: int
    seed: int


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
    try:
        if hasattr(values, "to_numpy"):
            arr = values.to_numpy(dtype=float, na_value=np.nan)
        else:
            arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers (NaN for a missing score)") from exc
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D (one score per item) or 2-D (items x columns)")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values")
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
                f"{names[1]} has no row for {len(missing)} item(s) of {names[0]}, "
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
        the inputs do not cover the same items, or fewer than 2 items are left.

    References
    ----------
    Grading Scale Impact on LLM-as-a-Judge (shared/papers/000), section 3.2.
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
            f"humans has {int((~complete_h).sum())} item(s) with a missing rating; "
            "pass nan_policy='omit' to drop them"
        )
    complete_m = ~np.isnan(m).any(axis=1)
    if not complete_m.all() and nan_policy == "raise":
        raise ValueError(
            f"llm has {int((~complete_m).sum())} item(s) with a missing score; "
            "pass nan_policy='omit' to drop them"
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
    Grading Scale Impact on LLM-as-a-Judge (shared/papers/000), sections 4.3, 5.1.

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
        try:
            column = scores[scale].to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"scores column {scale!r} holds a score that is not a number") from exc
        if ((column < low) | (column > high)).any():
            raise ValueError(f"scores column {scale!r} holds a score outside [{low:g}, {high:g}]")
        rescaled[scale] = (column - low) / (high - low)
    matrix = np.column_stack(list(rescaled.values()))
    if np.isnan(matrix).any() and nan_policy == "raise":
        raise ValueError(
            f"scores has {int(np.isnan(matrix).any(axis=1).sum())} item(s) missing a scale; "
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
    Grading Scale Impact on LLM-as-a-Judge (shared/papers/000), section 5.2, Table 5.
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


def _bootstrap_options(n_resamples: int, confidence: float, seed: int) -> tuple[int, float, int]:
    n_resamples = check_integer(n_resamples, name="n_resamples", low=1)
    confidence = check_probability(confidence, name="confidence")
    seed = check_integer(seed, name="seed", low=0)
    return n_resamples, confidence, seed


def _interval(
    estimate: float,
    stats: np.ndarray,
    *,
    confidence: float,
    n_resamples: int,
    n_items: int,
    seed: int,
) -> BootstrapInterval:
    defined = stats[~np.isnan(stats)]
    if defined.size:
        low, high = np.quantile(defined, [(1 - confidence) / 2, (1 + confidence) / 2])
    else:
        low = high = math.nan
    return BootstrapInterval(
        estimate=float(estimate),
        low=float(low),
        high=float(high),
        confidence=confidence,
        n_resamples=n_resamples,
        n_undefined=int(stats.size - defined.size),
        n_items=n_items,
        seed=seed,
    )


def _vector(values: Any, *, name: str) -> np.ndarray:
    arr, _, _ = _named_columns(values, name=name, default=name)
    if arr.shape[1] != 1:
        raise ValueError(f"{name} must be 1-D (one score per item)")
    arr = arr[:, 0]
    if np.isnan(arr).any():
        raise ValueError(f"{name} has {int(np.isnan(arr).sum())} missing score(s)")
    return arr


def bootstrap_nmae(
    human: Any,
    llm: Any,
    *,
    scale_min: float,
    scale_max: float,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapInterval:
    r"""Percentile bootstrap interval for the nMAE, resampling items.

    Draws ``n_resamples`` samples of the :math:`n` items with replacement (indices
    ``numpy.random.default_rng(seed).integers(0, n, size=(n_resamples, n))``),
    computes :math:`\frac{1}{R}\frac{1}{n}\sum_i |h_i - m_i|` on each, and returns the
    :math:`(1 \mp c)/2` quantiles (Efron and Tibshirani 1993, chapter 13).

    Parameters
    ----------
    human, llm : array_like
        One score per item each (the human mean and the LLM score), paired by
        position.
    scale_min, scale_max : float, keyword-only
        The scale's bounds.
    n_resamples : int, keyword-only
        Bootstrap resamples (2000 by default).
    confidence : float, keyword-only
        Coverage of the interval.
    seed : int, keyword-only
        Seed of the generator, so the interval is reproducible.

    Returns
    -------
    BootstrapInterval

    Raises
    ------
    ValueError
        If a score is missing or outside the scale, the lengths differ, fewer than 2
        items are given, or an option is out of range.

    References
    ----------
    Efron, B., and Tibshirani, R. J. (1993). An Introduction to the Bootstrap.
    """
    n_resamples, confidence, seed = _bootstrap_options(n_resamples, confidence, seed)
    h, m = _vector(human, name="human"), _vector(llm, name="llm")
    if h.size != m.size:
        raise ValueError(f"human and llm must score the same items: {h.size} != {m.size}")
    if h.size < 2:
        raise ValueError(f"human needs at least 2 items, got {h.size}")
    estimate = nmae(h, m, scale_min=scale_min, scale_max=scale_max)
    errors = np.abs(h - m) / (float(scale_max) - float(scale_min))
    index = np.random.default_rng(seed).integers(0, h.size, size=(n_resamples, h.size))
    stats = errors[index].mean(axis=1)
    return _interval(
        estimate, stats, confidence=confidence, n_resamples=n_resamples, n_items=h.size, seed=seed
    )


def _icc_a1_batch(x: np.ndarray) -> np.ndarray:
    """ICC(A,1) of each ``x[b]`` (resamples x items x raters), as :func:`icc` computes it."""
    _, n, k = x.shape
    grand = x.mean(axis=(1, 2))
    rows = x.mean(axis=2)
    cols = x.mean(axis=1)
    msr = k * ((rows - grand[:, None]) ** 2).sum(axis=1) / (n - 1)
    msc = n * ((cols - grand[:, None]) ** 2).sum(axis=1) / (k - 1)
    resid = x - rows[:, :, None] - cols[:, None, :] + grand[:, None, None]
    mse = (resid**2).sum(axis=(1, 2)) / ((n - 1) * (k - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    # A resample of one repeated item has no item variance: ICC is 0/0 there.
    out[(msr == 0) & (mse == 0)] = np.nan
    return out


def bootstrap_icc_difference(
    human_a: Any,
    llm_a: Any,
    human_b: Any,
    llm_b: Any,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapInterval:
    r"""Percentile bootstrap interval for the difference in human-LLM ICC between two scales.

    The statistic is :math:`\Delta = \mathrm{ICC}(A,1)[h^a, m^a] -
    \mathrm{ICC}(A,1)[h^b, m^b]`, the human-LLM agreement on scale *a* minus that on
    scale *b*, the same items rated on both. Items are resampled jointly (one index
    draw serves both scales, ``numpy.random.default_rng(seed).integers(0, n,
    size=(n_resamples, n))``), so the interval accounts for the items being shared. An
    interval that excludes 0 says one scale aligns better on items like these.

    Parameters
    ----------
    human_a, llm_a, human_b, llm_b : array_like
        One score per item each (the human mean and the LLM score on each scale),
        paired by position.
    n_resamples, confidence, seed : keyword-only
        As in :func:`bootstrap_nmae`.

    Returns
    -------
    BootstrapInterval
        ``n_undefined`` counts resamples where either ICC is undefined.

    Raises
    ------
    ValueError
        If a score is missing, the lengths differ, fewer than 2 items are given, or an
        option is out of range.

    References
    ----------
    Efron, B., and Tibshirani, R. J. (1993). An Introduction to the Bootstrap.
    Grading Scale Impact on LLM-as-a-Judge (shared/papers/000), Table 2.
    """
    n_resamples, confidence, seed = _bootstrap_options(n_resamples, confidence, seed)
    columns = [
        _vector(v, name=name)
        for v, name in (
            (human_a, "human_a"),
            (llm_a, "llm_a"),
            (human_b, "human_b"),
            (llm_b, "llm_b"),
        )
    ]
    n = columns[0].size
    if any(c.size != n for c in columns):
        raise ValueError(
            "human_a, llm_a, human_b and llm_b must score the same items: lengths "
            + ", ".join(str(c.size) for c in columns)
        )
    if n < 2:
        raise ValueError(f"human_a needs at least 2 items, got {n}")
    a = np.column_stack(columns[:2])
    b = np.column_stack(columns[2:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        estimate = icc(a).icc_a1 - icc(b).icc_a1
    index = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    stats = np.empty(n_resamples)
    # In chunks, so memory stays near 2 MB per array whatever n_resamples is.
    chunk = max(1, 250_000 // n)
    for start in range(0, n_resamples, chunk):
        part = index[start : start + chunk]
        stats[start : start + chunk] = _icc_a1_batch(a[part]) - _icc_a1_batch(b[part])
    return _interval(
        estimate, stats, confidence=confidence, n_resamples=n_resamples, n_items=n, seed=seed
    )
