"""The task queue under the jobs: huey, on SQLite by default and on Redis when asked.

``get_queue(app)`` builds the app's :class:`huey.Huey` once: a ``SqliteHuey`` file
(``jobs.sqlite``) in the instance folder, or a ``RedisHuey`` on ``REDIS_URL``
(``ANNOTATOR_REDIS_URL``). Its one task, ``annotator.run_job(job_id, attempt)``,
runs a job row (:func:`annotator.jobs.runner.run_job`) inside the app. The
queue only carries job ids: the jobs' state and results are in the database,
which every server and worker shares.

Settings: ``JOBS_QUEUE_NAME`` (default ``"annotator"``; tests give each a name of
its own on a shared Redis), ``JOBS_IMMEDIATE`` (huey's immediate mode: a task runs
at once in the process that enqueues it; tests).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from flask import Flask, current_app

from ..db import create_private_file

if TYPE_CHECKING:  # huey is imported when a queue is first needed, not with the app.
    from huey import Huey

__all__ = ["get_queue", "enqueue", "queue_description"]

log = logging.getLogger(__name__)

_EXTENSION_KEY = "annotator.jobs.queue"
TASK_NAME = "annotator.run_job"


class RefusedMessage(ValueError):
    """A queue message not signed with the app's secret (see :func:`signed_serializer`)."""


def signed_serializer(secret: str):
    """huey's serializer that signs messages with ``secret`` (HMAC) and checks them first.

    huey pickles its messages, and unpickling runs whatever the message says:
    anyone who could write to the queue (a Redis without a password, another
    user on the machine) could run code as the worker, whose environment holds
    the judge endpoints' keys. huey's own :class:`~huey.serializer.SignedSerializer`
    refuses a message whose signature does not match before unpickling
    anything; the subclass only says so in the log, in words and without the
    message's bytes. (Built here: huey is imported when a queue is first needed.)
    """
    from huey.serializer import SignedSerializer

    class QueueSerializer(SignedSerializer):
        # Through the public deserialize: SignedSerializer checks the signature
        # (a ValueError when it is missing or wrong) before it unpickles anything.
        def deserialize(self, data):
            try:
                return super().deserialize(data)
            except ValueError:
                log.error(
                    "refused a job queue message of %d bytes without a valid signature: "
                    "something other than this app wrote to the queue; nothing was run",
                    len(data),
                )
                raise RefusedMessage("a job queue message without a valid signature") from None

    return QueueSerializer(secret=secret, salt="annotator.jobs.queue")


def _make_queue(app: Flask) -> Huey:
    from huey import RedisHuey, SqliteHuey

    name = app.config.get("JOBS_QUEUE_NAME") or "annotator"
    immediate = bool(app.config.get("JOBS_IMMEDIATE"))
    url = app.config.get("REDIS_URL")
    # Every web server and worker of an instance shares SECRET_KEY (docs/deploy.md).
    options = dict(
        results=False,
        immediate=immediate,
        serializer=signed_serializer(app.secret_key),
    )
    # results=False: a job's result is its database row, never huey's result store.
    if url:
        huey = RedisHuey(name, url=url, **options)
    else:
        path = Path(app.instance_path) / "jobs.sqlite"
        # The queue's messages are the instance's own business: 0600 like the database.
        create_private_file(path)
        # fsync=True is huey's PRAGMA synchronous=FULL: a job queued for the lead
        # survives a power cut like the job row that records it (annotator.db.make_durable).
        huey = SqliteHuey(name, filename=str(path), fsync=True, **options)

    def run_job_task(job_id: int, attempt: int) -> None:
        from .runner import run_job

        with app.app_context():
            run_job(app, job_id, attempt)

    # The task is registered on this app's huey alone, with the app in its closure:
    # one process may hold several apps (tests), each with its own queue.
    task = huey.task(name=TASK_NAME)(run_job_task)
    return huey, task


def _queue(app: Flask | None) -> tuple:
    app = app or current_app._get_current_object()
    queue = app.extensions.get(_EXTENSION_KEY)
    if queue is None:
        queue = app.extensions[_EXTENSION_KEY] = _make_queue(app)
    return queue


def get_queue(app: Flask | None = None) -> Huey:
    """The app's huey instance (built on first use)."""
    return _queue(app)[0]


def enqueue(app: Flask, job_id: int, attempt: int) -> None:
    """Put a job's run on the queue (in immediate mode: run it now)."""
    _queue(app)[1](job_id, attempt)


def queue_description(app: Flask) -> str:
    """Where the queue is, for the worker's and the server's first line."""
    url = app.config.get("REDIS_URL")
    name = app.config.get("JOBS_QUEUE_NAME") or "annotator"
    if url:
        from sqlalchemy.engine import make_url

        return f"Redis {make_url(url).render_as_string(hide_password=True)} (queue {name})"
    return f"SQLite {Path(app.instance_path) / 'jobs.sqlite'} (queue {name})"
