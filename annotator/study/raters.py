"""What a lead does to one rater of a study: lift the gap before their
next block, replace their return link, withdraw, exclude or include them
again. Each is logged as an AuditEvent.

:func:`counted_rater` is the one rule of whose ratings count: every export
and statistic applies it.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session, select

from ..clock import now
from ..models import (
    AuditAction,
    AuditEvent,
    Block,
    Demographics,
    RaterStatus,
    Rating,
    RatingChange,
    Scale,
    Study,
    User,
    WithdrawnRatings,
)
from .return_links import issue_return_link, no_return_link

__all__ = [
    "lift_gap",
    "rotate_return_link",
    "counted_rater",
    "RaterStatusError",
    "withdraw_rater",
    "exclude_rater",
    "include_rater",
]


def counted_rater(rater_id) -> ColumnElement[bool]:
    """SQL: the rater whose id is in the column ``rater_id`` counts (is active).

    The one rule of whose ratings and answers enter exports and statistics:
    withdrawn and excluded raters' never do. Written as NOT IN over the few
    raters who do not count, so a query needs no join to ``user`` and the
    subquery stays small. It binds only a constant (the status name), so
    :func:`annotator.data.sql.fetch_rows` may compile it with literal binds.
    """
    return rater_id.not_in(select(User.id).where(User.status != RaterStatus.ACTIVE))


class RaterStatusError(ValueError):
    """A status change that cannot be made (withdrawn already, not excluded, ...)."""


def lift_gap(session: Session, lead: User, rater: User) -> Block | None:
    """Let ``rater`` start their next block now; logged as an AuditEvent.

    The gap is lifted for the first block that has not been started, except
    the first block (which has no gap). Returns that block, or ``None`` when
    there is none.
    """
    block = session.exec(
        select(Block)
        .where(
            Block.rater_id == rater.id,
            Block.started_at.is_(None),
            Block.position > 1,
        )
        .order_by(Block.position)
    ).first()
    if block is None:
        return None
    scale = session.get(Scale, block.scale_id)
    block.gap_lifted_at = now()
    session.add(block)
    session.add(
        AuditEvent(
            actor_id=lead.id,
            subject_id=rater.id,
            study_id=rater.study_id,
            action=AuditAction.GAP_LIFTED,
            details={"block_position": block.position, "scale": scale.name},
        )
    )
    session.flush()
    return block


def rotate_return_link(session: Session, rater: User, *, actor: User | None, via: str) -> None:
    """Replace the rater's return link, logged as an AuditEvent (``via``: "web" or "cli")."""
    if rater.return_token is None:
        raise ValueError(no_return_link(rater))
    if rater.status == RaterStatus.WITHDRAWN:
        raise ValueError(f"rater {rater.rater_code} has withdrawn; their link stays retired")
    issue_return_link(rater)
    # Every session opened with the old link (or otherwise) ends.
    rater.end_sessions()
    session.add(rater)
    session.add(
        AuditEvent(
            actor_id=actor.id if actor is not None else None,
            subject_id=rater.id,
            study_id=rater.study_id,
            action=AuditAction.RETURN_LINK_ROTATED,
            details={"via": via},
        )
    )
    session.flush()


def _log_status(
    session: Session,
    rater: User,
    action: AuditAction,
    *,
    actor: User | None,
    via: str,
    details: dict,
) -> None:
    session.add(
        AuditEvent(
            actor_id=actor.id if actor is not None else None,
            subject_id=rater.id,
            study_id=rater.study_id,
            action=action,
            details={"via": via, **details},
        )
    )


def _set_status(rater: User, status: RaterStatus, reason: str | None) -> None:
    rater.status = status
    rater.status_reason = reason
    rater.status_changed_at = now()


def withdraw_rater(
    session: Session,
    study: Study,
    rater: User,
    *,
    actor: User | None,
    via: str,
    reason: str | None = None,
) -> int:
    """Mark ``rater`` withdrawn: their ratings leave every export and statistic.

    The study's ``withdrawn_ratings`` decides what happens to the ratings:
    ``keep`` leaves them in the database (hidden), ``delete`` deletes them with
    their history and the rater's demographic answers. Either way every
    session of the rater ends, every way in refuses them with a page that says
    they withdrew (their return link and password only recognise them), the rater row stays
    (with its code, so the audit history keeps its subject) and an AuditEvent
    records the withdrawal. Final: a withdrawn rater cannot be included again.
    Returns the number of ratings deleted.
    """
    if rater.status == RaterStatus.WITHDRAWN:
        raise RaterStatusError(f"rater {rater.rater_code} has withdrawn already")
    deleted = 0
    delete_data = study.withdrawn_ratings == WithdrawnRatings.DELETE
    if delete_data:
        ids = select(Rating.id).where(Rating.rater_id == rater.id)
        session.execute(delete(RatingChange).where(RatingChange.rating_id.in_(ids)))
        deleted = session.execute(delete(Rating).where(Rating.rater_id == rater.id)).rowcount
        session.execute(delete(Demographics).where(Demographics.user_id == rater.id))
    _set_status(rater, RaterStatus.WITHDRAWN, reason)
    # Every session and remember cookie ends now. The return link and the
    # password are kept only to recognise the rater: each way in (invite,
    # return link, crowd link, login) then answers that they withdrew.
    rater.end_sessions()
    session.add(rater)
    _log_status(
        session,
        rater,
        AuditAction.RATER_WITHDRAWN,
        actor=actor,
        via=via,
        details={
            "reason": reason or "",
            "ratings": WithdrawnRatings.DELETE if delete_data else WithdrawnRatings.KEEP,
            "deleted_ratings": deleted,
        },
    )
    session.flush()
    return deleted


def exclude_rater(
    session: Session, rater: User, *, actor: User | None, via: str, reason: str
) -> None:
    """Leave ``rater``'s ratings out of every export and statistic (a pilot or
    test rater, say); nothing is deleted and :func:`include_rater` undoes it."""
    reason = (reason or "").strip()
    if not reason:
        raise RaterStatusError("give a reason for excluding the rater")
    if rater.status == RaterStatus.WITHDRAWN:
        raise RaterStatusError(f"rater {rater.rater_code} has withdrawn; nothing to exclude")
    if rater.status == RaterStatus.EXCLUDED:
        raise RaterStatusError(f"rater {rater.rater_code} is excluded already")
    _set_status(rater, RaterStatus.EXCLUDED, reason)
    session.add(rater)
    _log_status(
        session, rater, AuditAction.RATER_EXCLUDED, actor=actor, via=via, details={"reason": reason}
    )
    session.flush()


def include_rater(session: Session, rater: User, *, actor: User | None, via: str) -> None:
    """Undo :func:`exclude_rater`: the rater's ratings count again."""
    if rater.status == RaterStatus.WITHDRAWN:
        raise RaterStatusError(
            f"rater {rater.rater_code} has withdrawn; a withdrawal cannot be undone"
        )
    if rater.status != RaterStatus.EXCLUDED:
        raise RaterStatusError(f"rater {rater.rater_code} is not excluded")
    previous = rater.status_reason or ""
    _set_status(rater, RaterStatus.ACTIVE, None)
    session.add(rater)
    _log_status(
        session,
        rater,
        AuditAction.RATER_INCLUDED,
        actor=actor,
        via=via,
        details={"excluded_for": previous},
    )
    session.flush()
