"""Rows of a query straight from the database driver, for building pandas frames."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import count
from typing import TYPE_CHECKING

from sqlmodel import Session

from ..words import plural

if TYPE_CHECKING:
    import numpy as np

__all__ = ["fetch_columns", "fetch_rows", "stream_rows"]

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


# PostgreSQL's binary form of each numpy type (big-endian) and the function
# that writes it (the type's send function, as COPY BINARY does).
_BINARY = {
    "int32": (">i4", "int4send"),
    "int64": (">i8", "int8send"),
    "float64": (">f8", "float8send"),
}


def fetch_columns(session: Session, query, dtypes: Sequence[str]) -> list[np.ndarray]:
    """The columns of ``query`` as numpy arrays of ``dtypes`` (``int32``, ``int64``,
    ``float64``), one per selected column; no column may be NULL.

    On PostgreSQL the rows come as one ``bytea``: each row's values in their
    binary form (what ``COPY ... (FORMAT binary)`` sends), concatenated by
    ``string_agg`` on the server, read by ``numpy.frombuffer``. Neither a
    Python object per value nor a message per row, which is why it is faster
    than ``fetchall`` and than a binary COPY (psycopg reads COPY data one row
    per call); docs/performance.md has the measurements. A column the type
    cannot hold exactly fails loudly (PostgreSQL has no implicit cast from
    ``bigint`` to ``integer`` or from a float to an integer). Hand-written
    because neither psycopg nor pandas reads a result into numpy without a
    Python object per value. Elsewhere (SQLite) :func:`fetch_rows` and
    ``numpy.array`` of a record type. Literal binds as in :func:`fetch_rows`.
    """
    # Here, not at the top: the importers use this module and never load numpy
    # (its import is a quarter of a second and 12 MiB).
    import numpy as np

    connection = session.connection()
    dialect = connection.dialect
    sql = str(query.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
    names = [f"c{i}" for i in range(len(dtypes))]
    if dialect.name != "postgresql":
        cursor = connection.connection.cursor()
        try:
            cursor.execute(sql)
            rows = cursor.fetchall()
        finally:
            cursor.close()
        values = np.array(rows, dtype=list(zip(names, dtypes, strict=True)))
        return [values[name] for name in names]
    packed = " || ".join(
        f"{_BINARY[t][1]}(q.{name})" for name, t in zip(names, dtypes, strict=True)
    )
    statement = (
        f"SELECT string_agg({packed}, ''::bytea), count(*) FROM ({sql}) AS q({', '.join(names)})"
    )
    cursor = connection.connection.driver_connection.cursor(binary=True)
    try:
        cursor.execute(statement)
        data, rows = cursor.fetchone()
    finally:
        cursor.close()
    record = np.dtype([(name, _BINARY[t][0]) for name, t in zip(names, dtypes, strict=True)])
    values = np.frombuffer(data or b"", dtype=record)
    if len(values) != rows:
        # A NULL makes its row's bytes NULL, and string_agg leaves them out.
        raise ValueError(
            f"{plural(rows - len(values), 'row')} with a NULL value in a numeric column"
        )
    return [values[name].astype(t) for name, t in zip(names, dtypes, strict=True)]


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
