"""Running one job in a worker: claim it, keep its heartbeat, run its body, store
the outcome; and taking back the jobs of workers that died.

Every write is conditional on (job id, attempt, status running), so a worker that
lost its job (cancelled, or taken over after a stale heartbeat) changes nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import traceback
from datetime import timedelta

from flask import Flask
from sqlalchemy import delete, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from ..clock import now, utcnow
from ..db import commit_retrying, get_engine
from ..models import Job, JobResult, JobStatus, Study
from ..redaction import redact
from .context import JobCancelled, JobContext, JobOutput
from .kinds import kind_body

__all__ = ["run_job", "requeue_stale", "heartbeat_seconds", "stale_seconds"]

log = logging.getLogger(__name__)

WORKER_NAME = f"{socket.gethostname()}:{os.getpid()}"


def heartbeat_seconds(app: Flask) -> float:
    """How often a running job's worker writes its heartbeat (``JOBS_HEARTBEAT_SECONDS``)."""
    return float(app.config.get("JOBS_HEARTBEAT_SECONDS", 5))


def stale_seconds(app: Flask) -> float:
    """After how long without a heartbeat a running job is taken back (``JOBS_STALE_SECONDS``,
    default six heartbeats)."""
    return float(app.config.get("JOBS_STALE_SECONDS", 6 * heartbeat_seconds(app)))


def _mine(job_id: int, attempt: int):
    return (
        update(Job)
        .where(Job.id == job_id, Job.attempt == attempt, Job.status == JobStatus.RUNNING)
        .execution_options(synchronize_session=False)
    )


def _write(engine: Engine, statement) -> int:
    """Run one UPDATE in its own transaction; the number of rows it changed."""
    with Session(engine) as session:
        return commit_retrying(session, lambda: session.execute(statement)).rowcount


def _claim(engine: Engine, job_id: int, attempt: int) -> bool:
    statement = (
        update(Job)
        .where(Job.id == job_id, Job.attempt == attempt, Job.status == JobStatus.QUEUED)
        .values(
            status=JobStatus.RUNNING,
            started_at=now(),
            heartbeat_at=utcnow(),
            worker=WORKER_NAME,
            progress_done=0,
            progress_total=0,
            progress_message="",
        )
        .execution_options(synchronize_session=False)
    )
    return _write(engine, statement) == 1


def _beat(engine: Engine, ctx: JobContext, interval: float, done: threading.Event) -> None:
    # Heartbeats come from a thread, not from the body's progress calls: a body's
    # single step (the report's analysis) may take longer than the stale limit.
    while not done.wait(interval):
        try:
            if _write(engine, _mine(ctx.job_id, ctx.attempt).values(heartbeat_at=utcnow())) == 0:
                ctx.stopped.set()
                return
        except Exception:  # a lost connection: the next beat tries again
            log.exception("heartbeat of job %s failed", ctx.job_id)


def _store_result(engine: Engine, job_id: int, attempt: int, output: JobOutput | None) -> None:
    with Session(engine) as session:

        def store():
            values = {"status": JobStatus.DONE, "finished_at": now(), "error": None}
            if output is not None:
                values.update(
                    result_filename=output.filename,
                    result_mimetype=output.mimetype,
                    result_size=len(output.data),
                )
            if session.execute(_mine(job_id, attempt).values(**values)).rowcount == 0:
                return False
            # This result replaces the files of the older jobs doing the same work (on
            # older data); until now they were what a page could still show.
            job = session.get(Job, job_id)
            older = select(Job.id).where(
                Job.study_id == job.study_id,
                Job.kind == job.kind,
                Job.params_key == job.params_key,
                Job.id <= job_id,
            )
            session.execute(delete(JobResult).where(JobResult.job_id.in_(older.scalar_subquery())))
            if output is not None:
                session.add(JobResult(job_id=job_id, data=output.data))
            return True

        if not commit_retrying(session, store):
            log.info("job %s attempt %s finished after it was stopped", job_id, attempt)


def run_job(app: Flask, job_id: int, attempt: int) -> None:
    """Run attempt ``attempt`` of job ``job_id`` if it is still queued as such."""
    engine = get_engine(app)
    if not _claim(engine, job_id, attempt):
        # Cancelled while queued, rerun (a newer attempt), or already taken.
        return
    done = threading.Event()
    with Session(engine, expire_on_commit=False) as session:
        job = session.get(Job, job_id)
        ctx = JobContext(
            job_id=job_id,
            attempt=attempt,
            kind=job.kind,
            params=dict(job.params or {}),
            study=session.get(Study, job.study_id),
            session=session,
            engine=engine,
        )
        beat = threading.Thread(
            target=_beat,
            args=(engine, ctx, heartbeat_seconds(app), done),
            name=f"job-{job_id}-heartbeat",
            daemon=True,
        )
        beat.start()
        try:
            output = kind_body(ctx.kind, app.config)(ctx)
            ctx.check_cancelled()
        except JobCancelled:
            log.info("job %s attempt %s stopped", job_id, attempt)
            return
        except Exception as exc:
            session.rollback()
            # The trace goes to the log, never to the job's row, which every member
            # of the study reads (install paths, code); neither holds a secret.
            trace = "".join(traceback.format_exception(exc))
            log.error("job %s (%s) failed:\n%s", job_id, ctx.kind, redact(trace, config=app.config))
            if isinstance(exc, ValueError):
                # Bad input (a setting, a study file): its message says what to change.
                error = redact(f"{type(exc).__name__}: {exc}", config=app.config)
            else:
                # A bug rather than bad input: a message for the member, the rest logged.
                error = (
                    f"The job stopped on an unexpected error ({type(exc).__name__}). "
                    f"The server's log has the details (job {job_id}, attempt {attempt})."
                )
            _write(
                engine,
                _mine(job_id, attempt).values(
                    status=JobStatus.FAILED, error=error[:20_000], finished_at=now()
                ),
            )
            return
        finally:
            done.set()
            beat.join()
        session.rollback()
        _store_result(engine, job_id, attempt, output)


def requeue_stale(session: Session, app: Flask) -> list[tuple[int, int]]:
    """Take back the running jobs whose heartbeat is older than :func:`stale_seconds`.

    Each goes back to ``queued`` with ``attempt + 1`` (its old worker, should it be
    alive after all, then writes nothing more). Returns the (job id, attempt) pairs
    to enqueue once the caller has committed.
    """
    cutoff = utcnow() - timedelta(seconds=stale_seconds(app))
    stale = session.exec(
        select(Job.id, Job.attempt).where(
            Job.status == JobStatus.RUNNING, Job.heartbeat_at < cutoff
        )
    ).all()
    taken = []
    for job_id, attempt in stale:
        moved = session.execute(
            update(Job)
            .where(Job.id == job_id, Job.attempt == attempt, Job.status == JobStatus.RUNNING)
            .values(status=JobStatus.QUEUED, attempt=attempt + 1, worker=None)
            .execution_options(synchronize_session=False)
        ).rowcount
        if moved:
            taken.append((job_id, attempt + 1))
    return taken
