"""What a running job's body gets: its session, study and params, and the way to
report progress and to notice that it was cancelled."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from ..db import commit_retrying
from ..models import Job, JobStatus, Study

__all__ = ["JobCancelled", "JobContext", "JobOutput"]


class JobCancelled(Exception):
    """Raised inside a job's body when the job is no longer this worker's to finish:
    cancelled by a lead, or taken over by another worker after a stale heartbeat."""


@dataclass(frozen=True)
class JobOutput:
    """The file a job made: its bytes, the name a download gets, and its type."""

    data: bytes
    filename: str
    mimetype: str


@dataclass
class JobContext:
    """A job's view of itself while its body runs.

    Attributes
    ----------
    job_id, attempt : int
        The job and which run of it this is.
    kind : str
    params : dict
        The options the job was asked with (JSON).
    study : Study
    session : Session
        The body's own session (reads; a body that writes commits itself).
    """

    job_id: int
    attempt: int
    kind: str
    params: dict[str, Any]
    study: Study
    session: Session
    engine: Engine
    stopped: threading.Event = field(default_factory=threading.Event)

    def _still_mine(self):
        return (
            update(Job)
            .where(
                Job.id == self.job_id,
                Job.attempt == self.attempt,
                Job.status == JobStatus.RUNNING,
            )
            .execution_options(synchronize_session=False)
        )

    def progress(self, done: int, total: int, message: str = "") -> None:
        """Record ``done`` of ``total`` steps (and what is being done), then check
        for cancellation (:meth:`check_cancelled`)."""
        with Session(self.engine) as session:
            result = commit_retrying(
                session,
                lambda: session.execute(
                    self._still_mine().values(
                        progress_done=int(done),
                        progress_total=int(total),
                        progress_message=str(message)[:200],
                    )
                ),
            )
        if result.rowcount == 0:
            self.stopped.set()
        self.check_cancelled()

    def check_cancelled(self) -> None:
        """Raise :class:`JobCancelled` if the job was cancelled or taken over.

        The heartbeat thread notices within a heartbeat interval; call this between
        steps (``progress`` calls it too).
        """
        if self.stopped.is_set():
            raise JobCancelled(f"job {self.job_id} (attempt {self.attempt}) was stopped")
