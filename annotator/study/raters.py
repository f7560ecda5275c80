"""What a lead does to one rater of a study: lift the gap before their
next block, replace their return link. Both are logged as AuditEvents.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from sqlmodel import Session, select

from ..clock import now
from ..collect.enrolment import issue_return_link, no_return_link
from ..models import AuditAction, AuditEvent, Block, Scale, User

__all__ = ["lift_gap", "rotate_return_link"]


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
    issue_return_link(rater)
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
