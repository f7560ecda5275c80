"""A job that meets a bug leaves a message for the study's members and its trace
in the log only: no traceback (code, install paths) in a job row or page (issue 36,
finding 6)."""

from __future__ import annotations

import logging

from sqlmodel import Session

from annotator.db import get_engine
from annotator.jobs import Job, JobStatus, request_job
from annotator.study.studies import get_study
from tests.jobs.conftest import ROOT, wait_for


def test_a_bug_leaves_a_message_and_logs_the_trace(queue_app, small_study, consumer, caplog):
    caplog.set_level(logging.ERROR, logger="annotator.jobs.runner")
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        job, _ = request_job(session, get_study(session, small_study), "steps", {"crash_at": 1})
        session.commit()
        job_id = job.id

    def failed():
        with Session(get_engine(queue_app)) as session:
            job = session.get(Job, job_id)
            return job if job.status == JobStatus.FAILED else None

    error = wait_for(failed, what="the job to fail").error
    assert error == (
        "The job stopped on an unexpected error (OverflowError). "
        f"The server's log has the details (job {job_id}, attempt 1)."
    )
    assert "Traceback" not in error and 'File "' not in error and str(ROOT) not in error
    # The log has it all, for the operator.
    (logged,) = [r.getMessage() for r in caplog.records if f"job {job_id} " in r.getMessage()]
    assert "Traceback (most recent call last)" in logged and "kinds.py" in logged


def test_a_configured_secret_in_an_error_is_cut_from_the_row_and_the_log(
    queue_app, small_study, consumer, caplog
):
    # A driver's message quoting a connection URL, say: the session key of the
    # tests' apps stands for any configured secret (tests/test_redaction.py has each).
    secret = queue_app.config["SECRET_KEY"]
    message = f"could not use the key {secret} here"
    with queue_app.app_context(), Session(get_engine(queue_app)) as session:
        study = get_study(session, small_study)
        job, _ = request_job(session, study, "steps", {"fail_at": 0, "message": message})
        session.commit()
        job_id = job.id

    def failed():
        with Session(get_engine(queue_app)) as session:
            job = session.get(Job, job_id)
            return job if job.status == JobStatus.FAILED else None

    error = wait_for(failed, what="the job to fail").error
    assert error == "ValueError: could not use the key [redacted] here"
    assert secret not in caplog.text and "could not use the key [redacted]" in caplog.text
