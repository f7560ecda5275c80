"""A judge run started from the study page, and what its job page shows of it.

The form offers the endpoints of the instance's ``JUDGE_ENDPOINTS`` by name
(annotator/judge/endpoints.py) and never takes an address; the run is a job
(annotator/jobs) whose body calls the runner of ``annotator judge``. Starting
one is for the study's owners: it spends the endpoint's money and writes scores.
"""

from __future__ import annotations

from flask import current_app, redirect, render_template, request, url_for
from flask_login import current_user

from ...db import get_session
from ...jobs import TooManyJobs
from ...judge.endpoints import judge_endpoints
from ...judge.job import KIND, JudgeRunParams, request_judge_run, run_failures
from ...models import Study
from ...study.studies import study_scales
from ...study.studyfile import validation_settings
from ..auth.access import lead_required
from . import bp
from .common import get_study_or_404
from .forms import JudgeRunForm

__all__ = ["judge_job_context"]


def _page(the_study: Study, form: JudgeRunForm, endpoints: dict, problems=(), status=200):
    page = render_template(
        "lead/judge_start.html",
        study=the_study,
        form=form,
        endpoints=endpoints,
        problems=list(problems),
    )
    return page, status


@bp.route("/studies/<slug>/judge", methods=["GET", "POST"])
@lead_required
def judge_start(slug: str):
    the_study = get_study_or_404(slug, owner=True)
    session = get_session()
    endpoints = judge_endpoints(current_app.config)
    scales = [scale.name for scale in study_scales(session, the_study)]
    form = JudgeRunForm()
    form.endpoint.choices = [("", "choose an endpoint")] + [(name, name) for name in endpoints]
    form.scales.choices = [(name, name) for name in scales]
    if request.method == "GET":
        temperature = validation_settings(the_study.source_toml).temperature
        form.temperature.data = 1.0 if temperature is None else temperature
        form.scales.data = scales
        if len(endpoints) == 1:
            form.endpoint.data = next(iter(endpoints))
        return _page(the_study, form, endpoints)
    posted = request.form.get("endpoint", "")
    if posted and posted not in endpoints:
        # Not a choice the page offered: a forged or stale form. Never an address.
        known = ", ".join(endpoints) or "none"
        problem = (
            f"Endpoint: {posted!r} is not one of this server's judge endpoints "
            f"(JUDGE_ENDPOINTS lists: {known}); nothing was started."
        )
        form.endpoint.data = ""
        return _page(the_study, form, endpoints, [problem], 400)
    if not form.validate():
        return _page(the_study, form, endpoints, form.problems(), 422)
    params = JudgeRunParams(
        endpoint=form.endpoint.data,
        model=form.model.data.strip(),
        # In the study's order, whatever the order posted.
        scales=tuple(name for name in scales if name in form.scales.data),
        runs=form.runs.data,
        temperature=form.temperature.data,
        limit=form.limit.data,
    )
    if not params.model:
        return _page(the_study, form, endpoints, ["Model: the model name is empty."], 422)
    try:
        job, _ = request_judge_run(session, the_study, params, created_by=current_user.id)
    except TooManyJobs as exc:
        session.rollback()
        return _page(the_study, form, endpoints, [str(exc)], 429)
    session.commit()
    return redirect(url_for("lead.job_page", slug=slug, job_id=job.id), code=303)


def judge_job_context(the_study: Study, job) -> dict:
    """What the job page adds for a judge run: its parameters and its failures so far."""
    if job.kind != KIND:
        return {}
    params = JudgeRunParams.from_json(job.params)
    failures = []
    if job.started_at is not None:
        failures = run_failures(get_session(), the_study, params, since=job.started_at)
    return {"judge": params, "judge_failures": failures}
