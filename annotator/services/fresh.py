"""Fresh numbers: the dashboard recomputed when a study's results change in bulk.

The lead's study page shows the stored dashboard at once and queues its
recomputation only when it is viewed on newer data (:mod:`annotator.services.dashboards`),
so after a judge run or a finished block the first view showed old numbers until
that job ran. :func:`queue_dashboards` is called at those events instead (a
finished import, a completed block, a finished judge run), never per score: each
queues the job of the dashboards the lead has been viewing, and the page's next
view finds it done or running. A job for the same data is joined, not repeated.
"""

from __future__ import annotations

import logging

from flask import Flask
from sqlmodel import Session, select

from ..jobs import Job, JobStatus, request_job, version_key
from ..jobs.kinds import DASHBOARD as KIND
from ..models import Study

__all__ = ["queue_dashboards", "queue_dashboards_after"]

log = logging.getLogger(__name__)

# The dashboards a lead views: the study's default and a few analysis settings or
# criteria picked in the form. Older choices wait for their next view, as before.
RECENT = 4


def queue_dashboards(session: Session, study: Study, *, recent: int = RECENT) -> list[Job]:
    """Queue the ``dashboard`` job of the ``recent`` latest viewed dashboards of
    ``study`` (distinct settings and criterion) for its current data.

    Nothing is queued for a study whose dashboard was never viewed: its first view
    computes it in the request anyway. The jobs are enqueued when the caller commits.

    Parameters
    ----------
    session : sqlmodel.Session
    study : annotator.models.Study
    recent : int, keyword-only
        How many distinct dashboards (by their params) to refresh.
    """

    if recent < 1:
        raise ValueError(f"recent: must be at least 1, not {recent}")
    rows = session.exec(
        select(Job.params_key, Job.params)
        .where(Job.study_id == study.id, Job.kind == KIND, Job.status == JobStatus.DONE)
        .order_by(Job.id.desc())
        .limit(50)
    ).all()
    wanted: dict[str, dict] = {}
    for key, params in rows:
        if key not in wanted:
            wanted[key] = dict(params or {})
        if len(wanted) == recent:
            break
    if not wanted:
        return []
    version = version_key(session, study)
    return [
        request_job(session, study, KIND, params, version=version)[0] for params in wanted.values()
    ]


def queue_dashboards_after(app: Flask, study_id: int, event: str) -> None:
    """:func:`queue_dashboards` in a transaction of its own, after ``event`` was
    committed; a failure is logged, never raised: the event's data is stored, and the
    page's next view queues the job itself."""
    from ..db import session_scope

    try:
        with app.app_context(), session_scope(app) as session:
            study = session.get(Study, study_id)
            if study is not None:
                queue_dashboards(session, study)
    except Exception:  # the refresh is a cache's fill: it must not fail the event
        log.exception("queueing the dashboard of study %s after %s failed", study_id, event)
