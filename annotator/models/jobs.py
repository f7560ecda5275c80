"""The job tables: one row per job (:class:`Job`) and its stored result (:class:`JobResult`).

The job logic is in :mod:`annotator.jobs`; the tables are here with the others, so
that the models import nothing of the jobs.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Column, Index, LargeBinary, Text
from sqlmodel import Field, SQLModel

from ..clock import now

__all__ = ["Job", "JobResult", "JobStatus"]


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Job(SQLModel, table=True):
    """One piece of long work for a study (a report, an export, a judge run ...).

    A job is identified for joining by (study, kind, params key, data version): a
    request for the same work on the same data joins the queued, running or done job
    instead of starting another.
    """

    __table_args__ = (Index("ix_job_lookup", "study_id", "kind", "params_key", "data_version"),)

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    # A registered kind (annotator.jobs.kinds): "report", "export", ...
    kind: str = Field(max_length=50)
    # The options of the work, as given (JSON), and their SHA-256 (canonical JSON).
    params: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    params_key: str = Field(max_length=64)
    # SHA-256 of the study's data version (annotator.data.frames.data_version, which
    # includes the study file and so its analysis settings) when the job was asked.
    data_version: str = Field(max_length=64)
    # A JobStatus.
    status: str = Field(default=JobStatus.QUEUED, max_length=20)
    progress_done: int = 0
    progress_total: int = 0
    progress_message: str = Field(default="", max_length=200)
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # The result, when done: a JobResult row (the file) with this name and type.
    result_filename: str | None = Field(default=None, max_length=200)
    result_mimetype: str | None = Field(default=None, max_length=100)
    result_size: int | None = None
    created_by: int | None = Field(default=None, foreign_key="user.id")
    created_at: datetime = Field(default_factory=now)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    # Written by the running worker every few seconds: a stale heartbeat means
    # the worker died, and the job is queued again (attempt + 1).
    heartbeat_at: datetime | None = None
    # Which run of the job a worker holds: a worker whose attempt is no longer
    # the job's (it was taken over, cancelled or rerun) stops and writes nothing.
    attempt: int = 1
    worker: str | None = Field(default=None, max_length=200)


class JobResult(SQLModel, table=True):
    """The file a job produced, in the database: every server and worker reads the
    same one (an instance folder is one machine's)."""

    job_id: int = Field(foreign_key="job.id", primary_key=True)
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
