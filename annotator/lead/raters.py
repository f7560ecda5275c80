"""The lead's list of a study's raters, and lifting the gap for one rater."""

from __future__ import annotations

from dataclasses import dataclass

from flask import abort, flash, redirect, render_template, url_for
from flask_login import current_user
from sqlmodel import Session, select

from ..auth import lead_required
from ..db import get_session
from ..models import ROLE_RATER, AuditEvent, Demographics, Study, User
from ..rate.blocks import DONE, BlockState, block_states, lift_gap
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

    @property
    def done(self) -> int:
        return sum(1 for b in self.blocks if b.status == DONE)


def rater_rows(session: Session, study: Study) -> list[RaterRow]:
    users = session.exec(
        select(User)
        .where(User.study_id == study.id, User.role == ROLE_RATER)
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
            AuditEvent.study_id == study.id, AuditEvent.action == "gap-lifted"
        )
    ).all():
        lift_counts[subject_id] = lift_counts.get(subject_id, 0) + 1
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
            )
        )
    return rows


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
    rater = session.get(User, rater_id)
    if rater is None or rater.role != ROLE_RATER or rater.study_id != study.id:
        abort(404)
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
