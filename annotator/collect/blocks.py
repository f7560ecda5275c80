"""A rater's blocks: their states, starting one, serving an item and storing a score.

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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import func
from sqlmodel import Session, select

from ..clock import now
from ..db import commit_retrying
from ..models import (
    Benchmark,
    Block,
    ChangeReason,
    Item,
    Rating,
    RatingChange,
    Scale,
    Study,
    User,
)
from ..study.studies import study_scales
from ..study.studyfile import attention_settings, retest_settings
from . import protocol
from .scores import parse_score

__all__ = [
    "BlockUnavailable",
    "BlockState",
    "block_states",
    "block_state",
    "count_blocks",
    "start_block",
    "ratings_by_position",
    "RatedPlaces",
    "next_position",
    "serve",
    "submit_score",
    "Submitted",
    "ItemPage",
    "item_page",
    "open_item",
    "Scored",
    "rate_item",
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


class BlockUnavailable(Exception):
    """A block that may not be started (yet); the message says why."""


# ----------------------------------------------------------------- blocks


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


def block_state(session: Session, user: User, block_id: int) -> BlockState | None:
    """The rater's own block ``block_id`` (``rated`` not counted); ``None`` for anyone else's.

    A started or completed block's status is its own (see
    :func:`block_states`): that case, every score post, is one query for the
    block, its scale and the rater's number of blocks. A block not started
    yet depends on the one before it and goes through :func:`block_states`.
    """
    blocks_total = select(func.count(Block.id)).where(Block.rater_id == user.id).scalar_subquery()
    row = session.exec(
        select(Block, Scale, blocks_total)
        .join(Scale, Scale.id == Block.scale_id)
        .where(Block.id == block_id, Block.rater_id == user.id)
    ).first()
    if row is None:
        return None
    block, scale, total = row
    if block.started_at is not None or block.completed_at is not None:
        return BlockState(
            block=block,
            scale=scale,
            status=BlockStatus.DONE if block.completed_at is not None else BlockStatus.IN_PROGRESS,
            opens_at=None,
            rated=None,
            total=len(block.item_order),
            blocks_total=total,
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
    study = session.get(Study, user.study_id)
    regular, gold = _study_items(session, study)
    if not regular:
        raise BlockUnavailable("This study has no items to rate yet. Please come back later.")
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


# ---------------------------------------------------------------- ratings


class RatedPlaces(Mapping[int, Rating]):
    """A block's ratings by position, loading a rating only when it is asked for.

    A score post needs every rated place (which place comes next, how many
    are done) but at most two ratings themselves (the place scored and the
    one after it), which mostly do not exist yet. The places are one cheap
    column query; building a full ORM object for each of up to a block's
    hundred-odd ratings on every post cost more than the rest of the query.
    A rating added in this transaction is kept (``rated[position] = rating``).
    Iterating over the values loads each rating: the callers here do not.
    """

    def __init__(self, session: Session, block: Block) -> None:
        self._session = session
        self._block_id = block.id
        self._positions = set(
            session.exec(select(Rating.position).where(Rating.block_id == block.id)).all()
        )
        self._loaded: dict[int, Rating] = {}

    def __contains__(self, position: object) -> bool:
        return position in self._positions

    def __len__(self) -> int:
        return len(self._positions)

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(p for p in self._positions if p is not None))

    def __getitem__(self, position: int) -> Rating:
        if position not in self._positions:
            raise KeyError(position)
        if position not in self._loaded:
            self._loaded[position] = self._session.exec(
                select(Rating)
                .where(Rating.block_id == self._block_id, Rating.position == position)
                .order_by(Rating.id.desc())
            ).first()
        return self._loaded[position]

    def __setitem__(self, position: int, rating: Rating) -> None:
        self._positions.add(position)
        self._loaded[position] = rating


def ratings_by_position(session: Session, block: Block) -> RatedPlaces:
    """The block's ratings by position (loaded one by one when asked for, see RatedPlaces)."""
    return RatedPlaces(session, block)


