"""A fresh server worker's warm-up: the lead's study page's reads, before its first request.

SQLAlchemy compiles each statement the first time a process runs it (then keeps it in
the engine's cache), and markdown-it renders each benchmark's instructions the first
time (then keeps them): on the study page, about 20 statements and 100 ms of a fresh
worker's first view against 30-60 ms for a whole warm one (issue 34, item 7;
``benchmarks/first_request.py``). :func:`warm_up` runs those reads once, for the
latest study, in the worker that will serve it (its own engine, after the fork), and
opens the job queue's connection. It only reads: nothing is computed, stored or queued
(the page itself may compute a first dashboard or start a job; the warm-up does
neither). The "Download report" POST's statements (the study row's lock, the
member's jobs under way, the new job's INSERT) are compiled by asking for a job in a
transaction that is rolled back: nothing stays and nothing is queued. Called by
``annotator serve``'s workers (:mod:`annotator.cli.serve`).
"""

from __future__ import annotations

import contextlib
import logging

from flask import Flask

__all__ = ["JOB_MODULES", "warm_up", "warm_up_jobs"]

log = logging.getLogger(__name__)

# What the job kinds import on first use: the report's statistics (pandas, scipy), its
# figures (matplotlib and its PNG writer) and page, the exports, the dashboard. About
# 1.2 s of a fresh job worker's first report otherwise (the rubric guide's 8-item
# study: 2.9 s for the first report against 1.7 s for the next; docs/performance.md).
JOB_MODULES = (
    "annotator.services.report",
    "annotator.services.dashboards",
    "annotator.analysis.study_analysis",
    "annotator.data.frames",
    "annotator.data.exporters",
    "annotator.render.report.html",
    "annotator.render.report.figures",
    "annotator.render.figures.study",
    "annotator.render.figures.alttest",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "matplotlib.image",
)


def warm_up_jobs() -> None:
    """Import :data:`JOB_MODULES` (and Pillow's image formats, which it otherwise
    loads at the first PNG it writes), in a job worker before it takes its first job
    (``annotator worker``). Imports only: nothing is read, computed or stored."""
    import importlib

    for name in JOB_MODULES:
        importlib.import_module(name)
    from PIL import Image

    Image.preinit()


def warm_up(app: Flask) -> bool:
    """Run the study page's and the job start's reads once for the latest study.

    Returns whether they ran; a failure (a database not reachable yet) is logged and
    left for the first request to meet, as it would without the warm-up.
    """
    from sqlmodel import select

    from .collect.unshown_items import unshown_items
    from .data.data_version import data_version
    from .db import session_scope
    from .extensions import logged_in_user_query
    from .jobs import find_current_job, get_queue
    from .jobs.service import TooManyJobs, request_job, study_jobs
    from .judge.history import cached_judge_run_summaries
    from .models import Study, User
    from .services.dashboards import KIND as DASHBOARD
    from .services.dashboards import stored_dashboard
    from .study.criteria import criterion_names, study_criteria
    from .study.members import study_role
    from .study.studies import get_study, study_benchmarks, study_scales
    from .web.display import instructions_for

    try:
        with app.app_context(), session_scope() as session:
            study = session.exec(select(Study).order_by(Study.id.desc())).first()
            lead = session.exec(select(User).order_by(User.id)).first()
            if study is None or lead is None:
                return False
            # Every request's: the logged-in user (extensions._load_user); the page's
            # study by its slug; the stored dashboard (unpickled: its classes' modules).
            session.exec(logged_in_user_query(), params={"user_key": lead.id}).first()
            get_study(session, study.slug)
            stored_dashboard(session, study)
            study_role(session, study, lead)
            criterion_names(session, study)
            study_criteria(session, study)
            # The instructions the page shows, rendered once (kept per process).
            scales = study_scales(session, study)
            for benchmark in study_benchmarks(session, study):
                for scale in scales:
                    instructions_for(benchmark, scale)
            unshown_items(session, study)
            cached_judge_run_summaries(session, study)
            data_version(session, study)
            study_jobs(session, study, limit=10, exclude=(DASHBOARD,))
            for kind in ("report", DASHBOARD):
                find_current_job(session, study, kind, {})
            session.rollback()
            # The "Download report" POST's statements, rolled back. Params no job has,
            # so that the request goes as far as the new job's INSERT.
            with contextlib.suppress(TooManyJobs):  # a lead at their limit: lock and count compiled
                request_job(session, study, "report", {"warm-up": True}, created_by=lead.id)
            session.rollback()
            # The job queue's connection (huey's SQLite file, or Redis), opened by a
            # count: the first "Download report" otherwise opens it.
            get_queue(app).pending_count()
    except Exception:  # a warm-up must never stop a worker
        log.warning("Warm-up of the lead's pages failed", exc_info=True)
        return False
    return True
