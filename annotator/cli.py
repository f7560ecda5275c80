"""The ``annotator`` command line (also ``flask --app annotator ...``).

Start-up matters here: ``annotator --help`` and a command's ``--help`` must not
wait for SQLAlchemy, pandas or scipy (seconds on a small machine). So this
module imports only click and Flask at the top; each command imports what it
uses when it runs, and the statistics commands are :class:`LazyCommand` s
(``benchmarks/startup.py`` measures it, ``tests/test_cli_startup.py`` checks
the imports).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from flask import Flask, current_app
from flask.cli import AppGroup, FlaskGroup, with_appcontext

from .analysis.cli import report_command

if TYPE_CHECKING:
    from .models import Study

__all__ = ["main", "register_commands", "LazyCommand", "COMMANDS"]


def _fail(message: str) -> None:
    raise click.ClickException(message)


def _progress() -> bool:
    return sys.stderr.isatty()


def _study_or_fail(session, slug: str) -> Study:
    from sqlmodel import select

    from .models import Study
    from .studies import get_study

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
    from . import migrate
    from .db import get_engine

    migrate.upgrade(get_engine())
    click.echo(f"Instance folder: {current_app.instance_path}")
    click.echo(f"Database: {get_engine().url.render_as_string(hide_password=True)}")
    click.echo(f"Schema at revision {migrate.current_revision(get_engine())}.")


db_group = AppGroup("db", help="Database schema (Alembic migrations).")


@db_group.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
def db_upgrade(revision: str) -> None:
    """Bring the database schema up to date."""
    from . import migrate
    from .db import get_engine

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
    from . import migrate
    from .db import get_engine

    migrate.revision(get_engine(), message)


lead_group = AppGroup("lead", help="Project leads.")


@lead_group.command("create")
@click.argument("email")
@click.option(
    "--password",
    help="At least 8 characters. Asked for (twice, hidden) when neither this nor "
    "--password-stdin is given.",
)
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of standard input, for scripts "
    "(unlike --password it stays out of the shell history and the process list).",
)
def lead_create(email: str, password: str | None, password_stdin: bool) -> None:
    """Create a lead account that logs in with EMAIL."""
    from .db import session_scope
    from .studies import create_lead

    if password is not None and password_stdin:
        raise click.UsageError("give --password or --password-stdin, not both")
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            _fail("--password-stdin: standard input holds no password")
    elif password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
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
    from .db import session_scope
    from .studies import StudyExists, create_study
    from .studyfile import StudyFileError, load_study_file

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
    from .db import session_scope
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
    from .db import session_scope
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
    from .db import session_scope
    from .studies import create_invites, invite_url

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
    from .db import session_scope
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
    from .db import session_scope
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
        _fail(f"{exc}; choose one with --{exc.field} ({', '.join(exc.choices)})")
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
    from sqlmodel import select

    from . import migrate
    from .db import get_engine, session_scope
    from .demo import load_demo
    from .models import Role, User
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


class LazyCommand(click.Command):
    """A command imported only when it runs or shows its own help.

    Listing the commands needs only their one-line help, given here; importing
    the statistics commands for it would import numpy, scipy and pandas (about
    a second). Click's own recipe (a "LazyGroup") still imports every command
    for ``--help``; this proxy avoids that and works in any group, including
    the app's ``app.cli`` behind ``flask --app annotator``.
    ``tests/test_cli_startup.py`` checks that ``short_help`` matches the command's.
    """

    def __init__(self, name: str, import_path: str, short_help: str) -> None:
        super().__init__(name, help=short_help, add_help_option=False)
        self.import_path = import_path

    def load(self) -> click.Command:
        module, attribute = self.import_path.split(":")
        return getattr(importlib.import_module(module), attribute)

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        # The context (and so the parsing, --help and invoke) is the real command's.
        return self.load().make_context(info_name, args, parent=parent, **extra)


def _metrics_commands() -> list[click.Command]:
    # The commands annotator.metrics.cli.register adds (a test keeps them equal).
    return [
        LazyCommand(
            "alt-test",
            "annotator.metrics.cli:alt_test_command",
            "Run the alt-test: may an LLM judge replace the human annotators?",
        ),
        LazyCommand(
            "icc",
            "annotator.metrics.cli:icc_command",
            "ICC(A,1), ICC(A,k), ICC(C,1), ICC(C,k) of the matrix export MATRIX (a CSV).",
        ),
        LazyCommand(
            "alpha",
            "annotator.metrics.cli:alpha_command",
            "Krippendorff's alpha of the matrix export MATRIX (a CSV); empty cells are missing.",
        ),
        LazyCommand(
            "plan",
            "annotator.metrics.plan_cli:plan_command",
            "Plan a study from a PILOT export (matrix CSV; alttest JSON with --alttest).",
        ),
    ]


COMMANDS: tuple[click.Command, ...] = (
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
    report_command,
    *_metrics_commands(),
)


def register_commands(app: Flask) -> None:
    """The commands of ``flask --app annotator``: the same as ``annotator``'s."""
    for command in COMMANDS:
        app.cli.add_command(command)


def _create_app_for_cli() -> Flask:
    from . import create_app

    return create_app()


class _AnnotatorGroup(FlaskGroup):
    """Flask's command group, with the commands on the group itself.

    Flask's group lists the commands of ``app.cli``, so ``annotator --help``
    built the whole app (database engine, blueprints) just to print a list.
    Here listing and finding a command build nothing; a command that needs the
    app loads it itself (``with_appcontext``).
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.commands)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self.commands.get(name) or super().get_command(ctx, name)


main = _AnnotatorGroup(
    name="annotator",
    create_app=_create_app_for_cli,
    add_version_option=False,
    help="Rating studies with humans and LLM judges.",
)
for _command in COMMANDS:
    main.add_command(_command)
