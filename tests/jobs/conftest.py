"""Fixtures of the job tests: an app whose jobs go through a real queue (a SQLite
file in the instance folder, or Redis), consumed by a thread or a worker process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.jobs.kinds import KINDS

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(params=["sqlite", "redis"])
def storage(request) -> str:
    """Each job test runs on the embedded default (SQLite) and on Redis."""
    if request.param == "redis" and not redis_reachable():
        pytest.skip("no Redis on 127.0.0.1:6379")
    return request.param


@pytest.fixture
def queue_settings(storage) -> dict:
    """The settings of an app on ``storage``; a queue name of its own on a shared Redis."""
    settings = {
        "JOBS_IMMEDIATE": False,
        "JOBS_QUEUE_NAME": f"test-{uuid.uuid4().hex[:12]}",
        "JOBS_KINDS": KINDS,
        "JOBS_HEARTBEAT_SECONDS": 0.1,
        "JOBS_STALE_SECONDS": 1.0,
    }
    if storage == "redis":
        settings["REDIS_URL"] = REDIS_URL
    yield settings
    if storage == "redis":
        import redis

        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"huey.*{settings['JOBS_QUEUE_NAME']}*"):
            client.delete(key)


@pytest.fixture
def app(make_app, queue_settings):
    """The tests' app (and so ``runner``, ``session``, ``small_study``) on the queue."""
    return make_app(**queue_settings)


@pytest.fixture
def queue_app(app):
    return app


class ThreadConsumer:
    """Takes tasks off the app's queue and runs them, as huey's consumer does
    (``Huey.dequeue`` and ``Huey.execute``), in a thread: the test's own job kinds
    are in this process, and huey's consumer sets signal handlers, which only the
    main thread may. Worker processes are tested in test_worker.py."""

    def __init__(self, app):
        from annotator.jobs import get_queue

        self.app = app
        self.huey = get_queue(app)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            task = self.huey.dequeue()
            if task is None:
                time.sleep(0.02)
                continue
            self.huey.execute(task)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


@pytest.fixture
def consumer(queue_app):
    consumer = ThreadConsumer(queue_app)
    yield consumer
    consumer.close()


def wait_for(check, *, timeout: float = 60, what: str = "the condition"):
    """Poll ``check()`` until it returns something true; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def worker_process(queue_settings, database_url, tmp_path):
    """``start()``: an ``annotator worker`` process on the test app's database and queue."""
    started = []

    def start(*, workers: int = 1) -> subprocess.Popen:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "ANNOTATOR_DATABASE_URL": database_url,
            "ANNOTATOR_SECRET_KEY": "test-secret",
            "ANNOTATOR_INSTANCE_PATH": str(tmp_path / "instance"),
            "ANNOTATOR_JOBS_QUEUE_NAME": queue_settings["JOBS_QUEUE_NAME"],
            "ANNOTATOR_JOBS_KINDS": json.dumps(queue_settings["JOBS_KINDS"]),
            "ANNOTATOR_JOBS_HEARTBEAT_SECONDS": str(queue_settings["JOBS_HEARTBEAT_SECONDS"]),
            "ANNOTATOR_JOBS_STALE_SECONDS": str(queue_settings["JOBS_STALE_SECONDS"]),
        }
        if "REDIS_URL" in queue_settings:
            env["ANNOTATOR_REDIS_URL"] = queue_settings["REDIS_URL"]
        process = subprocess.Popen(
            [sys.executable, "-c", "from annotator.cli import main; main()", "worker"]
            + ["--workers", str(workers)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / f"worker-{len(started)}.log", "w"),  # noqa: SIM115
            start_new_session=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
