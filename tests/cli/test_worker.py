"""`annotator worker`, and the one job worker `annotator serve` runs beside the server."""

from __future__ import annotations

import os
import subprocess

from annotator.cli import serve, worker


def test_serve_runs_one_job_worker_and_stops_it_with_the_server(make_app, monkeypatch):
    app = make_app(create_schema=False, JOBS_IMMEDIATE=False)
    started: list[subprocess.Popen] = []
    real_popen = subprocess.Popen

    def popen(command, **kwargs):
        started.append(real_popen(command, **kwargs))
        return started[-1]

    monkeypatch.setattr(worker.subprocess, "Popen", popen)
    alive_while_serving = []
    monkeypatch.setattr(
        serve, "run_server", lambda *a, **k: alive_while_serving.append(started[0].poll() is None)
    )
    result = app.test_cli_runner().invoke(args=["serve", "--no-demo", "--port", "5063"])
    assert result.exit_code == 0, result.output
    (process,) = started
    assert process.args[3:] == ["worker", "--workers", "1", "--parent-pid", str(os.getpid())]
    assert alive_while_serving == [True]
    # Stopped with the server.
    assert process.poll() is not None


def test_serve_without_the_job_worker(make_app, monkeypatch):
    app = make_app(create_schema=False, JOBS_IMMEDIATE=False)
    monkeypatch.setattr(serve, "run_server", lambda *a, **k: None)
    monkeypatch.setattr(worker.subprocess, "Popen", lambda *a, **k: 1 / 0)
    result = app.test_cli_runner().invoke(args=["serve", "--no-demo", "--no-jobs-worker"])
    assert result.exit_code == 0, result.output


def test_the_worker_refuses_an_app_that_runs_jobs_where_they_are_asked(app):
    result = app.test_cli_runner().invoke(args=["worker"])
    assert result.exit_code == 1
    assert "JOBS_IMMEDIATE is set" in result.output
