"""The lead's study page, rendered for its own view and again, with the form's
problem beside it, by the export and export-job views."""

from __future__ import annotations

from flask import render_template

from ...collect.unshown_items import unshown_items
from ...db import get_session
from ...judge.history import cached_judge_run_summaries
from ...models import Study
from ...study.criteria import study_criteria
from ...study.studies import study_benchmarks, study_scales
from ...study.studyfile import validation_settings
from ..display import instructions_for
from .common import analysis_choices, recent_jobs

__all__ = ["live_of", "study_page"]

# How the study page's export form names each choice an ExportError is about.
EXPORT_FIELD_LABELS = {
    "format": "Format",
    "scale": "Scale",
    "benchmark": "Benchmark",
    "criterion": "Criterion",
    "temperature": "Temperature",
    "runs": "Runs",
    "where": "Only raters where",
}


def _instructions_by_scale(benchmarks, scales) -> list[tuple]:
    """Each benchmark with its instructions as raters read them, {min} and {max}
    filled from the scale; scales whose text reads the same are listed together."""
    # The rater's page's own function: the lead sees exactly what raters see.
    out = []
    for bench in benchmarks:
        texts: dict[str, list[str]] = {}
        for scale in scales:
            texts.setdefault(instructions_for(bench, scale), []).append(scale.name)
        out.append((bench, [(names, text) for text, names in texts.items()]))
    return out


def study_page(
    the_study: Study, *, chosen: dict | None = None, export_error=None, export_notes=None
):
    # The exporters (and with them pandas) are imported by the pages that use
    # them, not with the app: the CLI builds the app for every command.
    from ...data.exporters import FORMATS

    session = get_session()
    analysis = analysis_choices(the_study)
    error_message = None
    if export_error is not None:
        message = str(export_error)
        label = EXPORT_FIELD_LABELS[export_error.field]
        error_message = f"{message[:1].upper()}{message[1:]}: choose one under “{label}”."
    scales = study_scales(session, the_study)
    benchmarks = study_benchmarks(session, the_study)
    return render_template(
        "lead/study.html",
        study=the_study,
        scales=scales,
        benchmarks=benchmarks,
        criteria=study_criteria(session, the_study),
        instructions=_instructions_by_scale(benchmarks, scales),
        judge_runs=cached_judge_run_summaries(session, the_study),
        unshown=unshown_items(session, the_study),
        formats=FORMATS,
        chosen=chosen or {},
        export_error=error_message,
        export_notes=export_notes,
        export_error_field=export_error.field if export_error is not None else None,
        live=live_of(the_study, analysis),
        analysis=analysis,
        runs_choices=analysis["runs_choices"],
        stop_settings=validation_settings(the_study.source_toml or ""),
        jobs=recent_jobs(the_study),
    )


def live_of(the_study: Study, analysis: dict):
    from ...services.dashboards import live_dashboard

    # The first criterion by name when none was picked: one stored dashboard for the
    # page's default and the same criterion picked in the form.
    criteria = analysis.get("criteria") or [None]
    return live_dashboard(
        get_session(),
        the_study,
        settings=analysis["settings"],
        criterion=analysis.get("criterion") or criteria[0],
    )
