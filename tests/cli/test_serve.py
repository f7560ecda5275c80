"""`annotator serve`: gunicorn with workers and threads, and what the workers share."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode

import pytest

ANNOTATOR = Path(sys.executable).with_name("annotator")


@pytest.fixture
def gunicorn_settings(monkeypatch):
    """The settings `annotator serve` gives gunicorn, instead of serving."""
    from gunicorn.app.base import BaseApplication

    seen = {}

    def run(self):
        seen.update({name: self.cfg.settings[name].get() for name in self.cfg.settings})
        seen["app"] = self.load()

    monkeypatch.setattr(BaseApplication, "run", run)
    return seen


def test_serve_runs_gunicorn_with_the_workers_and_threads_asked(make_app, gunicorn_settings):
    app = make_app(create_schema=False)
    result = app.test_cli_runner().invoke(
        args=["serve", "--no-demo", "--port", "5061", "--workers", "3", "--threads", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "3 workers x 2 threads" in result.output
    assert gunicorn_settings["bind"] == ["127.0.0.1:5061"]
    assert gunicorn_settings["workers"] == 3
    assert gunicorn_settings["threads"] == 2
    from gunicorn.workers.gthread import ThreadWorker

    assert issubclass(gunicorn_settings["worker_class"], ThreadWorker)
    # Only the app's ProxyFix decides which forwarded headers count.
    assert gunicorn_settings["forwarded_allow_ips"] == []
    # Each worker builds its own app (and database engine) after the fork.
    worker_app = gunicorn_settings["app"]
    assert worker_app is not app and worker_app.name == "annotator"


def test_a_quit_signal_inside_the_first_ones_handler_is_ignored():
    """Ctrl+C sends a worker SIGINT and, through the master, SIGQUIT: the second
    handler may run while the first holds the thread pool's shutdown lock."""
    import threading

    from annotator.cli.serve import _thread_worker_class

    worker_class = _thread_worker_class()
    # gunicorn's constructor wants an arbiter's sockets and settings; the quit path
    # needs only these three attributes.
    worker = worker_class.__new__(worker_class)
    calls = []

    class Pool:
        lock = threading.Lock()  # not reentrant, as ThreadPoolExecutor's own

        def shutdown(self, wait=True):
            with self.lock:
                calls.append("shutdown")
                if calls.count("shutdown") == 1:
                    worker.handle_quit(signal.SIGQUIT, None)  # the master's signal

    worker.tpool = Pool()
    worker.cfg = SimpleNamespace(worker_int=lambda _: calls.append("worker_int"))
    worker.alive = True
    ended = threading.Event()

    def quit_by_ctrl_c():
        try:
            worker.handle_quit(signal.SIGINT, None)
        except SystemExit:
            ended.set()

    # gunicorn's own ThreadWorker blocks here for good (the test would fail on the
    # timeout): the second handler waits for the lock the first one holds.
    thread = threading.Thread(target=quit_by_ctrl_c, daemon=True)
    thread.start()
    thread.join(10)
    assert ended.is_set()
    assert calls == ["shutdown", "worker_int"] and worker.alive is False


def test_one_thread_per_worker_is_the_sync_worker(make_app, gunicorn_settings):
    result = (
        make_app(create_schema=False)
        .test_cli_runner()
        .invoke(args=["serve", "--no-demo", "--host", "::1", "--workers", "2", "--threads", "1"])
    )
    assert result.exit_code == 0, result.output
    assert gunicorn_settings["worker_class"] == "sync"
    assert gunicorn_settings["bind"] == ["[::1]:5000"]


def test_dev_runs_the_development_server(make_app, monkeypatch, gunicorn_settings):
    import werkzeug.serving

    calls = []
    monkeypatch.setattr(werkzeug.serving, "run_simple", lambda *a, **k: calls.append(a))
    result = (
        make_app(create_schema=False)
        .test_cli_runner()
        .invoke(args=["serve", "--no-demo", "--dev", "--port", "5062"])
    )
    assert result.exit_code == 0, result.output
    assert "development server" in result.output
    assert calls and calls[0][:2] == ("127.0.0.1", 5062)
    assert gunicorn_settings == {}


