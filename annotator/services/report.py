"""The study report of a stored study, and the bodies of the built-in job kinds: the
report and the exports made in memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..jobs.context import JobContext, JobOutput

if TYPE_CHECKING:
    from datetime import datetime

    from sqlmodel import Session

    from ..models import Study
    from ..render.report import Report

__all__ = ["build_export_job", "build_report", "build_report_job", "report_filename"]


def build_report_job(ctx: JobContext) -> JobOutput:
    """The study report (``annotator report``'s file) with the params' ``runs``,
    ``where`` and ``temperatures`` (single judges'; empty: the study's own settings)."""
    from ..data.temperatures import parse_judge_temperatures
    from .settings import study_settings_where

    settings = None
    runs, where = ctx.params.get("runs"), ctx.params.get("where")
    temperatures = ctx.params.get("temperatures")
    if runs or where or temperatures:
        overrides: dict = {"runs": runs} if runs else {}
        if temperatures:
            overrides["judge_temperatures"] = parse_judge_temperatures(temperatures)
        settings = study_settings_where(ctx.session, ctx.study, where or "", **overrides)
    report = build_report(ctx.session, ctx.study, settings=settings, progress=ctx.progress)
    return JobOutput(report.html.encode("utf-8"), report_filename(ctx.study), "text/html")


def build_export_job(ctx: JobContext) -> JobOutput:
    """An export of the study page's form (``format``, ``scale``, ``benchmark``,
    ``complete``, ``temperature``, ``runs``, ``where``, ``criterion``), as ``annotator
    export`` makes it."""
    from ..data.exporters import render_export
    from ..data.selection import parse_where

    params = ctx.params
    ctx.progress(0, 1, f"Building the {params['format']} export")
    rendered = render_export(
        ctx.session,
        ctx.study,
        params["format"],
        scale=params.get("scale") or None,
        benchmark=params.get("benchmark") or None,
        complete=bool(params.get("complete")),
        temperature=params.get("temperature"),
        runs=params.get("runs") or "mean",
        where=parse_where(params.get("where") or ""),
        criterion=params.get("criterion") or None,
    )
    ctx.progress(1, 1, "Done")
    return JobOutput(rendered.text.encode("utf-8"), rendered.filename, rendered.mimetype)


def report_filename(study: Study) -> str:
    return f"{study.slug}-report.html"


def build_report(
    session: Session,
    study: Study,
    *,
    settings: Any = None,
    generated_at: datetime | None = None,
    figure_format: str | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> Report:
    """Read the study, compute its tables and render the report.

    ``settings`` is an :class:`~annotator.analysis.settings.AnalysisSettings`; by
    default the study file's ``[validation]`` table. ``figure_format`` (``"png"``,
    ``"svg"`` or ``"pdf"``): also save each figure in that format, in
    :attr:`Report.figure_files`. ``progress(done, total, message)`` is told each
    step as it starts: reading, the statistics, the figures (each criterion's in a
    rubric study) and the page.
    """
    # Imported here: job kinds name this module, and the web app imports it for the
    # report's file name without pandas or matplotlib.
    from ..analysis.model import REPORT_PARTS
    from ..analysis.settings import study_settings
    from ..analysis.study_analysis import analyse
    from ..data.frames import study_frames
    from ..render.report import report_of

    # Reading, the statistics, the figures (one step per criterion), the page: the
    # number of criteria is known once the statistics are.
    total = 4

    def step(done: int, message: str) -> None:
        if progress is not None:
            progress(done, total, message)

    step(0, "Reading the ratings and scores")
    frames = study_frames(session, study)
    if settings is None:
        settings = study_settings(study)
    title = f"Report: {study.name}"
    step(1, "Computing the statistics")
    analysis = analyse(frames, settings, parts=REPORT_PARTS)
    total = 3 + max(len(analysis.by_criterion or {}), 1)
    report = report_of(
        analysis,
        title=title,
        study=study.slug,
        generated_at=generated_at,
        figure_format=figure_format,
        frames=frames,
        progress=lambda done, message: step(2 + done, message),
    )
    step(total, "Done")
    return report
