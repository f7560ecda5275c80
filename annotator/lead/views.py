"""Queries behind the lead's pages."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import Session, select

from ..models import Item, LLMScore, Rating, Role, Scale, Study, User

__all__ = ["study_overviews", "scale_progress"]


def _per_study(session: Session, query) -> dict[int, int]:
    return dict(session.exec(query.group_by(Item.study_id)).all())


def study_overviews(session: Session) -> list[dict]:
    """Each study with its counts of items, raters, ratings and LLM scores."""
    items = _per_study(session, select(Item.study_id, func.count(Item.id)))
    ratings = _per_study(
        session,
        select(Item.study_id, func.count(Rating.id)).join(Rating, Rating.item_id == Item.id),
    )
    llm = _per_study(
        session,
        select(Item.study_id, func.count(LLMScore.id)).join(LLMScore, LLMScore.item_id == Item.id),
    )
    raters = dict(
        session.exec(
            select(User.study_id, func.count(User.id))
            .where(User.role == Role.RATER)
            .group_by(User.study_id)
        ).all()
    )
    return [
        {
            "study": study,
            "n_items": items.get(study.id, 0),
            "raters": raters.get(study.id, 0),
            "ratings": ratings.get(study.id, 0),
            "llm_scores": llm.get(study.id, 0),
        }
        for study in session.exec(select(Study).order_by(Study.created_at))
    ]


def scale_progress(session: Session, study: Study) -> list[dict]:
    """Per scale: the number of human ratings and of raters who gave any."""
    rows = session.exec(
        select(Scale, func.count(Rating.id), func.count(func.distinct(Rating.rater_id)))
        .join(Rating, Rating.scale_id == Scale.id, isouter=True)
        .where(Scale.study_id == study.id)
        .group_by(Scale.id)
        .order_by(Scale.position)
    ).all()
    return [{"scale": scale, "ratings": n, "raters": raters} for scale, n, raters in rows]
