"""A judge run as a job of a real queue (SQLite file and Redis) consumed by a worker
thread: scores stored, progress, a cancel seen between requests, the key never kept."""

from __future__ import annotations

import time

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.jobs import Job, cancel_job
from annotator.judge.job import JudgeRunParams, request_judge_run
from annotator.models import LLMScore
from annotator.study.studies import get_study
from tests.conftest import DATA
from tests.jobs.conftest import ThreadConsumer, wait_for

KEY = "sk-test-queue-0123456789"


@pytest.fixture
def judge_queue(make_app, queue_settings, fake_endpoint, monkeypatch):
    """``start(delay)``: an app on the test's queue whose endpoint ``fake`` answers
    after ``delay`` seconds, with study ``small``, and a consumer thread."""
    consumers = []

    def start(delay: float = 0.0):
        monkeypatch.setenv("ANNOTATOR_TEST_QUEUE_JUDGE_KEY", KEY)
        endpoint = fake_endpoint(delay=delay)
        judge = {"base_url": endpoint.url, "api_key_env": "ANNOTATOR_TEST_QUEUE_JUDGE_KEY"}
        app = make_app(**queue_settings, JUDGE_ENDPOINTS={"fake": judge})
        runner = app.test_cli_runner()
        for args in (
            ["study", "create", DATA / "small-study.toml"],
            ["items", "import", "small", DATA / "items.csv"],
        ):
            result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
            assert result.exit_code == 0, result.output
        consumers.append(ThreadConsumer(app))
        return app, endpoint

    yield start
    for consumer in consumers:
        consumer.close()


def _ask(app, **options) -> int:
    params = JudgeRunParams(
        endpoint="fake", model="m", scales=("0-5", "0-100"), runs=1, temperature=1.0, **options
    )
    with app.app_context(), Session(get_engine(app), expire_on_commit=False) as session:
        job, created = request_judge_run(
            session, get_study(session, "small"), params, created_by=None
        )
        session.commit()
        assert created
        return job.id


def _job(app, job_id) -> Job:
    with Session(get_engine(app)) as session:
        return session.get(Job, job_id)


def _n_scores(app) -> int:
    with Session(get_engine(app)) as session:
        return len(session.exec(select(LLMScore)).all())


def test_a_worker_runs_the_judge_and_reports_tokens(judge_queue):
    app, endpoint = judge_queue()
    job_id = _ask(app)
    job = wait_for(lambda: _job(app, job_id).status == "done" and _job(app, job_id), what="done")
    assert (job.progress_done, job.progress_total) == (8, 8)
    assert job.progress_message.endswith("8 requests, 96 tokens (80 prompt, 16 completion)")
    assert _n_scores(app) == 8 == len(endpoint.requests)
    assert set(endpoint.keys) == {f"Bearer {KEY}"}
    assert KEY not in repr(job.model_dump())


def test_a_cancel_stops_the_worker_between_requests(judge_queue):
    app, endpoint = judge_queue(delay=0.4)
    job_id = _ask(app)
    wait_for(lambda: endpoint.requests, what="the first request")
    with Session(get_engine(app)) as session, app.app_context():
        assert cancel_job(session, session.get(Job, job_id))
        session.commit()
    # The requests in flight are answered and stored; then nothing more is sent.
    wait_for(
        lambda: endpoint.in_flight == 0 and _n_scores(app) == len(endpoint.answers),
        what="the requests in flight to be stored",
    )
    sent = len(endpoint.requests)
    assert sent < 8
    # Well past the time a further request would take.
    time.sleep(1.0)
    assert len(endpoint.requests) == sent == _n_scores(app)
    assert _job(app, job_id).status == "cancelled"


def test_a_finished_judge_run_queues_the_viewed_dashboard(judge_queue):
    from annotator.jobs import version_key
    from annotator.services.dashboards import cached_dashboard

    app, _ = judge_queue()
    with app.app_context(), Session(get_engine(app)) as session:
        # The lead viewed the study before the run: its dashboard is stored.
        cached_dashboard(session, get_study(session, "small"))
    job_id = _ask(app)
    wait_for(lambda: _job(app, job_id).status == "done", what="the judge run")

    def refreshed():
        with Session(get_engine(app)) as session:
            current = version_key(session, get_study(session, "small"))
            jobs = session.exec(select(Job).where(Job.kind == "dashboard")).all()
            return any(j.data_version == current and j.status == "done" for j in jobs)

    # The run's scores are in the dashboard without the lead asking again.
    wait_for(refreshed, what="the dashboard of the judged data")
