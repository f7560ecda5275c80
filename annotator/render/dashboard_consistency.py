"""The dashboard's self-consistency rows: each model's agreement with itself across runs.

The numbers are the report's ``consistency`` table
(:func:`annotator.analysis.agreement_tables.consistency_rows`), formatted as
:class:`~annotator.render.dashboard_types.Shown` s for the lead's page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..analysis.matrices import temperature_label
from .dashboard_types import Shown, shown

__all__ = ["ConsistencyRow", "consistency_rows_of"]


@dataclass(frozen=True)
class ConsistencyRow:
    """One model at one temperature on one scale, across its runs.

    Attributes
    ----------
    model : str
    temperature : str
        As shown ("0.7", "not recorded").
    n_runs, n_items : int
        Runs, and items scored in at least two of them.
    alpha : Shown
        Krippendorff's alpha (interval) across the runs.
    icc_a1 : Shown
        ICC(A,1) across the runs, with its interval.
    identical : Shown
        Share of items given the same score in every run.
    """

    model: str
    temperature: str
    n_runs: int
    n_items: int
    alpha: Shown
    icc_a1: Shown
    identical: Shown


def _shown(value: float, note: str, **options) -> Shown:
    return shown(None if pd.isna(value) else float(value), reason=note or None, **options)


def consistency_rows_of(
    table: pd.DataFrame | None, *, confidence: float | None = None
) -> tuple[ConsistencyRow, ...]:
    """The rows of (a scale's part of) the report's ``consistency`` table, as shown.

    ``confidence``: the coverage of the ICC intervals (the study's setting).
    """
    if table is None:
        return ()
    out = []
    for row in table.itertuples(index=False):
        note = row.note or ""
        temperature = None if pd.isna(row.temperature) else float(row.temperature)
        interval = (row.icc_a1_low, row.icc_a1_high)
        out.append(
            ConsistencyRow(
                model=str(row.model),
                temperature=temperature_label(temperature),
                n_runs=int(row.n_runs),
                n_items=int(row.n_items),
                alpha=_shown(row.alpha_interval, note),
                icc_a1=_shown(
                    row.icc_a1,
                    note or "needs 2 items with every run",
                    ci=None if any(math.isnan(v) for v in interval) else interval,
                    confidence=confidence,
                ),
                identical=_shown(row.identical_share, note or "needs 2 items with every run"),
            )
        )
    return tuple(out)
