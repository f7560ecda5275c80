"""Waves of a crowd study: each block is its own platform study, so after
each gap the lead allows the raters whose next block is open into the
next one.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlmodel import Session, select

from ..clock import now
from ..models import Role, Study, User
from .block_states import BlockStatus, block_states

__all__ = ["WaveStatus", "WaveRow", "wave_rows", "eligible_ids"]


class WaveStatus(StrEnum):
    """Where a crowd rater stands between waves (the lead's raters page)."""

    # Block 1 not finished yet (still in the first wave).
    FIRST = "in wave 1"
    IN_PROGRESS = "in progress"
    # The previous block is done and the gap not over yet.
    WAITING = "waiting"
    # The next block is open: invite them to the next wave.
    DUE = "due"
    # Open for more than twice the gap.
    OVERDUE = "overdue"
    FINISHED = "finished"
    SCREENED_OUT = "screened out"
    DECLINED = "declined"


@dataclass
class WaveRow:
    user: User
    status: WaveStatus
    # The position of the rater's next block (None when finished or out).
    next_position: int | None
    # When the next block opened or opens (None for block 1).
    opens_at: datetime | None

    @property
    def eligible(self) -> bool:
        return self.status in (WaveStatus.DUE, WaveStatus.OVERDUE)


def _wave_row(session: Session, user: User, study: Study, at: datetime) -> WaveRow:
    if user.declined_at is not None:
        return WaveRow(user, WaveStatus.DECLINED, None, None)
    if user.screened_out_at is not None:
        return WaveRow(user, WaveStatus.SCREENED_OUT, None, None)
    states = block_states(session, user, count_rated=False, at=at)
    upcoming = next((s for s in states if s.status != BlockStatus.DONE), None)
    if upcoming is None or upcoming.status == BlockStatus.CLOSED:
        # Closed: the study stopped when decided, so no further wave for anyone.
        return WaveRow(user, WaveStatus.FINISHED, None, None)
    position = upcoming.block.position
    if position == 1:
        return WaveRow(user, WaveStatus.FIRST, 1, None)
    if upcoming.status == BlockStatus.IN_PROGRESS:
        status = WaveStatus.IN_PROGRESS
    elif upcoming.status == BlockStatus.WAITING:
        status = WaveStatus.WAITING
    else:
        gap = timedelta(days=study.session_gap_days)
        previous = states[position - 2].block.completed_at
        overdue = gap > timedelta(0) and at - previous > 2 * gap
        status = WaveStatus.OVERDUE if overdue else WaveStatus.DUE
    return WaveRow(user, status, position, upcoming.opens_at)


def wave_rows(session: Session, study: Study, *, at: datetime | None = None) -> list[WaveRow]:
    """Every rater who came in by the entry link, with their wave status at ``at`` (default now)."""
    at = at or now()
    users = session.exec(
        select(User)
        .where(User.study_id == study.id, User.role == Role.RATER, User.platform_id.is_not(None))
        .order_by(User.created_at, User.id)
    ).all()
    return [_wave_row(session, user, study, at) for user in users]


def eligible_ids(
    session: Session, study: Study, *, at: datetime | None = None, wave: int | None = None
) -> list[str]:
    """Platform ids whose next block is open at ``at``: the next wave's allowlist.

    Open means the gap after their previous block has passed (or a lead
    lifted it) and the block is not started; ``wave`` keeps only those whose
    next block is that one.
    """
    return [
        row.user.platform_id
        for row in wave_rows(session, study, at=at)
        if row.eligible and (wave is None or row.next_position == wave)
    ]
