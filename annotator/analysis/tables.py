"""The paper's tables (grading-scale paper, Tables 1-6) on a study's own data.

:func:`report_tables` turns :class:`~annotator.data.frames.StudyFrames` into
:class:`ReportTables`, one tidy DataFrame per table, through the functions of
``annotator.metrics`` (rows built in :mod:`.panels` and :mod:`.study_tables`);
:mod:`.table_files` writes them. A cell that cannot be computed (too few items, a missing cell, a
degenerate matrix) is NaN and ``ReportTables.notes`` says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..data.frames import StudyFrames
from ..data.selection import describe_where
from .agreement_tables import alttest_curve_rows
from .columns import (
    ALL_BENCHMARKS,
    BENCHMARKS_COLUMNS,
    FIGURE2_COLUMNS,
    MODELS_COLUMNS,
    NAN,
    POOLED,
    RETEST_COLUMNS,
    SCALES_COLUMNS,
)
from .matrices import Notes
from .model import STATISTIC_COLUMNS, ReportTables
from .panels import benchmark_row, build_panel, figure2_rows, models_rows, rows_frame, scales_row
from .rater_quality import rater_quality_table
from .settings import AnalysisSettings
from .study_tables import (
    alttest_rows,
    bootstrap_rows,
    distribution_rows,
    group_rows,
    inter_scale_rows,
    item_rows,
    temperature_rows,
)

__all__ = [
    "ALL_BENCHMARKS",
    "ALTTEST_TABLES",
    "alttest_table",
]


# ------------------------------------------------------------------ public

#: The alt-test table and its curves: a third of the tables' time, and independent of
#: the others (:func:`alttest_table`).
ALTTEST_TABLES = ("alttest", "alttest_curves")


def alttest_table(
    name: str, frames: StudyFrames, temperature: float | None, settings: AnalysisSettings
) -> tuple[pd.DataFrame, list[str]]:
    """The ``ReportTables`` attribute ``name`` of :data:`ALTTEST_TABLES`, and its notes.

    ``frames`` as :func:`report_tables` selects them. The notes are returned on their
    own to take their place in ``ReportTables.notes`` (the alt-test's after Table 6's,
    the curves' last).
    """
    notes = Notes()
    rows = alttest_rows if name == "alttest" else alttest_curve_rows
    return rows(frames, temperature, settings, notes), list(notes)


def _retest_rows(scales: Sequence[Any]) -> pd.DataFrame:
    rows = []
    for part in scales:
        retest = part.retest
        if retest is None or retest.result is None:
            continue
        for row in retest.result.raters:
            rows.append([part.scale, row.rater, row.n_items, row.alpha, row.icc_a1])
        result = retest.result
        rows.append([part.scale, POOLED, result.n_pairs, result.alpha, result.icc_a1])
    return rows_frame(rows, RETEST_COLUMNS)


def _statistic_rows(scales: Sequence[Any]) -> pd.DataFrame:
    """Every scale's :class:`~.model.Statistic` s, one row each (NaN where not computable)."""
    rows = []
    for part in scales:
        for s in part.statistics:
            low, high = s.ci if s.ci is not None else (NAN, NAN)
            value = NAN if s.value is None else s.value
            rows.append([part.scale, s.key, s.model, value, low, high, s.n_items, s.about])
    return rows_frame(rows, STATISTIC_COLUMNS)


def tables_of(
    frames: StudyFrames,
    settings: AnalysisSettings,
    temperature: float | None,
    how: str,
    scales: Sequence[Any],
    agreement: dict[str, pd.DataFrame],
    agreement_notes: Sequence[str],
) -> ReportTables:
    """The report's tables on the study's analysis (:func:`~.study_analysis.analyse`).

    ``frames`` selected and caching, ``temperature`` the main one and ``how`` its
    note, ``scales`` the :class:`~.study_analysis.ScaleAnalysis` of every scale (their
    panels give Table 2 and Table 4b), ``agreement`` the tables of
    :func:`~.agreement_tables.agreement_tables` and their notes.
    """
    # The notes of the tables before the alt-test's and of those after: merged with the
    # alt-test's in the order of the tables (Notes.add keeps the first of a repeat).
    notes, later = Notes(), Notes()
    for part in scales:
        for line in part.notes:
            notes.add(line)
    benchmarks = frames.benchmark_names
    options = {"temperature": temperature, "settings": settings, "notes": notes}
    pooled = {part.scale: part.panel for part in scales}
    scales_rows = [
        {**scales_row(part.scale, part.panel), "alpha_human": _alpha_value(part)} for part in scales
    ]
    bench_rows, figure_rows = [], []
    for benchmark in benchmarks:
        for s in pooled:
            p = build_panel(frames, s, benchmark=benchmark, **options)
            bench_rows.append(benchmark_row(benchmark, s, p))
            figure_rows += figure2_rows(benchmark, s, p)
    for s, p in pooled.items():
        figure_rows += figure2_rows(ALL_BENCHMARKS, s, p)
    model_rows = [row for s, p in pooled.items() for row in models_rows(s, temperature, p)]
    inter, inter_avg = inter_scale_rows(frames, temperature, notes, runs=settings.runs)
    items, worst = item_rows(frames, pooled, settings)
    used = settings.to_dict()
    used.update(
        {
            # One number when every judge is at one temperature, as before judges
            # had their own; else each judge's ("judge-a not recorded, judge-c 1").
            "temperature": temperature.single if temperature.uniform else temperature.label(),
            "temperature_note": how,
            "where": describe_where(settings.where_mapping),
        }
    )
    tables = ReportTables(
        scales=rows_frame(scales_rows, SCALES_COLUMNS),
        benchmarks=rows_frame(bench_rows, BENCHMARKS_COLUMNS),
        models=rows_frame(model_rows, MODELS_COLUMNS),
        inter_scale=inter,
        inter_scale_average=inter_avg,
        groups=group_rows(frames, pooled, settings, notes),
        temperatures=temperature_rows(frames, pooled, settings, notes),
        alttest=pd.DataFrame(),
        items=items,
        worst_items=worst,
        bootstrap=bootstrap_rows(frames, pooled, settings, later),
        **agreement,
        figure2=rows_frame(figure_rows, FIGURE2_COLUMNS),
        distributions=distribution_rows(frames, temperature, settings),
        settings=used,
        # One criterion's frames here: a rubric report names the criterion of each
        # row itself (criteria_analysis.combined_tables).
        rater_quality=rater_quality_table(frames, by_criterion=False).frame.drop(
            columns="criterion"
        ),
        retest=_retest_rows(scales),
        statistics=_statistic_rows(scales),
    )
    for line in agreement_notes:
        later.add(line)
    tables.alttest, alttest_notes = alttest_table("alttest", frames, temperature, settings)
    tables.alttest_curves, curve_notes = alttest_table(
        "alttest_curves", frames, temperature, settings
    )
    for line in (*alttest_notes, *later, *curve_notes):
        notes.add(line)
    tables.notes = list(notes)
    return tables


def _alpha_value(part: Any) -> float:
    return NAN if part.alpha is None else float(part.alpha)
