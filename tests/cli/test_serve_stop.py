"""Ctrl+C on `annotator serve`: the web server and its job worker stop within seconds,
with no error line, and the job that was running is taken back by the stale-job rule."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlmodel import Session

from annotator.db import get_engine
from annotator.jobs import Job, JobStatus, request_job, take_back_stale_jobs
from annotator.study.studies import get_study
from tests.conftest import DATA
from tests.jobs.kinds import KINDS

ROOT = Path(__file__).resolve().parents[2]
ANNOTATOR = Path(sys.executable).with_name("annotator")
# What gunicorn, huey, click and Python print when a stop goes wrong.
ERROR_MARKS = ("ERROR", "Traceback", "SIGKILL", "Aborted", "Exception", "CRITICAL")
STOP_LIMIT = 5.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(check, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def server(tmp_path, database_url):
    """`annotator serve` (2 gunicorn workers and its job worker) on a free port, in a
    process group of its own as a terminal would start it; its log file."""
    port = _free_port()
    log = tmp_path / "server.log"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "ANNOTATOR_INSTANCE_PATH": str(tmp_path / "instance"),
        "ANNOTATOR_DATABASE_URL": database_url,
        "ANNOTATOR_SECRET_KEY": "test-secret",
        "ANNOTATOR_JOBS_KINDS": json.dumps(KINDS),
        "ANNOTATOR_JOBS_HEARTBEAT_SECONDS": "0.2",
        "ANNOTATOR_JOBS_STALE_SECONDS": "1.0",
    }
    with open(log, "w") as out:
        process = subprocess.Popen(
            [str(ANNOTATOR), "serve", "--no-demo", "--port", str(port)]
            + ["--workers", "2", "--threads", "2"],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait(
            lambda: (
                process.poll() is None
                and log.read_text().count("Worker ready") == 2
                and "Jobs from" in log.read_text()
                or process.poll() is not None
            ),
            "the server's workers",
        )
        assert process.poll() is None, log.read_text()
        yield process, port, log
    finally:
        if process.poll() is None or _group_alive(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def test_ctrl_c_stops_server_and_job_worker_quickly_and_cleanly(server, make_app, tmp_path):
    process, port, log = server
    app = make_app(
        create_schema=False,
        JOBS_IMMEDIATE=False,
        JOBS_KINDS=KINDS,
        JOBS_HEARTBEAT_SECONDS=0.2,
        JOBS_STALE_SECONDS=1.0,
    )
    result = app.test_cli_runner().invoke(args=["study", "create", str(DATA / "small-study.toml")])
    assert result.exit_code == 0, result.output
    # A browser's kept-alive connection, and a job that runs until the stop.
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/login")
    response = connection.getresponse()
    assert response.status == 200 and response.read()
    with app.app_context(), Session(get_engine(app), expire_on_commit=False) as session:
        job, _ = request_job(
            session, get_study(session, "small"), "steps", {"hold": str(tmp_path / "never")}
        )
        session.commit()

    def status() -> str:
        with Session(get_engine(app)) as session:
            return session.get(Job, job.id).status

    _wait(lambda: status() == JobStatus.RUNNING, "the job worker to take the job")

    started = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl+C in the terminal does
    # The server, then its workers (the server reaped, a member left would still count).
    _wait(
        lambda: process.poll() is not None and not _group_alive(process.pid),
        "every process to stop",
        timeout=60,
    )
    took = time.monotonic() - started
    print(f"stopped in {took:.2f} s")
    connection.close()
    text = log.read_text()
    assert took < STOP_LIMIT, f"stopped in {took:.1f} s\n{text}"
    assert process.returncode == 0, text
    assert [line for line in text.splitlines() if any(m in line for m in ERROR_MARKS)] == []

    # The job the worker was running is left running, and taken back once stale.
    assert status() == JobStatus.RUNNING
    time.sleep(1.2)
    with app.app_context(), Session(get_engine(app)) as session:
        assert take_back_stale_jobs(session, app) == [job.id]
        session.commit()
    assert status() == JobStatus.QUEUED
