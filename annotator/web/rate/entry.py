"""How a rater comes in: an invite link (consent or decline), a personal return link."""

from __future__ import annotations

from flask import abort, make_response, redirect, render_template, request, url_for
from flask_login import current_user, login_user, logout_user
from sqlmodel import select

from ...collect.dealing import StudyFull, overlap_spec, seats_full
from ...collect.enrolment import InviteUsed, decline, enrol
from ...collect.stopping import study_complete
from ...db import commit_retrying, get_session
from ...models import Invite, RaterStatus, Study, User, UserSource
from ...study.return_links import rater_by_return_token
from ..auth.access import withdrawn_page
from ..confirm import confirmed, render_confirm
from .blueprint import bp


@bp.route("/invite/<token>", methods=["GET", "POST"])
def invite(token: str):
    session = get_session()
    the_invite = session.exec(select(Invite).where(Invite.token == token)).first()
    if the_invite is None:
        abort(404)
    study = session.get(Study, the_invite.study_id)
    if the_invite.used_at is not None:
        joined = session.get(User, the_invite.user_id) if the_invite.user_id else None
        if joined is not None and joined.status == RaterStatus.WITHDRAWN:
            return withdrawn_page(study)
        if current_user.is_authenticated and current_user.id == the_invite.user_id:
            return redirect(url_for("rate.dashboard"))
        return render_template("rate/invite_used.html", study=study), 410
    if study_complete(study):
        # Stopped when decided: nobody new joins (nothing is recorded of this visit).
        return render_template("rate/study_complete.html", study=study), 410
    overlap = overlap_spec(study)
    if overlap is not None and seats_full(session, study, overlap):
        return render_template("rate/study_full.html", study=study), 403
    if request.method == "POST":
        decision = request.form.get("decision")
        try:
            if decision == "agree":
                user = commit_retrying(session, lambda: enrol(session, the_invite))
                # Remembered, so closing the browser does not end the study.
                login_user(user, remember=True)
                return redirect(url_for("rate.dashboard"))
            if decision == "decline":
                if not confirmed():
                    back = url_for("rate.invite", token=token)
                    return render_confirm(
                        title="Decline to take part?",
                        message="If you decline, only your refusal is recorded and this "
                        "invite link stops working: you cannot join the study later with it.",
                        action=back,
                        fields={"decision": "decline"},
                        confirm_label="Yes, I decline",
                        cancel_url=back,
                        cancel_label="Back to the study information",
                    )
                decline(session, the_invite)
                session.commit()
                if current_user.is_authenticated:
                    logout_user()
                return redirect(url_for("rate.declined"))
        except InviteUsed:
            session.rollback()
            return render_template("rate/invite_used.html", study=study), 410
        except StudyFull:
            return render_template("rate/study_full.html", study=study), 403
        return (
            render_template(
                "rate/consent.html",
                study=study,
                token=token,
                error="Please press “I agree” to take part, or the other button to decline.",
            ),
            400,
        )
    return render_template("rate/consent.html", study=study, token=token, error=None)


@bp.route("/r/<token>")
def come_back(token: str):
    """A rater's personal return link: log them in and show their blocks."""
    session = get_session()
    rater = rater_by_return_token(session, token)
    # A crowd participant comes back only by the platform's link (crowd.py).
    if rater is None or rater.declined_at is not None or rater.source == UserSource.CROWD:
        response = make_response(render_template("rate/return_unknown.html"), 404)
    elif rater.status == RaterStatus.WITHDRAWN:
        response = make_response(withdrawn_page(session.get(Study, rater.study_id)))
    else:
        login_user(rater, remember=True)
        response = redirect(url_for("rate.dashboard"))
    # The token is as good as a password: keep it out of caches and Referer headers.
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@bp.route("/declined")
def declined():
    return render_template("rate/declined.html")
