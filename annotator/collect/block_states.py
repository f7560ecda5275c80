"""A rater's blocks and their states: what the rater may do with each, and starting one.

Data-access functions take the session and leave the commit to the caller.

Attention checks: items with a gold score (``Item.gold_score``) are used
*only* as attention checks. They are never among the regular items of a
block, so each rater rates every regular item exactly once per scale and
the checks stay out of the items x raters matrices; a block shows
``attention_checks.per_session`` of them (drawn with the block's seed) at
random places. A study that asks for no checks shows no gold items at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import String, bindparam, cast, func
from sqlmodel import Session, select

from ..clock import now
from ..models import Block, Item, RaterStatus, Rating, Scale, Study, User
from ..study.studies import study_scales
from ..study.studyfile import attention_settings, retest_settings
from . import dealing, protocol

__all__ = [
    "BlockUnavailable",
    "BlockState",
    "BlockStatus",
    "block_states",
    "block_state",
    "count_blocks",
    "start_block",
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
    # Not started, and the study stopped serving blocks (annotator.collect.stopping).
    CLOSED = "closed"


class BlockUnavailable(Exception):
    """A block that may not be started (yet); the message says why."""


@dataclass
class BlockState:
    block: Block
    scale: Scale
    status: BlockStatus
    # For BlockStatus.WAITING blocks: when they open.
    opens_at: datetime | None
    # Ratings stored in the block; None when not counted (see block_states).
    rated: int | None
    total: int
    # How many blocks the rater has, when loaded with the block (block_state).
    blocks_total: int | None = None
    # The block's rated places, when loaded with it (block_state's
    # ``rated_places``): a score post's first look at them.
    rated_places: set[int] | None = None

    @property
    def over(self) -> bool:
        """Nothing left to do in it: done, or closed as the study stopped when decided."""
        return self.status in (BlockStatus.DONE, BlockStatus.CLOSED)


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


def block_states(
    session: Session, user: User, *, count_rated: bool = True, at: datetime | None = None
) -> list[BlockState]:
    """Every block of the rater, in order, with what the rater may do with it.

    ``count_rated=False`` leaves ``rated`` as ``None`` and skips the query
    that counts each block's ratings (pages that show one block load that
    block's ratings themselves). ``at``: the time the gaps are judged at
    (default: now).
    """
    study = session.get(Study, user.study_id)
    blocks = list(
        session.exec(select(Block).where(Block.rater_id == user.id).order_by(Block.position))
    )
    scales = {s.id: s for s in study_scales(session, study)}
    counts = _rated_counts(session, blocks) if count_rated else None
    current = at or now()
    states: list[BlockState] = []
    for index, block in enumerate(blocks):
        opens_at = None
        if block.completed_at is not None:
            status = BlockStatus.DONE
        elif block.started_at is not None:
            status = BlockStatus.IN_PROGRESS
        elif study.stopped_at is not None:
            # Stopped when decided: blocks in progress may finish, no new one starts.
            status = BlockStatus.CLOSED
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
                rated=counts.get(block.id, 0) if counts is not None else None,
                total=len(block.item_order),
            )
        )
    return states


# Built once, with the ids as parameters: building the statement (SQLModel's
# column comparisons, the join) cost more CPU than running it, on every score
# post; the compiled form is cached by SQLAlchemy either way.
_BLOCK_STATE = (
    select(
        Block,
        Scale,
        select(func.count(Block.id))
        .where(Block.rater_id == bindparam("rater_key"))
        .scalar_subquery(),
    )
    .join(Scale, Scale.id == Block.scale_id)
    .where(Block.id == bindparam("block_key"), Block.rater_id == bindparam("rater_key"))
)


# The same with the block's rated places as one string ("1,2,3"), for the
# item pages: one statement less per score post than querying them after.
# aggregate_strings is group_concat on SQLite and string_agg on PostgreSQL.
_BLOCK_STATE_WITH_PLACES = _BLOCK_STATE.add_columns(
    select(func.aggregate_strings(cast(Rating.position, String), ","))
    .where(Rating.block_id == Block.id)
    .scalar_subquery()
)


def _places(text: str | None) -> set[int]:
    return {int(place) for place in text.split(",")} if text else set()


def block_state(
    session: Session, user: User, block_id: int, *, rated_places: bool = False
) -> BlockState | None:
    """The rater's own block ``block_id`` (``rated`` not counted); ``None`` for anyone else's.

    A started or completed block's status is its own (see
    :func:`block_states`): that case, every score post, is one query for the
    block, its scale and the rater's number of blocks, and with
    ``rated_places`` the places of the block that are rated
    (``BlockState.rated_places``). A block not started yet depends on the
    one before it and goes through :func:`block_states`.
    """
    statement = _BLOCK_STATE_WITH_PLACES if rated_places else _BLOCK_STATE
    row = session.exec(statement, params={"block_key": block_id, "rater_key": user.id}).first()
    if row is None:
        return None
    block, scale, total, *places = row
    if block.started_at is not None or block.completed_at is not None:
        return BlockState(
            block=block,
            scale=scale,
            status=BlockStatus.DONE if block.completed_at is not None else BlockStatus.IN_PROGRESS,
            opens_at=None,
            rated=None,
            total=len(block.item_order),
            blocks_total=total,
            rated_places=_places(places[0]) if places else None,
        )
    for state in block_states(session, user, count_rated=False):
        if state.block.id == block_id:
            state.blocks_total = total
            return state
    return None


def count_blocks(session: Session, user: User) -> int:
    return session.exec(select(func.count(Block.id)).where(Block.rater_id == user.id)).one()


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
    if state.status == BlockStatus.CLOSED:
        raise BlockUnavailable(
            "This study is complete: it has the ratings it needs, so no new block starts. "
            "Thank you!"
        )
    study = session.get(Study, user.study_id)
    regular, gold = _study_items(session, study)
    if not regular:
        raise BlockUnavailable("This study has no items to rate yet. Please come back later.")
    overlap = dealing.overlap_spec(study)
    if overlap is not None:
        # An overlap design: this block's share of the items (dealing.py).
        # A rater who left (and was excluded for it) has given their items back.
        if user.status != RaterStatus.ACTIVE:
            raise BlockUnavailable(
                "Your places in this study went to other raters; there is nothing more to rate."
            )
        try:
            regular = dealing.deal_block(session, study, overlap, block)
        except dealing.StudyFull:
            raise BlockUnavailable(
                "Every item of this scale has all the ratings it needs; thank you."
            ) from None
    attention = attention_settings(study.attention_checks)
    retest = retest_settings(study.test_retest)
    block.item_order = protocol.item_order(
        block.seed,
        regular,
        gold,
        attention_per_session=attention.per_session,
        retest_share=retest.share,
        retest_min_distance=retest.min_distance,
    )
    block.started_at = now()
    session.add(block)
    session.flush()
    return block
