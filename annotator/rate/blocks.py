"""A rater's way through a study: enrolment, blocks, serving and scoring.

Data-access functions take the session and leave the commit to the caller.

Attention checks: items with a gold score (``Item.gold_score``) are used
*only* as attention checks. They are never among the regular items of a
block, so each rater rates every regular item exactly once per scale and
the checks stay out of the items x raters matrices; a block shows
``attention_checks.per_session`` of them (drawn with the block's seed) at
random places. A study that asks for no checks shows no gold items at all.

Test-retest repeats are stored as separate ratings with ``is_repeat`` set,
so a repeat never touches the first rating of the item.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import func, update
from sqlmodel import Session, select

from ..clock import now
from ..models import (
    AuditAction,
    AuditEvent,
    Block,
    BlockAssignment,
    ChangeReason,
    Demographics,
    Invite,
    Item,
    Rating,
    RatingChange,
    Role,
    Scale,
    Study,
    User,
    UserSource,
)
from ..studies import issue_return_link, new_rater_code, study_scales
from . import protocol
from .scores import parse_score

__all__ = [
    "InviteUsed",
    "BlockUnavailable",
    "BlockState",
    "enrol",
    "decline",
    "needs_demographics",
    "block_states",
    "block_state",
    "start_block",
    "ratings_by_position",
    "next_position",
    "serve",
    "submit_score",
    "lift_gap",
    "BlockStatus",
]


class BlockStatus(StrEnum):
    """What a rater may do with a block (shown on their dashboard and the lead's raters page)."""

    DONE = "done"
    IN_PROGRESS = "in progress"
    AVAILABLE = "available"
    # The previous block is done; this one opens at a known time.
    WAITING = "waiting"
    # The previous block is not done yet.
    LOCKED = "locked"


class InviteUsed(Exception):
    """The invite was taken by someone else in the meantime."""


class BlockUnavailable(Exception):
    """A block that may not be started (yet); the message says why."""


# ------------------------------------------------------------- enrolment


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


def _new_rater(session: Session, study: Study) -> User:
    user = User(
        role=Role.RATER,
        rater_code=new_rater_code(session),
        study_id=study.id,
        source=UserSource.INVITE,
    )
    session.add(user)
    session.flush()
    return user


def decline(session: Session, invite: Invite) -> User:
    """Record a refusal of consent: a rater code with ``declined_at``, nothing else."""
    study = session.get(Study, invite.study_id)
    user = _new_rater(session, study)
    user.declined_at = now()
    _claim_invite(session, invite, user)
    return user


def enrol(session: Session, invite: Invite) -> User:
    """A new rater who consented, with their blocks in their assigned order."""
    # Lock the study row so that raters joining at the same moment get
    # consecutive places (and so consecutive Latin-square rows) on
    # PostgreSQL; SQLite serialises writers anyway.
    study = session.exec(select(Study).where(Study.id == invite.study_id).with_for_update()).one()
    user = _new_rater(session, study)
    user.consented_at = now()
    issue_return_link(user)
    _claim_invite(session, invite, user)
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
    return user


def needs_demographics(session: Session, user: User, study: Study) -> bool:
    if not study.demographics:
        return False
    return (
        session.exec(select(Demographics.id).where(Demographics.user_id == user.id)).first() is None
    )


# ----------------------------------------------------------------- blocks


@dataclass
class BlockState:
    block: Block
    scale: Scale
    status: BlockStatus
    # For BlockStatus.WAITING blocks: when they open.
    opens_at: datetime | None
    rated: int
    total: int

    @property
    def startable(self) -> bool:
        return self.status == BlockStatus.AVAILABLE


def _rated_counts(session: Session, blocks: list[Block]) -> dict[int, int]:
    if not blocks:
        return {}
    return dict(
        session.exec(
            select(Rating.block_id, func.count(Rating.id))
            .where(Rating.block_id.in_([b.id for b in blocks]))
            .group_by(Rating.block_id)
        ).all()
    )


def block_states(session: Session, user: User) -> list[BlockState]:
    """Every block of the rater, in order, with what the rater may do with it."""
    study = session.get(Study, user.study_id)
    blocks = list(
        session.exec(select(Block).where(Block.rater_id == user.id).order_by(Block.position))
    )
    scales = {s.id: s for s in study_scales(session, study)}
    counts = _rated_counts(session, blocks)
    current = now()
    states: list[BlockState] = []
    for index, block in enumerate(blocks):
        opens_at = None
        if block.completed_at is not None:
            status = BlockStatus.DONE
        elif block.started_at is not None:
            status = BlockStatus.IN_PROGRESS
        elif index == 0:
            status = BlockStatus.AVAILABLE
        elif blocks[index - 1].completed_at is None:
            status = BlockStatus.LOCKED
        else:
            opens_at = protocol.next_block_opens(
                blocks[index - 1].completed_at, study.session_gap_days
            )
            if block.gap_lifted_at is not None or current >= opens_at:
                status = BlockStatus.AVAILABLE
            else:
                status = BlockStatus.WAITING
        states.append(
            BlockState(
                block=block,
                scale=scales[block.scale_id],
                status=status,
                opens_at=opens_at,
                rated=counts.get(block.id, 0),
                total=len(block.item_order),
            )
        )
    return states


def block_state(session: Session, user: User, block_id: int) -> BlockState | None:
    """The rater's own block ``block_id``; ``None`` for anyone else's."""
    for state in block_states(session, user):
        if state.block.id == block_id:
            return state
    return None


def _study_items(session: Session, study: Study) -> tuple[list[int], list[int]]:
    rows = session.exec(select(Item.id, Item.gold_score).where(Item.study_id == study.id)).all()
    regular = [item_id for item_id, gold in rows if gold is None]
    gold = [item_id for item_id, gold in rows if gold is not None]
    return regular, gold


def start_block(session: Session, user: User, state: BlockState) -> Block:
    """Fix the block's item order from its seed and mark it started."""
    block = state.block
    if state.status == BlockStatus.IN_PROGRESS:
        return block
    if state.status == BlockStatus.DONE:
        raise BlockUnavailable("This block is already complete.")
    if state.status == BlockStatus.LOCKED:
        raise BlockUnavailable("Please complete the blocks before this one first.")
    if state.status == BlockStatus.WAITING:
        raise BlockUnavailable("This block is not open yet.")
    study = session.get(Study, user.study_id)
    regular, gold = _study_items(session, study)
    if not regular:
        raise BlockUnavailable("This study has no items to rate yet. Please come back later.")
    block.item_order = protocol.item_order(
        block.seed,
        regular,
        gold,
        attention_per_session=int(study.attention_checks.get("per_session", 0) or 0),
        retest_share=float(study.test_retest.get("share", 0) or 0),
        retest_min_distance=int(study.test_retest.get("min_distance", 10) or 10),
    )
    block.started_at = now()
    session.add(block)
    session.flush()
    return block


# ---------------------------------------------------------------- ratings


def ratings_by_position(session: Session, block: Block) -> dict[int, Rating]:
    ratings = session.exec(select(Rating).where(Rating.block_id == block.id)).all()
    return {rating.position: rating for rating in ratings}


def next_position(block: Block, rated: dict[int, Rating]) -> int | None:
    """The first unrated place of the order (1-based); ``None`` when all are rated."""
    for position in range(1, len(block.item_order) + 1):
        if position not in rated:
            return position
    return None


def serve(session: Session, block: Block, position: int) -> None:
    """Note when the entry at ``position`` was first shown."""
    if block.current_position != position:
        block.current_position = position
        block.current_served_at = now()
        session.add(block)


@dataclass
class Submitted:
    rating: Rating
    # "create", "revise" or "unchanged" (a repeated submission).
    outcome: str
    block_completed: bool


def submit_score(
    session: Session, user: User, block: Block, scale: Scale, position: int, raw: str
) -> Submitted:
    """Store the score for the entry at ``position``.

    Raises :class:`~annotator.rate.scores.ScoreError` for a score the scale
    does not allow (nothing is stored) and :class:`BlockUnavailable` for a
    place that has not been served yet. A second submission of the same
    value stores nothing; a new value for a rated entry is a revision, kept
    in the rating's history (the rating keeps the served and submitted times
    of its first value; every change has its own time).

    Two identical requests at once: the loser's INSERT violates the unique
    key of Rating and raises ``IntegrityError``; the caller rolls back and
    calls again, which then finds the winner's rating.
    """
    value = parse_score(raw, scale)
    entry = block.item_order[position - 1]
    rated = ratings_by_position(session, block)
    rating = rated.get(position)
    current = now()
    if rating is None:
        if position != next_position(block, rated):
            raise BlockUnavailable("Please rate the items in the order they are shown.")
        served_at = block.current_served_at if block.current_position == position else None
        rating = Rating(
            rater_id=user.id,
            item_id=entry["item"],
            scale_id=block.scale_id,
            block_id=block.id,
            value=value,
            position=position,
            is_repeat=bool(entry["repeat"]),
            is_attention_check=bool(entry["attention"]),
            served_at=served_at,
            submitted_at=current,
        )
        session.add(rating)
        session.flush()
        session.add(
            RatingChange(
                rating_id=rating.id,
                value=value,
                previous_value=None,
                changed_at=current,
                reason=ChangeReason.CREATE,
                actor_id=user.id,
            )
        )
        outcome = "create"
    elif rating.value == value:
        outcome = "unchanged"
    else:
        session.add(
            RatingChange(
                rating_id=rating.id,
                value=value,
                previous_value=rating.value,
                changed_at=current,
                reason=ChangeReason.REVISE,
                actor_id=user.id,
            )
        )
        rating.value = value
        session.add(rating)
        outcome = "revise"
    session.flush()
    completed = False
    if block.completed_at is None:
        rated = ratings_by_position(session, block)
        if next_position(block, rated) is None:
            block.completed_at = current
            block.current_position = None
            block.current_served_at = None
            session.add(block)
            completed = True
    return Submitted(rating=rating, outcome=outcome, block_completed=completed)


# ------------------------------------------------------------------- lead


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
