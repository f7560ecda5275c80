"""The dashboard of a study, computed once per data version and shared by every server.

:func:`live_dashboard` is what the lead's study page shows: the last computed
dashboard at once, and when the study's data changed since, a ``dashboard`` job
(:mod:`annotator.jobs`) that recomputes it in a worker; the page's next htmx refresh
(or reload) shows the new one. A dashboard is a job's result: pickled into the
database with the data version it belongs to, so every gunicorn worker and every
app server reads the one computed, instead of each process computing its own.
Only a study's first view (no dashboard of these settings yet) computes in the
request, and keeps its result the same way. :func:`cached_dashboard` waits for a
current one instead (scripts, tests, the benchmark).

:func:`cached_report` keeps, per process, the raters page's quality tables until the
study's data changes (the report itself is a job now).
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete
from sqlmodel import Session, select

from ..clock import now
from ..data.frames import data_version, study_frames
from ..jobs import Job, JobContext, JobOutput, JobResult, JobStatus, params_key, request_job
from ..models import Study
from .dashboard import study_dashboard
from .dashboard_types import Dashboard
from .settings import AnalysisSettings, study_settings

__all__ = [
    "LiveDashboard",
    "cached_dashboard",
    "cached_report",
    "clear_dashboard_cache",
    "live_dashboard",
    "build_dashboard_job",
]

KIND = "dashboard"

# The raters page's quality tables (small): a few per process.
_REPORTS: OrderedDict[tuple, tuple[tuple, Any]] = OrderedDict()
_REPORTS_SIZE = 8
_REPORT_LOCKS: dict[tuple, threading.Lock] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class LiveDashboard:
    """What the study page shows: a dashboard and how current it is.

    Attributes
    ----------
    dashboard : Dashboard
        The last computed dashboard.
    stale : bool
        The data changed since it was computed.
    new_ratings : int
        Ratings stored since it was computed (0 when only revisions, blocks or
        answers changed).
    updating : bool
        A dashboard job for the current data is queued or running.
    """

    dashboard: Dashboard
    stale: bool = False
    new_ratings: int = 0
    updating: bool = False


def _params(settings: AnalysisSettings) -> dict:
    # JSON (a job's params); AnalysisSettings takes the lists and mapping back.
    return {"settings": settings.to_dict()}


def _settings(params: dict) -> AnalysisSettings:
    return AnalysisSettings(**params["settings"])


def _version_key(version: tuple) -> str:
    # The same key as annotator.jobs.version_key, from a version already read.
    return hashlib.sha256(repr(version).encode("utf-8")).hexdigest()


def _ratings(version: tuple) -> int:
    # data_version's second member: (highest id, number) of the study's ratings.
    return int(version[1][1])


def _compute(session: Session, study: Study, settings: AnalysisSettings) -> tuple[tuple, bytes]:
    # The version is read first: data arriving during the computation leaves the
    # result one version behind, so the next view recomputes (never the reverse).
    version = data_version(session, study)
    dashboard = study_dashboard(study_frames(session, study), settings=settings)
    # Pickled: the result is the app's own object, written and read only by the app
    # through its database (never anything a user uploads).
    return version, pickle.dumps((_ratings(version), dashboard), pickle.HIGHEST_PROTOCOL)


def build_dashboard_job(ctx: JobContext) -> JobOutput:
    """The ``dashboard`` job: the study's dashboard with the params' settings, pickled."""
    ctx.progress(0, 1, "Computing the dashboard")
    _, data = _compute(ctx.session, ctx.study, _settings(ctx.params))
    ctx.progress(1, 1, "Done")
    return JobOutput(data, "dashboard.pickle", "application/octet-stream")


def _last(session: Session, study: Study, key: str) -> tuple[Job, int, Dashboard] | None:
    """The latest done dashboard job of these settings with its file, unpickled."""
    row = session.exec(
        select(Job, JobResult)
        .join(JobResult, JobResult.job_id == Job.id)
        .where(
            Job.study_id == study.id,
            Job.kind == KIND,
            Job.params_key == key,
            Job.status == JobStatus.DONE,
        )
        .order_by(Job.id.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    job, result = row
    ratings, dashboard = pickle.loads(result.data)
    return job, ratings, dashboard


def _compute_and_keep(session: Session, study: Study, settings: AnalysisSettings) -> Dashboard:
    """Compute here and keep the result as a done job, for every other process."""
    version, data = _compute(session, study, settings)
    params = _params(settings)
    key = params_key(params)
    older = select(Job.id).where(Job.study_id == study.id, Job.kind == KIND, Job.params_key == key)
    session.execute(delete(JobResult).where(JobResult.job_id.in_(older.scalar_subquery())))
    moment = now()
    job = Job(
        study_id=study.id,
        kind=KIND,
        params=params,
        params_key=key,
        data_version=_version_key(version),
        status=JobStatus.DONE,
        progress_done=1,
        progress_total=1,
        progress_message="Computed in the request",
        result_filename="dashboard.pickle",
        result_mimetype="application/octet-stream",
        result_size=len(data),
        started_at=moment,
        finished_at=moment,
    )
    session.add(job)
    session.flush()
    session.add(JobResult(job_id=job.id, data=data))
    return pickle.loads(data)[1]


def cached_dashboard(
    session: Session, study: Study, *, settings: AnalysisSettings | None = None
) -> Dashboard:
    """The study's dashboard for its current data: the stored one, or computed here
    (waiting) and stored for the others. The caller commits (or the result is not kept).

    The stored dashboard is reused while :func:`annotator.data.frames.data_version`
    (ids and counts of ratings, rating changes, LLM scores, items, blocks and
    demographic answers, and the stored study file) is unchanged.

    Parameters
    ----------
    session : sqlmodel.Session
    study : annotator.models.Study
    settings : AnalysisSettings, keyword-only
        Defaults to the study's own (:func:`study_settings`).
    """
    settings = settings or study_settings(study)
    last = _last(session, study, params_key(_params(settings)))
    if last is not None and last[0].data_version == _version_key(data_version(session, study)):
        return last[2]
    return _compute_and_keep(session, study, settings)


def live_dashboard(
    session: Session, study: Study, *, settings: AnalysisSettings | None = None
) -> LiveDashboard:
    """The last dashboard at once; a stale one is recomputed by a ``dashboard`` job.

    The first view of a study computes in the request: there is nothing to show
    before, and a "computing…" page that polls would only delay the same numbers.
    Afterwards a data change starts one job per (study, settings, data version): a
    second request while it is queued or running joins it. The job is enqueued when
    the caller commits the session.
    """
    settings = settings or study_settings(study)
    params = _params(settings)
    last = _last(session, study, params_key(params))
    if last is None:
        return LiveDashboard(_compute_and_keep(session, study, settings))
    job, ratings, dashboard = last
    version = data_version(session, study)
    key = _version_key(version)
    if job.data_version == key:
        return LiveDashboard(dashboard)
    pending, _ = request_job(session, study, KIND, params, version=key)
    if pending.status == JobStatus.DONE:
        # Done for the current data, but its file was dropped: compute it again.
        return LiveDashboard(_compute_and_keep(session, study, settings))
    new = max(0, _ratings(version) - ratings)
    return LiveDashboard(dashboard, stale=True, new_ratings=new, updating=True)


def cached_report(
    session: Session, study: Study, build: Callable[[], Any], *, variant: Any = None
) -> Any:
    """``build()``, reused in this process while the study's data is unchanged.

    One lock per (database, study, ``variant``): a second request while the first is
    being built waits for it. ``variant`` (hashable) keeps results apart.
    """
    key = (session.get_bind().url.render_as_string(hide_password=True), study.id, variant)
    with _LOCK:
        lock = _REPORT_LOCKS.setdefault(key, threading.Lock())
    with lock:
        version = data_version(session, study)
        with _LOCK:
            hit = _REPORTS.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        report = build()
        with _LOCK:
            _REPORTS[key] = (version, report)
            _REPORTS.move_to_end(key)
            while len(_REPORTS) > _REPORTS_SIZE:
                _REPORTS.popitem(last=False)
        return report


def clear_dashboard_cache() -> None:
    """Forget this process's kept results (tests; after a schema reset). Dashboards
    are kept in the database, with their study."""
    with _LOCK:
        _REPORTS.clear()
