"""How far each study is: counts for the lead's pages and `annotator study list`."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func
from sqlmodel import Session, select

from ..collect.block_states import BlockState, BlockStatus, block_states
from ..models import (
    AuditAction,
    AuditEvent,
    Demographics,
    Item,
    LLMScore,
    Rating,
    Role,
    Scale,
    Study,
    User,
)
from ..study.members import visible_studies
from ..study.raters import counted_rater
from ..study.return_links import return_url
from ..study.studies import link_base_url, study_scales

__all__ = ["study_overviews", "RaterRow", "rater_rows"]


def _per_study(session: Session, query) -> dict[int, int]:
    return dict(session.exec(query.group_by(Item.study_id)).all())


def study_overviews(session: Session, *, lead: User | None = None) -> list[dict]:
    """Each study with its counts of items, raters, ratings and LLM scores.

    Raters and ratings are those that count: withdrawn and excluded raters'
    are left out, as in every export and statistic. ``lead``: only the studies
    that lead sees (:func:`annotator.study.members.visible_studies`); None:
    every study (the command line).
    """
    items = _per_study(session, select(Item.study_id, func.count(Item.id)))
    # Items with a gold score are attention checks: the dashboard counts them apart.
    checks = _per_study(
        session, select(Item.study_id, func.count(Item.id)).where(Item.gold_score.is_not(None))
    )
    ratings = _per_study(
        session,
        select(Item.study_id, func.count(Rating.id))
        .join(Rating, Rating.item_id == Item.id)
        .where(counted_rater(Rating.rater_id)),  # whose ratings count
    )
    llm = _per_study(
        session,
        select(Item.study_id, func.count(LLMScore.id)).join(LLMScore, LLMScore.item_id == Item.id),
    )
    raters = dict(
        session.exec(
            select(User.study_id, func.count(User.id))
            .where(User.role == Role.RATER, counted_rater(User.id))  # whose ratings count
            .group_by(User.study_id)
        ).all()
    )
    return [
        {
            "study": study,
            "n_items": items.get(study.id, 0),
            "n_checks": checks.get(study.id, 0),
            "raters": raters.get(study.id, 0),
            "ratings": ratings.get(study.id, 0),
            "llm_scores": llm.get(study.id, 0),
        }
        for study in session.exec(
            select(Study).where(visible_studies(lead)).order_by(Study.created_at)
        )
    ]


@dataclass
class RaterRow:
    user: User
    questionnaire_done: bool
    blocks: list[BlockState]
    # The block a gap lift would open, if any (and not lifted already).
    liftable: BlockState | None
    lifts: int
    # Ratings stored outside the app's blocks (imported), per scale name.
    imported: dict[str, int] = field(default_factory=dict)
    return_link: str | None = None

    @property
    def done(self) -> int:
        return sum(1 for b in self.blocks if b.status == BlockStatus.DONE)


def rater_rows(session: Session, study: Study) -> list[RaterRow]:
    users = session.exec(
        select(User)
        .where(User.study_id == study.id, User.role == Role.RATER)
        .order_by(User.created_at, User.id)
    ).all()
    answered = set(
        session.exec(
            select(Demographics.user_id).where(Demographics.user_id.in_([u.id for u in users]))
        ).all()
    )
    lift_counts: dict[int, int] = {}
    for subject_id in session.exec(
        select(AuditEvent.subject_id).where(
            AuditEvent.study_id == study.id, AuditEvent.action == AuditAction.GAP_LIFTED
        )
    ).all():
        lift_counts[subject_id] = lift_counts.get(subject_id, 0) + 1
    imported = _imported_counts(session, study)
    base_url = link_base_url()
    rows = []
    for user in users:
        states = block_states(session, user)
        pending = next(
            (s for s in states if s.block.position > 1 and s.block.started_at is None), None
        )
        liftable = pending if pending is not None and pending.block.gap_lifted_at is None else None
        rows.append(
            RaterRow(
                user=user,
                questionnaire_done=user.id in answered,
                blocks=states,
                liftable=liftable,
                lifts=lift_counts.get(user.id, 0),
                imported=imported.get(user.id, {}),
                return_link=return_url(user.return_token, base_url) if user.return_token else None,
            )
        )
    return rows


def _imported_counts(session: Session, study: Study) -> dict[int, dict[str, int]]:
    """Per rater and scale, the ratings that belong to no block (imported ones)."""
    names = {scale.id: scale.name for scale in study_scales(session, study)}
    counts: dict[int, dict[str, int]] = {}
    for rater_id, scale_id, count in session.exec(
        select(Rating.rater_id, Rating.scale_id, func.count(Rating.id))
        .join(Scale, Scale.id == Rating.scale_id)
        .where(Scale.study_id == study.id, Rating.block_id.is_(None))
        .group_by(Rating.rater_id, Rating.scale_id)
    ).all():
        counts.setdefault(rater_id, {})[names[scale_id]] = count
    # In the study's scale order.
    order = list(names.values())
    return {
        rater: dict(sorted(per_scale.items(), key=lambda kv: order.index(kv[0])))
        for rater, per_scale in counts.items()
    }
