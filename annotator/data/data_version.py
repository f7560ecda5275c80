"""The version of a study's data: what cached results are keyed by."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import Session, select

from ..models import Rating, Scale, Study

__all__ = ["data_version", "rating_count"]


def data_version(session: Session, study: Study) -> tuple:
    """The study's revision and file, read afresh: they change whenever its data changes.

    Used as the key of cached results. The revision is bumped in the same
    transaction as every change of the study's ratings, rating history, LLM
    scores, items, blocks (started, completed), demographic answers and rater
    statuses (:mod:`annotator.models.revision`); one indexed lookup where the
    aggregates over those tables took seven queries.
    """
    revision, source = session.exec(
        select(Study.revision, Study.source_toml).where(Study.id == study.id)
    ).one()
    return (study.id, revision, source)


def rating_count(session: Session, study: Study) -> int:
    """The number of the study's ratings: what a stale dashboard counts as new since.

    Read only where a dashboard is computed or shown stale, not on every request.
    """
    scale_ids = select(Scale.id).where(Scale.study_id == study.id).scalar_subquery()
    # count(*), not count(id): the same number (ids are never null), and SQLite then
    # counts index entries without reading each one's id.
    return session.exec(select(func.count()).where(Rating.scale_id.in_(scale_ids))).one()
