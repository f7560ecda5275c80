"""The project lead's pages: studies, invites and exports."""

from __future__ import annotations

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from sqlmodel import select

from ..db import get_session
from ..exporters import FORMATS, ExportError, render_export
from ..models import Invite, Study
from ..studies import (
    create_invites,
    get_study,
    invite_url,
    link_base_url,
    study_benchmarks,
    study_scales,
)
from ..web.auth.access import lead_required
from .views import study_overviews

__all__ = ["bp"]

bp = Blueprint("lead", __name__, url_prefix="/lead")

MAX_INVITES_AT_ONCE = 500


@bp.app_template_global()
def has_endpoint(name: str) -> bool:
    """Whether a route exists, so pages can link to optional features."""
    return name in current_app.view_functions


def get_study_or_404(slug: str) -> Study:
    study = get_study(get_session(), slug)
    if study is None:
        abort(404)
    return study


@bp.route("/")
@lead_required
def index():
    return render_template("lead/index.html", studies=study_overviews(get_session()))


@bp.route("/studies/<slug>")
@lead_required
def study(slug: str):
    from ..analysis.dashboard import cached_dashboard

    session = get_session()
    the_study = get_study_or_404(slug)
    dashboard = cached_dashboard(session, the_study)
    if request.headers.get("HX-Request"):
        # htmx refreshes only the dashboard; without JS the whole page reloads.
        partial = render_template("lead/_dashboard.html", study=the_study, dashboard=dashboard)
        return partial, {"Vary": "HX-Request"}
    page = render_template(
        "lead/study.html",
        study=the_study,
        scales=study_scales(session, the_study),
        benchmarks=study_benchmarks(session, the_study),
        formats=FORMATS,
        dashboard=dashboard,
    )
    return page, {"Vary": "HX-Request"}


@bp.route("/studies/<slug>/report")
@lead_required
def report(slug: str):
    from ..analysis.report import build_report, report_filename

    the_study = get_study_or_404(slug)
    try:
        rendered = build_report(get_session(), the_study)
    except ValueError as exc:
        flash(f"The report cannot be built yet: {exc}", "error")
        return redirect(url_for("lead.study", slug=slug))
    headers = {"Content-Disposition": f'attachment; filename="{report_filename(the_study)}"'}
    return Response(rendered.html, mimetype="text/html", headers=headers)


@bp.route("/studies/<slug>/invites", methods=["GET", "POST"])
@lead_required
def invites(slug: str):
    session = get_session()
    the_study = get_study_or_404(slug)
    if request.method == "POST":
        try:
            count = int(request.form.get("count", ""))
        except ValueError:
            count = 0
        if not 1 <= count <= MAX_INVITES_AT_ONCE:
            flash(f"Give a number of invites from 1 to {MAX_INVITES_AT_ONCE}.", "error")
            return redirect(url_for("lead.invites", slug=slug))
        create_invites(session, the_study, count)
        session.commit()
        flash(f"{count} invite link(s) created.", "info")
        return redirect(url_for("lead.invites", slug=slug))
    unused = session.exec(
        select(Invite)
        .where(Invite.study_id == the_study.id, Invite.used_at.is_(None))
        .order_by(Invite.created_at.desc(), Invite.id.desc())
    ).all()
    links = [invite_url(invite.token, link_base_url()) for invite in unused]
    return render_template("lead/invites.html", study=the_study, links=links)


@bp.route("/studies/<slug>/export")
@lead_required
def export(slug: str):
    the_study = get_study_or_404(slug)
    fmt = request.args.get("format", "long")
    try:
        rendered = render_export(
            get_session(),
            the_study,
            fmt,
            scale=request.args.get("scale") or None,
            benchmark=request.args.get("benchmark") or None,
            complete=request.args.get("complete") == "1",
        )
    except ExportError as exc:
        flash(str(exc), "error")
        return redirect(url_for("lead.study", slug=slug))
    headers = {"Content-Disposition": f'attachment; filename="{rendered.filename}"'}
    if rendered.notes:
        # The summary of missing cells, for scripts that download the matrix.
        headers["X-Annotator-Notes"] = rendered.notes.replace("\n", " | ")
    return Response(rendered.text, mimetype=rendered.mimetype, headers=headers)


from . import raters  # noqa: E402,F401
