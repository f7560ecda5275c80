"""People and their traces: users (leads and raters), invites, demographic answers,
crowd entries and the audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index
from sqlmodel import Field, SQLModel

from ..choices import (
    RaterStatus,
    Role,
    UserSource,
)
from ..clock import now

__all__ = ["User", "Invite", "Demographics", "AuditEvent", "CrowdEntry", "MIN_PASSWORD_LENGTH"]

MIN_PASSWORD_LENGTH = 8


class User(SQLModel, table=True):
    # A platform participant id names one rater per study (an index, not a
    # constraint, so SQLite adds it without rebuilding the user table).
    __table_args__ = (Index("ix_user_study_platform", "study_id", "platform_id", unique=True),)

    id: int | None = Field(default=None, primary_key=True)
    # A Role.
    role: str = Field(max_length=10, index=True)
    email: str | None = Field(default=None, unique=True, max_length=320)
    password_hash: str | None = Field(default=None, max_length=300)
    # The pseudonymous code is the only rater identifier in any export.
    rater_code: str | None = Field(default=None, unique=True, max_length=100)
    study_id: int | None = Field(default=None, foreign_key="study.id", index=True)
    # A UserSource.
    source: str = Field(default=UserSource.INVITE, max_length=20)
    consented_at: datetime | None = None
    declined_at: datetime | None = None
    created_at: datetime = Field(default_factory=now)
    # The rater's personal return link (``/r/<token>``), valid until the lead
    # rotates it. Kept in the clear, unlike a password: the rater's dashboard
    # and the lead's raters page must be able to show the link again at any
    # time, as invite links are. Imported and declined raters have none.
    return_token: str | None = Field(default=None, unique=True, index=True, max_length=100)
    return_token_issued_at: datetime | None = None
    # A RaterStatus: only an active rater's ratings count. Why and when the
    # lead changed it (the AuditEvent says who).
    status: str = Field(default=RaterStatus.ACTIVE, max_length=20)
    status_reason: str | None = Field(default=None, max_length=500)
    status_changed_at: datetime | None = None
    # The crowd platform's participant id (PROLIFIC_PID, MTurk workerId) of
    # a rater who came in by the study's entry link. Never a password: it
    # only finds the rater, it is not what their session cookie carries.
    platform_id: str | None = Field(default=None, max_length=100)
    # Ended by the study (failed attention checks): no further block opens.
    screened_out_at: datetime | None = None
    # A lead who sees and may change every study, members or not (the first
    # lead, or ``annotator lead admin EMAIL``).
    is_admin: bool = False

    # Part of every session and remember cookie of the account (get_id):
    # one more ends them all (logout, a new password or return link, a
    # withdrawal; see end_sessions).
    session_version: int = 0

    # flask-login's protocol.
    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def is_active(self) -> bool:
        # flask-login's login_user refuses an inactive user.
        return self.status != RaterStatus.WITHDRAWN

    @property
    def is_anonymous(self) -> bool:
        return False

    def get_id(self) -> str:
        # flask-login's alternative token: the session and remember cookies
        # carry the account's session version, and the user loader refuses a
        # cookie whose version is no longer the account's (annotator.extensions).
        # Version 0 is the bare id, as cookies were before versions existed.
        if not self.session_version:
            return str(self.id)
        return f"{self.id}:{self.session_version}"

    def end_sessions(self) -> None:
        """End every session and remember cookie of this account (at the commit)."""
        self.session_version = (self.session_version or 0) + 1

    @property
    def is_lead(self) -> bool:
        return self.role == Role.LEAD


class Invite(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    token: str = Field(unique=True, max_length=100)
    created_at: datetime = Field(default_factory=now)
    used_at: datetime | None = None
    user_id: int | None = Field(default=None, foreign_key="user.id")


class Demographics(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", unique=True)
    answers: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    submitted_at: datetime = Field(default_factory=now)


class AuditEvent(SQLModel, table=True):
    """Actions worth a record: lifting a rater's gap, rotating a return link, creating leads."""

    id: int | None = Field(default=None, primary_key=True)
    actor_id: int | None = Field(default=None, foreign_key="user.id")
    subject_id: int | None = Field(default=None, foreign_key="user.id")
    study_id: int | None = Field(default=None, foreign_key="study.id")
    # An AuditAction.
    action: str = Field(max_length=50)
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    created_at: datetime = Field(default_factory=now)


class CrowdEntry(SQLModel, table=True):
    """One arrival of a crowd participant by the study's entry link, let in or not.

    A browser is bound to a rater by an entry let in from it; the lead's
    raters page flags raters who came in from several browsers.
    """

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", index=True)
    # A SHA-256 digest of the browser's binding cookie (never the cookie itself).
    browser: str = Field(max_length=64)
    # The client's address as the app saw it (after ProxyFix).
    address: str | None = Field(default=None, max_length=100)
    # An EntryProof.
    proof: str = Field(max_length=20)
    platform_session_id: str | None = Field(default=None, max_length=100)
    created_at: datetime = Field(default_factory=now)


# The job tables live with the job logic; imported here so that every table is
# registered wherever the models are (Alembic, create_all).
