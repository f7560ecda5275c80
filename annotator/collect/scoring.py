"""Storing a rater's score: the checks, the rating, its history row, the block's progress.

This is the hot path of a study (one request per score), so the writes are
SQLAlchemy Core statements rather than ORM objects and a flush: the unit of
work (building and validating a model, change tracking, ordering the
inserts) cost more CPU than the statements themselves. What is stored and
checked is the same either way; the checks come before any write.

Test-retest repeats are stored as separate ratings with ``is_repeat`` set,
so a repeat never touches the first rating of the item.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlalchemy import bindparam, insert, null, select, update
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session

from ..clock import now
from ..db import commit_retrying
from ..models import (
    Benchmark,
    Block,
    ChangeReason,
    Item,
    Rating,
    RatingChange,
    RatingSource,
    Scale,
    Study,
    User,
)
from ..models.revision import bump_revision, bump_statement, study_of_scale
from .block_states import BlockUnavailable
from .item_pages import ItemPage, item_and_benchmark, item_page, serve, update_block
from .rated_places import RatedPlaces, next_position, passed_over, ratings_by_position
from .scores import parse_score

__all__ = ["Submitted", "submit_score", "Scored", "rate_item"]

# Built once: the columns come as parameters, so every post runs the same
# statement, compiled once per process (SQLAlchemy's statement cache).
_INSERT_RATING = insert(Rating.__table__)
_INSERT_CHANGE = insert(RatingChange.__table__)


@dataclass
class Submitted:
    rating: Rating
    # "create", "revise" or "unchanged" (a repeated submission).
    outcome: str
    block_completed: bool


def _record_change(session: Session, **values) -> None:
    session.execute(_INSERT_CHANGE, values)


_RATING_COLUMNS = (
    "rater_id",
    "item_id",
    "scale_id",
    "criterion",
    "block_id",
    "value",
    "position",
    "is_repeat",
    "is_attention_check",
    "served_at",
    "submitted_at",
    "source",
    "study_version",
)


@cache
def _create_in_one_statement(block_columns: tuple[str, ...]):
    """PostgreSQL: the rating, its first history row and the block's update as one statement.

    Data-modifying CTEs (which SQLite lacks): one round trip to the server
    instead of three, each of which also cost the statement's execution
    overhead here. The same rows and checks as the three statements: the
    rating's unique key still raises IntegrityError for a twin request, and
    the whole statement then stores nothing. Built once per set of block
    columns (serving the next place, completing the block, or none).
    """
    rating, change, block = Rating.__table__, RatingChange.__table__, Block.__table__
    # Parameters named after no column: SQLAlchemy adds an execution
    # parameter named as a column of an INSERT's or UPDATE's table to its
    # columns, in a CTE too (the block's UPDATE got the rating's position).
    new = (
        insert(rating)
        .values(
            {name: bindparam(f"new_{name}", type_=rating.c[name].type) for name in _RATING_COLUMNS}
        )
        .returning(rating.c.id)
        .cte("new_rating")
    )
    history = insert(change).from_select(
        ["rating_id", "value", "previous_value", "changed_at", "reason", "actor_id"],
        select(
            new.c.id,
            bindparam("new_value", type_=change.c.value.type),
            null(),
            bindparam("new_submitted_at", type_=change.c.changed_at.type),
            bindparam("new_reason", type_=change.c.reason.type),
            bindparam("new_rater_id", type_=change.c.actor_id.type),
        ),
    )
    # The study's revision, in the same statement (the key of its cached results).
    bump = bump_statement(
        study_of_scale(bindparam("new_scale_id", type_=rating.c.scale_id.type))
    ).cte("revision_bump")
    statement = select(new.c.id).add_cte(history.cte("new_change")).add_cte(bump)
    if block_columns:
        statement = statement.add_cte(
            update(block)
            .where(block.c.id == bindparam("block_key"))
            .values(
                {
                    name: bindparam(f"block_{name}", type_=block.c[name].type)
                    for name in block_columns
                }
            )
            .cte("block_update")
        )
    return statement


def _in_one_statement(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _create(session: Session, columns: dict, block: Block, block_values: dict) -> int:
    """Insert a new rating and its first history row, and update the block; the rating's id."""
    if _in_one_statement(session):
        statement = _create_in_one_statement(tuple(sorted(block_values)))
        params = {
            **{f"new_{name}": value for name, value in columns.items()},
            "new_reason": ChangeReason.CREATE.value,
            "block_key": block.id,
            **{f"block_{name}": value for name, value in block_values.items()},
        }
        rating_id = session.connection().execute(statement, params).scalar_one()
        for name, value in block_values.items():
            set_committed_value(block, name, value)
        return rating_id
    rating_id = session.execute(_INSERT_RATING, columns).inserted_primary_key[0]
    _record_change(
        session,
        rating_id=rating_id,
        value=columns["value"],
        previous_value=None,
        changed_at=columns["submitted_at"],
        reason=ChangeReason.CREATE,
        actor_id=columns["rater_id"],
    )
    if block_values:
        update_block(session, block, **block_values)
    bump_revision(session, study_of_scale(columns["scale_id"]))
    return rating_id


