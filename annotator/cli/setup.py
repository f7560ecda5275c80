"""Setting up: the instance and database, schema migrations, lead accounts."""

from __future__ import annotations

import sys

import click
from flask import current_app
from flask.cli import AppGroup, with_appcontext

from ._common import fail

__all__ = ["init_command", "db_group", "lead_group"]


@click.command("init")
@with_appcontext
def init_command() -> None:
    """Create the instance folder and the database (at the newest schema)."""
    from .. import migrate
    from ..db import get_engine

    migrate.upgrade(get_engine())
    click.echo(f"Instance folder: {current_app.instance_path}")
    click.echo(f"Database: {get_engine().url.render_as_string(hide_password=True)}")
    click.echo(f"Schema at revision {migrate.current_revision(get_engine())}.")


db_group = AppGroup("db", help="Database schema (Alembic migrations).")


@db_group.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
def db_upgrade(revision: str) -> None:
    """Bring the database schema up to date."""
    from .. import migrate
    from ..db import get_engine

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
    from .. import migrate
    from ..db import get_engine

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
    from ..db import session_scope
    from ..study.studies import create_lead

    if password is not None and password_stdin:
        raise click.UsageError("give --password or --password-stdin, not both")
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            fail("--password-stdin: standard input holds no password")
    elif password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        with session_scope() as session:
            user = create_lead(session, email, password)
            click.echo(f"Lead {user.email} created.")
    except ValueError as exc:
        fail(str(exc))
