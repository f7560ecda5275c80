"""The analysis's result model: what :func:`annotator.analysis.analyse` returns.

A number the lead's dashboard shows, ``annotator report`` writes and the CLI prints
is one field of one :class:`StudyAnalysis` (per scale, a :class:`ScaleAnalysis`).
The display (:mod:`annotator.render`) reads these objects; it computes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from ..data.frames import BLOCK_DONE, BLOCK_IN_PROGRESS, BLOCK_NOT_STARTED, StudyFrames
from .panels import Panel
from .settings import AnalysisSettings

__all__ = [
    "BLOCK_STATES",
    "DASHBOARD_PARTS",
    "PARTS",
    "REPORT_PARTS",
    "ReportTables",
    "RubricTables",
    "RaterRecord",
    "Retest",
    "STATISTIC_COLUMNS",
    "ScaleAnalysis",
    "ScaleProgress",
    "Statistic",
    "StudyAnalysis",
]

#: A block's states, in the order the dashboard counts them.
BLOCK_STATES = (BLOCK_NOT_STARTED, BLOCK_IN_PROGRESS, BLOCK_DONE)

#: What :func:`analyse` can compute: per scale, then the tables of
#: :mod:`.agreement_tables` (``annotator agreement``), then every table of the report.
PARTS = (
    "progress",
    "reliability",
    "agreement",
    "alttest",
    "consistency",
    "agreement_tables",
    "tables",
    "judge_assisted",
)
#: What the lead's dashboard shows.
DASHBOARD_PARTS = (*PARTS[:5], "judge_assisted")
#: What the report needs: it shows no progress; its alt-test table has the study's
#: epsilon on its grid, and "alttest" gives the verdict table it opens with
#: (:func:`annotator.analysis.verdict.verdict_summary`).
REPORT_PARTS = (
    "reliability",
    "agreement",
    "alttest",
    "consistency",
    "agreement_tables",
    "tables",
    "judge_assisted",
)


@dataclass(frozen=True)
class RaterRecord:
    """One rater's progress on one scale (``median_seconds`` NaN: no served time)."""

    rater: str
    status: str
    block_position: int | None
    n_rated: int
    n_repeats: int
    median_seconds: float
    attention_passed: int
    attention_failed: int
    started_at: datetime | None
    completed_at: datetime | None


@dataclass(frozen=True)
class ScaleProgress:
    """Blocks and ratings of one scale.

    ``block_counts``: raters per block state; ``n_ratings``: first ratings of the
    study's ``n_items`` items (attention checks left out).
    """

    raters: tuple[RaterRecord, ...]
    block_counts: dict[str, int]
    last_completed_at: datetime | None
    n_items: int
    n_ratings: int


@dataclass(frozen=True)
class Retest:
    """Test-retest reliability of a scale: ``result`` of :func:`retest_reliability`,
    or None and ``reason``; ``n_repeated`` (rater, item) pairs were rated twice."""

    n_repeated: int
    result: Any
    reason: str | None


#: The columns of the report's ``statistics`` table (:attr:`ReportTables.statistics`).
STATISTIC_COLUMNS = ["scale", "statistic", "model", "value", "low", "high", "n_items", "about"]


@dataclass(frozen=True)
class Statistic:
    """One agreement statistic of a scale beyond the fixed fields of :class:`ScaleAnalysis`.

    The dashboard shows each as it is and the report writes each as a row of its
    ``statistics`` table, so a new statistic is one more of these, computed in
    :mod:`.per_scale`: no display class or report table copies its fields.

    Attributes
    ----------
    key : str
        Its name in the report's table (``"gwet_ac1"``).
    label : str
        Its name on the dashboard (``"Gwet's AC1"``).
    value : float or None
        None when it cannot be computed; ``reason`` says why.
    ci : tuple of float or None
        ``(low, high)`` at the study's ``confidence``.
    reason : str or None
    model : str or None
        None: the humans' agreement among themselves; else the judge compared with
        the humans.
    n_items : int
        The items it was computed on.
    about : str
        One sentence for the report: what it is computed on.
    """

    key: str
    label: str
    value: float | None
    ci: tuple[float, float] | None = None
    reason: str | None = None
    model: str | None = None
    n_items: int = 0
    about: str = ""


