"""Alembic environment: migrates the database of the annotator app.

``annotator db upgrade`` hands over an open connection in
``config.attributes["connection"]``; plain ``alembic`` use is not needed.
"""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from annotator import models  # noqa: F401  (registers the tables)

config = context.config
target_metadata = SQLModel.metadata


def run_migrations_online() -> None:
    connection = config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; use `annotator db upgrade`")
run_migrations_online()
