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

from ..data.frames import StudyFrames
from ..data.selection import select_frames
from .criteria import criterion_names
from .criteria_analysis import analyse_criteria
from .matrices import caching_frames, main_temperature
from .model import PARTS, REPORT_PARTS, ReportTables, StudyAnalysis
from .selected import analyse_selected
from .settings import AnalysisSettings

__all__ = ["analyse", "report_tables"]

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
    if criterion_names(frames) or criterion is not None:
        return analyse_criteria(
            frames, settings, parts, criterion, temperature=temperature, how=how
        )
    return analyse_selected(frames, settings, parts, temperature=temperature, how=how)


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
    return analyse(frames, settings, parts=REPORT_PARTS).tables
