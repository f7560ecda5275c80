"""All tables of the annotator, one module per subject; every name is importable from here.

Importing this package registers every table with ``SQLModel.metadata`` (Alembic,
``create_all``). Times are timezone-aware UTC datetimes from
:func:`annotator.clock.now`.
"""

from __future__ import annotations

from ..choices import (
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
from .accounts import MIN_PASSWORD_LENGTH, AuditEvent, CrowdEntry, Demographics, Invite, User
from .jobs import Job, JobResult, JobStatus
from .judges import NO_TEMPERATURE_KEY, JudgeFailure, LLMScore
from .ratings import Block, BlockAssignment, ItemShare, Rating, RatingChange

# Also registers the listener that bumps a study's revision on every ORM change of its data.
from .revision import bump_revision
from .study import Benchmark, Criterion, Item, Scale, Study, StudyMember, StudyVersion

__all__ = [
    "bump_revision",
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
    "ItemShare",
    "BlockAssignment",
    "Rating",
    "RatingChange",
    "NO_TEMPERATURE_KEY",
    "LLMScore",
    "JudgeFailure",
    "AuditEvent",
    "CrowdEntry",
    "Job",
    "JobResult",
    "JobStatus",
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
