"""The dashboard's judge-assisted estimates: the human mean from all of a judge's scores.

The numbers are the report's ``judge_assisted`` table
(:func:`annotator.analysis.judge_assisted.judge_assisted_rows`), formatted as
:class:`~annotator.render.dashboard_types.Shown` s for the lead's page.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .dashboard_types import Shown, shown

__all__ = ["JudgeAssistedRow", "judge_assisted_rows_of"]


@dataclass(frozen=True)
class JudgeAssistedRow:
    """The human mean score of one benchmark on one scale, with and without one judge.

    Attributes
    ----------
    benchmark, scale, judge : str
    n_rated, n_unrated : int
        Items with a human rating, and items the judge alone scored.
    estimate : Shown
        The judge-assisted (PPI++) estimate of the human mean, with its interval.
    human_mean : Shown
        The mean human score of the rated items, with its interval.
    effective_n : Shown
        How many human-rated items the estimate is worth.
    """

    benchmark: str
    scale: str
    judge: str
    n_rated: int
    n_unrated: int
    estimate: Shown
    human_mean: Shown
    effective_n: Shown


def judge_assisted_rows_of(
    table: pd.DataFrame | None, *, confidence: float | None = None
) -> tuple[JudgeAssistedRow, ...]:
    """The rows of the report's ``judge_assisted`` table, as shown.

    ``confidence``: the coverage of the intervals (the study's setting).
    """
    if table is None:
        return ()
    return tuple(
        JudgeAssistedRow(
            benchmark=str(row.benchmark),
            scale=str(row.scale),
            judge=str(row.judge),
            n_rated=int(row.n_rated),
            n_unrated=int(row.n_unrated),
            estimate=shown(
                row.estimate,
                ci=(row.estimate_low, row.estimate_high),
                confidence=confidence,
            ),
            human_mean=shown(
                row.human_mean,
                ci=(row.human_mean_low, row.human_mean_high),
                confidence=confidence,
            ),
            effective_n=shown(row.effective_n, digits=0),
        )
        for row in table.itertuples(index=False)
    )
