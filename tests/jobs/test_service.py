"""The job lifecycle through a real queue (SQLite file and Redis): start, progress,
join, done, keep, invalidate, fail, retry, cancel, and taking back a dead worker's job."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlmodel import Session

from annotator.clock import utcnow
from annotator.db import get_engine
from annotator.jobs import (
    Job,
    JobStatus,
    cancel_job,
    find_current_job,
    find_job,
    job_result_data,
    request_job,
    rerun_job,
    take_back_stale_jobs,
)
from annotator.models import Item
from annotator.study.studies import get_study
from tests.jobs.conftest import wait_for


@pytest.fixture
def study_slug(small_study):
    return small_study


def _ask(app, slug, params, kind="steps"):
    """Ask for a job as the web does; (job id, whether it was created)."""
    with app.app_context(), Session(get_engine(app), expire_on_commit=False) as session:
        job, created = request_job(session, get_study(session, slug), kind, params)
        session.commit()
        return job.id, created


def _job(app, job_id) -> Job:
    with Session(get_engine(app)) as session:
        return session.get(Job, job_id)


def _status(app, job_id, *statuses):
    return wait_for(
        lambda: _job(app, job_id).status in statuses and _job(app, job_id),
        what=f"job {job_id} to be {' or '.join(statuses)}",
    )


def _result(app, job_id) -> bytes | None:
    with Session(get_engine(app)) as session:
        return job_result_data(session, session.get(Job, job_id))


def test_a_job_runs_reports_progress_and_keeps_its_file(queue_app, study_slug, consumer, tmp_path):
    hold = tmp_path / "go"
    job_id, created = _ask(queue_app, study_slug, {"steps": 3, "hold": str(hold)})
    assert created
    _status(queue_app, job_id, JobStatus.RUNNING)
    # The first step is reported while the body waits.
    running = wait_for(
        lambda: (job := _job(queue_app, job_id)).progress_message == "step 1 of 3" and job,
        what="progress",
    )
    assert (running.progress_done, running.progress_total) == (0, 3)
    assert running.heartbeat_at is not None and running.worker
    # A second request for the same work on the same data joins the running job.
    assert _ask(queue_app, study_slug, {"hold": str(hold), "steps": 3}) == (job_id, False)
    # Other params are other work.
    other, created = _ask(queue_app, study_slug, {"steps": 1})
    assert created and other != job_id
    hold.touch()
    done = _status(queue_app, job_id, JobStatus.DONE)
    assert (done.progress_done, done.progress_total, done.progress_message) == (3, 3, "done")
    assert done.result_filename == "steps.txt" and done.result_mimetype == "text/plain"
    assert _result(queue_app, job_id) == b"small: 3 steps, attempt 1"
    assert done.finished_at is not None and done.error is None
    # Kept: the same request later gets the done job, and nothing runs again.
    assert _ask(queue_app, study_slug, {"steps": 3, "hold": str(hold)}) == (job_id, False)


def test_a_data_change_makes_a_new_job_and_drops_the_old_file(queue_app, study_slug, consumer):
    first, _ = _ask(queue_app, study_slug, {"steps": 1})
    _status(queue_app, first, JobStatus.DONE)
    with Session(get_engine(queue_app)) as session:
        study = get_study(session, study_slug)
        session.add(Item(study_id=study.id, external_id="new-item", benchmark_id=1, fields={}))
        session.commit()
    second, created = _ask(queue_app, study_slug, {"steps": 1})
    assert created and second != first
    _status(queue_app, second, JobStatus.DONE)
    assert _result(queue_app, second) == b"small: 1 steps, attempt 1"
    # The outdated job stays listed as done, without its file.
    assert _job(queue_app, first).status == JobStatus.DONE
    assert _result(queue_app, first) is None


def test_a_failed_job_shows_its_error_and_runs_again(queue_app, study_slug, consumer):
    job_id, _ = _ask(queue_app, study_slug, {"steps": 3, "fail_at": 1})
    failed = _status(queue_app, job_id, JobStatus.FAILED)
    assert failed.error == "ValueError: step 2 met a bad value"
    assert _result(queue_app, job_id) is None
    # A failed job is not joined: asking again starts a new one.
    again, created = _ask(queue_app, study_slug, {"steps": 3, "fail_at": 1})
    assert created and again != job_id
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        job = session.get(Job, job_id)
        assert rerun_job(session, job)
        session.commit()
    rerun = _status(queue_app, job_id, JobStatus.FAILED)
    assert rerun.attempt == 2 and rerun.error == "ValueError: step 2 met a bad value"


def test_rerun_only_takes_failed_or_cancelled_jobs(queue_app, study_slug, consumer):
    job_id, _ = _ask(queue_app, study_slug, {"steps": 1})
    _status(queue_app, job_id, JobStatus.DONE)
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        job = session.get(Job, job_id)
        assert not rerun_job(session, job) and not cancel_job(session, job)
        assert job.status == JobStatus.DONE and job.attempt == 1


def test_cancelling_a_running_job_stops_it_between_steps(queue_app, study_slug, consumer, tmp_path):
    hold = tmp_path / "never"
    job_id, _ = _ask(queue_app, study_slug, {"steps": 3, "hold": str(hold)})
    _status(queue_app, job_id, JobStatus.RUNNING)
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        assert cancel_job(session, session.get(Job, job_id))
        session.commit()
    # The worker notices (heartbeat) and leaves the job as it is: no result, no "done".
    # The next task runs: so the cancelled body (which would wait for ever) let go.
    later, _ = _ask(queue_app, study_slug, {"steps": 1})
    _status(queue_app, later, JobStatus.DONE)
    job = _job(queue_app, job_id)
    assert job.status == JobStatus.CANCELLED and job.progress_done == 0
    assert _result(queue_app, job_id) is None
    # A cancelled job is not joined; it can be run again.
    hold.touch()
    again, created = _ask(queue_app, study_slug, {"steps": 3, "hold": str(hold)})
    assert created and again != job_id
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        assert rerun_job(session, session.get(Job, job_id))
        session.commit()
    assert _status(queue_app, job_id, JobStatus.DONE).attempt == 2


def test_a_queued_job_cancelled_before_a_worker_takes_it_never_runs(queue_app, study_slug):
    from tests.jobs.conftest import ThreadConsumer

    job_id, _ = _ask(queue_app, study_slug, {"steps": 1})
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        assert cancel_job(session, session.get(Job, job_id))
        session.commit()
    consumer = ThreadConsumer(queue_app)
    try:
        later, _ = _ask(queue_app, study_slug, {"steps": 2})
        _status(queue_app, later, JobStatus.DONE)
    finally:
        consumer.close()
    job = _job(queue_app, job_id)
    assert job.status == JobStatus.CANCELLED and job.started_at is None


def test_a_running_job_whose_heartbeat_stopped_is_taken_back(queue_app, study_slug):
    """A worker that died mid-job: its job goes back to the queue as attempt 2."""
    from tests.jobs.conftest import ThreadConsumer

    job_id, _ = _ask(queue_app, study_slug, {"steps": 1})
    # The state a killed worker leaves: running, its heartbeat long past, the queue's
    # message gone with it.
    consumer = ThreadConsumer(queue_app)
    consumer.close()
    with Session(get_engine(queue_app)) as session:
        session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(status=JobStatus.RUNNING, heartbeat_at=utcnow() - timedelta(seconds=5))
        )
        session.commit()
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        # The same work asked again joins the running job and takes it back.
        job = find_current_job(session, get_study(session, study_slug), "steps", {"steps": 1})
        assert job.id == job_id
        assert take_back_stale_jobs(session, queue_app) == [job_id]
        session.commit()
    consumer = ThreadConsumer(queue_app)
    try:
        done = _status(queue_app, job_id, JobStatus.DONE)
    finally:
        consumer.close()
    assert done.attempt == 2
    assert _result(queue_app, job_id) == b"small: 1 steps, attempt 2"


def test_a_fresh_heartbeat_is_not_taken_back(queue_app, study_slug):
    job_id, _ = _ask(queue_app, study_slug, {"steps": 1})
    with Session(get_engine(queue_app)) as session:
        session.execute(
            update(Job).where(Job.id == job_id).values(status="running", heartbeat_at=utcnow())
        )
        session.commit()
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        assert take_back_stale_jobs(session, queue_app) == []


def test_jobs_of_another_study_are_not_found(queue_app, study_slug):
    job_id, _ = _ask(queue_app, study_slug, {"steps": 1})
    with Session(get_engine(queue_app)) as session:
        study = get_study(session, study_slug)
        assert find_job(session, study, job_id).id == job_id
        other = type(study)(slug="other", name="Other")
        session.add(other)
        session.flush()
        assert find_job(session, other, job_id) is None
        assert find_job(session, study, job_id + 1000) is None


def test_an_unknown_kind_is_refused_by_name(queue_app, study_slug):
    with pytest.raises(ValueError, match="kind: no job kind 'nonsense' is registered"):
        _ask(queue_app, study_slug, {}, kind="nonsense")
