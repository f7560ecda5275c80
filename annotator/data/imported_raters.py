"""The raters of a ratings import: found or new, their stored ratings and answers.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from sqlmodel import Session, select

from ..models import Demographics, RaterStatus, Rating, Role, Study, User
from ._bulk import _batches
from .readers import Problems
from .sql import fetch_rows

__all__ = ["resolve_raters", "existing_ratings", "store_demographics"]


def resolve_raters(
    session: Session, study: Study, codes: list[str], problems: Problems
) -> dict[str, User | None]:
    """Existing users for the given rater codes (None where a new one is needed)."""
    found: dict[str, User | None] = dict.fromkeys(codes)
    for batch in _batches(codes, 500):
        for user in session.exec(select(User).where(User.rater_code.in_(batch))):
            if user.study_id != study.id or user.role != Role.RATER:
                problems.add(
                    None,
                    "rater",
                    f"rater code {user.rater_code!r} belongs to another study; "
                    "rater codes are unique across studies",
                )
            # A withdrawn rater's ratings never come back (rater status, study/raters.py).
            elif user.status == RaterStatus.WITHDRAWN:
                problems.add(
                    None,
                    "rater",
                    f"rater {user.rater_code!r} has withdrawn from the study; "
                    "their ratings cannot be imported",
                )
            found[user.rater_code] = user
    return found


def existing_ratings(
    session: Session, rater_ids: list[int]
) -> dict[tuple[int, int, int, str], tuple[int, float]]:
    existing: dict[tuple[int, int, int, str], tuple[int, float]] = {}
    for batch in _batches(rater_ids, 500):
        query = select(
            Rating.id,
            Rating.rater_id,
            Rating.item_id,
            Rating.scale_id,
            Rating.criterion,
            Rating.value,
        )
        query = query.where(Rating.rater_id.in_(batch), Rating.is_repeat.is_(False))
        # Plain tuples from the driver: a re-import reads back every rating.
        for rid, rater, item, scale, criterion, value in fetch_rows(session, query):
            existing[(rater, item, scale, criterion)] = (rid, value)
    return existing


def store_demographics(
    session: Session, answers: dict[str, dict[str, str]], rater_ids: dict[str, int], at
) -> None:
    """Keep the demographic columns of imported raters (non-empty answers)."""
    ids = {rater_ids[code]: {k: v for k, v in a.items() if v} for code, a in answers.items()}
    ids = {uid: a for uid, a in ids.items() if a}
    if not ids:
        return
    stored = {
        d.user_id: d
        for batch in _batches(list(ids), 500)
        for d in session.exec(select(Demographics).where(Demographics.user_id.in_(batch)))
    }
    for user_id, values in ids.items():
        if user_id in stored:
            merged = {**stored[user_id].answers, **values}
            if merged != stored[user_id].answers:
                stored[user_id].answers = merged
                session.add(stored[user_id])
        else:
            session.add(Demographics(user_id=user_id, answers=values, submitted_at=at))
