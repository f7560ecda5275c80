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


def test_return_links_are_back_filled_for_raters_who_joined(make_app):
    from sqlalchemy import text

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, "508ac696a06b")
    with engine.begin() as connection:
        connection.execute(
            text(
                'INSERT INTO "user" (role, rater_code, source, consented_at, declined_at,'
                " created_at) VALUES"
                " ('rater', 'R-JOINED', 'invite', '2026-03-01 09:00:00', NULL, '2026-03-01'),"
                " ('rater', 'R-OTHER1', 'invite', '2026-03-01 09:00:00', NULL, '2026-03-01'),"
                " ('rater', 'R-NO', 'invite', NULL, '2026-03-01 09:00:00', '2026-03-01'),"
                " ('rater', 'imported', 'import', NULL, NULL, '2026-03-01'),"
                " ('lead', NULL, 'invite', NULL, NULL, '2026-03-01')"
            )
        )
    migrate.upgrade(engine)
    with engine.connect() as connection:
        rows = dict(connection.execute(text('SELECT rater_code, return_token FROM "user"')).all())
    assert len(rows["R-JOINED"]) >= 43 and len(rows["R-OTHER1"]) >= 43
    assert rows["R-JOINED"] != rows["R-OTHER1"]
    assert rows["R-NO"] is None and rows["imported"] is None and rows[None] is None
