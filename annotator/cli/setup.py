"""Setting up: the instance and database, schema migrations, lead accounts."""

from __future__ import annotations

import sys
from pathlib import Path

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


db_group = AppGroup("db", help="Database schema (Alembic migrations), backups.")


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
    """(Developers) write a migration for the changes in annotator/models/."""
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
@click.option(
    "--admin",
    is_flag=True,
    help="An admin sees and may change every study (the first lead is one anyway).",
)
def lead_create(email: str, password: str | None, password_stdin: bool, admin: bool) -> None:
    """Create a lead account that logs in with EMAIL."""
    _add_lead(email, _read_password(password, password_stdin), by=None, admin=admin)


def _read_password(password: str | None, password_stdin: bool) -> str:
    if password is not None and password_stdin:
        raise click.UsageError("give --password or --password-stdin, not both")
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            fail("--password-stdin: standard input holds no password")
    elif password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    return password


def _add_lead(email: str, password: str, *, by: str | None, admin: bool) -> None:
    from ..db import session_scope
    from ..study.studies import create_lead, lead_by_email

    try:
        with session_scope() as session:
            actor = None
            if by is not None:
                actor = lead_by_email(session, by)
            # Without --admin: an admin only if the instance has none yet.
            user = create_lead(session, email, password, actor=actor, admin=admin or None)
            click.echo(f"Lead {user.email} created.")
            if user.is_admin:
                click.echo("An admin: sees and may change every study.")
            else:
                click.echo(
                    "They see the studies shared with them "
                    "(`annotator study share STUDY EMAIL --role owner|analyst`)."
                )
    except ValueError as exc:
        fail(str(exc))


def _password_options(command):
    command = click.option(
        "--password-stdin",
        is_flag=True,
        help="Read the password from the first line of standard input, for scripts.",
    )(command)
    return click.option(
        "--password",
        help="At least 8 characters. Asked for (twice, hidden) when neither this nor "
        "--password-stdin is given.",
    )(command)


@lead_group.command("add")
@click.argument("email")
@click.option("--by", metavar="EMAIL", help="The lead adding this one (recorded in the audit log).")
@click.option("--admin", is_flag=True, help="An admin sees and may change every study.")
@_password_options
def lead_add(
    email: str, by: str | None, admin: bool, password: str | None, password_stdin: bool
) -> None:
    """Add another lead account that logs in with EMAIL (as `lead create`)."""
    _add_lead(email, _read_password(password, password_stdin), by=by, admin=admin)


@lead_group.command("admin")
@click.argument("email")
@click.option("--revoke", is_flag=True, help="Take the admin flag away (never the last admin's).")
def lead_admin(email: str, revoke: bool) -> None:
    """Make the lead EMAIL an admin, who sees and may change every study (logged)."""
    from ..db import session_scope
    from ..study.members import set_admin
    from ..study.studies import lead_by_email

    try:
        with session_scope() as session:
            user = lead_by_email(session, email)
            changed = set_admin(session, user, not revoke, actor=None, via="cli")
            address = user.email
    except ValueError as exc:
        fail(str(exc))
    state = "no longer an admin" if revoke else "an admin"
    if changed:
        click.echo(f"Lead {address} is {state}. This has been logged.")
    else:
        click.echo(f"Lead {address} already is {state}; nothing changed.")


@lead_group.command("reset-password")
@click.argument("email")
@_password_options
def lead_reset_password(email: str, password: str | None, password_stdin: bool) -> None:
    """Set a new password for the lead EMAIL and log them out everywhere (logged as an audit event)."""
    from ..db import session_scope
    from ..study.studies import reset_lead_password

    new_password = _read_password(password, password_stdin)
    try:
        with session_scope() as session:
            user = reset_lead_password(session, email, new_password)
            # Every session and remember cookie of the lead ends (a stolen
            # cookie is one reason to reset a password).
            user.end_sessions()
            session.add(user)
            click.echo(f"Password of lead {user.email} reset.")
    except ValueError as exc:
        fail(str(exc))


@db_group.command("backup")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The backup file (SQLite: a database file; PostgreSQL: pg_dump's custom format).",
)
def db_backup(out: Path) -> None:
    """Back up the whole database while the server runs."""
    from ..data.backup import BackupError, backup_database
    from ..db import get_engine

    try:
        info = backup_database(get_engine(), out)
    except BackupError as exc:
        fail(str(exc))
    click.echo(
        f"Backed up the {info.dialect} database (schema revision {info.revision}) to {info.path}."
    )


@db_group.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace a database that holds studies or users.")
def db_restore(file: Path, force: bool) -> None:
    """Replace the database with the backup FILE (stop the server first)."""
    from .. import migrate
    from ..data.backup import BackupError, restore_database
    from ..db import get_engine

    try:
        info = restore_database(get_engine(), file, force=force)
    except BackupError as exc:
        fail(str(exc))
    click.echo(f"Restored {file} (schema revision {info.revision}).")
    if info.revision is not None and info.revision != migrate.head_revision():
        click.echo("Run `annotator db upgrade` to bring it to the current schema.")
