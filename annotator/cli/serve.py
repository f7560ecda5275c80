"""Serving the app (with the demo study on first start)."""

from __future__ import annotations

import click
from flask import Flask, current_app
from flask.cli import with_appcontext

__all__ = ["serve_command"]


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
@click.option(
    "--demo/--no-demo",
    default=True,
    show_default=True,
    help="Load the demo study into an empty database.",
)
@with_appcontext
def serve_command(host: str, port: int, demo: bool) -> None:
    """Upgrade the database, load the demo study the first time, and serve."""
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
    click.echo(f"Serving on {server_url(host, port)} (listening on {host}:{port}; Ctrl+C to stop).")
    if base_url.rstrip("/") != server_url(host, port):
        click.echo(f"Links use {base_url} (ANNOTATOR_BASE_URL).")
    elif server_url(host, port) != f"http://{host}:{port}":
        click.echo("Links name this machine; set ANNOTATOR_BASE_URL to use another address.")
    # Flask refuses app.run() inside its CLI; werkzeug's server is what it
    # would have started. A pilot study's handful of raters is well within it.
    from werkzeug.serving import run_simple

    run_simple(host, port, app, threaded=True, use_reloader=False, use_debugger=False)
