"""One way to get a throw-away database: a SQLite file in a temporary folder, or a
schema of its own on a PostgreSQL server (the URL's ``search_path`` set to it), which
is dropped at the end. Every benchmark that needs a database uses this."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Database", "temporary_database"]


@dataclass(frozen=True)
class Database:
    url: str
    dialect: str  # "SQLite" or "PostgreSQL", as the figures name it
    schema: str | None = None
    server_url: str | None = None  # PostgreSQL: the URL without the search_path


@contextmanager
def temporary_database(
    postgres_url: str | None = None,
    *,
    folder: Path | None = None,
    create_tables: bool = False,
) -> Iterator[Database]:
    """A fresh database; PostgreSQL if ``postgres_url`` is given, else SQLite.

    ``folder`` holds the SQLite file (default: a temporary folder removed at the
    end); ``create_tables`` creates the app's tables (SQLModel's metadata).
    """
    if postgres_url is None:
        with tempfile.TemporaryDirectory(prefix="bench-db-") as tmp:
            path = Path(folder or tmp) / f"bench-{uuid.uuid4().hex[:8]}.sqlite"
            database = Database(url=f"sqlite:///{path}", dialect="SQLite")
            if create_tables:
                _create_tables(database.url)
            yield database
        return
    from sqlalchemy import create_engine, text

    from annotator.db import normalise_url

    schema = "bench_" + uuid.uuid4().hex[:12]
    admin = create_engine(normalise_url(postgres_url), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        url = admin.url.update_query_dict({"options": f"-csearch_path={schema}"})
        database = Database(
            url=url.render_as_string(hide_password=False),
            dialect="PostgreSQL",
            schema=schema,
            server_url=postgres_url,
        )
        if create_tables:
            _create_tables(database.url)
        yield database
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def _create_tables(url: str) -> None:
    from sqlalchemy import create_engine
    from sqlmodel import SQLModel

    from annotator import models  # noqa: F401  (the tables create_all makes)
    from annotator.db import normalise_url

    engine = create_engine(normalise_url(url))
    try:
        SQLModel.metadata.create_all(engine)
    finally:
        engine.dispose()
