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

from sqlalchemy import insert
from sqlmodel import Session

from ..clock import now
from ..db import commit_retrying
from ..models import Block, ChangeReason, Rating, RatingChange, Scale, Study, User
from .block_states import BlockUnavailable
from .item_pages import ItemPage, item_page, serve, update_block
from .rated_places import RatedPlaces, next_position, ratings_by_position
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
    A new rating is returned as a detached ``Rating`` (written with an
    INSERT, not through the session).

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
        columns = {
            "rater_id": user.id,
            "item_id": entry["item"],
            "scale_id": block.scale_id,
            "block_id": block.id,
            "value": value,
            "position": position,
            "is_repeat": bool(entry["repeat"]),
            "is_attention_check": bool(entry["attention"]),
            "served_at": served_at,
            "submitted_at": current,
            "study_version": session.get(Study, user.study_id).version,
        }
        # A twin request's rating, committed first, makes this raise
        # IntegrityError (the unique key of Rating).
        result = session.execute(_INSERT_RATING, columns)
        # A record of what was written, for the caller to read: built
        # without pydantic's validation (done above), a seventh of the cost.
        rating = Rating.model_construct(id=result.inserted_primary_key[0], **columns)
        rated[position] = rating
        _record_change(
            session,
            rating_id=rating.id,
            value=value,
            previous_value=None,
            changed_at=current,
            reason=ChangeReason.CREATE,
            actor_id=user.id,
        )
        outcome = "create"
    elif rating.value == value:
        outcome = "unchanged"
    else:
        _record_change(
            session,
            rating_id=rating.id,
            value=value,
            previous_value=rating.value,
            changed_at=current,
            reason=ChangeReason.REVISE,
            actor_id=user.id,
        )
        # A revision is rare: the ORM's flush is good enough for it.
        rating.value = value
        session.add(rating)
        outcome = "revise"
    completed = False
    # Only a new rating can complete the block: it is the last unrated place.
    if block.completed_at is None and next_position(block, rated) is None:
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
    only: a rerun after a rollback reads them again.
    """
    first_attempt = [positions]

    def work() -> Scored:
        rated = ratings_by_position(session, block, first_attempt.pop() if first_attempt else None)
        submitted = submit_score(session, user, block, scale, position, raw, rated=rated)
        following = None
        if show_following and not submitted.block_completed and position < len(block.item_order):
            if position + 1 == next_position(block, rated):
                serve(session, block, position + 1)
            following = item_page(session, block, position + 1, rated, break_every=break_every)
        return Scored(submitted=submitted, following=following)

    return commit_retrying(session, work)
