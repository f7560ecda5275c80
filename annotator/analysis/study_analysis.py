"""One analysis of a study: :func:`analyse` computes it, the dashboard and the report render it.

A number the lead's dashboard shows, ``annotator report`` writes and the CLI prints
is one field of one :class:`StudyAnalysis`: the human and LLM panels of a scale
(:func:`annotator.analysis.panels.build_panel`) give Table 2's row and the
dashboard's reliability and agreement, with the study's ``confidence``; the report's
other tables are built on the same panels (:mod:`annotator.analysis.tables`).
The dashboard asks only for the parts it shows (``parts``), computed by the same
functions.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..data.frames import StudyFrames
from ..data.selection import select_frames
from ..metrics import alt_test_pair, krippendorff_alpha, retest_reliability
from ..words import plural
from .agreement_tables import agreement_tables, consistency_rows
from .dashboard_types import BLOCK_STATES
from .judge_assisted import judge_assisted_rows
from .matrices import (
    Notes,
    caching_frames,
    human_ratings,
    llm_matrix,
    main_temperature,
    rater_dicts,
    retest_pairs,
)
from .panels import Panel, build_panel
from .settings import AnalysisSettings

if TYPE_CHECKING:
    from .criteria import RubricTables
    from .tables import ReportTables

__all__ = [
    "DASHBOARD_PARTS",
    "PARTS",
    "REPORT_PARTS",
    "RaterRecord",
    "Retest",
    "ScaleAnalysis",
    "ScaleProgress",
    "StudyAnalysis",
    "analyse",
]

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
#: What the report needs: its alt-test table has the study's epsilon on its grid, and
#: it shows no progress.
REPORT_PARTS = (
    "reliability",
    "agreement",
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


# ------------------------------------------------------------------ pieces


def _time(value: Any) -> datetime | None:
    return None if value is None or pd.isna(value) else value.to_pydatetime()


def _progress(frames: StudyFrames, scale: str, n_items: int) -> ScaleProgress:
    r = frames.ratings[frames.ratings["scale"] == scale]
    first = r[~r["is_repeat"] & ~r["is_attention_check"]]
    checks = r[r["is_attention_check"]]
    blocks = frames.blocks[frames.blocks["scale"] == scale].set_index("rater")
    seconds = (first["submitted_at"] - first["served_at"]).dt.total_seconds()
    per_rater_seconds = seconds.groupby(first["rater"]).median()
    rated = first.groupby("rater").size()
    repeats = r[r["is_repeat"]].groupby("rater").size()
    passed = checks[checks["attention_passed"] == True].groupby("rater").size()  # noqa: E712
    failed = checks[checks["attention_passed"] == False].groupby("rater").size()  # noqa: E712
    rows = []
    for rater in sorted(set(blocks.index) | set(r["rater"])):
        block = blocks.loc[rater] if rater in blocks.index else None
        rows.append(
            RaterRecord(
                rater=rater,
                status=block["status"] if block is not None else "no block",
                block_position=int(block["position"]) if block is not None else None,
                n_rated=int(rated.get(rater, 0)),
                n_repeats=int(repeats.get(rater, 0)),
                median_seconds=float(per_rater_seconds.get(rater, float("nan"))),
                attention_passed=int(passed.get(rater, 0)),
                attention_failed=int(failed.get(rater, 0)),
                started_at=_time(block["started_at"]) if block is not None else None,
                completed_at=_time(block["completed_at"]) if block is not None else None,
            )
        )
    counts = {state: int((blocks["status"] == state).sum()) for state in BLOCK_STATES}
    last = blocks["completed_at"].max() if len(blocks) else None
    return ScaleProgress(tuple(rows), counts, _time(last), n_items, int(len(first)))


def _alpha(wide: pd.DataFrame, notes: Notes, scale: str) -> tuple[float | None, str | None]:
    if wide.shape[1] < 2 or (wide.notna().sum(axis=1) >= 2).sum() < 1:
        return None, "alpha needs an item rated by at least 2 raters"
    value = notes.attempt(
        f"scale {scale}, Krippendorff's alpha", krippendorff_alpha, wide, level="interval"
    )
    return value, notes.last_error if value is None else None


def _retest(frames: StudyFrames, scale: str, notes: Notes) -> Retest:
    pairs, n_repeated = retest_pairs(frames, scale)
    if n_repeated < 2:
        return Retest(
            n_repeated,
            None,
            f"{plural(n_repeated, 'item')} rated twice so far; test-retest needs 2",
        )
    result = notes.attempt(f"scale {scale}, test-retest", retest_reliability, pairs)
    return Retest(n_repeated, result, notes.last_error if result is None else None)


def _alttest(wide: pd.DataFrame, llm: pd.DataFrame, settings: AnalysisSettings) -> dict:
    humans = rater_dicts(wide)
    out = {}
    for model in llm.columns:
        column = llm[model].dropna()
        scores = dict(zip(column.index.tolist(), column.tolist(), strict=True))
        # One scoring pass for the t-test and the anytime-valid verdict.
        out[model] = alt_test_pair(
            humans=humans,
            llm=scores,
            scoring=settings.scoring,
            epsilon=settings.epsilon,
            q=settings.q,
        )
    return out


def _scale(
    frames: StudyFrames,
    scale: str,
    temperature: float | None,
    settings: AnalysisSettings,
    parts: Collection[str],
    consistency: pd.DataFrame | None,
    n_items: int,
) -> ScaleAnalysis:
    notes = Notes()
    low, high = frames.scale_bounds(scale)
    wide = human_ratings(frames, scale)
    panel = None
    if {"reliability", "agreement", "tables"} & set(parts):
        panel = build_panel(
            frames, scale, benchmark=None, temperature=temperature, settings=settings, notes=notes
        )
    alpha = alpha_reason = retest = None
    if {"reliability", "tables"} & set(parts):
        alpha, alpha_reason = _alpha(wide, notes, scale)
        retest = _retest(frames, scale, notes)
    llm = None
    if {"agreement", "alttest"} & set(parts):
        llm = llm_matrix(frames, scale, temperature=temperature, runs=settings.runs)
        superseded = frames.llm_superseded.get(scale, 0)
        if superseded:
            notes.add(
                f"scale {scale}: {plural(superseded, 'LLM score')} asked under an older "
                f"prompt {'is' if superseded == 1 else 'are'} left out (each model's newest "
                "prompt is used)"
            )
    alttest = _alttest(wide, llm, settings) if "alttest" in parts else {}
    mine = None
    if consistency is not None:
        mine = consistency[consistency["scale"] == scale].reset_index(drop=True)
    return ScaleAnalysis(
        scale=scale,
        scale_min=low,
        scale_max=high,
        progress=_progress(frames, scale, n_items) if "progress" in parts else None,
        ratings=wide,
        panel=panel,
        alpha=alpha,
        alpha_reason=alpha_reason,
        retest=retest,
        llm=llm,
        alttest=alttest,
        consistency=mine,
        notes=tuple(notes),
    )


# ------------------------------------------------------------------ public


def analyse(
    frames: StudyFrames,
    settings: AnalysisSettings | None = None,
    *,
    parts: Collection[str] = PARTS,
    criterion: str | None = None,
) -> StudyAnalysis:
    """Compute a study's analysis from its frames.

    Parameters
    ----------
    frames : StudyFrames
        From :func:`annotator.data.frames.study_frames`.
    settings : AnalysisSettings, optional
        Defaults to ``AnalysisSettings()``; a stored study's are
        :func:`annotator.analysis.settings.study_settings`. Its ``confidence`` is the
        coverage of every interval, on the dashboard as in the report.
    parts : collection of str, keyword-only
        Which of :data:`PARTS` to compute (the dashboard: :data:`DASHBOARD_PARTS`, the
        report: :data:`REPORT_PARTS`); all by default.
    criterion : str, keyword-only
        In a study with ``[[criteria]]``: analyse this criterion alone (the
        dashboard's pick). By default every criterion is analysed on its own
        (``by_criterion``), the tables across them computed (``rubric``), and the
        analysis's own fields are the first criterion's. ``ValueError`` naming the
        study's criteria for an unknown one, or for any in a study without them.

    Returns
    -------
    StudyAnalysis
    """
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise ValueError(f"parts: unknown part {unknown[0]!r} (known: {', '.join(PARTS)})")
    settings = settings or AnalysisSettings()
    frames = caching_frames(select_frames(frames, settings.where_mapping))
    temperature, how = main_temperature(frames, settings.temperature, settings.judge_temperatures)
    from .criteria import criterion_names

    if criterion_names(frames) or criterion is not None:
        from .criteria_analysis import analyse_criteria

        return analyse_criteria(
            frames, settings, parts, criterion, temperature=temperature, how=how
        )
    return analyse_selected(frames, settings, parts, temperature=temperature, how=how)


def analyse_selected(
    frames: StudyFrames,
    settings: AnalysisSettings,
    parts: Collection[str],
    *,
    temperature: float | None,
    how: str,
) -> StudyAnalysis:
    """:func:`analyse` of frames already selected (and caching), at the main temperature."""
    n_items = int((~frames.items["is_attention_check"]).sum())
    consistency = None
    if {"consistency", "agreement_tables", "tables"} & set(parts):
        consistency = consistency_rows(frames, confidence=settings.confidence)
    scales = tuple(
        _scale(frames, s, temperature, settings, parts, consistency, n_items)
        for s in frames.scale_names
    )
    agreement, agreement_notes = None, Notes()
    if {"agreement_tables", "tables"} & set(parts):
        agreement = agreement_tables(
            frames, temperature, settings, agreement_notes, curves=False, consistency=consistency
        )
    tables = None
    if "tables" in parts:
        from .tables import tables_of

        tables = tables_of(frames, settings, temperature, how, scales, agreement, agreement_notes)
    judge_assisted = None
    if "judge_assisted" in parts:
        judge_assisted = judge_assisted_rows(frames, temperature, settings)
        if tables is not None:
            tables.judge_assisted = judge_assisted
    return StudyAnalysis(
        study=frames.study,
        settings=settings,
        temperature=temperature,
        temperature_note=how,
        n_raters=int(len(frames.demographics)),
        n_items=n_items,
        scales=scales,
        consistency=consistency,
        agreement=agreement,
        agreement_notes=tuple(agreement_notes),
        tables=tables,
        frames=frames,
        judge_assisted=judge_assisted,
    )
