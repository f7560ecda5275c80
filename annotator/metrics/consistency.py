"""Self-consistency of an LLM judge across repeated runs (intra-rater reliability).

The Rating Roulette paper (Haldar and Hockenmaier, 2025, sections 3.3 and 4) scores the
same items several times with the same prompt and settings and asks how far the judge agrees with
itself: Krippendorff's alpha over the runs, and the share of items given the same score
in every run. ICC(A,1) across runs is the grading-scale paper's measure on the same
matrix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._icc import icc
from ._validation import as_ratings_matrix, check_probability, json_float
from .alpha import krippendorff_alpha
from .notes import collect_notes, degenerate

__all__ = ["CONSISTENCY_COLUMNS", "SelfConsistency", "self_consistency", "self_consistency_table"]


@dataclass(frozen=True)
class SelfConsistency:
    """How far one judge agrees with itself over repeated runs on the same items.

    Attributes
    ----------
    alpha_interval : float
        Krippendorff's alpha (interval) over the runs.
    alpha_ordinal, alpha_nominal : float
        Ordinal and nominal alpha; NaN unless every score is an integer.
    icc_a1 : float
        ICC(A,1) of the items x runs matrix (items with every run).
    ci_a1 : tuple of float
        Its interval.
    identical_share : float
        Share of the items with every run that got the same score in every run.
    n_items : int
        Items with at least 2 runs (alpha's pairable items).
    n_complete : int
        Items with every run (ICC and ``identical_share``).
    n_runs : int
        Runs (columns).
    integer : bool
        Whether every score is an integer (ordinal and nominal alpha computed).
    """

    alpha_interval: float
    alpha_ordinal: float
    alpha_nominal: float
    icc_a1: float
    ci_a1: tuple[float, float]
    identical_share: float
    n_items: int
    n_complete: int
    n_runs: int
    integer: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types (JSON-ready; NaN becomes None)."""
        out = asdict(self)
        out["ci_a1"] = [json_float(v) for v in self.ci_a1]
        return {k: json_float(v) if isinstance(v, float) else v for k, v in out.items()}


def self_consistency(
    runs: Any, *, integer: bool | None = None, confidence: float = 0.95
) -> SelfConsistency:
    r"""Self-consistency of one judge: alpha, ICC(A,1) and identical share across runs.

    ``runs`` holds one column per run of the same model, scale and temperature. Then

    - Krippendorff's alpha over the runs as raters (:func:`krippendorff_alpha`;
      interval, and for integer scores ordinal and nominal, the paper's choices for
      Likert and label scales);
    - ICC(A,1) of the complete items x runs matrix (:func:`icc`), the absolute
      agreement of one run with another;
    - :math:`\frac{1}{N}\sum_i [\max_r y_{ir} = \min_r y_{ir}]`, the share of items
      scored identically in every run (the paper's "gave the same judgment on all 3
      runs for only 61.3% of cases", section 4).

    A judge with low run-to-run variance scores close to 1 on all three; sampling
    noise lowers them.

    Parameters
    ----------
    runs : array_like or pandas.DataFrame
        Items x runs, NaN where a run has no score for the item.
    integer : bool, optional, keyword-only
        Compute ordinal and nominal alpha; by default when every score is an integer.
    confidence : float, keyword-only
        Coverage of the ICC interval.

    Returns
    -------
    SelfConsistency
        Constant scores (the judge always gives one value) have NaN alpha and ICC, with
        a ``RuntimeWarning``, and ``identical_share`` 1. With fewer than 2 complete items
        ICC and ``identical_share`` are NaN.

    Raises
    ------
    ValueError
        With fewer than 2 runs, no item scored in 2 runs, or ``integer=True`` with
        fractional scores.

    References
    ----------
    Haldar, R. and Hockenmaier, J. (2025). Rating Roulette: Self-Inconsistency in
    LLM-As-A-Judge Frameworks. Sections 3.3 and 4, Table 1.
    Yamauchi, Y., Yano, T. and Oyamada, M. (2025). An Empirical Study of
    LLM-as-a-Judge: How Design Choices Impact Evaluation Reliability. Alpha over
    repeated samples.
    """
    confidence = check_probability(confidence, name="confidence")
    x = as_ratings_matrix(runs, name="runs")
    if x.shape[1] < 2:
        raise ValueError(f"runs must hold at least 2 runs (columns), got {x.shape[1]}")
    present = ~np.isnan(x)
    pairable = present.sum(axis=1) >= 2
    if not pairable.any():
        raise ValueError("runs has no item scored in at least 2 runs")
    values = x[present]
    all_integer = bool(np.all(values == np.round(values)))
    if integer is None:
        integer = all_integer
    elif integer and not all_integer:
        raise ValueError("integer=True but runs holds fractional scores")
    complete = present.all(axis=1)
    block = x[complete]
    constant = float(np.ptp(values)) == 0.0
    if constant:
        degenerate(
            "every run gave the same score to every item: alpha and ICC are undefined (NaN)",
            stacklevel=2,
        )
    nan = math.nan
    icc_a1, ci_a1 = nan, (nan, nan)
    identical = nan
    if block.shape[0] >= 2:
        identical = float(np.mean(np.ptp(block, axis=1) == 0.0))
        if not constant:
            res = icc(block, confidence=confidence)
            icc_a1, ci_a1 = res.icc_a1, res.ci_a1
    return SelfConsistency(
        alpha_interval=krippendorff_alpha(x, level="interval"),
        alpha_ordinal=krippendorff_alpha(x, level="ordinal") if integer else nan,
        alpha_nominal=krippendorff_alpha(x, level="nominal") if integer else nan,
        icc_a1=icc_a1,
        ci_a1=ci_a1,
        identical_share=identical,
        n_items=int(pairable.sum()),
        n_complete=int(complete.sum()),
        n_runs=int(x.shape[1]),
        integer=bool(integer),
    )


CONSISTENCY_COLUMNS = [
    "n_runs",
    "n_items",
    "n_complete",
    "alpha_interval",
    "alpha_ordinal",
    "alpha_nominal",
    "icc_a1",
    "icc_a1_low",
    "icc_a1_high",
    "identical_share",
    "note",
]


def self_consistency_table(
    frame: pd.DataFrame,
    *,
    by: Sequence[str] = ("model", "scale", "temperature"),
    item: str = "item",
    run: str = "run",
    score: str = "value",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """:func:`self_consistency` of every group of a long frame of LLM scores.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per score, e.g. ``StudyFrames.llm`` (``item, model, scale,
        temperature, run, value``).
    by : sequence of str, keyword-only
        The columns that make one judge setting; a NaN ``temperature`` is its own group.
    item, run, score : str, keyword-only
        Column names.
    confidence : float, keyword-only

    Raises
    ------
    ValueError
        If a column is missing.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then ``CONSISTENCY_COLUMNS``, one row per group in order of
        first appearance. A group with one run, no item in two runs, or an item scored
        twice in one run has NaN statistics and a ``note`` saying why; the others have an empty note (or the
        warning of a degenerate group).
    """
    by = list(by)
    missing = [c for c in [*by, item, run, score] if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column {missing[0]!r}")
    rows = []
    for key, part in frame.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        cells = part.set_index([item, run])[score].astype(float)
        row: dict[str, Any] = dict(zip(by, key, strict=True))
        row.update({c: math.nan for c in CONSISTENCY_COLUMNS})
        if cells.index.has_duplicates:
            twice = cells.index[cells.index.duplicated()][0]
            row.update(
                n_runs=int(cells.index.get_level_values(1).nunique()),
                n_items=0,
                n_complete=0,
                note=f"item {str(twice[0])!r} has two scores in run {str(twice[1])!r}: give each "
                "repeated sample its own run",
            )
            rows.append(row)
            continue
        wide = cells.unstack(run)
        row.update(n_runs=int(wide.shape[1]), n_items=0, n_complete=0, note="")
        with collect_notes() as caught:
            try:
                res = self_consistency(wide, confidence=confidence)
            except ValueError as exc:
                row["note"] = str(exc)
                rows.append(row)
                continue
        row.update(
            n_items=res.n_items,
            n_complete=res.n_complete,
            alpha_interval=res.alpha_interval,
            alpha_ordinal=res.alpha_ordinal,
            alpha_nominal=res.alpha_nominal,
            icc_a1=res.icc_a1,
            icc_a1_low=res.ci_a1[0],
            icc_a1_high=res.ci_a1[1],
            identical_share=res.identical_share,
            note="; ".join(caught),
        )
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *CONSISTENCY_COLUMNS])