def test_the_server_imports_the_pages_modules_before_it_forks(tmp_path, database_url):
    """Warm workers (issue 34): the modules of the lead's pages (pandas, scipy, the
    analysis, huey) are in the master when gunicorn starts forking, so a worker's first
    request does not import them; the app itself is not built there (each worker builds
    its own, engine included, after the fork). Speed: benchmarks/first_request.py."""
    code = textwrap.dedent(
        """
        import json, sys
        from gunicorn.app.base import BaseApplication
        from annotator.cli import main
        from annotator.cli.serve import WARM_MODULES

        def run(self):
            names = [*WARM_MODULES, "pandas", "scipy.stats", "matplotlib"]
            print(json.dumps({name: name in sys.modules for name in names}))

        BaseApplication.run = run
        main(["serve", "--no-demo", "--no-jobs-worker"], prog_name="annotator")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "ANNOTATOR_INSTANCE_PATH": str(tmp_path / "instance"),
            "ANNOTATOR_DATABASE_URL": database_url,
        },
    )
    assert result.returncode == 0, result.stderr
    imported = json.loads(result.stdout.strip().splitlines()[-1])
    # The report's figures are drawn by the job worker, not by the web workers.
    assert imported.pop("matplotlib") is False
    assert all(imported.values()), imported


def test_a_worker_compiles_every_template_before_it_says_it_is_ready(make_app, gunicorn_settings):
    result = make_app(create_schema=False).test_cli_runner().invoke(args=["serve", "--no-demo"])
    assert result.exit_code == 0, result.output
    app, logged = gunicorn_settings["app"], []
    log = SimpleNamespace(info=lambda *message: logged.append(message))
    worker = SimpleNamespace(wsgi=app, pid=1, log=log)
    assert not app.jinja_env.cache
    gunicorn_settings["post_worker_init"](worker)
    compiled = {name for _loader, name in app.jinja_env.cache}
    assert compiled == set(app.jinja_env.list_templates()) and len(compiled) > 40
    assert logged == [("Worker ready (pid: %s)", 1)]


@pytest.mark.parametrize("bad", [["--workers", "0"], ["--threads", "0"]])
def test_workers_and_threads_must_be_positive(make_app, bad):
    result = make_app(create_schema=False).test_cli_runner().invoke(args=["serve", *bad])
    assert result.exit_code == 2 and "0 is not in the range x>=1" in result.output


# ---------------------------------------------------- the shared login limit


# The login-limit tests start a two-worker gunicorn and rely on its idle workers
# racing for a connection within a second: with pytest-xdist (make test) they run on
# one worker, one server at a time, not two servers starving each other's workers.
ONE_SERVER_AT_A_TIME = pytest.mark.xdist_group("two-worker-server")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def two_worker_server(tmp_path, database_url):
    """``start(**env)``: `annotator serve --workers 2 --threads 1` on a free port."""
    started = []

    def start(**env) -> int:
        port = _free_port()
        process = subprocess.Popen(
            [str(ANNOTATOR), "serve", "--no-demo", "--port", str(port)]
            + ["--workers", "2", "--threads", "1"],
            env={
                **os.environ,
                "ANNOTATOR_INSTANCE_PATH": str(tmp_path / "instance"),
                "ANNOTATOR_DATABASE_URL": database_url,
                "ANNOTATOR_WTF_CSRF_ENABLED": "false",
                "ANNOTATOR_LOGIN_RATE_LIMIT": "3 per minute",
                **env,
            },
            stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / "server.log", "a"),  # noqa: SIM115
            start_new_session=True,
        )
        started.append(process)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert process.poll() is None, (tmp_path / "server.log").read_text()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.2)
        workers = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        while len(workers.read_text().split()) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        return port

    yield start
    for process in started:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def _login_request(account: str) -> bytes:
    body = urlencode({"username": account, "password": "wrong"}).encode()
    return (
        b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


def _failed_login(port: int, account: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = urlencode({"username": account, "password": "wrong"})
    connection.request(
        "POST", "/login", body, {"Content-Type": "application/x-www-form-urlencoded"}
    )
    status = connection.getresponse().status
    connection.close()
    return status


def _failures_on_both_workers(port: int, account: str) -> list[int]:
    """Four failed logins: one on the first worker, the others on the second.

    A sync worker serves one connection at a time, so a request sent in two
    parts holds the worker that took it: the next requests can only go to
    the other. The held one is finished third, then a fourth goes anywhere.
    """
    request = _login_request(account)
    held = socket.create_connection(("127.0.0.1", port), timeout=30)
    held.sendall(request[:20])
    time.sleep(1)  # the idle workers race to accept it
    statuses = [_failed_login(port, account), _failed_login(port, account)]
    held.sendall(request[20:])
    statuses.append(int(held.recv(64).split()[1]))
    held.close()
    statuses.append(_failed_login(port, account))
    return statuses


@ONE_SERVER_AT_A_TIME
def test_the_login_limit_is_shared_by_the_workers(two_worker_server):
    # The default storage: a SQLite file in the instance folder.
    port = two_worker_server()
    assert _failures_on_both_workers(port, "nobody") == [401, 401, 401, 429]


@ONE_SERVER_AT_A_TIME
def test_per_process_counts_would_let_a_fourth_attempt_through(two_worker_server):
    # The control: with flask-limiter's in-memory storage each worker counts
    # alone (1 and 3 here), so the limit of 3 is not reached.
    port = two_worker_server(ANNOTATOR_RATELIMIT_STORAGE_URI="memory://")
    assert _failures_on_both_workers(port, "nobody") == [401, 401, 401, 401]


def _redis_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


@ONE_SERVER_AT_A_TIME
@pytest.mark.skipif(not _redis_reachable(), reason="no Redis on 127.0.0.1:6379")
def test_the_login_limit_is_shared_through_redis(two_worker_server):
    port = two_worker_server(ANNOTATOR_RATELIMIT_STORAGE_URI="redis://127.0.0.1:6379")
    # A fresh account name: the Redis server may hold other runs' counts.
    account = f"nobody-{uuid.uuid4().hex}"
    assert _failures_on_both_workers(port, account) == [401, 401, 401, 429]
