"""The lead's job pages: the report (and large exports) built as jobs, and each job's page.

Starting a job is a POST (it writes a job row); the request only looks for a job
doing the same work on the same data and otherwise adds one, so it answers at once
whatever the study's size. The job page refreshes itself until the job ends: a
``<meta http-equiv=refresh>`` without JavaScript, an htmx-polled fragment (the
partial the page includes) with it.

Who may do what: every member of the study (analysts too) may build the report
and the exports, since both only read; cancelling or rerunning a job is for the
study's owners and for the lead who started it, as long as their current role
would let them start it (a judge run: owners only).
"""

from __future__ import annotations

from flask import (
    Response,
    abort,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user

from ...db import get_session
from ...jobs import (
    TooManyJobs,
    cancel_job,
    find_current_job,
    find_job,
    job_result_data,
    request_job,
    rerun_job,
)
from ...models import Study, StudyRole
from ..auth.access import lead_required
from ..downloads import attachment
from . import bp
from .common import (
    INTERNAL_KINDS,
    analysis_choices,
    export_choices,
    export_temperature,
    get_study_or_404,
)
from .judge_start import judge_job_context
from .study_page import study_page

__all__ = ["start_job_response", "large_export_response"]


def _report_params(the_study: Study) -> dict | None:
    """The report's options from the request (runs, where), checked; None (with a
    message flashed) when they do not fit the study."""
    analysis = analysis_choices(the_study)
    if analysis["error"]:
        # Shown beside the settings form (see _refused_report), with the problem.
        flash("The report was not started.", "error:analysis-settings")
        return None
    # The report has every criterion: the dashboard's pick is not one of its options
    # (it would only keep the same report apart under another key).
    return {k: v for k, v in analysis["args"].items() if k != "criterion"}


def start_job_response(the_study: Study, kind: str, params: dict) -> Response:
    """Join or start the job and send the lead to its page (the caller checked access)."""
    session = get_session()
    try:
        job, _ = request_job(session, the_study, kind, params, created_by=current_user.id)
    except TooManyJobs as exc:
        session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("lead.study", slug=the_study.slug), code=303)
    session.commit()
    return redirect(url_for("lead.job_page", slug=the_study.slug, job_id=job.id))


@bp.route("/studies/<slug>/report")
@lead_required
def report(slug: str):
    """The report with the query's settings: its job's page if one is under way or
    done for the current data, else a page with the button that starts it."""
    the_study = get_study_or_404(slug)
    params = _report_params(the_study)
    if params is None:
        return _refused_report(slug)
    return _current_job_or_offer(
        the_study, "report", params, url_for("lead.report_start", slug=slug, **params)
    )


def _current_job_or_offer(the_study: Study, kind: str, params: dict, action: str):
    """The page of the job doing this work on the current data, else the page with the
    button (a POST to ``action``) that starts it: a GET changes nothing."""
    job = find_current_job(get_session(), the_study, kind, params)
    if job is not None:
        return redirect(url_for("lead.job_page", slug=the_study.slug, job_id=job.id))
    return render_template(
        "lead/job_start.html", study=the_study, params=params, what=kind, action=action
    )


@bp.route("/studies/<slug>/report", methods=["POST"])
@lead_required
def report_start(slug: str):
    the_study = get_study_or_404(slug)
    # The options come in the query string of the form's action, as for the GET.
    params = _report_params(the_study)
    if params is None:
        return _refused_report(slug)
    return start_job_response(the_study, "report", params)


def _refused_report(slug: str) -> Response:
    # The study page at its settings form, which shows the problem beside the field
    # (the choices are carried along), rather than at its top.
    return redirect(url_for("lead.study", slug=slug, _anchor="analysis-settings", **request.args))


def _ratings(the_study: Study) -> int:
    from sqlalchemy import func
    from sqlmodel import select

    from ...models import Rating, Scale

    return (
        get_session()
        .exec(
            select(func.count(Rating.id))
            .join(Scale, Scale.id == Rating.scale_id)
            .where(Scale.study_id == the_study.id)
        )
        .one()
    )


def _export_params(chosen: dict, temperature: float | None) -> dict:
    return {**chosen, "temperature": temperature}


