"""The study's revision: one more with every change of its data, in the same transaction.

Cached results (dashboards, reports, job rows) are keyed by it instead of
aggregates over the study's ratings, LLM scores, items, blocks, answers and
rater statuses (seven queries on every page or job request). Two ways in:

- every ORM flush that adds, deletes or changes a row of those tables bumps
  its study's revision (:func:`_bump_on_flush`, a ``before_flush`` listener on
  every session), so no write path can forget it;
- a Core statement (bulk imports, the one-statement score post, deletions by
  query) bypasses the ORM and calls :func:`bump_revision` itself.
"""

from __future__ import annotations

from sqlalchemy import event, inspect, or_, select, update
from sqlalchemy.orm import Session

from .accounts import Demographics, User
from .judges import LLMScore
from .ratings import Block, Rating, RatingChange
from .study import Item, Scale, Study

__all__ = ["bump_revision", "bump_statement", "study_of_scale"]

_STUDY = Study.__table__

# Changes of a block or a rater that the analysis sees (a block's entries: an
# item passed over or dealt to it); serving the next place (current_position,
# current_served_at) is no change of the data.
_WATCHED = {
    Block: ("started_at", "completed_at", "item_order", "scale_id", "rater_id"),
    User: ("status", "status_changed_at", "study_id"),
}
_ANY_CHANGE = (Rating, RatingChange, LLMScore, Item, Demographics)


def study_of_scale(scale_id):
    """The study of ``scale_id`` (a value or a SQL expression), as a scalar subquery."""
    return (
        select(Scale.__table__.c.study_id).where(Scale.__table__.c.id == scale_id).scalar_subquery()
    )


def bump_statement(study_id):
    """The UPDATE that adds one to the revision of ``study_id`` (a value or SQL expression)."""
    return update(_STUDY).where(_STUDY.c.id == study_id).values(revision=_STUDY.c.revision + 1)


def bump_revision(session: Session, study_id) -> None:
    """Add one to the study's revision in the session's transaction.

    ``study_id`` may be a SQL expression (e.g. :func:`study_of_scale`). Called
    by every Core write of the study's data; ORM writes bump on their own.
    """
    session.connection().execute(bump_statement(study_id))


def _changed(obj) -> bool:
    watched = _WATCHED.get(type(obj))
    if watched is None:
        return True
    state = inspect(obj)
    return any(state.attrs[name].history.has_changes() for name in watched)


@event.listens_for(Session, "before_flush")
def _bump_on_flush(session: Session, flush_context, instances) -> None:
    """Bump the revision of every study whose data this flush changes."""
    tracked = (*_ANY_CHANGE, *_WATCHED)
    objects = [o for o in session.new if isinstance(o, tracked)]
    objects += [o for o in session.deleted if isinstance(o, tracked)]
    objects += [
        o
        for o in session.dirty
        if isinstance(o, tracked) and session.is_modified(o) and _changed(o)
    ]
    if not objects:
        return
    studies, scales, users, ratings = set(), set(), set(), set()
    for obj in objects:
        if isinstance(obj, (Item, User)):
            studies.add(obj.study_id)
            # A rater moved between studies (never done, but cheap to cover).
            if isinstance(obj, User):
                history = inspect(obj).attrs.study_id.history
                studies.update(history.deleted or ())
        elif isinstance(obj, (Rating, Block, LLMScore)):
            scales.add(obj.scale_id)
        elif isinstance(obj, Demographics):
            users.add(obj.user_id)
        else:
            ratings.add(obj.rating_id)
    studies.discard(None)
    scales.discard(None)
    users.discard(None)
    ratings.discard(None)
    study, scale = _STUDY.c, Scale.__table__.c
    which = []
    if studies:
        which.append(study.id.in_(studies))
    if scales:
        which.append(study.id.in_(select(scale.study_id).where(scale.id.in_(scales))))
    if users:
        user = User.__table__.c
        which.append(study.id.in_(select(user.study_id).where(user.id.in_(users))))
    if ratings:
        rating = Rating.__table__.c
        which.append(
            study.id.in_(
                select(scale.study_id)
                .join(Rating.__table__, rating.scale_id == scale.id)
                .where(rating.id.in_(ratings))
            )
        )
    if which:
        # Before the flush's own statements: a rating change whose rating
        # this flush deletes still finds its study.
        session.connection().execute(
            update(_STUDY).where(or_(*which)).values(revision=study.revision + 1)
        )
