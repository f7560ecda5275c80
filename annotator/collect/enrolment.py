"""Enrolment: an invite, the consent (or its refusal), the questionnaire
check; a new rater gets a personal return link (:mod:`annotator.study.return_links`).

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from sqlalchemy import func, update
from sqlmodel import Session, select

from ..clock import now
from ..models import (
    Block,
    BlockAssignment,
    Demographics,
    Invite,
    Role,
    Study,
    User,
    UserSource,
)
from ..study.return_links import issue_return_link
from ..study.studies import new_rater_code, study_scales
from . import dealing, protocol

__all__ = [
    "InviteUsed",
    "enrol",
    "decline",
    "lock_study",
    "new_rater",
    "admit",
    "needs_demographics",
]


class InviteUsed(Exception):
    """The invite was taken by someone else in the meantime."""


def _claim_invite(session: Session, invite: Invite, user: User) -> None:
    # A conditional UPDATE, so two tabs submitting the same invite at once
    # cannot both use it.
    result = session.execute(
        update(Invite)
        .where(Invite.id == invite.id, Invite.used_at.is_(None))
        .values(used_at=now(), user_id=user.id)
    )
    if result.rowcount != 1:
        raise InviteUsed(invite.token)
    session.refresh(invite)


def new_rater(
    session: Session,
    study: Study,
    *,
    source: UserSource = UserSource.INVITE,
    platform_id: str | None = None,
) -> User:
    user = User(
        role=Role.RATER,
        rater_code=new_rater_code(session),
        study_id=study.id,
        source=source,
        platform_id=platform_id,
    )
    session.add(user)
    session.flush()
    return user


def decline(session: Session, invite: Invite) -> User:
    """Record a refusal of consent: a rater code with ``declined_at``, nothing else."""
    study = session.get(Study, invite.study_id)
    user = new_rater(session, study)
    user.declined_at = now()
    _claim_invite(session, invite, user)
    return user


def lock_study(session: Session, study_id: int) -> Study:
    """The study row, locked until the commit.

    Raters joining at the same moment then get consecutive places (and so
    consecutive Latin-square rows) on PostgreSQL, and a cap on raters holds;
    SQLite serialises writers anyway.
    """
    return session.exec(select(Study).where(Study.id == study_id).with_for_update()).one()


def enrol(session: Session, invite: Invite) -> User:
    """A new rater who consented, with their blocks in their assigned order.

    :class:`~annotator.collect.dealing.StudyFull` when an overlap study has
    every rater it needs (nothing is stored).
    """
    study = lock_study(session, invite.study_id)
    # An overlap study admits as many raters as it has seats.
    dealing.take_seat(session, study)
    user = new_rater(session, study)
    _claim_invite(session, invite, user)
    admit(session, study, user)
    return user


def admit(session: Session, study: Study, user: User, *, return_link: bool = True) -> None:
    """Record ``user``'s consent and give them their blocks in their assigned order.

    ``study`` must have been locked with :func:`lock_study` in this transaction.
    ``return_link``: whether the rater gets a personal return link (crowd
    participants do not: they come back by the platform's link).
    """
    user.consented_at = now()
    if return_link:
        issue_return_link(user)
    scales = study_scales(session, study)
    last = session.exec(
        select(func.max(BlockAssignment.sequence)).where(BlockAssignment.study_id == study.id)
    ).one()
    # The unique (study, sequence) constraint turns any race the lock misses
    # into an error (and a rolled-back, retryable request), never into two
    # raters on one row.
    sequence = 0 if last is None else last + 1
    assignment = BlockAssignment(
        user_id=user.id, study_id=study.id, sequence=sequence, method=study.scale_order
    )
    if study.scale_order == "random":
        assignment.seed = protocol.new_seed()
        order = protocol.random_block_order(assignment.seed, len(scales))
    else:
        assignment.latin_row, order = protocol.balanced_block_order(sequence, len(scales))
    assignment.scale_ids = [scales[i].id for i in order]
    session.add(assignment)
    for position, scale_id in enumerate(assignment.scale_ids, start=1):
        session.add(
            Block(rater_id=user.id, scale_id=scale_id, position=position, seed=protocol.new_seed())
        )
    session.flush()


def needs_demographics(session: Session, user: User, study: Study) -> bool:
    if not study.demographics:
        return False
    return (
        session.exec(select(Demographics.id).where(Demographics.user_id == user.id)).first() is None
    )


# ------------------------------------------------------------ return links
