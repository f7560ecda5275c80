"""The version of a study's data: what cached results are keyed by."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import Session, select

from ..models import Block, Demographics, Item, LLMScore, Rating, RatingChange, Scale, Study, User

__all__ = ["data_version"]


def data_version(session: Session, study: Study) -> tuple:
    """Cheap aggregates that change whenever the study's data changes.

    Used as the key of cached results: the highest and the number of rating,
    LLM score ids, the highest rating change id, the number of items and of started and
    completed blocks, the number of demographic answers, and the number and
    latest time of rater status changes (withdrawn, excluded, included).
    """
    scale_ids = select(Scale.id).where(Scale.study_id == study.id).scalar_subquery()
    ratings = session.exec(
        select(func.max(Rating.id), func.count(Rating.id)).where(Rating.scale_id.in_(scale_ids))
    ).one()
    # Any study's revision invalidates: the primary key's maximum is one
    # index lookup, where counting this study's changes would scan them.
    changes = session.exec(select(func.max(RatingChange.id))).one()
    llm = session.exec(
        select(func.max(LLMScore.id), func.count(LLMScore.id)).where(
            LLMScore.scale_id.in_(scale_ids)
        )
    ).one()
    items = session.exec(
        select(func.max(Item.id), func.count(Item.id)).where(Item.study_id == study.id)
    ).one()
    blocks = session.exec(
        select(
            func.count(Block.id),
            func.count(Block.started_at),
            func.count(Block.completed_at),
        ).where(Block.scale_id.in_(scale_ids))
    ).one()
    answers = session.exec(
        select(func.max(Demographics.id), func.count(Demographics.id))
        .join(User, User.id == Demographics.user_id)
        .where(User.study_id == study.id)
    ).one()
    # Withdrawing, excluding or including a rater changes what counts.
    statuses = session.exec(
        select(func.count(User.id), func.max(User.status_changed_at)).where(
            User.study_id == study.id, User.status_changed_at.is_not(None)
        )
    ).one()
    return (
        study.id,
        tuple(ratings),
        tuple(statuses),
        changes,
        tuple(llm),
        tuple(items),
        tuple(blocks),
        tuple(answers),
        study.source_toml,
    )
