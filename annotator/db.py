"""Database engine and session lifecycle.

Data-access functions elsewhere take a ``Session`` argument and leave the
commit to their caller, so that several steps share one transaction; this
module is the only place that opens, commits and closes sessions.
"""

from __future__ import annotations

import contextlib
import os
import random
import select
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from flask import Flask, current_app, g
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DisconnectionError, IntegrityError, OperationalError
from sqlmodel import Session, create_engine

__all__ = [
    "init_app",
    "get_engine",
    "get_session",
    "session_scope",
    "make_engine",
    "is_database_locked",
    "commit_retrying",
    "make_durable",
]

T = TypeVar("T")

_EXTENSION_KEY = "annotator.engine"


def normalise_url(url: str) -> str:
    """Use psycopg 3 for PostgreSQL URLs that name no driver."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


SQLITE_BUSY_TIMEOUT_MS = 10_000


def make_durable(dbapi_connection) -> None:
    """Make every commit on this SQLite connection reach the disk before it returns.

    A rating is acknowledged to the rater once its transaction commits, so the
    commit must survive a power cut or an operating-system crash, not only a
    crash of the process. In WAL mode only ``synchronous=FULL`` does that: SQLite
    documents that with ``NORMAL`` "a transaction committed in WAL mode ... might
    roll back following a power loss or system crash"
    (https://www.sqlite.org/pragma.html#pragma_synchronous). Many builds default to
    FULL, but not all (the default is a compile-time option), so it is set on every
    connection the tool opens: the app's engine (server, job worker, CLI,
    migrations), the job queue, the rate-limit file and backups. The cost, one
    fsync of the WAL per commit, is measured in docs/performance.md.
    """
    dbapi_connection.execute("PRAGMA synchronous=FULL")


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets the server read while an import writes; foreign keys are off by
    # default in SQLite and we rely on them.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    make_durable(dbapi_connection)
    # Several server processes write one file: a writer waits up to this long
    # for another's lock before SQLite gives up with "database is locked"
    # (then commit_retrying starts the transaction again).
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.close()


def _server_spoke(dbapi_connection) -> bool:
    """Whether anything arrived on an idle connection's socket (no round trip).

    A connection waiting in the pool gets nothing from the server unless the
    server is ending it: ``pg_terminate_backend``, a restart or a shutdown
    send a FATAL error and close the socket, which makes it readable.
    """
    poller = select.poll()
    poller.register(dbapi_connection.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


def _check_on_checkout(engine: Engine):
    def check(dbapi_connection, _record, _proxy) -> None:
        # Instead of pool_pre_ping, whose empty query was one more round trip
        # to the server on every request (every score post): only a
        # connection the server has spoken on is pinged, and it is replaced
        # when the ping fails. Anything else the server may send unasked
        # (a notice, a changed setting) passes the ping and keeps it.
        if not _server_spoke(dbapi_connection):
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:
            # The pool discards this connection and checks out a new one.
            raise DisconnectionError(f"the server closed the connection: {exc}") from exc

    return check


def _private_when_created(path: Path) -> Callable:
    """A ``connect`` listener making the SQLite file ``path`` its owner's alone (0600).

    It holds invite and return tokens in clear. The file is not made here (a
    backup of a missing database must find nothing), but by SQLite at the first
    connection; the listener, registered before the pragmas, narrows it then,
    before ``journal_mode=WAL`` makes the ``-wal`` and ``-shm`` files, which
    SQLite gives the database file's permissions. A file that existed before
    the engine keeps its permissions: a deployment may share it on purpose.
    """
    new = not path.exists()

    def narrow(_dbapi_connection, _record) -> None:
        nonlocal new
        if new and path.exists():
            path.chmod(0o600)
            new = False

    return narrow


def create_private_file(path: Path) -> None:
    """Make the empty file ``path`` readable by its owner alone (0600), if missing.

    For the SQLite files beside the database (the job queue, the rate
    limiter's counts): an empty file is an empty SQLite database, and SQLite
    gives its ``-wal`` and ``-shm`` files the same permissions. Created with
    the mode rather than narrowed after, so no other user ever reads it.
    """
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def make_engine(url: str) -> Engine:
    """Create an engine for ``url`` with the settings the app relies on."""
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        on_disk = parsed.database and parsed.database != ":memory:"
        if on_disk:
            Path(parsed.database).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})
        if on_disk:
            event.listen(engine, "connect", _private_when_created(Path(parsed.database)))
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(url)
    event.listen(engine, "checkout", _check_on_checkout(engine))
    return engine


def init_app(app: Flask) -> None:
    app.extensions[_EXTENSION_KEY] = make_engine(app.config["DATABASE_URL"])
    app.teardown_appcontext(_close_session)


def get_engine(app: Flask | None = None) -> Engine:
    return (app or current_app).extensions[_EXTENSION_KEY]


def get_session() -> Session:
    """Return the session of the current request or app context."""
    if "db_session" not in g:
        g.db_session = Session(get_engine(), expire_on_commit=False)
    return g.db_session


def _close_session(_exc: BaseException | None = None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        session.close()


@contextmanager
def session_scope(app: Flask | None = None) -> Iterator[Session]:
    """One transaction: commit if the block succeeds, roll back if it raises."""
    with Session(get_engine(app), expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def is_database_locked(exc: BaseException) -> bool:
    """SQLite's "database is locked" (SQLITE_BUSY): another process held the lock too long."""
    if not isinstance(exc, OperationalError):
        return False
    message = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in message or "database table is locked" in message


def is_deadlock(exc: BaseException) -> bool:
    """PostgreSQL's deadlock_detected (SQLSTATE 40P01): it rolled this transaction back.

    Two writers that lock the same block and the same study row (a score post
    bumps the study's revision; dealing locks the study first) can meet in
    either order; the loser may simply run again.
    """
    if not isinstance(exc, OperationalError):
        return False
    orig = getattr(exc, "orig", None)
    return (getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)) == "40P01"


def commit_retrying(
    session: Session,
    work: Callable[[], T],
    *,
    retry_integrity: int = 1,
    retry_locked: int = 8,
) -> T:
    """Run ``work()`` and commit; on a lost race roll back and run it again.

    ``work`` reads what it needs afresh each time (a rollback expires every
    loaded object). Two races are retried: an ``IntegrityError`` (a twin
    request inserted the same row first: the rerun finds it and stores
    nothing new), at most ``retry_integrity`` times; and SQLite's "database
    is locked" after its busy timeout or a PostgreSQL deadlock
    (:func:`is_deadlock`), at most ``retry_locked`` times with a
    growing, jittered pause so that the waiting processes do not collide
    again in step. A lock error leaves SQLAlchemy's transaction unusable,
    so retrying the statement alone is not possible: the whole unit is.
    Anything else, and the last failure, propagates after the rollback.
    """
    integrity_failures = locked_failures = 0
    while True:
        try:
            result = work()
            session.commit()
            return result
        except IntegrityError:
            session.rollback()
            integrity_failures += 1
            if integrity_failures > retry_integrity:
                raise
        except OperationalError as exc:
            session.rollback()
            locked_failures += 1
            lost = is_database_locked(exc) or is_deadlock(exc)
            if not lost or locked_failures > retry_locked:
                raise
            time.sleep(random.uniform(0.01, 0.05) * locked_failures)
        except BaseException:
            session.rollback()
            raise
