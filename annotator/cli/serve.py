"""Serving the app (with the demo study on first start).

``annotator serve`` runs gunicorn: pre-fork worker processes, so scores are
served on every core (one Python process is held to one by its GIL), a
worker that crashes or is killed is replaced by the master while the others
go on serving, and a slow request holds up only its own thread. Waitress is
the alternative often named; it is one process with threads, so it stops at
one core and a crash stops the whole server: it is used only on Windows,
which has no fork. werkzeug's development server stays behind ``--dev``.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import click
from flask import Flask, current_app
from flask.cli import with_appcontext

__all__ = ["serve_command", "run_server"]


def _default_workers() -> int:
    # Two processes per core is gunicorn's own advice, capped: SQLite has one
    # writer at a time, and each worker holds its own connections.
    return max(2, min(2 * (os.cpu_count() or 1), 8))


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# The modules a lead's pages import on first use (the dashboard's analysis: pandas,
# scipy, the metrics; the job queue: huey), imported by the server before it forks its
# workers. Not the report's figures (matplotlib): the report is built by the job worker.
WARM_MODULES = (
    "annotator.services.dashboards",
    "annotator.data.exporters",
    # Imported by the study page on first use (its settings form, its weak-number marks).
    "annotator.services.settings",
    "annotator.render.report.caution",
    "annotator.warm",
    "huey",
    "huey.serializer",
)


def _import_warm_modules() -> None:
    """Import :data:`WARM_MODULES` in the server's master process, before the fork.

    Without this a fresh worker's first study page or "Download report" took 0.4-6 s
    (its imports) against 30-90 ms warm (issue 34; ``benchmarks/first_request.py``).
    The modules are imported, not the app built (gunicorn's ``preload_app``): each
    worker still builds its own app, and with it its database engine, after the fork
    (an engine's pooled connections must not be shared by two processes; SQLAlchemy,
    "Using Connection Pools with Multiprocessing or os.fork()"). Importing once
    before the fork also costs less than in each worker after it: the workers share
    the master's pages of these modules until they write to them (copy-on-write),
    and they do not import them at once on a busy machine (with 2 workers, 247 MB
    PSS in all after each served the study page, against 341 MB importing in each;
    docs/performance.md). After a code update, restart the server: gunicorn's HUP
    re-forks the workers from this master, which keeps the modules it imported.
    """
    import importlib

    for name in WARM_MODULES:
        importlib.import_module(name)


def _worker_ready(worker) -> None:
    """After the worker's app is built: warm it up, then say it is ready.

    Compiling every template here (about 60, a few ms each) spares the first request
    of each page its compilation, and :func:`annotator.warm.warm_up` the
    study page's SQL compilation; both live in the worker's own app and engine.
    """
    app = worker.wsgi
    if isinstance(app, Flask):
        for name in app.jinja_env.list_templates():
            app.jinja_env.get_template(name)
        from ..warm import warm_up

        warm_up(app)
    worker.log.info("Worker ready (pid: %s)", worker.pid)


# How long a worker stopped by Ctrl+C waits for the requests under way.
REQUESTS_GRACE_SECONDS = 2.0


def _worker_int(worker) -> None:
    """Ctrl+C (SIGINT, or the master's SIGQUIT): let the requests under way finish,
    then end the process at once.

    Python's own teardown of a worker's modules (pandas, scipy, matplotlib) takes
    about a second, several when every worker and the job worker tear down together
    on a busy machine; gunicorn's master waits its graceful timeout for them and then
    SIGKILLs the rest, logging "Perhaps out of memory?". Nothing is left to save here:
    ratings are committed by their requests, and database connections close with the
    process.
    """
    deadline = time.monotonic() + REQUESTS_GRACE_SECONDS
    # gthread has shut its pool down (wait=False): its threads end once their request
    # is answered.
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _thread_worker_class():
    """gunicorn's gthread worker, with a quit handler that runs once.

    Ctrl+C in a terminal signals the whole process group: each worker gets SIGINT,
    and the master, on its own SIGINT, sends each worker SIGQUIT. Python runs the
    second handler inside the first wherever the first happens to be; gthread's
    ``handle_quit`` calls ``ThreadPoolExecutor.shutdown``, which holds a lock that is
    not reentrant, so a second signal landing there blocked the worker until the
    master's graceful timeout SIGKILLed it 30 s later ("Perhaps out of memory?"; seen
    about 1 run in 5 on a loaded machine, confirmed by a faulthandler stack dump). The
    first signal already ends the worker (:func:`_worker_int`), so a second is
    ignored. Subclassing the worker is gunicorn's documented way to change it
    (``worker_class`` takes a class).
    """
    from gunicorn.workers.gthread import ThreadWorker

    class QuitOnceThreadWorker(ThreadWorker):
        quitting = False

        def handle_quit(self, sig, frame) -> None:
            if self.quitting:
                return
            self.quitting = True
            super().handle_quit(sig, frame)

    return QuitOnceThreadWorker


def run_server(app: Flask, host: str, port: int, *, workers: int, threads: int, dev: bool):
    """Serve ``app`` (``dev``) or a fresh app per worker (gunicorn) until stopped."""
    if dev or sys.platform == "win32":
        # ``app`` is the command's, made without what serving needs.
        from .. import prepare_to_serve

        prepare_to_serve(app)
    if dev:
        # Flask refuses app.run() inside its CLI; werkzeug's server is what it
        # would have started.
        from werkzeug.serving import run_simple

        run_simple(host, port, app, threaded=True, use_reloader=False, use_debugger=False)
        return
    if sys.platform == "win32":  # pragma: no cover - no fork, so no gunicorn
        from waitress import serve

        serve(app, listen=_bind(host, port), threads=workers * threads)
        return
    from gunicorn.app.base import BaseApplication

    class _Gunicorn(BaseApplication):
        # gunicorn's documented "custom application": settings in code, and
        # the app built by the factory inside each worker after the fork, so
        # no database connection or thread of this process is shared.
        def load_config(self) -> None:
            self.cfg.set("bind", [_bind(host, port)])
            self.cfg.set("workers", workers)
            self.cfg.set("threads", threads)
            # gthread keeps connections alive and serves `threads` requests at
            # once per worker; sync serves one.
            self.cfg.set("worker_class", _thread_worker_class() if threads > 1 else "sync")
            self.cfg.set("proc_name", "annotator")
            # One place decides which proxy headers count: the app's ProxyFix
            # (ANNOTATOR_PROXY_FIX). gunicorn would otherwise believe
            # X-Forwarded-Proto from any local client.
            self.cfg.set("forwarded_allow_ips", "")
            # gunicorn's runtime control socket sits at one fixed path per
            # user: a second server on the machine would take it over.
            self.cfg.set("control_socket_disable", True)
            # gunicorn logs "Booting worker" before the app is loaded (seconds
            # on a busy machine): say when a worker can take requests.
            self.cfg.set("post_worker_init", _worker_ready)
            self.cfg.set("worker_int", _worker_int)

        def load(self) -> Flask:
            from .. import create_app

            return create_app()

    _import_warm_modules()
    _Gunicorn().run()


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
@click.option(
    "--demo/--no-demo",
    default=True,
    show_default=True,
    help="Load the demo study into an empty database.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: two per core, at least 2, at most 8).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Threads per worker process.",
)
@click.option(
    "--jobs-worker/--no-jobs-worker",
    default=True,
    show_default=True,
    help="Also run one job worker (reports, exports); off when `annotator worker`s run elsewhere.",
)
@click.option(
    "--dev",
    is_flag=True,
    help="werkzeug's development server (one process) instead of gunicorn.",
)
@with_appcontext
def serve_command(
    host: str,
    port: int,
    demo: bool,
    workers: int | None,
    threads: int,
    jobs_worker: bool,
    dev: bool,
) -> None:
    """Upgrade the database, load the demo study the first time, and serve.

    The server is gunicorn with WORKERS processes of THREADS threads each
    (waitress on Windows). Behind a reverse proxy set ANNOTATOR_PROXY_FIX=1
    (docs/deploy.md).
    """
    from sqlmodel import select

    from .. import migrate
    from ..db import get_engine, session_scope
    from ..demo import load_demo
    from ..models import Role, User
    from ..study.studies import link_base_url, server_url

    app: Flask = current_app._get_current_object()
    migrate.upgrade(get_engine())
    # Links name an address others can open: ANNOTATOR_BASE_URL, else this
    # machine's name when listening on every interface (0.0.0.0).
    base_url = link_base_url(host=host, port=port)
    if demo:
        with session_scope() as session:
            created = load_demo(session, base_url=base_url, instance_path=app.instance_path)
        for line in created:
            click.echo(line)
    with session_scope() as session:
        if session.exec(select(User).where(User.role == Role.LEAD)).first() is None:
            click.echo("No lead yet: create one with `annotator lead create EMAIL`.")
    workers = workers or _default_workers()
    how = "development server" if dev else f"{workers} workers x {threads} threads"
    click.echo(
        f"Serving on {server_url(host, port)} (listening on {host}:{port}, {how}; Ctrl+C to stop)."
    )
    if base_url.rstrip("/") != server_url(host, port):
        click.echo(f"Links use {base_url} (ANNOTATOR_BASE_URL).")
    elif server_url(host, port) != f"http://{host}:{port}":
        click.echo("Links name this machine; set ANNOTATOR_BASE_URL to use another address.")
    if not dev:
        # The workers open their own connections; close this process's.
        get_engine().dispose()
    from .worker import start_embedded_worker, stop_embedded_worker

    # The embedded default: one consumer per server, stopped with it.
    consumer = start_embedded_worker(app) if jobs_worker else None
    try:
        run_server(app, host, port, workers=workers, threads=threads, dev=dev)
    finally:
        stop_embedded_worker(consumer)
