"""The bodies of the built-in kinds: the study report and the exports made in memory."""

from __future__ import annotations

from ..jobs.context import JobContext, JobOutput

__all__ = ["build_report_job", "build_export_job"]


def build_report_job(ctx: JobContext) -> JobOutput:
    """The study report (``annotator report``'s file) with the params' ``runs``,
    ``where`` and ``temperatures`` (single judges'; empty: the study's own settings)."""
    from ..data.temperatures import parse_judge_temperatures
    from ..render.report import build_report, report_filename
    from .settings import study_settings_where

    settings = None
    runs, where = ctx.params.get("runs"), ctx.params.get("where")
    temperatures = ctx.params.get("temperatures")
    if runs or where or temperatures:
        overrides: dict = {"runs": runs} if runs else {}
        if temperatures:
            overrides["judge_temperatures"] = parse_judge_temperatures(temperatures)
        settings = study_settings_where(ctx.session, ctx.study, where or "", **overrides)
    ctx.progress(0, 1, "Reading the study, computing the tables and drawing the figures")
    report = build_report(ctx.session, ctx.study, settings=settings)
    ctx.progress(1, 1, "Done")
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
