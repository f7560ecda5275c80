"""The Alembic migrations build exactly the schema that annotator/models/ describes."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from annotator import migrate
from annotator.db import get_engine
from tests.helpers import downgrade


# SQLite's reflection cannot read an expression index (LLMScore's key on
# coalesce(temperature, -1)), so Alembic leaves it out of the comparison there;
# tests/test_migration_temperature_key.py checks that index on both databases.
@pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index")
@pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based")
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


def test_rating_sessions_become_blocks_with_their_ratings(make_app):
    from sqlalchemy import inspect, text

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, "ef4333975625")
    with engine.begin() as connection:
        for statement in [
            "INSERT INTO study (id, slug, name, session_gap_days, scale_order, consent,"
            " demographics, attention_checks, test_retest, source_toml, created_at)"
            " VALUES (1, 's', 'S', 7, 'balanced', '', '[]', '{}', '{}', '', '2026-03-01')",
            "INSERT INTO scale (id, study_id, name, min, max, step, position)"
            " VALUES (1, 1, 'x', 1, 5, 1, 0)",
            "INSERT INTO benchmark (id, study_id, name, instructions, template, position)"
            " VALUES (1, 1, 'b', '', '', 0)",
            "INSERT INTO item (id, study_id, external_id, benchmark_id, fields, created_at)"
            " VALUES (1, 1, 'i1', 1, '{}', '2026-03-01')",
            'INSERT INTO "user" (id, role, rater_code, source, created_at)'
            " VALUES (1, 'rater', 'R-A', 'invite', '2026-03-01')",
            "INSERT INTO ratingsession (id, rater_id, scale_id, position, seed, item_order,"
            " created_at) VALUES (7, 1, 1, 1, 42, '[]', '2026-03-01')",
            "INSERT INTO rating (id, rater_id, item_id, scale_id, session_id, value, position,"
            " is_repeat, is_attention_check, submitted_at, source)"
            " VALUES (1, 1, 1, 1, 7, 3, 1, false, false, '2026-03-01', 'app')",
        ]:
            connection.execute(text(statement))
    migrate.upgrade(engine)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT id, seed FROM block")).all() == [(7, 42)]
        assert connection.execute(text("SELECT block_id, value FROM rating")).all() == [(7, 3)]
    downgrade(engine, "ef4333975625")
    assert "block" not in inspect(engine).get_table_names()
    with engine.connect() as connection:
        assert connection.execute(text("SELECT session_id FROM rating")).all() == [(7,)]
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()


def test_renamed_block_table_has_the_names_a_new_database_gets(make_app):
    from sqlalchemy import inspect

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine)
    schema = inspect(engine)
    # PostgreSQL also lists the indexes behind unique constraints.
    indexes = [i for i in schema.get_indexes("block") if not i.get("duplicates_constraint")]
    assert {i["name"] for i in indexes} == {
        "ix_block_rater_id",
        "ix_block_scale_id",
    }
    assert "ix_rating_block_id" in {i["name"] for i in schema.get_indexes("rating")}
    (foreign_key,) = [
        fk for fk in schema.get_foreign_keys("rating") if fk["constrained_columns"] == ["block_id"]
    ]
    assert foreign_key["referred_table"] == "block"
    if engine.dialect.name == "postgresql":
        # The names PostgreSQL gives a table created as "block" from the start.
        assert schema.get_pk_constraint("block")["name"] == "block_pkey"
        assert {u["name"] for u in schema.get_unique_constraints("block")} == {
            "block_rater_id_scale_id_key",
            "block_rater_id_position_key",
        }
        assert foreign_key["name"] == "rating_block_id_fkey"
