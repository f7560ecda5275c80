"""Identical requests join one job, and a member's jobs under way are bounded
(issue 36, finding 4: 15 export requests in 0.76 s made 15 jobs and 15 files)."""

from __future__ import annotations

import html
import threading
import time

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.jobs import Job
from annotator.study.studies import create_lead
from tests.conftest import DATA, LEAD_EMAIL, LEAD_PASSWORD

EXPORT = "/lead/studies/small/export?format=matrix&scale=0-5"


@pytest.fixture
def queued_app(make_app):
    """Study ``small`` whose exports are jobs, left queued (no worker runs them)."""
    app = make_app(EXPORT_JOB_MIN_RATINGS=0, JOBS_IMMEDIATE=False, JOBS_MAX_PER_MEMBER=3)
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    runner = app.test_cli_runner()
    for args in (
        ["study", "create", DATA / "small-study.toml"],
        ["items", "import", "small", DATA / "items.csv"],
        ["ratings", "import", "small", DATA / "ratings.csv"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return app


def _login(app):
    client = app.test_client()
    response = client.post("/login", data={"username": LEAD_EMAIL, "password": LEAD_PASSWORD})
    assert response.status_code == 302
    return client


def _jobs(app) -> list[Job]:
    """The lead's jobs (the study page's own dashboard jobs left out)."""
    with Session(get_engine(app)) as session:
        query = select(Job).where(Job.kind != "dashboard").order_by(Job.id)
        return list(session.exec(query).all())


def test_identical_requests_at_once_join_one_job(queued_app, monkeypatch):
    from annotator.jobs import service

    find = service.find_current_job

    def slow_find(*args, **kwargs):
        # A slower database: the look-up takes a while, as under load.
        found = find(*args, **kwargs)
        time.sleep(0.05)
        return found

    monkeypatch.setattr(service, "find_current_job", slow_find)
    cookie = _login(queued_app).get_cookie("session").value
    barrier = threading.Barrier(15)
    locations, failures = [], []

    def post():
        client = queued_app.test_client()
        client.set_cookie("session", cookie)
        barrier.wait()
        try:
            response = client.post(EXPORT)
            locations.append((response.status_code, response.headers.get("Location")))
        except Exception as exc:  # reported below, not lost in the thread
            failures.append(exc)

    threads = [threading.Thread(target=post) for _ in range(15)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    jobs = _jobs(queued_app)
    assert len(jobs) == 1 and jobs[0].kind == "export"
    assert set(locations) == {(302, f"/lead/studies/small/jobs/{jobs[0].id}")}


def test_a_members_jobs_under_way_are_bounded(queued_app):
    client = _login(queued_app)
    asked = [f"{EXPORT}&runs={runs}" for runs in ("mean", "first", "all")]
    for url in asked:
        assert "/jobs/" in client.post(url).headers["Location"]
    refused = client.post(f"{EXPORT}&runs=last", follow_redirects=True)
    text = html.unescape(refused.get_data(as_text=True))
    assert "You have 3 jobs queued or running, the most one member may have at once (3)" in text
    assert len(_jobs(queued_app)) == 3
    # Asking again for a job under way joins it, whatever the bound.
    assert (
        client.post(asked[0]).headers["Location"]
        == f"/lead/studies/small/jobs/{_jobs(queued_app)[0].id}"
    )
