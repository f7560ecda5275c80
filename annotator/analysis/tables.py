"""The paper's tables (grading-scale paper, Tables 1-6) on a study's own data.

:func:`report_tables` turns :class:`~annotator.data.frames.StudyFrames` into
:class:`ReportTables`, one tidy DataFrame per table, through the functions of
``annotator.metrics`` (rows built in :mod:`.panels` and :mod:`.study_tables`);
:mod:`.table_files` writes them. A cell that cannot be computed (too few items, a missing cell, a
degenerate matrix) is NaN and ``ReportTables.notes`` says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
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
    "ReportTables",
    "alttest_table",
    "report_tables",
]


@dataclass
class ReportTables:
    """The report's tables, one tidy DataFrame each (NaN where not computable).

    Attributes
    ----------
    scales : pandas.DataFrame
        Table 2, one row per scale: ``scale, n_items`` (items of the complete human
        block), ``icc_a1_human, icc_ak_human`` (human panel), ``icc_a1_llm,
        icc_ak_llm`` (LLM panel on the same items), ``icc_human_llm`` (ICC(A,1) of
        [human mean, LLM ensemble mean]), ``nmae``, then ``n_raters, n_models,
        n_items_llm``, the ``*_low``/``*_high`` confidence bounds, ``pearson_r``.
    benchmarks : pandas.DataFrame
        Tables 3 and 4a, one row per benchmark and scale: the panels' ICCs, their
        differences ``delta_a1 = icc_a1_human - icc_a1_llm`` and ``delta_ak``, and
        ``icc_human_llm, nmae, pearson_r`` of the ensemble.
    models : pandas.DataFrame
        Table 4b, one row per scale and model at the main temperature:
        ``scale, model, temperature, icc_human_llm, nmae, n_items``, bounds,
        ``pearson_r``.
    inter_scale : pandas.DataFrame
        Table 1, long: ``benchmark`` (``"(all)"`` pools them), ``model``,
        ``comparison`` ("0-5, 0-10, 0-100" jointly or "0-5 vs 0-10"), ``icc_a1`` (of
        scores mapped to [0, 1]), ``n_items``. LLM scores of every item, not only the
        human-rated ones.
    inter_scale_average : pandas.DataFrame
        Table 1's Avg. column: ``benchmark, comparison, icc_a1_mean, n_models``.
    groups : pandas.DataFrame
        Table 5: ``group_by, group, scale, n_raters, n_items, icc_group_llm, nmae,
        icc_a1_within, icc_ak_within``.
    temperatures : pandas.DataFrame
        Table 6: ``model, scale, temperature, n_items, icc_human_llm, nmae`` for every
        temperature of every model (``temperature`` NaN: scores without one).
    alttest : pandas.DataFrame
        ``scale, model, epsilon, winning_rate, advantage_probability, passed, n_items,
        n_tested`` for each epsilon of the grid.
    items : pandas.DataFrame
        Per-item disagreement: ``scale, item, benchmark, human_mean, llm_mean, nmae``
        (|human mean - ensemble| over the range), ``poorly_aligned`` (nMAE above the
        paper's 0.1 threshold).
    worst_items : pandas.DataFrame
        The ``settings.worst_items`` largest per-item nMAEs of each scale.
    bootstrap : pandas.DataFrame
        ``statistic`` ("nmae" per scale, "icc_human_llm_difference" per pair of
        scales: ``scale_a`` minus ``scale_b``), ``estimate, low, high, confidence,
        n_items, n_resamples, n_undefined, seed``.
    figure2 : pandas.DataFrame
        The ICC-vs-nMAE diagnostic: ``benchmark, scale, model`` ("ensemble" or a
        model), ``icc_human_llm, nmae, pearson_r, n_items``.
    distributions : pandas.DataFrame
        Scores for the distribution plots: ``scale, kind`` ("human"/"llm"), ``who``
        (rater or model), ``group`` (the rater's ``group_by`` answer), ``item, value,
        share`` (value mapped to [0, 1]).
    retest : pandas.DataFrame
        Test-retest reliability per scale and rater (``rater`` ``"(pooled)"``: over
        every rater): ``scale, rater, n_items, alpha, icc_a1``.
    rater_quality : pandas.DataFrame
        Per scale and rater (:data:`annotator.analysis.rater_quality.QUALITY_COLUMNS`):
        leave-one-out agreement, attention checks, test-retest, timing and the
        straight-lining and speeding flags.
    judge_assisted : pandas.DataFrame
        Judge-assisted (PPI++) estimates of the human mean score per benchmark, scale
        and judge (:data:`annotator.analysis.judge_assisted.JUDGE_ASSISTED_COLUMNS`).
    notes : list of str
        Everything that could not be computed, and why.
    settings : dict
        The settings used (:meth:`AnalysisSettings.to_dict`) plus ``temperature`` as
        resolved and ``temperature_note`` saying how.
    consistency, correlations, kappa, cross_alpha, alttest_curves : pandas.DataFrame
        Self-consistency across runs, correlations, kappas and percent agreement,
        cross-group alpha and alt-test curves: see
        :mod:`annotator.analysis.agreement_tables`.
    """

    scales: pd.DataFrame
    benchmarks: pd.DataFrame
    models: pd.DataFrame
    inter_scale: pd.DataFrame
    inter_scale_average: pd.DataFrame
    groups: pd.DataFrame
    temperatures: pd.DataFrame
    alttest: pd.DataFrame
    items: pd.DataFrame
    worst_items: pd.DataFrame
    bootstrap: pd.DataFrame
    figure2: pd.DataFrame
    distributions: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    consistency: pd.DataFrame = field(default_factory=pd.DataFrame)
    correlations: pd.DataFrame = field(default_factory=pd.DataFrame)
    kappa: pd.DataFrame = field(default_factory=pd.DataFrame)
    cross_alpha: pd.DataFrame = field(default_factory=pd.DataFrame)
    alttest_curves: pd.DataFrame = field(default_factory=pd.DataFrame)
    rater_quality: pd.DataFrame = field(default_factory=pd.DataFrame)
    retest: pd.DataFrame = field(default_factory=pd.DataFrame)
    judge_assisted: pd.DataFrame = field(default_factory=pd.DataFrame)


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


def report_tables(
    frames: StudyFrames,
    *,
    settings: AnalysisSettings | None = None,
) -> ReportTables:
    """Compute every table of the report from a study's frames.

    The tables of :func:`annotator.analysis.study_analysis.analyse`, which builds them
    on the same panels as the rest of the study's analysis.

    Parameters
    ----------
    frames : StudyFrames
        The study, from :func:`annotator.data.frames.study_frames`.
    settings : AnalysisSettings, keyword-only
        Defaults to ``AnalysisSettings()``; for a stored study use
        :func:`annotator.analysis.settings.study_settings`.

    Returns
    -------
    ReportTables
    """
    from .study_analysis import REPORT_PARTS, analyse

    return analyse(frames, settings, parts=REPORT_PARTS).tables


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
