"""Rows of a query straight from the database driver, for building pandas frames."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count

from sqlmodel import Session

__all__ = ["fetch_rows", "stream_rows"]

# Names of PostgreSQL's server-side cursors, unique within the process.
_cursor_numbers = count(1)


def fetch_rows(session: Session, query) -> list[tuple]:
    """The rows of ``query`` as plain tuples, read through the DBAPI cursor.

    Building SQLAlchemy ``Row`` objects (as ``pandas.read_sql`` does) took most of
    the time of the matrix export and half of ``study_frames`` on 180,000
    ratings. The query is compiled with literal binds, so it may bind only
    integers and booleans (ids and flags), never text a user typed.
    """
    connection = session.connection()
    sql = str(query.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True}))
    cursor = connection.connection.cursor()
    try:
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        cursor.close()


def stream_rows(session: Session, query, *, size: int = 50_000) -> Iterator[list[tuple]]:
    """The rows of ``query`` as lists of at most ``size`` plain tuples.

    Like :func:`fetch_rows`, without SQLAlchemy's ``Row`` objects; the whole
    result is never in memory at once: SQLite's cursor steps through the rows
    as they are fetched, and on PostgreSQL a server-side (named) cursor sends
    ``size`` rows at a time (psycopg's default cursor would receive them all
    first). Parameters are bound as SQLAlchemy binds them (any type).
    """
    connection = session.connection()
    dialect = connection.dialect
    compiled = query.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.construct_params()
    for name, process in compiled._bind_processors.items():
        if name in params:
            params[name] = process(params[name])
    parameters = [params[name] for name in compiled.positiontup] if compiled.positional else params
    driver = connection.connection.driver_connection
    if dialect.name == "postgresql":
        # A cursor is planned for its first rows by default (cursor_tuple_fraction
        # 0.1): the long export's join then ran a nested loop for over 20 minutes
        # on 180,000 ratings. Every row is read, so plan for all of them.
        with driver.cursor() as setting:
            setting.execute("SET LOCAL cursor_tuple_fraction = 1.0")
        cursor = driver.cursor(name=f"annotator_stream_{next(_cursor_numbers)}")
        cursor.itersize = size
    else:
        cursor = driver.cursor()
    try:
        cursor.execute(str(compiled), parameters)
        while rows := cursor.fetchmany(size):
            yield rows
    finally:
        cursor.close()
