"""The lead's list of a study's raters: lifting the gap for one rater, and
showing and rotating their return links."""

from __future__ import annotations

from dataclasses import dataclass, field

from flask import abort, flash, redirect, render_template, url_for
from flask_login import current_user
from sqlalchemy import func
from sqlmodel import Session, select

from ..collect.blocks import BlockState, BlockStatus, block_states
from ..collect.enrolment import return_url
from ..db import get_session
from ..models import AuditAction, AuditEvent, Demographics, Rating, Role, Scale, Study, User
from ..studies import link_base_url, study_scales
from ..study.raters import lift_gap, rotate_return_link
from ..web.auth.access import lead_required
from ..web.confirm import confirmed, render_confirm
from . import bp, get_study_or_404

__all__ = ["RaterRow", "rater_rows"]


@dataclass
class RaterRow:
    user: User
    questionnaire_done: bool
    blocks: list[BlockState]
    # The block a gap lift would open, if any (and not lifted already).
    liftable: BlockState | None
    lifts: int
    # Ratings stored outside the app's blocks (imported), per scale name.
    imported: dict[str, int] = field(default_factory=dict)
    return_link: str | None = None

    @property
    def done(self) -> int:
        return sum(1 for b in self.blocks if b.status == BlockStatus.DONE)


def rater_rows(session: Session, study: Study) -> list[RaterRow]:
    users = session.exec(
        select(User)
        .where(User.study_id == study.id, User.role == Role.RATER)
        .order_by(User.created_at, User.id)
    ).all()
    answered = set(
        session.exec(
            select(Demographics.user_id).where(Demographics.user_id.in_([u.id for u in users]))
        ).all()
    )
    lift_counts: dict[int, int] = {}
    for subject_id in session.exec(
        select(AuditEvent.subject_id).where(
            AuditEvent.study_id == study.id, AuditEvent.action == AuditAction.GAP_LIFTED
        )
    ).all():
        lift_counts[subject_id] = lift_counts.get(subject_id, 0) + 1
    imported = _imported_counts(session, study)
    base_url = link_base_url()
    rows = []
    for user in users:
        states = block_states(session, user)
        pending = next(
            (s for s in states if s.block.position > 1 and s.block.started_at is None), None
        )
        liftable = pending if pending is not None and pending.block.gap_lifted_at is None else None
        rows.append(
            RaterRow(
                user=user,
                questionnaire_done=user.id in answered,
                blocks=states,
                liftable=liftable,
                lifts=lift_counts.get(user.id, 0),
                imported=imported.get(user.id, {}),
                return_link=return_url(user.return_token, base_url) if user.return_token else None,
            )
        )
    return rows


def _imported_counts(session: Session, study: Study) -> dict[int, dict[str, int]]:
    """Per rater and scale, the ratings that belong to no block (imported ones)."""
    names = {scale.id: scale.name for scale in study_scales(session, study)}
    counts: dict[int, dict[str, int]] = {}
    for rater_id, scale_id, count in session.exec(
        select(Rating.rater_id, Rating.scale_id, func.count(Rating.id))
        .join(Scale, Scale.id == Rating.scale_id)
        .where(Scale.study_id == study.id, Rating.block_id.is_(None))
        .group_by(Rating.rater_id, Rating.scale_id)
    ).all():
        counts.setdefault(rater_id, {})[names[scale_id]] = count
    # In the study's scale order.
    order = list(names.values())
    return {
        rater: dict(sorted(per_scale.items(), key=lambda kv: order.index(kv[0])))
        for rater, per_scale in counts.items()
    }


def _rater_or_404(study: Study, rater_id: int) -> User:
    rater = get_session().get(User, rater_id)
    if rater is None or rater.role != Role.RATER or rater.study_id != study.id:
        abort(404)
    return rater


@bp.route("/studies/<slug>/raters")
@lead_required
def raters(slug: str):
    study = get_study_or_404(slug)
    return render_template("lead/raters.html", study=study, rows=rater_rows(get_session(), study))


@bp.route("/studies/<slug>/raters/<int:rater_id>/lift-gap", methods=["POST"])
@lead_required
def lift_rater_gap(slug: str, rater_id: int):
    session = get_session()
    study = get_study_or_404(slug)
    rater = _rater_or_404(study, rater_id)
    if not confirmed():
        return render_confirm(
            title=f"Lift the gap for rater {rater.rater_code}?",
            message="The rater may then start their next block at once, before the "
            f"{study.session_gap_days:g} day(s) between blocks are over. This cannot be "
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


@bp.route("/studies/<slug>/raters/<int:rater_id>/rotate-link", methods=["POST"])
@lead_required
def rotate_rater_link(slug: str, rater_id: int):
    session = get_session()
    study = get_study_or_404(slug)
    rater = _rater_or_404(study, rater_id)
    if rater.return_token is None:
        flash(f"Rater {rater.rater_code} has no return link.", "error")
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
