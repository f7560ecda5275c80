"""Backing up and restoring the whole database (``annotator db backup`` / ``restore``).

SQLite: the online backup API of :mod:`sqlite3` copies the database page by
page while the server keeps running (a plain file copy could catch a write
half-done, and would miss what is still in the WAL file). The backup is an
ordinary SQLite file.

PostgreSQL: ``pg_dump -Fc`` (the custom format, read back by ``pg_restore``)
of the schema the database URL uses (its ``search_path`` option, else
``public``). The tools must be at least the server's major version, which is
checked first.

A restore refuses to overwrite a database that holds any study or user
unless forced. Afterwards ``annotator db upgrade`` brings an older backup to
the current schema.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine, make_url

from ..db import make_durable

__all__ = ["BackupError", "BackupInfo", "backup_database", "restore_database", "database_in_use"]

# Tables whose rows make a database "in use": a restore over it needs --force.
_DATA_TABLES = ("study", "user")


class BackupError(RuntimeError):
    """A backup or restore that cannot be made; the message says why."""


@dataclass
class BackupInfo:
    path: Path
    dialect: str
    # The schema revision (Alembic) the backup was taken at, if known.
    revision: str | None


def _schema(engine: Engine) -> str:
    """The PostgreSQL schema the app's tables live in."""
    options = make_url(engine.url).query.get("options", "")
    if isinstance(options, tuple):
        options = " ".join(options)
    found = re.search(r"search_path=([^\s,]+)", options)
    return found.group(1) if found else "public"


def _libpq_url(engine: Engine) -> str:
    # libpq takes the same URL without SQLAlchemy's driver name.
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


def _revision(engine: Engine) -> str | None:
    from ..migrate import current_revision

    return current_revision(engine)


def database_in_use(engine: Engine) -> bool:
    """Whether the database holds any study or user (a restore would destroy them)."""
    tables = set(inspect(engine).get_table_names())
    with engine.connect() as connection:
        for table in _DATA_TABLES:
            if table in tables:
                quoted = engine.dialect.identifier_preparer.quote(table)
                if connection.execute(text(f"SELECT 1 FROM {quoted} LIMIT 1")).first():
                    return True
    return False


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(
            f"{name} was not found; install the PostgreSQL client tools "
            "(Debian: apt-get install postgresql-client)"
        )
    return found


def _check_tool_version(engine: Engine, tool: str) -> None:
    output = subprocess.run([tool, "--version"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"(\d+)(?:\.(\d+))?", output)
    if found is None:
        raise BackupError(f"cannot read the version of {tool}: {output.strip()!r}")
    tool_major = int(found.group(1))
    with engine.connect() as connection:
        server = int(connection.execute(text("SHOW server_version_num")).scalar_one())
    server_major = server // 10000
    if tool_major < server_major:
        raise BackupError(
            f"{tool} is version {tool_major} but the server is PostgreSQL {server_major}: "
            f"install the client tools of version {server_major} or later"
        )


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BackupError(f"{what} failed (exit {done.returncode}): {done.stderr.strip()}")


def backup_database(engine: Engine, out: Path) -> BackupInfo:
    """Write a backup of the database behind ``engine`` to ``out``."""
    out = Path(out)
    if out.exists() and out.is_dir():
        raise BackupError(f"{out} is a folder; give a file name")
    out.parent.mkdir(parents=True, exist_ok=True)
    dialect = engine.dialect.name
    if dialect == "sqlite":
        database = make_url(engine.url).database
        if not database or not Path(database).is_file():
            raise BackupError(f"no database file at {database!r}; nothing to back up")
    revision = _revision(engine)
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    if dialect == "sqlite":
        # Read-only: a missing file must not be created empty.
        source = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        target = sqlite3.connect(partial)
        make_durable(target)
        try:
            source.backup(target)
            # A file that stands alone: no WAL beside it.
            target.execute("PRAGMA journal_mode=DELETE")
        finally:
            target.close()
            source.close()
    elif dialect == "postgresql":
        tool = _tool("pg_dump")
        _check_tool_version(engine, tool)
        _run(
            [
                tool,
                "--format=custom",
                "--no-owner",
                "--no-privileges",
                f"--schema={_schema(engine)}",
                f"--file={partial}",
                f"--dbname={_libpq_url(engine)}",
            ],
            "pg_dump",
        )
    else:
        raise BackupError(f"backups of {dialect} databases are not supported")
    # Only a finished backup takes the name: an interrupted one never looks whole.
    partial.replace(out)
    return BackupInfo(out, dialect, revision)


def _sqlite_backup_revision(path: Path) -> str | None:
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"{path}: not a SQLite database ({exc})") from None
    try:
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if "study" not in tables:
            raise BackupError(f"{path}: not a backup of an annotator database (no study table)")
        if "alembic_version" not in tables:
            return None
        row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        return row[0] if row else None
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path}: not a SQLite database ({exc})") from None
    finally:
        connection.close()


def restore_database(engine: Engine, backup: Path, *, force: bool = False) -> BackupInfo:
    """Replace the database behind ``engine`` with the backup ``backup``.

    Refused (:class:`BackupError`) when the database holds a study or a user,
    unless ``force``. The engine's pooled connections are closed first.
    """
    backup = Path(backup)
    if not backup.is_file():
        raise BackupError(f"{backup}: no such file")
    dialect = engine.dialect.name
    if dialect not in ("sqlite", "postgresql"):
        raise BackupError(f"restoring {dialect} databases is not supported")
    if not force and database_in_use(engine):
        raise BackupError(
            "the database is not empty (it holds studies or users); "
            "restoring would replace them: give --force to do it anyway"
        )
    engine.dispose()
    if dialect == "sqlite":
        revision = _sqlite_backup_revision(backup)
        source = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
        target = sqlite3.connect(make_url(engine.url).database)
        make_durable(target)
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
    else:
        tool = _tool("pg_restore")
        _check_tool_version(engine, tool)
        listing = subprocess.run([tool, "--list", str(backup)], capture_output=True, text=True)
        if listing.returncode != 0:
            raise BackupError(
                f"{backup}: not a pg_dump custom-format file ({listing.stderr.strip()})"
            )
        schema = _schema(engine)
        held = sorted(set(re.findall(r"\d+ TABLE (?!DATA )(\S+) ", listing.stdout)))
        if held != [schema]:
            raise BackupError(
                f"{backup}: the backup holds schema {', '.join(held) or 'none'}, "
                f"but the database URL uses schema {schema!r}"
            )
        _run(
            [
                tool,
                "--clean",
                "--if-exists",
                "--no-owner",
                "--no-privileges",
                "--exit-on-error",
                "--single-transaction",
                f"--dbname={_libpq_url(engine)}",
                str(backup),
            ],
            "pg_restore",
        )
        revision = _revision(engine)
    return BackupInfo(backup, dialect, revision)