def next_position(block: Block, rated: Mapping[int, Rating]) -> int | None:
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
    session: Session,
    user: User,
    block: Block,
    scale: Scale,
    position: int,
    raw: str,
    *,
    rated: RatedPlaces | dict[int, Rating] | None = None,
) -> Submitted:
    """Store the score for the entry at ``position``.

    Raises :class:`~annotator.collect.scores.ScoreError` for a score the scale
    does not allow (nothing is stored) and :class:`BlockUnavailable` for a
    place that has not been served yet. A second submission of the same
    value stores nothing; a new value for a rated entry is a revision, kept
    in the rating's history (the rating keeps the served and submitted times
    of its first value; every change has its own time).

    ``rated`` is the block's ratings by position as loaded in this
    transaction (loaded here when not given); a new rating is added to it.

    Two identical requests at once: the loser's INSERT violates the unique
    key of Rating and raises ``IntegrityError`` (see :func:`rate_item`).
    """
    value = parse_score(raw, scale)
    entry = block.item_order[position - 1]
    if rated is None:
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
            study_version=session.get(Study, user.study_id).version,
        )
        session.add(rating)
        session.flush()
        rated[position] = rating
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
    # No flush here: the history row goes with the caller's next query or
    # commit (one flush instead of two); the new rating itself was flushed
    # above, where a twin request's duplicate raises IntegrityError.
    completed = False
    # Only a new rating can complete the block: it is the last unrated place.
    if block.completed_at is None and next_position(block, rated) is None:
        block.completed_at = current
        block.current_position = None
        block.current_served_at = None
        session.add(block)
        completed = True
    return Submitted(rating=rating, outcome=outcome, block_completed=completed)


# ------------------------------------------------------- what the rater sees


@dataclass
class ItemPage:
    """One entry of a block as the rater sees it, with where they are."""

    block: Block
    position: int
    item: Item
    benchmark: Benchmark
    # The rater's rating of this entry, if any: the page then revises it.
    existing: Rating | None
    rated: int
    # The first unrated place (None when all are rated).
    frontier: int | None
    # A break reminder is due before this new entry.
    break_due: bool

    @property
    def total(self) -> int:
        return len(self.block.item_order)


def item_page(
    session: Session,
    block: Block,
    position: int,
    rated: Mapping[int, Rating],
    *,
    break_every: int | None,
) -> ItemPage:
    """The page for ``position`` from the block's ratings already loaded."""
    # The item and its benchmark in one query.
    item, benchmark = session.exec(
        select(Item, Benchmark)
        .join(Benchmark, Benchmark.id == Item.benchmark_id)
        .where(Item.id == block.item_order[position - 1]["item"])
    ).one()
    existing = rated.get(position)
    done_before = position - 1
    break_due = bool(
        existing is None and break_every and done_before > 0 and done_before % break_every == 0
    )
    return ItemPage(
        block=block,
        position=position,
        item=item,
        benchmark=benchmark,
        existing=existing,
        rated=len(rated),
        frontier=next_position(block, rated),
        break_due=break_due,
    )


def open_item(
    session: Session, block: Block, position: int, *, break_every: int | None
) -> ItemPage | int:
    """What a rater asking for ``position`` sees; the caller commits.

    A place beyond the first unrated one returns that place (an ``int``) to
    go to instead; the first unrated place is marked as served from now.
    """
    rated = ratings_by_position(session, block)
    frontier = next_position(block, rated)
    if frontier is not None and position > frontier:
        return frontier
    if position == frontier:
        serve(session, block, position)
    return item_page(session, block, position, rated, break_every=break_every)


@dataclass
class Scored:
    submitted: Submitted
    # The page of the next place when it was asked for and there is one.
    following: ItemPage | None


def rate_item(
    session: Session,
    user: User,
    block: Block,
    scale: Scale,
    position: int,
    raw: str,
    *,
    break_every: int | None,
    show_following: bool = False,
) -> Scored:
    """Store a rater's score for ``position`` and commit it.

    With ``show_following`` the next place is served in the same
    transaction and its page returned, so the block's ratings are loaded
    once per score. Raises what :func:`submit_score` raises, with nothing
    stored.

    Unlike the other functions here this one commits: a twin request (the
    same form sent twice at once) that stored the rating first makes this
    INSERT fail, and only a rolled-back transaction can look again, find
    the twin's rating and store nothing new. The same rerun answers SQLite's
    "database is locked" under several server processes
    (:func:`~annotator.db.commit_retrying`); since the rerun reads the
    ratings afresh, a retried score is still stored once.
    """

    def work() -> Scored:
        rated = ratings_by_position(session, block)
        submitted = submit_score(session, user, block, scale, position, raw, rated=rated)
        following = None
        if show_following and not submitted.block_completed and position < len(block.item_order):
            if position + 1 == next_position(block, rated):
                serve(session, block, position + 1)
            following = item_page(session, block, position + 1, rated, break_every=break_every)
        return Scored(submitted=submitted, following=following)

    return commit_retrying(session, work)