@dataclass(frozen=True)
class ScaleAnalysis:
    """One scale's analysis; a part not asked of :func:`analyse` is None (or empty).

    Attributes
    ----------
    scale : str
    scale_min, scale_max : float
    progress : ScaleProgress or None
    ratings : pandas.DataFrame
        Items x raters of first ratings (:func:`~.matrices.human_ratings`).
    panel : Panel or None
        The human block, its ICC, the LLM panel and the human-LLM agreement of the
        ensemble and of each model: Table 2's and Table 4b's rows.
    alpha : float or None
        Krippendorff's interval alpha over every first rating; ``alpha_reason`` says
        why it is None.
    retest : Retest or None
    llm : pandas.DataFrame or None
        Items x models at the main temperature (runs combined as the settings say).
    alttest : dict
        ``{model: AltTestPair}`` at the study's epsilon, scoring and q: the t-test and
        the anytime-valid verdict (:func:`annotator.metrics.alt_test_pair`).
    consistency : pandas.DataFrame or None
        This scale's rows of the report's ``consistency`` table.
    notes : tuple of str
        What could not be computed on this scale, and why.
    statistics : tuple of Statistic
        Further agreement statistics, of the humans and of each judge with them.
    """

    scale: str
    scale_min: float
    scale_max: float
    progress: ScaleProgress | None
    ratings: pd.DataFrame
    panel: Panel | None
    alpha: float | None
    alpha_reason: str | None
    retest: Retest | None
    llm: pd.DataFrame | None
    alttest: dict[str, Any]
    consistency: pd.DataFrame | None
    notes: tuple[str, ...]
    statistics: tuple[Statistic, ...] = ()


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
    statistics : pandas.DataFrame
        :data:`STATISTIC_COLUMNS`: every :class:`Statistic` of every scale, one row each.
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
    statistics: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=STATISTIC_COLUMNS)
    )


@dataclass(frozen=True)
class RubricTables:
    """The tables across a rubric study's criteria (see the module's docstring).

    Attributes
    ----------
    summary : pandas.DataFrame
        :data:`CRITERIA_SUMMARY_COLUMNS`: one row per criterion and scale.
    alttest : pandas.DataFrame
        :data:`CRITERIA_ALTTEST_COLUMNS`: per scale and model, one row per criterion,
        one over the criteria pooled (``criterion`` :data:`POOLED_CRITERIA`) and one
        with the criteria as domains (:data:`DOMAINS`: ``n_passed`` of ``n_domains``,
        the winning rate and advantage probability NaN), at the study's epsilon.
    correlations : pandas.DataFrame
        :data:`CRITERIA_CORRELATION_COLUMNS`: Spearman's rho between two criteria's
        scores of the same items, for the human mean (``who`` :data:`HUMANS`) and
        each model, with its Fisher-z interval at the study's confidence.
    notes : tuple of str
    """

    summary: pd.DataFrame
    alttest: pd.DataFrame
    correlations: pd.DataFrame
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class StudyAnalysis:
    """A study's analysis.

    Attributes
    ----------
    study : str
        The study's slug.
    settings : AnalysisSettings
    temperature : float or None
        The main LLM temperature; ``temperature_note`` says how it was chosen.
    temperature_note : str
    n_raters, n_items : int
        Raters (consented or imported, as selected) and items (attention checks out).
    scales : tuple of ScaleAnalysis
        In the study's order.
    consistency : pandas.DataFrame or None
        Every scale's self-consistency rows (the report's ``consistency`` table).
    agreement : dict or None
        The tables of :func:`~.agreement_tables.agreement_tables` (consistency,
        correlations, kappa, cross-group alpha) by ``ReportTables`` attribute; their
        notes in ``agreement_notes``.
    agreement_notes : tuple of str
    tables : ReportTables or None
        The report's tables (``parts`` with ``"tables"``), built on the same panels
        and agreement tables.
    frames : StudyFrames
        The frames analysed (raters selected by ``settings.where``; of ``criterion``
        alone in a rubric study).
    judge_assisted : pandas.DataFrame or None
        Judge-assisted (PPI++) estimates of the human mean per benchmark, scale and
        judge (:func:`~.judge_assisted.judge_assisted_rows`); empty when no benchmark
        is judged in full and rated in part.
    criterion : str
        The criterion these fields are of: "" in a study without ``[[criteria]]``,
        else the one asked of :func:`analyse` (by default the first).
    criteria : tuple of str
        The study's criteria in the study file's order (empty without ``[[criteria]]``).
    by_criterion : dict
        Each analysed criterion's own :class:`StudyAnalysis` by name (every criterion,
        or the one asked for); empty without ``[[criteria]]``.
    rubric : RubricTables or None
        The tables across criteria (:func:`~.criteria.rubric_tables`) when every
        criterion was analysed.
    """

    study: str
    settings: AnalysisSettings
    temperature: float | None
    temperature_note: str
    n_raters: int
    n_items: int
    scales: tuple[ScaleAnalysis, ...]
    consistency: pd.DataFrame | None
    agreement: dict[str, pd.DataFrame] | None
    agreement_notes: tuple[str, ...]
    tables: ReportTables | None
    frames: StudyFrames
    judge_assisted: pd.DataFrame | None = None
    criterion: str = ""
    criteria: tuple[str, ...] = ()
    by_criterion: dict[str, StudyAnalysis] = field(default_factory=dict)
    rubric: RubricTables | None = None

    def scale(self, name: str) -> ScaleAnalysis:
        """The part of one scale; ``KeyError`` if the study has none by that name."""
        for part in self.scales:
            if part.scale == name:
                return part
        raise KeyError(name)
