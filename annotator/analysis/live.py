"""The dashboard and the report of a study, kept per data version and refreshed in the background.

:func:`live_dashboard` is what the lead's study page shows: the last computed
dashboard at once, and when ratings came in since, a recomputation in a
background thread (one per database and study) whose result the next htmx
refresh picks up. Only a study's first view waits for a computation.
:func:`cached_dashboard` waits instead (scripts, tests, the benchmark).
:func:`cached_report` keeps the last rendered report of each study until its
data changes, so a second download is immediate.

Why threads and not a job queue (RQ, Celery): a queue needs a broker server to
run beside the app, and a worker's result would have to be serialised back; the
dashboard is a Python object for this process's pages, recomputing it is
idempotent, and losing a half-done computation on a restart costs nothing (the
next view starts it again). Each worker process keeps its own cache, as before.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from ..data.frames import data_version, study_frames
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
]

log = logging.getLogger(__name__)

# One entry per (database, study, settings): the data version it was computed at
# and the dashboard. A process-local dict rather than flask-caching: the key check
# is a few indexed aggregates, so each worker process keeps its own copy, with no
# dependency or cache server to run; a Dashboard needs no serialising this way.
_CACHE: OrderedDict[tuple, tuple[tuple, Dashboard]] = OrderedDict()
_CACHE_SIZE = 32
# The background computation under way per key: at most one.
_RUNNING: dict[tuple, Future] = {}
_LOCK = threading.Lock()
# Two threads: one study's long computation does not hold up another's.
_EXECUTOR = ThreadPoolExecutor(max_workers=2, thread_name_prefix="dashboard")

# Reports are large strings (megabytes of inline plots): a few are kept. The raters
# page's quality tables (small) share the cache, hence room for 8 entries.
_REPORTS: OrderedDict[tuple, tuple[tuple, Any]] = OrderedDict()
_REPORTS_SIZE = 8
_REPORT_LOCKS: dict[tuple, threading.Lock] = {}


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
        A background recomputation is under way.
    """

    dashboard: Dashboard
    stale: bool = False
    new_ratings: int = 0
    updating: bool = False


def _key(
    session: Session, study: Study, settings: AnalysisSettings, criterion: str | None
) -> tuple:
    url = session.get_bind().url.render_as_string(hide_password=True)
    return (url, study.id, settings, criterion)


def _ratings(version: tuple) -> int:
    # data_version's second member: (highest id, number) of the study's ratings.
    return int(version[1][1])


def _store(key: tuple, version: tuple, dashboard: Dashboard) -> None:
    with _LOCK:
        old = _CACHE.get(key)
        # A slower computation of older data never replaces a newer one.
        if old is not None and old[1].computed_at > dashboard.computed_at:
            return
        _CACHE[key] = (version, dashboard)
        _CACHE.move_to_end(key)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)


def _compute(
    session: Session, study: Study, settings: AnalysisSettings, criterion: str | None = None
) -> tuple:
    # The version is read first: data arriving during the computation leaves the
    # entry one version behind, so the next view recomputes (never the reverse).
    version = data_version(session, study)
    frames = study_frames(session, study)
    return version, study_dashboard(frames, settings=settings, criterion=criterion)


def _compute_in_background(engine: Any, study_id: int, settings: AnalysisSettings, key: tuple):
    # Its own session: the request's session belongs to the request's thread.
    try:
        with Session(engine, expire_on_commit=False) as session:
            study = session.get(Study, study_id)
            if study is not None:
                _store(key, *_compute(session, study, settings, key[3]))
    except Exception:
        # The page keeps the last dashboard; the next view tries again.
        log.exception("background dashboard of study %s failed", study_id)
        raise
    finally:
        with _LOCK:
            _RUNNING.pop(key, None)


