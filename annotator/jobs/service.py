"""Data functions of the jobs: ask for one (or join it), find, cancel, rerun, read results.

They take the session and leave the commit to the caller, as everywhere; a job that
must be put on the queue is put there when that session commits (a worker must
find the job's row), and forgotten if it rolls back.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Flask, current_app
from sqlalchemy import event, func, update
from sqlmodel import Session, select

from ..clock import now
from ..models import Job, JobResult, JobStatus, Study
from .kinds import is_kind
from .queue import enqueue
from .runner import requeue_stale

__all__ = [
    "request_job",
    "find_job",
    "find_current_job",
    "cancel_job",
    "rerun_job",
    "study_jobs",
    "job_result_data",
    "params_key",
    "version_key",
    "take_back_stale_jobs",
    "lock_study_jobs",
    "TooManyJobs",
]

# A job in one of these states is joined by a request for the same work.
JOINABLE = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.DONE)
_PENDING = "annotator.jobs.pending"
# A member's jobs queued or running at once, in the whole instance
# (JOBS_MAX_PER_MEMBER): a page posted in a loop must not fill the workers.
MAX_PER_MEMBER = 5


class TooManyJobs(ValueError):
    """A member asked for a new job while as many as allowed are queued or running."""


def lock_study_jobs(session: Session, study: Study) -> None:
    """Take the study row's write lock until the caller commits: requests for the
    study's jobs are then looked up and added one after the other.

    Without it two identical requests arriving together each find no job and each
    add one (15 requests in 0.76 s made 15 export jobs). An UPDATE is the one lock
    both databases take the same way: PostgreSQL's row lock, SQLite's database
    write lock (pysqlite opens the transaction at the first write, so the reads
    that follow see what the request before committed).
    """
    table = Study.__table__
    session.execute(update(table).where(table.c.id == study.id).values(version=table.c.version))


def _check_member_bound(session: Session, created_by: int | None) -> None:
    if created_by is None:
        return
    bound = int(current_app.config.get("JOBS_MAX_PER_MEMBER", MAX_PER_MEMBER))
    under_way = session.exec(
        select(func.count(Job.id)).where(
            Job.created_by == created_by,
            Job.status.in_((JobStatus.QUEUED, JobStatus.RUNNING)),
        )
    ).one()
    if under_way >= bound:
        raise TooManyJobs(
            f"You have {under_way} jobs queued or running, the most one member may have at "
            f"once ({bound}); nothing new was started. Wait for one to finish, or cancel one "
            "on its page."
        )


def params_key(params: dict[str, Any]) -> str:
    """SHA-256 of the params' canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def version_key(session: Session, study: Study) -> str:
    """SHA-256 of the study's :func:`~annotator.data.frames.data_version`: it changes
    with any rating, score, item, block, answer, rater status or study-file change."""
    # Imported here: the frames module brings pandas, which commands that need no
    # statistics must not load.
    from ..data.data_version import data_version

    return version_key_of(data_version(session, study))


def version_key_of(version: tuple) -> str:
    """:func:`version_key` of a data version already read."""
    return hashlib.sha256(repr(version).encode("utf-8")).hexdigest()


def _enqueue_on_commit(session: Session, app: Flask, job_id: int, attempt: int) -> None:
    pending = session.info.setdefault(_PENDING, [])
    if not event.contains(session, "after_commit", _after_commit):
        event.listen(session, "after_commit", _after_commit)
        event.listen(session, "after_rollback", _after_rollback)
    pending.append((app, job_id, attempt))


def _after_commit(session) -> None:
    pending = session.info.pop(_PENDING, [])
    for app, job_id, attempt in pending:
        enqueue(app, job_id, attempt)


def _after_rollback(session) -> None:
    session.info.pop(_PENDING, None)


