"""``annotator worker``: a consumer of the job queue (``annotator serve`` starts one too).

The consumer is huey's own (:meth:`huey.Huey.create_consumer`), with thread workers:
the app (its database engine) is built once per process, and for more cores one
runs more ``annotator worker`` processes, on this machine or others sharing the
database and ``ANNOTATOR_REDIS_URL``. Beside it a thread takes back the jobs of
workers that died (:func:`annotator.jobs.take_back_stale_jobs`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import click
from flask import Flask, current_app
from flask.cli import with_appcontext

__all__ = ["worker_command", "start_embedded_worker", "stop_embedded_worker"]


def _watch(app: Flask, parent_pid: int | None, stop: threading.Event) -> None:
    """Every heartbeat interval: queue again the jobs of dead workers; and stop this
    process when the server that started it is gone."""
    from ..db import session_scope
    from ..jobs import take_back_stale_jobs
    from ..jobs.runner import heartbeat_seconds

    while not stop.wait(heartbeat_seconds(app)):
        if parent_pid is not None and os.getppid() != parent_pid:
            os.kill(os.getpid(), signal.SIGTERM)
            return
        try:
            with app.app_context(), session_scope(app) as session:
                take_back_stale_jobs(session, app)
        except Exception as exc:  # the database away for a moment: try at the next beat
            app.logger.warning("taking back stale jobs failed: %s", exc)


@click.command("worker")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Jobs run at once in this process (threads).",
)
@click.option("--parent-pid", type=int, default=None, hidden=True)
@with_appcontext
def worker_command(workers: int, parent_pid: int | None) -> None:
    """Run the jobs (reports, exports, ...) queued by the web app until stopped.

    The queue is a SQLite file in the instance folder, or Redis with
    ANNOTATOR_REDIS_URL (then any number of workers, on any machine sharing the
    database). Ctrl+C (SIGINT) finishes the jobs under way; SIGTERM stops at once,
    and another worker takes the interrupted jobs again.
    """
    from ..jobs import get_queue
    from ..jobs.queue import queue_description
    from ..warm import warm_up_jobs

    app: Flask = current_app._get_current_object()
    if app.config.get("JOBS_IMMEDIATE"):
        raise click.ClickException("JOBS_IMMEDIATE is set: jobs run where they are asked.")
    # The job kinds' modules, before the first job: its lead waits for them otherwise.
    warm_up_jobs()
    huey = get_queue(app)
    click.echo(f"Jobs from {queue_description(app)}: {workers} at once (Ctrl+C to stop).")
    stop = threading.Event()
    watcher = threading.Thread(
        target=_watch, args=(app, parent_pid, stop), name="jobs-watch", daemon=True
    )
    watcher.start()
    # The server's own worker (--parent-pid) is in the terminal's process group: Ctrl+C
    # there stops it at once, beside the web server, and the job under way is taken
    # back by the stale-job rule (huey: SIGINT interrupts once SIGTERM is the graceful
    # signal). A worker of its own finishes its jobs on Ctrl+C, as documented above.
    consumer = huey.create_consumer(
        workers=workers,
        worker_type="thread",
        periodic=False,
        max_delay=1.0,
        graceful_signal="TERM" if parent_pid is not None else "INT",
    )
    try:
        consumer.run()
    finally:
        stop.set()


def start_embedded_worker(app: Flask) -> subprocess.Popen | None:
    """``annotator worker`` as a child of the server (one per server), or None when
    jobs run in the request (``JOBS_IMMEDIATE``)."""
    if app.config.get("JOBS_IMMEDIATE"):
        return None
    command = [
        sys.executable,
        "-c",
        # Ctrl+C while the worker is still starting ends it quietly (nothing is under
        # way yet) instead of a KeyboardInterrupt in an import and click's "Aborted!";
        # the consumer puts its own handler in place once it runs.
        "import os, signal, sys; signal.signal(signal.SIGINT, lambda *_: os._exit(0)); "
        "from annotator.cli import main; main(sys.argv[1:], prog_name='annotator')",
        "worker",
        "--workers",
        "1",
        "--parent-pid",
        str(os.getpid()),
    ]
    # The same instance folder (and with it config.py) as this server.
    env = {**os.environ, "ANNOTATOR_INSTANCE_PATH": app.instance_path}
    return subprocess.Popen(command, env=env)


def stop_embedded_worker(process: subprocess.Popen | None) -> None:
    """Stop the server's worker at once: SIGINT (the job under way is taken back later)."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
