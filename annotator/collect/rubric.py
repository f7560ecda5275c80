"""Storing a rater's scores of one item on every criterion of a rubric study.

An item's criteria are stored together or not at all: every score is
checked before anything is written, a refused score raises
:class:`RubricScoreError` naming each refused criterion, and the caller
commits the ratings of all criteria at once. Each criterion's rating keeps
its own history (:class:`~annotator.models.RatingChange`), as a single
score's does in :mod:`annotator.collect.scoring`. A study without criteria
never comes here.

Data-access functions take the session and leave the commit to the caller,
except :func:`rate_rubric_item`, which commits as
:func:`~annotator.collect.scoring.rate_item` does and for the same reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import insert
from sqlmodel import Session, select

from ..clock import now
from ..db import commit_retrying
from ..models import (
    Benchmark,
    Block,
    ChangeReason,
    Criterion,
    Item,
    Rating,
    RatingChange,
    Scale,
    User,
)
from ..models.revision import bump_revision, study_of_scale
from ..study.criteria import criteria_for
from .item_pages import ItemPage, item_and_benchmark, item_page, serve, update_block
from .rated_places import next_position, ratings_by_position
from .scores import ScoreError, parse_score
from .scoring import new_rating_columns, refuse_unserved, revise_rating

__all__ = [
    "RubricScoreError",
    "RubricSubmitted",
    "item_criteria",
    "position_ratings",
    "submit_rubric",
    "rate_rubric_item",
]


class RubricScoreError(ValueError):
    """Scores the scale does not allow, by criterion name (the rater's sentence each)."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        self.errors = dict(errors)
        super().__init__("; ".join(f"{name}: {text}" for name, text in self.errors.items()))


@dataclass
class RubricSubmitted:
    # The criterion's rating after the post, by criterion name.
    ratings: dict[str, Rating]
    # "create", "revise" or "unchanged" by criterion name.
    outcomes: dict[str, str]
    block_completed: bool

    @property
    def rating(self) -> Rating:
        """The first criterion's rating (an item's ratings share place and flags)."""
        return next(iter(self.ratings.values()))


def item_criteria(
    session: Session, study_id: int, *, benchmark: str | None = None, item_id: int | None = None
) -> list[Criterion]:
    """The criteria of ``study_id`` that apply to ``benchmark``, or to the
    benchmark of the item ``item_id``; none: not a rubric study (one query)."""
    criteria = session.exec(
        select(Criterion).where(Criterion.study_id == study_id).order_by(Criterion.position)
    ).all()
    if not criteria:
        return []
    if benchmark is None:
        benchmark = session.exec(
            select(Benchmark.name)
            .join(Item, Item.benchmark_id == Benchmark.id)
            .where(Item.id == item_id)
        ).one()
    return criteria_for(criteria, benchmark)


def position_ratings(session: Session, block: Block, position: int) -> dict[str, Rating]:
    """The block's ratings at ``position`` by criterion name."""
    rows = session.exec(
        select(Rating).where(Rating.block_id == block.id, Rating.position == position)
    ).all()
    return {rating.criterion: rating for rating in rows}


def _parse_all(raws: Mapping[str, str], criteria: Sequence[str], scale: Scale) -> dict[str, float]:
    values: dict[str, float] = {}
    errors: dict[str, str] = {}
    for name in criteria:
        try:
            values[name] = parse_score(raws.get(name, ""), scale)
        except ScoreError as exc:
            errors[name] = str(exc)
    if errors:
        raise RubricScoreError(errors)
    return values


def submit_rubric(
    session: Session,
    user: User,
    block: Block,
    scale: Scale,
    position: int,
    raws: Mapping[str, str],
    criteria: Sequence[str],
    *,
    serve_following: bool = False,
) -> RubricSubmitted:
    """Store the scores of the entry at ``position`` on each of ``criteria``.

    Raises :class:`RubricScoreError` when any score is refused and
    :class:`BlockUnavailable` for a place not served yet, with nothing
    stored. A criterion given the value it has stores nothing; a new value
    is a revision in that criterion's history.
    """
    values = _parse_all(raws, criteria, scale)
    rated = ratings_by_position(session, block)
    existing = position_ratings(session, block, position) if position in rated else {}
    current = now()
    if not existing and position != next_position(block, rated):
        refuse_unserved(block, position)
    common = new_rating_columns(session, user, block, position, current)
    ratings: dict[str, Rating] = {}
    outcomes: dict[str, str] = {}
    for name in criteria:
        value = values[name]
        rating = existing.get(name)
        if rating is None:
            columns = {**common, "criterion": name, "value": value}
            rating_id = session.execute(insert(Rating.__table__), columns).inserted_primary_key[0]
            session.execute(
                insert(RatingChange.__table__),
                {
                    "rating_id": rating_id,
                    "value": value,
                    "previous_value": None,
                    "changed_at": current,
                    "reason": ChangeReason.CREATE,
                    "actor_id": user.id,
                },
            )
            rating = Rating.model_construct(id=rating_id, **columns)
            outcomes[name] = "create"
        elif rating.value == value:
            outcomes[name] = "unchanged"
        else:
            revise_rating(session, rating, value, actor_id=user.id, at=current)
            outcomes[name] = "revise"
        ratings[name] = rating
    session.flush()
    if "create" in outcomes.values():
        # Core inserts: the ORM's flush does not see them (a revise does).
        bump_revision(session, study_of_scale(block.scale_id))
    rated[position] = ratings[criteria[0]]
    completed = False
    following = next_position(block, rated)
    if following is None and block.completed_at is None:
        update_block(
            session, block, completed_at=current, current_position=None, current_served_at=None
        )
        completed = True
    elif serve_following and following == position + 1:
        serve(session, block, following)
    return RubricSubmitted(ratings=ratings, outcomes=outcomes, block_completed=completed)


@dataclass
class RubricScored:
    submitted: RubricSubmitted
    # The page of the next place when it was asked for and there is one.
    following: ItemPage | None


def rate_rubric_item(
    session: Session,
    user: User,
    block: Block,
    scale: Scale,
    position: int,
    raws: Mapping[str, str],
    criteria: Sequence[str],
    *,
    break_every: int | None,
    show_following: bool = False,
    following_loaded: tuple[Item, Benchmark] | None = None,
) -> RubricScored:
    """Store a rater's scores of ``position`` on every criterion and commit them.

    Raises what :func:`submit_rubric` raises, with nothing stored. A twin
    request or SQLite's "database is locked" reruns the whole transaction
    (:func:`~annotator.db.commit_retrying`), which then finds the twin's
    ratings and stores nothing new. ``following_loaded``: as
    :func:`~annotator.collect.scoring.rate_item`'s.
    """

    def work() -> RubricScored:
        following_wanted = show_following and position < len(block.item_order)
        submitted = submit_rubric(
            session,
            user,
            block,
            scale,
            position,
            raws,
            criteria,
            serve_following=following_wanted,
        )
        following = None
        if following_wanted and not submitted.block_completed:
            rated = ratings_by_position(session, block)
            loaded = following_loaded or item_and_benchmark(
                session, block.item_order[position]["item"]
            )
            following = item_page(
                session, block, position + 1, rated, break_every=break_every, loaded=loaded
            )
        return RubricScored(submitted=submitted, following=following)

    return commit_retrying(session, work)
