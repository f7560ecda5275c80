"""The project lead's pages: studies, invites and exports."""

from __future__ import annotations

from flask import (
    Response,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from sqlmodel import select

from ...db import get_session
from ...models import Invite
from ...services.overview import study_overviews
from ...study.studies import (
    create_invites,
    invite_url,
    link_base_url,
)
from ...words import plural
from ..auth.access import lead_required
from ..downloads import attachment
from . import bp
from .common import analysis_choices, export_choices, export_temperature, get_study_or_404
from .forms import InviteForm
from .study_page import live_of, study_page

__all__: list[str] = []


@bp.route("/")
@lead_required
def index():
    studies = study_overviews(get_session(), lead=current_user)
    return render_template("lead/index.html", studies=studies)


@bp.route("/studies/<slug>")
@lead_required
def study(slug: str):
    the_study = get_study_or_404(slug)
    if request.headers.get("HX-Request"):
        # htmx refreshes only the dashboard; without JS the whole page reloads.
        analysis = analysis_choices(the_study)
        partial = render_template(
            "lead/_dashboard.html",
            study=the_study,
            live=live_of(the_study, analysis),
            analysis=analysis,
        )
        # Keeps a dashboard computed here and enqueues a stale one's job.
        get_session().commit()
        return partial, {"Vary": "HX-Request"}
    page = study_page(the_study)
    get_session().commit()
    return page, {"Vary": "HX-Request"}


@bp.route("/studies/<slug>/invites", methods=["GET", "POST"])
@lead_required
def invites(slug: str):
    session = get_session()
    the_study = get_study_or_404(slug, owner=True)
    form = InviteForm()
    if request.method == "POST":
        if not form.validate():
            flash(form.count_problem(), "error")
            return redirect(url_for("lead.invites", slug=slug))
        count = form.count.data
        create_invites(session, the_study, count)
        session.commit()
        flash(f"{plural(count, 'invite link')} created.", "info")
        return redirect(url_for("lead.invites", slug=slug))
    unused = session.exec(
        select(Invite)
        .where(Invite.study_id == the_study.id, Invite.used_at.is_(None))
        .order_by(Invite.created_at.desc(), Invite.id.desc())
    ).all()
    links = [invite_url(invite.token, link_base_url()) for invite in unused]
    return render_template("lead/invites.html", study=the_study, links=links, form=form)


@bp.route("/studies/<slug>/export")
@lead_required
def export(slug: str):
    from ...data.exporters import ExportError, render_export
    from ...data.selection import parse_where
    from .long_download import long_export_response

    the_study = get_study_or_404(slug)
    chosen = export_choices()
    try:
        temperature = export_temperature(chosen["temperature"])
        scope = {
            "scale": chosen["scale"] or None,
            "benchmark": chosen["benchmark"] or None,
            "where": parse_where(chosen["where"]),
        }
        if chosen["format"] == "long":
            # Streamed, with a session of its own (see long_download).
            return long_export_response(the_study, **scope)
        if request.args.get("notes") != "1":
            from .jobs import large_export_response

            # A large study's export is built by a job (its notes stay on this page).
            offer = large_export_response(the_study, chosen, temperature)
            if offer is not None:
                return offer
        rendered = render_export(
            get_session(),
            the_study,
            chosen["format"],
            complete=chosen["complete"],
            temperature=temperature,
            runs=chosen["runs"],
            criterion=chosen["criterion"] or None,
            **scope,
        )
    except ExportError as exc:
        # The form again, with the lead's choices and the problem beside it.
        return study_page(the_study, chosen=chosen, export_error=exc), 422
    if request.args.get("notes") == "1":
        # The matrix's notes (missing cells per rater code, ...) on the page,
        # never in a header: they name raters, in any script.
        return study_page(the_study, chosen=chosen, export_notes=rendered.notes or "No notes.")
    headers = {"Content-Disposition": attachment(rendered.filename)}
    return Response(rendered.text, mimetype=rendered.mimetype, headers=headers)
