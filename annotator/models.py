"""All tables of the annotator.

Times are timezone-aware UTC datetimes from :func:`annotator.clock.now`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from .choices import (
    AuditAction,
    ChangeReason,
    EntryProof,
    RaterStatus,
    RatingSource,
    Role,
    StudyRole,
    UserSource,
    WithdrawnRatings,
)
from .clock import now

__all__ = [
    "Study",
    "StudyVersion",
    "StudyMember",
    "Scale",
    "Benchmark",
    "Criterion",
    "Item",
    "User",
    "Invite",
    "Demographics",
    "Block",
    "BlockAssignment",
    "Rating",
    "RatingChange",
    "LLMScore",
    "JudgeFailure",
    "AuditEvent",
    "CrowdEntry",
    "EntryProof",
    "Role",
    "StudyRole",
    "UserSource",
    "RatingSource",
    "ChangeReason",
    "AuditAction",
    "RaterStatus",
    "WithdrawnRatings",
    "MIN_PASSWORD_LENGTH",
]

MIN_PASSWORD_LENGTH = 8


class Study(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(index=True, unique=True, max_length=100)
    name: str = Field(max_length=200)
    session_gap_days: float = 7.0
    scale_order: str = Field(default="balanced", max_length=20)
    consent: str = Field(default="", sa_column=Column(Text, nullable=False))
    completion_url: str | None = Field(default=None, max_length=2000)
    completion_code: str | None = Field(default=None, max_length=200)
    break_every: int | None = None
    # Settings kept as the validated study file gave them: demographic
    # questions, attention checks and test-retest (see studyfile.py).
    demographics: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    attention_checks: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    test_retest: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    # The ``[crowd]`` table (entry by a platform's URL); empty: no entry link.
    crowd: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    source_toml: str = Field(default="", sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(default_factory=now)
    # The current StudyVersion.version: 1 at creation, one more per update.
    version: int = 1
    # A WithdrawnRatings.
    withdrawn_ratings: str = Field(default=WithdrawnRatings.KEEP, max_length=10)


class StudyVersion(SQLModel, table=True):
    """One version of a study's file: the first at creation, one per ``study update``."""

    __table_args__ = (UniqueConstraint("study_id", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    version: int
    source_toml: str = Field(default="", sa_column=Column(Text, nullable=False))
    # The key paths that changed from the previous version (empty for version 1).
    changes: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    created_at: datetime = Field(default_factory=now)


class StudyMember(SQLModel, table=True):
    """A lead's part in one study: a lead sees only the studies they are a member of
    (an admin, ``User.is_admin``, sees every study)."""

    __table_args__ = (UniqueConstraint("study_id", "user_id"),)

    id: int | None = Field(default=None, primary_key=True)
    # No index of its own: the unique key above leads with study_id.
    study_id: int = Field(foreign_key="study.id")
    user_id: int = Field(foreign_key="user.id", index=True)
    # A StudyRole.
    role: str = Field(max_length=10)
    created_at: datetime = Field(default_factory=now)


class Scale(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("study_id", "name"),)

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    name: str = Field(max_length=50)
    min: float
    max: float
    step: float
    position: int = 0


class Benchmark(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("study_id", "name"),)

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    name: str = Field(max_length=100)
    instructions: str = Field(sa_column=Column(Text, nullable=False))
    template: str = Field(sa_column=Column(Text, nullable=False))
    position: int = 0


class Criterion(SQLModel, table=True):
    """A named criterion of a rubric study (``[[criteria]]`` of the study file).

    A study without criteria has none of these rows: its ratings and LLM
    scores carry the criterion "" (its single unnamed criterion).
    """

    __table_args__ = (UniqueConstraint("study_id", "name"),)

    id: int | None = Field(default=None, primary_key=True)
    # No index of its own: the unique key above leads with study_id.
    study_id: int = Field(foreign_key="study.id")
    name: str = Field(max_length=100)
    # Markdown, shown to raters beside the score input.
    definition: str = Field(sa_column=Column(Text, nullable=False))
    position: int = 0
    # The names of the benchmarks it applies to; None: every benchmark.
    benchmarks: list[str] | None = Field(default=None, sa_column=Column(JSON, nullable=True))


class Item(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("study_id", "external_id"),)

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    # The item id of the imported file; unique within its study.
    external_id: str = Field(max_length=200)
    benchmark_id: int = Field(foreign_key="benchmark.id", index=True)
    fields: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    # Attention checks: the expected score as a share of the scale's range
    # (0 = the minimum, 1 = the maximum), so one gold value serves every scale.
    gold_score: float | None = None
    gold_tolerance: float | None = None
    created_at: datetime = Field(default_factory=now)


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


class Block(SQLModel, table=True):
    """One block: a rater rates every item of the study on one scale."""

    __table_args__ = (
        UniqueConstraint("rater_id", "scale_id"),
        UniqueConstraint("rater_id", "position"),
    )

    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="user.id", index=True)
    scale_id: int = Field(foreign_key="scale.id", index=True)
    # 1-based place of this block in the rater's block order.
    position: int
    seed: int
    # The presentation order: a list of {"item": item id, "repeat": bool,
    # "attention": bool} entries; stored so resuming keeps the order. An
    # entry passed over because its item could not be shown also has
    # "passed_over": when (annotator.collect.rated_places.PASSED_OVER).
    item_order: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    started_at: datetime | None = None
    completed_at: datetime | None = None
    created_at: datetime = Field(default_factory=now)
    # The entry being shown and since when: its served time goes into the
    # rating when it is submitted (reloading the page keeps the first time).
    current_position: int | None = None
    current_served_at: datetime | None = None
    # Set when a lead lets the rater start this block before the gap is over
    # (the AuditEvent AuditAction.GAP_LIFTED says who and when).
    gap_lifted_at: datetime | None = None
    # The crowd platform's study and session the block was started under
    # (Prolific STUDY_ID and SESSION_ID; MTurk hitId and assignmentId):
    # each wave of a study is its own platform study.
    platform_study_id: str | None = Field(default=None, max_length=100)
    platform_session_id: str | None = Field(default=None, max_length=100)


class BlockAssignment(SQLModel, table=True):
    """How a rater's block order was drawn when they consented.

    The order itself is ``Block.position``; this row keeps what made
    it: the rater's place among the study's raters (which Latin-square row
    they got) or the seed of their random order.
    """

    __table_args__ = (UniqueConstraint("study_id", "sequence"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", unique=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    # 0-based place of the rater in the order raters joined the study.
    sequence: int
    # "balanced" or "random", as the study's scale_order was at the time.
    method: str = Field(max_length=20)
    latin_row: int | None = None
    seed: int | None = None
    # Scale ids in block order.
    scale_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON))
    created_at: datetime = Field(default_factory=now)


class Rating(SQLModel, table=True):
    __table_args__ = (
        UniqueConstraint(
            "rater_id", "item_id", "scale_id", "criterion", "is_repeat", name="uq_rating_key"
        ),
        Index("ix_rating_scale_item", "scale_id", "item_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    # No index of its own: the unique key above leads with rater_id.
    rater_id: int = Field(foreign_key="user.id")
    item_id: int = Field(foreign_key="item.id")
    scale_id: int = Field(foreign_key="scale.id")
    # The Criterion.name rated; "" for a study's single unnamed criterion.
    criterion: str = Field(default="", max_length=100, sa_column_kwargs={"server_default": ""})
    block_id: int | None = Field(default=None, foreign_key="block.id", index=True)
    value: float
    # 1-based place in the block's presentation order; None when imported.
    position: int | None = None
    is_repeat: bool = False
    is_attention_check: bool = False
    served_at: datetime | None = None
    submitted_at: datetime = Field(default_factory=now)
    # A RatingSource.
    source: str = Field(default=RatingSource.APP, max_length=20)
    # The StudyVersion.version the rating was first given under (the
    # consent, instructions and template the rater saw).
    study_version: int


class RatingChange(SQLModel, table=True):
    """Every value a rating has had, the first one included."""

    id: int | None = Field(default=None, primary_key=True)
    rating_id: int = Field(foreign_key="rating.id", index=True)
    value: float
    previous_value: float | None = None
    changed_at: datetime = Field(default_factory=now)
    # A ChangeReason.
    reason: str = Field(max_length=20)
    actor_id: int | None = Field(default=None, foreign_key="user.id")


class LLMScore(SQLModel, table=True):
    __table_args__ = (
        UniqueConstraint(
            "item_id", "scale_id", "criterion", "model", "run", name="uq_llmscore_key"
        ),
        Index("ix_llmscore_scale_item", "scale_id", "item_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="item.id")
    scale_id: int = Field(foreign_key="scale.id")
    # The Criterion.name scored; "" for a study's single unnamed criterion.
    criterion: str = Field(default="", max_length=100, sa_column_kwargs={"server_default": ""})
    model: str = Field(max_length=200)
    # "" when the file gives no run; part of the key, so NULL would break it.
    run: str = Field(default="", max_length=100)
    temperature: float | None = None
    value: float
    created_at: datetime = Field(default_factory=now)
    # The judge prompt's version (annotator.judge.prompts.prompt_hash) for
    # scores from ``annotator judge``; None for imported scores. The run label
    # of a judged score names it too, since (item, scale, model, run) is the key.
    prompt_hash: str | None = Field(default=None, max_length=64)


class JudgeFailure(SQLModel, table=True):
    """A judge request that gave no valid score: never a score, kept to be seen.

    A later ``annotator judge`` asks again (only stored scores are skipped).
    """

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    scale_id: int = Field(foreign_key="scale.id")
    # The Criterion.name asked about; "" for a study's single unnamed criterion.
    criterion: str = Field(default="", max_length=100, sa_column_kwargs={"server_default": ""})
    model: str = Field(max_length=200)
    temperature: float
    run: str = Field(max_length=100)
    prompt_hash: str = Field(max_length=64)
    # The last reply (None when no reply came: a server or connection error).
    raw_reply: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    error: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(default_factory=now)


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
