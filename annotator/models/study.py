"""A study's definition: the study row, its versions, members, scales, benchmarks,
criteria and items."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from ..choices import (
    WithdrawnRatings,
)
from ..clock import now

__all__ = ["Study", "StudyVersion", "StudyMember", "Scale", "Benchmark", "Criterion", "Item"]


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
    # When ``[validation] stop_when_decided`` stopped the study (no new block
    # is served from then on) and why, one line per scale and judge; None:
    # collecting (annotator.collect.stopping).
    stopped_at: datetime | None = None
    stop_reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # One more with every change of the study's data, in the same transaction
    # (annotator.models.revision): the key of its cached results.
    revision: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


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
    # A rubric study's attention check may expect another share on some
    # criteria (``gold_score.CRITERION`` columns): criterion name -> share.
    criterion_gold: dict[str, float] | None = Field(
        # none_as_null: an item without one has SQL NULL, not JSON null.
        default=None,
        sa_column=Column(JSON(none_as_null=True), nullable=True),
    )
    created_at: datetime = Field(default_factory=now)