def revise_rating(session: Session, rating: Rating, value: float, *, actor_id: int, at) -> None:
    """Give a stored rating a new value, the change kept in its history."""
    _record_change(
        session,
        rating_id=rating.id,
        value=value,
        previous_value=rating.value,
        changed_at=at,
        reason=ChangeReason.REVISE,
        actor_id=actor_id,
    )
    # A revision is rare: the ORM's flush is good enough for it.
    rating.value = value
    session.add(rating)


def refuse_unserved(block: Block, position: int) -> None:
    """Raise :class:`BlockUnavailable` for a new rating of a place that is not
    the next one (passed over, or ahead of the rater)."""
    if passed_over(block, position):
        raise BlockUnavailable(
            "You passed over this item because it could not be shown; it stays passed over."
        )
    raise BlockUnavailable("Please rate the items in the order they are shown.")


def new_rating_columns(session: Session, user: User, block: Block, position: int, current) -> dict:
    """The columns of a new rating of ``position`` but its value (and criterion)."""
    entry = block.item_order[position - 1]
    return {
        "rater_id": user.id,
        "item_id": entry["item"],
        "scale_id": block.scale_id,
        # Named in every insert: PostgreSQL's one-statement insert (a CTE)
        # would send NULL for a column left to its Python default. A rubric's
        # criteria replace it.
        "criterion": "",
        "block_id": block.id,
        "position": position,
        "is_repeat": bool(entry["repeat"]),
        "is_attention_check": bool(entry["attention"]),
        # The served time of the place being shown (None: not noted).
        "served_at": block.current_served_at if block.current_position == position else None,
        "submitted_at": current,
        "source": RatingSource.APP.value,
        "study_version": session.get(Study, user.study_id).version,
    }


def submit_score(
    session: Session,
    user: User,
    block: Block,
    scale: Scale,
    position: int,
    raw: str,
    *,
    rated: RatedPlaces | dict[int, Rating] | None = None,
    serve_following: bool = False,
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
    A new rating is returned as a detached ``Rating`` (written with an
    INSERT, not through the session).

    Two identical requests at once: the loser's INSERT violates the unique
    key of Rating and raises ``IntegrityError`` (see :func:`rate_item`).

    ``serve_following``: a new rating whose next place is the first unrated
    one marks that place as served now, in the same write (what
    :func:`~annotator.collect.item_pages.serve` would do after it).
    """
    value = parse_score(raw, scale)
    if rated is None:
        rated = ratings_by_position(session, block)
    rating = rated.get(position)
    current = now()
    completed = False
    if rating is None:
        if position != next_position(block, rated):
            refuse_unserved(block, position)
        columns = new_rating_columns(session, user, block, position, current)
        columns["value"] = value
        # What the block needs once this rating is in, written with it.
        following = next_position(block, rated, besides=position)
        block_values: dict = {}
        if following is None and block.completed_at is None:
            # Only a new rating can complete the block: the last unrated place.
            block_values = {
                "completed_at": current,
                "current_position": None,
                "current_served_at": None,
            }
            completed = True
        elif serve_following and following == position + 1 and block.current_position != following:
            block_values = {"current_position": following, "current_served_at": current}
        # A twin request's rating, committed first, makes this raise
        # IntegrityError (the unique key of Rating).
        rating_id = _create(session, columns, block, block_values)
        # A record of what was written, for the caller to read: built
        # without pydantic's validation (done above), a seventh of the cost.
        rating = Rating.model_construct(id=rating_id, **columns)
        rated[position] = rating
        outcome = "create"
    elif rating.value == value:
        outcome = "unchanged"
    else:
        revise_rating(session, rating, value, actor_id=user.id, at=current)
        outcome = "revise"
    # A block whose places were all rated before (not through a new rating
    # here, which completed it above) is completed as it was before.
    if not completed and block.completed_at is None and next_position(block, rated) is None:
        update_block(
            session, block, completed_at=current, current_position=None, current_served_at=None
        )
        completed = True
    return Submitted(rating=rating, outcome=outcome, block_completed=completed)


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
    positions: set[int] | None = None,
    following_loaded: tuple[Item, Benchmark] | None = None,
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

    ``positions``: the block's rated places as already read in this
    transaction (``BlockState.rated_places``), used by the first attempt
    only: a rerun after a rollback reads them again. ``following_loaded``: the next
    entry's item and benchmark if the caller read them already
    (:func:`~annotator.collect.item_pages.items_and_benchmarks`); an item's row is
    not changed by a score, so a rerun uses them too.
    """
    first_attempt = [positions]

    def work() -> Scored:
        rated = ratings_by_position(session, block, first_attempt.pop() if first_attempt else None)
        following_wanted = show_following and position < len(block.item_order)
        # The next entry's item is read before the writes: SQLite holds its
        # write lock from the first write to the commit, and every other
        # writer (the other server processes) waits for it meanwhile.
        loaded = (
            following_loaded or item_and_benchmark(session, block.item_order[position]["item"])
            if following_wanted
            else None
        )
        submitted = submit_score(
            session,
            user,
            block,
            scale,
            position,
            raw,
            rated=rated,
            serve_following=following_wanted,
        )
        following = None
        if following_wanted and not submitted.block_completed:
            if position + 1 == next_position(block, rated):
                serve(session, block, position + 1)
            following = item_page(
                session, block, position + 1, rated, break_every=break_every, loaded=loaded
            )
        return Scored(submitted=submitted, following=following)

    return commit_retrying(session, work)