def large_export_response(the_study: Study, chosen: dict, temperature: float | None):
    """For a study of at least ``EXPORT_JOB_MIN_RATINGS`` ratings (default 20,000): the
    export's job page if one is under way or done, else the page offering to build it
    as a job. None for a smaller study: its export is made in the request."""
    if _ratings(the_study) < int(current_app.config.get("EXPORT_JOB_MIN_RATINGS", 20_000)):
        return None
    params = _export_params(chosen, temperature)
    action = url_for("lead.export_start", slug=the_study.slug, _anchor="export", **request.args)
    return _current_job_or_offer(the_study, "export", params, action)


@bp.route("/studies/<slug>/export", methods=["POST"])
@lead_required
def export_start(slug: str):
    """Start (or join) the export of the query's choices as a job."""
    from ...data.exporters import ExportError

    the_study = get_study_or_404(slug)
    chosen = export_choices()
    try:
        temperature = export_temperature(chosen["temperature"])
    except ExportError as exc:
        # The form again, with the choices and the problem beside it (the action's
        # fragment opens the page there).
        return study_page(the_study, chosen=chosen, export_error=exc), 422
    return start_job_response(the_study, "export", _export_params(chosen, temperature))


def _job_or_404(slug: str, job_id: int):
    the_study = get_study_or_404(slug)
    job = find_job(get_session(), the_study, job_id)
    if job is None or job.kind in INTERNAL_KINDS:
        abort(404)
    return the_study, job


# Kinds only a study's owners may start (a judge run spends the endpoint's money
# and writes scores): cancelling or running one again is theirs alone too.
OWNER_KINDS = ("judge",)


def _may_change(job) -> bool:
    # The role held now, not when the job was started: an owner made analyst
    # keeps no right to run a paid judge again.
    if g.study_role == StudyRole.OWNER:
        return True
    return job.created_by == current_user.id and job.kind not in OWNER_KINDS


@bp.route("/studies/<slug>/jobs/<id:job_id>")
@lead_required
def job_page(slug: str, job_id: int):
    the_study, job = _job_or_404(slug, job_id)
    context = {"study": the_study, "job": job, "may_change": _may_change(job)}
    # A judge run's parameters and failures (the other kinds add nothing).
    context.update(judge_job_context(the_study, job))
    headers = {"Vary": "HX-Request", "Cache-Control": "no-store"}
    if request.headers.get("HX-Request"):
        return render_template("lead/_job.html", **context), headers
    return render_template("lead/job.html", **context), headers


@bp.route("/studies/<slug>/jobs/<id:job_id>/file")
@lead_required
def job_file(slug: str, job_id: int):
    the_study, job = _job_or_404(slug, job_id)
    data = job_result_data(get_session(), job)
    if data is None:
        # Not done, or its file replaced by a newer version's: the page says which.
        return redirect(url_for("lead.job_page", slug=slug, job_id=job_id))
    headers = {"Content-Disposition": attachment(job.result_filename or "result")}
    return Response(data, mimetype=job.result_mimetype, headers=headers)


@bp.route("/studies/<slug>/jobs/<id:job_id>/cancel", methods=["POST"])
@lead_required
def job_cancel(slug: str, job_id: int):
    the_study, job = _job_or_404(slug, job_id)
    if not _may_change(job):
        abort(403)
    session = get_session()
    if cancel_job(session, job):
        session.commit()
        flash("The job was cancelled.", "info")
    else:
        flash(f"The job had already ended ({job.status}).", "info")
    return redirect(url_for("lead.job_page", slug=slug, job_id=job_id))


@bp.route("/studies/<slug>/jobs/<id:job_id>/rerun", methods=["POST"])
@lead_required
def job_rerun(slug: str, job_id: int):
    the_study, job = _job_or_404(slug, job_id)
    if not _may_change(job):
        abort(403)
    session = get_session()
    try:
        rerun = rerun_job(session, job, by=current_user.id)
    except TooManyJobs as exc:
        session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("lead.job_page", slug=slug, job_id=job_id))
    if rerun:
        session.commit()
    else:
        flash(f"Only a failed or cancelled job runs again; this one is {job.status}.", "info")
    return redirect(url_for("lead.job_page", slug=slug, job_id=job_id))
