"""Long work off the request path: reports, large exports, judge runs as jobs of a task queue.

A :class:`~annotator.models.Job` row holds what was asked (study, kind,
params), for which data (the study's data version), its state (queued, running,
done, failed, cancelled), progress, error and result; the queue carries only job
ids to the workers. The web asks with :func:`request_job`, which joins a queued,
running or done job for the same work on the same data, and shows the job's page.

Why huey (https://huey.readthedocs.io): it is maintained and has two storages
this tool needs. ``SqliteHuey`` keeps the queue in a file in the instance
folder, so the default needs nothing installed or started (``annotator serve``
runs one consumer beside the web server); ``RedisHuey`` (``ANNOTATOR_REDIS_URL``)
serves ``annotator worker`` processes on any number of machines. RQ and
dramatiq need Redis or RabbitMQ even for one machine, procrastinate needs
PostgreSQL, and Celery's SQL broker is unsupported.

Adding a kind: write ``body(ctx: JobContext) -> JobOutput | None`` and register it
(:func:`register_kind`, or a line in :data:`annotator.jobs.kinds.KINDS`): the body
reads through ``ctx.session``, calls ``ctx.progress(done, total, message)`` between
steps (which raises :class:`JobCancelled` once the job was cancelled) and returns
the file it made.
"""

from __future__ import annotations

from ..models import Job, JobResult, JobStatus
from .context import JobCancelled, JobContext, JobOutput
from .kinds import register_kind
from .queue import enqueue, get_queue
from .service import (
    TooManyJobs,
    cancel_job,
    find_current_job,
    find_job,
    job_result_data,
    lock_study_jobs,
    params_key,
    request_job,
    rerun_job,
    study_jobs,
    take_back_stale_jobs,
    version_key,
    version_key_of,
)

__all__ = [
    "Job",
    "JobCancelled",
    "JobContext",
    "JobOutput",
    "JobResult",
    "JobStatus",
    "TooManyJobs",
    "cancel_job",
    "enqueue",
    "find_current_job",
    "find_job",
    "get_queue",
    "lock_study_jobs",
    "job_result_data",
    "params_key",
    "register_kind",
    "request_job",
    "rerun_job",
    "study_jobs",
    "take_back_stale_jobs",
    "version_key",
    "version_key_of",
]
