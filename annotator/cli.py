"""The ``annotator`` command line (also ``flask --app annotator ...``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from flask import Flask, current_app
from flask.cli import AppGroup, FlaskGroup, with_appcontext
from sqlmodel import select

from . import migrate
from .db import get_engine, session_scope
from .models import Role, Study, User
from .studies import (
    StudyExists,
    create_invites,
    create_lead,
    create_study,
    get_study,
    invite_url,
)
from .studyfile import StudyFileError, load_study_file

__all__ = ["main", "register_commands"]


def _fail(message: str) -> None:
    raise click.ClickException(message)


def _progress() -> bool:
    return sys.stderr.isatty()


def _study_or_fail(session, slug: str) -> Study:
    study = get_study(session, slug)
    if study is None:
        known = ", ".join(session.exec(select(Study.slug)).all()) or "none yet"
        _fail(f"no study with slug {slug!r} (studies: {known})")
    return study


def _base_url(base_url: str | None) -> str:
    from .studies import link_base_url

    return base_url or link_base_url()


# ------------------------------------------------------------------- setup


@click.command("init")
@with_appcontext
def init_command() -> None:
    """Create the instance folder and the database (at the newest schema)."""
    migrate.upgrade(get_engine())
    click.echo(f"Instance folder: {current_app.instance_path}")
    click.echo(f"Database: {get_engine().url.render_as_string(hide_password=True)}")
    click.echo(f"Schema at revision {migrate.current_revision(get_engine())}.")


db_group = AppGroup("db", help="Database schema (Alembic migrations).")


@db_group.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
def db_upgrade(revision: str) -> None:
    """Bring the database schema up to date."""
    engine = get_engine()
    before = migrate.current_revision(engine)
    migrate.upgrade(engine, revision)
    after = migrate.current_revision(engine)
    if before == after:
        click.echo(f"Schema already at revision {after}.")
    else:
        click.echo(f"Schema upgraded from {before or 'empty'} to {after}.")


@db_group.command("revision")
@click.option("-m", "--message", required=True)
def db_revision(message: str) -> None:
    """(Developers) write a migration for the changes in models.py."""
    migrate.revision(get_engine(), message)


lead_group = AppGroup("lead", help="Project leads.")


@lead_group.command("create")
@click.argument("email")
@click.password_option(help="At least 8 characters; asked for when not given.")
def lead_create(email: str, password: str) -> None:
    """Create a lead account that logs in with EMAIL."""
    try:
        with session_scope() as session:
            user = create_lead(session, email, password)
            click.echo(f"Lead {user.email} created.")
    except ValueError as exc:
        _fail(str(exc))


# ------------------------------------------------------------------ studies

study_group = AppGroup("study", help="Define and list studies.")


@study_group.command("create")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def study_create(file: Path) -> None:
    """Create a study from a TOML study file."""
    try:
        spec = load_study_file(file)
        with session_scope() as session:
            study = create_study(session, spec, source_toml=file.read_text("utf-8"))
            click.echo(
                f"Study {study.slug!r} created: {len(spec.scales)} scale(s) "
                f"({', '.join(s.name for s in spec.scales)}), {len(spec.benchmarks)} "
                f"benchmark(s), {len(spec.demographics)} demographic question(s)."
            )
    except (StudyFileError, StudyExists) as exc:
        _fail(str(exc))


@study_group.command("list")
def study_list() -> None:
    """List the studies with their counts."""
    from .lead.views import study_overviews

    with session_scope() as session:
        rows = study_overviews(session)
    if not rows:
        click.echo("No studies yet; create one with `annotator study create FILE.toml`.")
        return
    click.echo(f"{'slug':<24} {'items':>7} {'raters':>7} {'ratings':>9} {'llm':>9}  name")
    for row in rows:
        click.echo(
            f"{row['study'].slug:<24} {row['n_items']:>7} {row['raters']:>7} "
            f"{row['ratings']:>9} {row['llm_scores']:>9}  {row['study'].name}"
        )


# ------------------------------------------------------------------ imports


def _import(kind: str, importer, study_slug: str, file: Path) -> None:
    from .tables import InputError

    try:
        with session_scope() as session:
            study = _study_or_fail(session, study_slug)
            report = importer(session, study, file, progress=_progress())
    except InputError as exc:
        _fail(str(exc))
    click.echo(f"{file}: {report.summary(kind)}.")


@click.group("items", cls=AppGroup, help="Items to rate.")
def items_group() -> None:
    pass


@items_group.command("import")
@click.argument("study")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def items_import(study: str, file: Path) -> None:
    """Import items from CSV or JSONL (item_id, benchmark, the template's fields)."""
    from .importers import import_items

    _import("item(s)", import_items, study, file)


@click.group("ratings", cls=AppGroup, help="Human ratings collected elsewhere.")
def ratings_group() -> None:
    pass


@ratings_group.command("import")
@click.argument("study")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def ratings_import(study: str, file: Path) -> None:
    """Import a long CSV item_id,rater,scale,score[,demographic columns]."""
    from .importers import import_ratings

    _import("rating(s)", import_ratings, study, file)


@click.group("llm-scores", cls=AppGroup, help="Stored LLM judge scores.")
def llm_group() -> None:
    pass


@llm_group.command("import")
@click.argument("study")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def llm_import(study: str, file: Path) -> None:
    """Import a long CSV item_id,model,scale,score[,run,temperature]."""
    from .importers import import_llm_scores

    _import("LLM score(s)", import_llm_scores, study, file)


# ------------------------------------------------------------------ raters

raters_group = AppGroup("raters", help="Raters and their invites.")


@raters_group.command("invite")
@click.argument("study")
@click.option("--count", "-n", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--base-url", help="Address of the server (default: ANNOTATOR_BASE_URL).")
def raters_invite(study: str, count: int, base_url: str | None) -> None:
    """Print COUNT single-use invite links, one per line."""
    with session_scope() as session:
        invites = create_invites(session, _study_or_fail(session, study), count)
        tokens = [invite.token for invite in invites]
    for token in tokens:
        click.echo(invite_url(token, _base_url(base_url)))


@raters_group.command("links")
@click.argument("study")
@click.option("--rater", "code", help="Only this rater's link (the code in any case).")
@click.option("--rotate", is_flag=True, help="Replace the link(s) first; old ones stop working.")
@click.option("--base-url", help="Address of the server (default: ANNOTATOR_BASE_URL).")
def raters_links(study: str, code: str | None, rotate: bool, base_url: str | None) -> None:
    """Print each rater's personal return link as CODE<TAB>URL.

    Raters whose ratings were imported, and raters who declined, have none.
    Every replacement is logged.
    """
    from .collect.enrolment import no_return_link, return_url
    from .studies import study_raters
    from .study.raters import rotate_return_link

    with session_scope() as session:
        raters = study_raters(session, _study_or_fail(session, study), code=code)
        if code is not None and not raters:
            _fail(f"study {study!r} has no rater with code {code!r}")
        if code is not None and all(r.return_token is None for r in raters):
            _fail(no_return_link(raters[0]))
        raters = [r for r in raters if r.return_token is not None]
        if rotate:
            for rater in raters:
                rotate_return_link(session, rater, actor=None, via="cli")
        lines = [(rater.rater_code, rater.return_token) for rater in raters]
    for rater_code, token in lines:
        click.echo(f"{rater_code}\t{return_url(token, _base_url(base_url))}")


# ------------------------------------------------------------------ export


@click.command("export")
@click.argument("study")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["long", "matrix", "alttest", "demographics"]),
    required=True,
)
@click.option("--scale", help="Scale name (required for matrix and alttest when several).")
@click.option("--benchmark", help="Only items of this benchmark.")
@click.option("--complete", is_flag=True, help="matrix: keep the largest complete crossed block.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Output file; '-' writes to standard output.",
)
@with_appcontext
def export_command(
    study: str, fmt: str, scale: str | None, benchmark: str | None, complete: bool, out: Path
) -> None:
    """Export a study's ratings and LLM scores."""
    from .exporters import ExportError, render_export

    try:
        with session_scope() as session:
            export = render_export(
                session,
                _study_or_fail(session, study),
                fmt,
                scale=scale,
                benchmark=benchmark,
                complete=complete,
            )
    except ExportError as exc:
        _fail(str(exc))
    if str(out) == "-":
        click.echo(export.text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(export.text, encoding="utf-8")
    if export.notes:
        click.echo(export.notes, err=True)
    if str(out) != "-":
        click.echo(f"Wrote {fmt} export ({export.rows} row(s)) to {out}.", err=True)


# ------------------------------------------------------------------- serve


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
    from .demo import load_demo
    from .studies import link_base_url, server_url

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


def register_commands(app: Flask) -> None:
    for command in (
        init_command,
        db_group,
        lead_group,
        study_group,
        items_group,
        ratings_group,
        llm_group,
        raters_group,
        export_command,
        serve_command,
    ):
        app.cli.add_command(command)
    from .metrics.cli import register as register_metrics

    register_metrics(app.cli)
    from .analysis.cli import register as register_analysis

    register_analysis(app.cli)


def _create_app_for_cli() -> Flask:
    from . import create_app

    return create_app()


main = FlaskGroup(
    name="annotator",
    create_app=_create_app_for_cli,
    add_version_option=False,
    help="Rating studies with humans and LLM judges.",
)
