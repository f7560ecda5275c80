"""The Alembic migrations build exactly the schema that models.py describes."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from annotator import migrate
from annotator.db import get_engine


def test_migrations_match_models(make_app):
    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, SQLModel.metadata)
    assert differences == []


def test_upgrade_twice_is_a_no_op(make_app):
    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine)
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