def request_job(
    session: Session,
    study: Study,
    kind: str,
    params: dict[str, Any] | None = None,
    *,
    created_by: int | None = None,
    version: str | None = None,
) -> tuple[Job, bool]:
    """The job doing ``kind`` with ``params`` on the study's current data: the queued,
    running or done one if there is one (joined: ``(job, False)``), else a new
    queued job (``(job, True)``), enqueued when the session commits.

    A running job whose worker stopped beating is taken back and queued again.
    ``version`` (default :func:`version_key`) lets a caller that knows it skip the
    queries. :class:`TooManyJobs` when a new job would exceed the bound on the
    member's (``created_by``) jobs under way. The caller commits.
    """
    if not is_kind(kind, current_app.config):
        raise ValueError(f"kind: no job kind {kind!r} is registered")
    params = dict(params or {})
    key = params_key(params)
    version = version or version_key(session, study)
    app = current_app._get_current_object()
    if created_by is not None:
        # A member's request, whose twin may be on its way (a double click, a
        # script). The app's own (the dashboard's, asked by page views) take no
        # write lock: a rare duplicate costs less than serialising page views.
        lock_study_jobs(session, study)
    job = find_current_job(session, study, kind, params, version=version)
    if job is not None:
        if job.status == JobStatus.RUNNING:
            take_back_stale_jobs(session, app)
        return job, False
    _check_member_bound(session, created_by)
    job = Job(
        study_id=study.id,
        kind=kind,
        params=params,
        params_key=key,
        data_version=version,
        created_by=created_by,
    )
    session.add(job)
    session.flush()
    _enqueue_on_commit(session, app, job.id, job.attempt)
    return job, True


def find_current_job(
    session: Session,
    study: Study,
    kind: str,
    params: dict[str, Any] | None = None,
    *,
    version: str | None = None,
) -> Job | None:
    """The queued, running or done job doing ``kind`` with ``params`` on the study's
    current data (what :func:`request_job` would join), or None. Starts nothing."""
    version = version or version_key(session, study)
    return session.exec(
        select(Job)
        .where(
            Job.study_id == study.id,
            Job.kind == kind,
            Job.params_key == params_key(dict(params or {})),
            Job.data_version == version,
            Job.status.in_(JOINABLE),
        )
        .order_by(Job.id.desc())
        .limit(1)
    ).first()


def take_back_stale_jobs(session: Session, app: Flask | None = None) -> list[int]:
    """Queue again the running jobs of dead workers (see
    :func:`annotator.jobs.runner.requeue_stale`), enqueued when the session commits."""
    app = app or current_app._get_current_object()
    taken = requeue_stale(session, app)
    for job_id, attempt in taken:
        _enqueue_on_commit(session, app, job_id, attempt)
    if taken:
        session.expire_all()
    return [job_id for job_id, _ in taken]


def find_job(session: Session, study: Study, job_id: int) -> Job | None:
    """Job ``job_id`` if it belongs to ``study`` (a job of another study is None)."""
    job = session.get(Job, job_id)
    if job is None or job.study_id != study.id:
        return None
    return job


def cancel_job(session: Session, job: Job) -> bool:
    """Cancel a queued or running job; False when it had already ended.

    A running job's worker notices at its next progress call or heartbeat and
    stops without writing a result (cancellation is cooperative).
    """
    if job.status not in (JobStatus.QUEUED, JobStatus.RUNNING):
        return False
    job.status = JobStatus.CANCELLED
    job.finished_at = now()
    job.progress_message = "Cancelled"
    session.add(job)
    return True


def rerun_job(session: Session, job: Job, *, by: int | None = None) -> bool:
    """Queue a failed or cancelled job again (a new attempt); False for any other state.

    ``by``: the member asking, whose jobs under way are bounded (:class:`TooManyJobs`).
    """
    if job.status not in (JobStatus.FAILED, JobStatus.CANCELLED):
        return False
    _check_member_bound(session, by)
    study = session.get(Study, job.study_id)
    job.data_version = version_key(session, study)
    job.status = JobStatus.QUEUED
    job.attempt += 1
    job.error = None
    job.started_at = job.finished_at = job.heartbeat_at = None
    job.progress_done = job.progress_total = 0
    job.progress_message = ""
    job.worker = None
    session.add(job)
    session.flush()
    _enqueue_on_commit(session, current_app._get_current_object(), job.id, job.attempt)
    return True


def study_jobs(
    session: Session, study: Study, *, limit: int = 10, exclude: tuple[str, ...] = ()
) -> list[Job]:
    """The study's latest jobs, newest first (but for the kinds in ``exclude``)."""
    query = select(Job).where(Job.study_id == study.id)
    if exclude:
        query = query.where(Job.kind.not_in(exclude))
    return list(session.exec(query.order_by(Job.id.desc()).limit(limit)).all())


def job_result_data(session: Session, job: Job) -> bytes | None:
    """The file a done job made (None if it made none or is not done)."""
    if job.status != JobStatus.DONE:
        return None
    row = session.get(JobResult, job.id)
    return None if row is None else row.data
