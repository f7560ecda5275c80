"""A rater's personal return link: issued, explained when missing, looked up, shown.

Owned by the study's raters (:mod:`annotator.study.raters` reissues a link);
enrolment issues the first one.
"""

from __future__ import annotations

import secrets

from sqlmodel import Session, select

from ..clock import now
from ..models import Role, User, UserSource

__all__ = ["issue_return_link", "no_return_link", "rater_by_return_token", "return_url"]


def issue_return_link(user: User) -> None:
    """Give ``user`` a new personal return link; any earlier one stops working."""
    # 32 random bytes: the link alone logs the rater in, like a password.
    user.return_token = secrets.token_urlsafe(32)
    user.return_token_issued_at = now()


def no_return_link(rater: User) -> str:
    """Why ``rater`` has no return link."""
    if rater.source == UserSource.IMPORT:
        reason = "was imported"
    elif rater.source == UserSource.CROWD:
        reason = "came in by the crowd entry link"
    else:
        reason = "declined to take part"
    return f"rater {rater.rater_code} {reason} and has no return link"


def rater_by_return_token(session: Session, token: str) -> User | None:
    if not token:
        return None
    return session.exec(
        select(User).where(User.return_token == token, User.role == Role.RATER)
    ).first()


def return_url(token: str, base_url: str) -> str:
    """The rater's personal way back in (served by the rate blueprint)."""
    return f"{base_url.rstrip('/')}/r/{token}"
