"""The lead's list of a study's raters: lifting the gap for one rater, and
showing and rotating their return links."""

from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from ...collect.crowd import browsers_per_rater
from ...db import get_session
from ...models import RaterStatus, Role, Study, User
from ...services.overview import rater_rows
from ...study.raters import lift_gap, rotate_return_link
from ...study.return_links import return_url
from ...study.studies import link_base_url
from ...words import plural
from ..auth.access import lead_required
from ..confirm import confirmed, render_confirm
from . import bp
from .common import get_study_or_404

__all__: list[str] = []


def _rater_or_404(study: Study, rater_id: int) -> User:
    rater = get_session().get(User, rater_id)
    if rater is None or rater.role != Role.RATER or rater.study_id != study.id:
        abort(404)
    return rater


@bp.route("/studies/<slug>/raters")
@lead_required
def raters(slug: str):
    study = get_study_or_404(slug, owner=True)
    return render_template(
        "lead/raters.html",
        study=study,
        rows=rater_rows(get_session(), study),
        # Crowd raters let in from several browsers: worth a look (a shared id?).
        browsers=browsers_per_rater(get_session(), study),
        **_quality(study, request.args.get("where", "")),
    )


def _quality(study: Study, where: str) -> dict:
    """The rater quality partial's context: the table, or the reason it is missing.

    ``quality_error`` is the lead's input (the filter) at fault, and marks the field;
    ``quality_failure`` is a table that could not be computed, which the filter did
    not cause.
    """
    from ...data.selection import parse_where, raters_where
    from ...services.rater_quality import cached_rater_quality

    context = {"quality": None, "quality_error": None, "quality_failure": None}
    try:
        raters_where(get_session(), study, parse_where(where))
    except ValueError as exc:
        return {**context, "quality_error": str(exc), "quality_where": where}
    try:
        table = cached_rater_quality(get_session(), study, where=where)
    except ValueError as exc:
        return {**context, "quality_failure": str(exc), "quality_where": where}
    return {**context, "quality": table, "quality_where": where}


@bp.route("/studies/<slug>/raters/<id:rater_id>/lift-gap", methods=["POST"])
@lead_required
def lift_rater_gap(slug: str, rater_id: int):
    session = get_session()
    study = get_study_or_404(slug, owner=True)
    rater = _rater_or_404(study, rater_id)
    if not confirmed():
        return render_confirm(
            title=f"Lift the gap for rater {rater.rater_code}?",
            message="The rater may then start their next block at once, before the "
            f"{plural(study.session_gap_days, 'day')} between blocks are over. This cannot be "
            "undone and is logged with your account.",
            action=url_for("lead.lift_rater_gap", slug=slug, rater_id=rater.id),
            confirm_label="Lift the gap",
            cancel_url=url_for("lead.raters", slug=slug),
            cancel_label="Back to the raters",
        )
    block = lift_gap(session, current_user, rater)
    if block is None:
        flash(f"Rater {rater.rater_code} has no block waiting for a gap to end.", "error")
    else:
        session.commit()
        flash(
            f"Rater {rater.rater_code} may start block {block.position} now. This has been logged.",
            "info",
        )
    return redirect(url_for("lead.raters", slug=slug))


@bp.route("/studies/<slug>/raters/<id:rater_id>/rotate-link", methods=["POST"])
@lead_required
def rotate_rater_link(slug: str, rater_id: int):
    session = get_session()
    study = get_study_or_404(slug, owner=True)
    rater = _rater_or_404(study, rater_id)
    if rater.return_token is None or rater.status == RaterStatus.WITHDRAWN:
        flash(f"Rater {rater.rater_code} has no return link to replace.", "error")
        return redirect(url_for("lead.raters", slug=slug))
    if not confirmed():
        return render_confirm(
            title=f"Replace the return link of rater {rater.rater_code}?",
            message="Their current link stops working at once; send them the new one. "
            "Do this when a link was lost or shared. It is logged with your account.",
            action=url_for("lead.rotate_rater_link", slug=slug, rater_id=rater.id),
            confirm_label="Replace the link",
            cancel_url=url_for("lead.raters", slug=slug),
            cancel_label="Back to the raters",
        )
    rotate_return_link(session, rater, actor=current_user, via="web")
    session.commit()
    flash(
        f"Rater {rater.rater_code} has a new return link: "
        f"{return_url(rater.return_token, link_base_url())} (the old one no longer works). "
        "This has been logged.",
        "info",
    )
    return redirect(url_for("lead.raters", slug=slug))
