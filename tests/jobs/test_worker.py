"""``annotator worker`` processes: they run the web's jobs from the SQLite queue and
from Redis, and a worker killed mid-job leaves its job to another."""

from __future__ import annotations

import os
import signal

from sqlmodel import Session

from annotator.db import get_engine
from annotator.jobs import Job, JobStatus, job_result_data, request_job
from annotator.study.studies import get_study
from tests.jobs.conftest import wait_for


def _ask(app, kind, params) -> int:
    with app.app_context(), Session(get_engine(app), expire_on_commit=False) as session:
        job, _ = request_job(session, get_study(session, "small"), kind, params)
        session.commit()
        return job.id


def _job(app, job_id) -> Job:
    with Session(get_engine(app)) as session:
        return session.get(Job, job_id)


def test_a_worker_process_builds_the_report(queue_app, small_study, worker_process):
    from annotator.services.report import build_report

    worker_process(workers=1)
    job_id = _ask(queue_app, "report", {})
    job = wait_for(
        lambda: (j := _job(queue_app, job_id)).status not in ("queued", "running") and j,
        timeout=180,
        what="the report job",
    )
    assert job.status == JobStatus.DONE, job.error
    assert job.result_filename == "small-report.html"
    with Session(get_engine(queue_app)) as session:
        html = job_result_data(session, job).decode()
        # The same report `annotator report` builds, but for the moment it was made.
        direct = build_report(session, get_study(session, "small"), settings=None).html
    assert html.count("<table") == direct.count("<table") > 0
    heading = direct[direct.index("<h1") : direct.index("</h1>")]
    assert heading in html


def test_a_worker_killed_mid_job_leaves_it_to_another(
    queue_app, small_study, worker_process, tmp_path
):
    hold = tmp_path / "go"
    first = worker_process()
    job_id = _ask(queue_app, "steps", {"steps": 2, "hold": str(hold)})
    running = wait_for(
        lambda: (j := _job(queue_app, job_id)).status == "running" and j,
        timeout=120,
        what="the first worker to take the job",
    )
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    second = worker_process()
    hold.touch()
    done = wait_for(
        lambda: (j := _job(queue_app, job_id)).status == "done" and j,
        timeout=120,
        what="the second worker to finish the job",
    )
    assert done.attempt == 2 and done.worker != running.worker
    assert done.worker.endswith(f":{second.pid}")
    with Session(get_engine(queue_app)) as session:
        assert job_result_data(session, done) == b"small: 2 steps, attempt 2"
