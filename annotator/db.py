"""Database engine and session lifecycle.

Data-access functions elsewhere take a ``Session`` argument and leave the
commit to their caller, so that several steps share one transaction; this
module is the only place that opens, commits and closes sessions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import Flask, current_app, g
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session, create_engine

__all__ = ["init_app", "get_engine", "get_session", "session_scope", "make_engine"]

_EXTENSION_KEY = "annotator.engine"


def normalise_url(url: str) -> str:
    """Use psycopg 3 for PostgreSQL URLs that name no driver."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets the server read while an import writes; foreign keys are off by
    # default in SQLite and we rely on them.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def make_engine(url: str) -> Engine:
    """Create an engine for ``url`` with the settings the app relies on."""
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True)


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
