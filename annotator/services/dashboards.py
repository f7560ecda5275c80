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

The report is a job too (:mod:`annotator.services.report`); the raters page's quality
tables are kept per process (:mod:`annotator.services.rater_quality`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import pickle
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete
from sqlmodel import Session, select

from ..analysis.settings import AnalysisSettings, study_settings
from ..clock import now
from ..data.data_version import rating_count
from ..data.frames import data_version, study_frames
from ..db import commit_retrying
from ..jobs import (
    Job,
    JobContext,
    JobOutput,
    JobResult,
    JobStatus,
    find_current_job,
    params_key,
    request_job,
    version_key_of,
)
from ..jobs.kinds import DASHBOARD
from ..models import Study
from ..render import dashboard_types
from ..render.dashboard import study_dashboard
from ..render.dashboard_types import Dashboard

__all__ = [
    "LiveDashboard",
    "cached_dashboard",
    "clear_dashboard_cache",
    "live_dashboard",
    "stored_dashboard",
    "build_dashboard_job",
]

KIND = DASHBOARD

log = logging.getLogger(__name__)

# Raise when a stored dashboard must not be read by this code although its
# classes' fields are unchanged (a field whose meaning changed).
_FORMAT_REVISION = 1


def _dashboard_format() -> str:
    """The format of a stored dashboard: the revision and every dashboard class's fields.

    A release that renames, adds or drops a field of a class in
    :mod:`~annotator.render.dashboard_types` changes it by itself, so a result
    pickled before is recomputed instead of failing on the missing attribute.
    """
    shape = [
        (name, [f.name for f in dataclasses.fields(cls)])
        for name, cls in sorted(vars(dashboard_types).items())
        if isinstance(cls, type) and dataclasses.is_dataclass(cls)
    ]
    return hashlib.sha256(repr((_FORMAT_REVISION, shape)).encode("utf-8")).hexdigest()[:16]


#: The format written with every stored dashboard (see :func:`_dashboard_format`).
DASHBOARD_FORMAT = _dashboard_format()


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


def _params(settings: AnalysisSettings, criterion: str | None = None) -> dict:
    # JSON (a job's params); AnalysisSettings takes the lists and mapping back. The
    # criterion is in the params, so each criterion's dashboard is a result of its
    # own; a study without criteria keeps the params it had before they existed.
    params: dict[str, Any] = {"settings": settings.to_dict()}
    if criterion is not None:
        params["criterion"] = criterion
    return params


def _compute(session: Session, study: Study, params: dict) -> tuple[tuple, bytes]:
    # The version is read first: data arriving during the computation leaves the
    # result one version behind, so the next view recomputes (never the reverse).
    version = data_version(session, study)
    ratings = rating_count(session, study)
    dashboard = study_dashboard(
        study_frames(session, study),
        settings=AnalysisSettings(**params["settings"]),
        criterion=params.get("criterion"),
    )
    # Pickled: the result is the app's own object, written and read only by the app
    # through its database (never anything a user uploads).
    stored = (DASHBOARD_FORMAT, ratings, dashboard)
    return version, pickle.dumps(stored, pickle.HIGHEST_PROTOCOL)


def _unpickle(data: bytes) -> tuple[int, Dashboard] | None:
    """``(ratings, dashboard)`` of a stored result; None for one of another format, or
    one that no longer loads (a class moved or renamed by an upgrade): recomputed."""
    try:
        stored = pickle.loads(data)
    # Any failure of an old pickle (AttributeError, ModuleNotFoundError, TypeError,
    # UnpicklingError, EOFError...) means the same: this code cannot read it.
    except Exception as exc:  # noqa: BLE001
        log.info("a stored dashboard does not load (%s); it is recomputed", exc)
        return None
    if not (isinstance(stored, tuple) and len(stored) == 3 and stored[0] == DASHBOARD_FORMAT):
        return None
    _, ratings, dashboard = stored
    if not isinstance(dashboard, Dashboard):
        return None
    return ratings, dashboard


def build_dashboard_job(ctx: JobContext) -> JobOutput:
    """The ``dashboard`` job: the study's dashboard with the params' settings (and
    criterion, in a study with ``[[criteria]]``), pickled."""
    ctx.progress(0, 1, "Computing the dashboard")
    _, data = _compute(ctx.session, ctx.study, ctx.params)
    ctx.progress(1, 1, "Done")
    return JobOutput(data, "dashboard.pickle", "application/octet-stream")


def _last(session: Session, study: Study, key: str) -> tuple[Job, int, Dashboard] | None:
    """The latest done dashboard job of these params with its file, unpickled."""
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
    loaded = _unpickle(result.data)
    if loaded is None:
        return None
    return job, *loaded


def _compute_and_keep(session: Session, study: Study, params: dict) -> Dashboard:
    """Compute here and keep the result as a done job, for every other process.

    The result is written and committed in a session of its own: it is a cache's
    fill, not part of the caller's work, and the caller's transaction (a script's, a
    test's) must not hold the database's write lock for it.
    """
    version, data = _compute(session, study, params)
    key = params_key(params)
    moment = now()
    with Session(session.get_bind()) as own:

        def keep() -> None:
            older = select(Job.id).where(
                Job.study_id == study.id, Job.kind == KIND, Job.params_key == key
            )
            own.execute(delete(JobResult).where(JobResult.job_id.in_(older.scalar_subquery())))
            job = Job(
                study_id=study.id,
                kind=KIND,
                params=params,
                params_key=key,
                data_version=version_key_of(version),
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
            own.add(job)
            own.flush()
            own.add(JobResult(job_id=job.id, data=data))

        commit_retrying(own, keep)
    return pickle.loads(data)[2]


def cached_dashboard(
    session: Session,
    study: Study,
    *,
    settings: AnalysisSettings | None = None,
    criterion: str | None = None,
) -> Dashboard:
    """The study's dashboard for its current data: the stored one, or computed here
    (waiting) and stored for the others (in a transaction of its own).

    The stored dashboard is reused while :func:`annotator.data.frames.data_version`
    (ids and counts of ratings, rating changes, LLM scores, items, blocks and
    demographic answers, and the stored study file) is unchanged.

    Parameters
    ----------
    session : sqlmodel.Session
    study : annotator.models.Study
    settings : AnalysisSettings, keyword-only
        Defaults to the study's own (:func:`study_settings`).
    criterion : str, keyword-only
        The criterion shown in a study with ``[[criteria]]`` (None: the first).
    """
    params = _params(settings or study_settings(study), criterion)
    last = _last(session, study, params_key(params))
    if last is not None and last[0].data_version == version_key_of(data_version(session, study)):
        return last[2]
    return _compute_and_keep(session, study, params)


def stored_dashboard(session: Session, study: Study) -> Dashboard | None:
    """The latest stored dashboard of the study's own settings, whatever data it was
    computed on; None if there is none. Reads only (the worker's warm-up,
    :mod:`annotator.warm`: unpickling it imports the modules its classes live in)."""
    last = _last(session, study, params_key(_params(study_settings(study))))
    return None if last is None else last[2]


def live_dashboard(
    session: Session,
    study: Study,
    *,
    settings: AnalysisSettings | None = None,
    criterion: str | None = None,
) -> LiveDashboard:
    """The last dashboard at once; a stale one is recomputed by a ``dashboard`` job.

    The first view of a study computes in the request: there is nothing to show
    before, and a "computing…" page that polls would only delay the same numbers.
    Afterwards a data change starts one job per (study, settings, criterion, data
    version): a second request while it is queued or running joins it. The job is
    enqueued when the caller commits the session.

    Parameters
    ----------
    session : sqlmodel.Session
    study : annotator.models.Study
    settings : AnalysisSettings, keyword-only
        Defaults to the study's own (:func:`study_settings`).
    criterion : str, keyword-only
        As :func:`cached_dashboard`'s; each criterion's dashboard is a job (and a
        stored result) of its own.
    """
    params = _params(settings or study_settings(study), criterion)
    last = _last(session, study, params_key(params))
    if last is None:
        return LiveDashboard(_compute_and_keep(session, study, params))
    job, ratings, dashboard = last
    version = data_version(session, study)
    key = version_key_of(version)
    if job.data_version == key:
        return LiveDashboard(dashboard)
    current = find_current_job(session, study, KIND, params, version=key)
    if current is not None and current.status == JobStatus.DONE:
        # Done for the current data, but its file was dropped: compute it again (before
        # this session writes anything: the result is kept by a session of its own).
        return LiveDashboard(_compute_and_keep(session, study, params))
    request_job(session, study, KIND, params, version=key)
    new = max(0, rating_count(session, study) - ratings)
    return LiveDashboard(dashboard, stale=True, new_ratings=new, updating=True)


def clear_dashboard_cache() -> None:
    """Forget this process's kept results (tests; after a schema reset). Dashboards
    are kept in the database, with their study."""
    from .rater_quality import clear_rater_quality_cache

    clear_rater_quality_cache()