def cached_dashboard(
    session: Session,
    study: Study,
    *,
    settings: AnalysisSettings | None = None,
    criterion: str | None = None,
) -> Dashboard:
    """The study's dashboard, recomputed (here, waiting) only when its data changed.

    The cache key is the database, the study and the settings; the entry is reused
    while :func:`annotator.data.frames.data_version` (ids and counts of ratings,
    rating changes, LLM scores, items, blocks and demographic answers, and the
    stored study file) is unchanged.

    Parameters
    ----------
    session : sqlmodel.Session
    study : annotator.models.Study
    settings : AnalysisSettings, keyword-only
        Defaults to the study's own (:func:`study_settings`).
    criterion : str, keyword-only
        The criterion shown in a study with ``[[criteria]]`` (None: the first).
    """
    settings = settings or study_settings(study)
    key = _key(session, study, settings, criterion)
    version = data_version(session, study)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] == version:
            _CACHE.move_to_end(key)
            return hit[1]
    version, dashboard = _compute(session, study, settings, criterion)
    _store(key, version, dashboard)
    return dashboard


def live_dashboard(
    session: Session,
    study: Study,
    *,
    settings: AnalysisSettings | None = None,
    executor: Executor | None = None,
    criterion: str | None = None,
) -> LiveDashboard:
    """The last dashboard at once; a stale one is recomputed in the background.

    The first view of a study computes synchronously: there is nothing to show
    before, and a "computing…" page that polls would only delay the same numbers.
    Afterwards a data change starts one background computation per (database,
    study, settings) (a second request while it runs starts none) and returns the
    last dashboard marked stale; the page's next refresh shows the new one.

    Parameters
    ----------
    session : sqlmodel.Session
    study : annotator.models.Study
    settings : AnalysisSettings, keyword-only
        Defaults to the study's own (:func:`study_settings`).
    executor : concurrent.futures.Executor, keyword-only
        Where the background computation runs; the module's thread pool by default
        (tests pass one that runs the call at once).
    criterion : str, keyword-only
        As :func:`cached_dashboard`'s.
    """
    settings = settings or study_settings(study)
    key = _key(session, study, settings, criterion)
    version = data_version(session, study)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
    if hit is None:
        dashboard = cached_dashboard(session, study, settings=settings, criterion=criterion)
        return LiveDashboard(dashboard)
    cached_version, dashboard = hit
    if cached_version == version:
        return LiveDashboard(dashboard)
    new = max(0, _ratings(version) - _ratings(cached_version))
    with _LOCK:
        running = _RUNNING.get(key)
        start = running is None or running.done()
        if start:
            # A placeholder until submit returns, so that no second request submits.
            placeholder: Future = Future()
            _RUNNING[key] = placeholder
    if start:
        try:
            job = (executor or _EXECUTOR).submit(
                _compute_in_background, session.get_bind(), study.id, settings, key
            )
        except BaseException:
            with _LOCK:
                _RUNNING.pop(key, None)
            raise
        with _LOCK:
            # Unless the job already finished (and removed the placeholder).
            if _RUNNING.get(key) is placeholder:
                _RUNNING[key] = job
    with _LOCK:
        hit = _CACHE.get(key)
        running = _RUNNING.get(key)
        updating = running is not None and not running.done()
    if hit is not None and hit[0] == version:
        # An executor that ran the job at once (or a fast thread) has it already.
        return LiveDashboard(hit[1])
    return LiveDashboard(dashboard, stale=True, new_ratings=new, updating=updating)


def cached_report(
    session: Session, study: Study, build: Callable[[], Any], *, variant: Any = None
) -> Any:
    """``build()`` (the study's report), reused while the study's data is unchanged.

    One lock per (database, study, ``variant``): a second download while the first is
    being built waits for it instead of building the same report again. ``variant``
    (hashable: the report's settings) keeps reports of other settings apart.
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
    """Forget every cached dashboard and report (tests; after a schema reset)."""
    with _LOCK:
        _CACHE.clear()
        _REPORTS.clear()
