"""Migration e5c3a9d27b14: existing ratings, LLM scores and judge failures
are the study's single unnamed criterion ""; the unique keys then hold per
criterion; downgrading drops named criteria's rows and the column."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from annotator import migrate
from annotator.db import get_engine

BEFORE = "f5c1d8e2b7a3"

ROWS = [
    "INSERT INTO study (id, slug, name, session_gap_days, scale_order, consent, source_toml,"
    " created_at, version, withdrawn_ratings) VALUES (1, 's', 'S', 7, 'balanced', 'ok', '',"
    " '2026-03-01', 1, 'keep')",
    "INSERT INTO scale (id, study_id, name, min, max, step, position) VALUES (1, 1, '0-5', 0, 5,"
    " 1, 0)",
    "INSERT INTO benchmark (id, study_id, name, instructions, template, position) VALUES"
    " (1, 1, 'b', 'i', 't', 0)",
    "INSERT INTO item (id, study_id, external_id, benchmark_id, created_at) VALUES"
    " (1, 1, 'i1', 1, '2026-03-01')",
    'INSERT INTO "user" (id, role, rater_code, source, status, created_at, is_admin,'
    " session_version) VALUES (1, 'rater', 'R-1', 'import', 'active', '2026-03-01', FALSE, 0)",
    "INSERT INTO rating (id, rater_id, item_id, scale_id, value, is_repeat, is_attention_check,"
    " submitted_at, source, study_version) VALUES (1, 1, 1, 1, 3, FALSE, FALSE, '2026-03-01',"
    " 'import', 1)",
    "INSERT INTO ratingchange (id, rating_id, value, changed_at, reason) VALUES"
    " (1, 1, 3, '2026-03-01', 'import')",
    "INSERT INTO llmscore (id, item_id, scale_id, model, run, value, created_at) VALUES"
    " (1, 1, 1, 'gpt', '', 4, '2026-03-01')",
    "INSERT INTO judgefailure (id, item_id, scale_id, model, temperature, run, prompt_hash,"
    " error, created_at) VALUES (1, 1, 1, 'gpt', 0, '', 'h', 'e', '2026-03-01')",
]

RATING = (
    "INSERT INTO rating (id, rater_id, item_id, scale_id, criterion, value, is_repeat,"
    " is_attention_check, submitted_at, source, study_version) VALUES (:id, 1, 1, 1, :criterion, 2,"
    " FALSE, FALSE, '2026-03-01', 'app', 1)"
)
SCORE = (
    "INSERT INTO llmscore (id, item_id, scale_id, criterion, model, run, value, created_at)"
    " VALUES (:id, 1, 1, :criterion, 'gpt', '', 4, '2026-03-01')"
)
# After the downgrade: the old key (without criterion) refuses a second rating.
OLD_KEY_RATING = (
    "INSERT INTO rating (id, rater_id, item_id, scale_id, value, is_repeat, is_attention_check,"
    " submitted_at, source, study_version) VALUES (4, 1, 1, 1, 2, FALSE, FALSE, '2026-03-01',"
    " 'app', 1)"
)


def test_existing_rows_become_the_unnamed_criterion(make_app):
    from tests.helpers import downgrade

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, BEFORE)
    with engine.begin() as connection:
        for statement in ROWS:
            connection.execute(text(statement))
    migrate.upgrade(engine)
    with engine.connect() as connection:
        for table in ("rating", "llmscore", "judgefailure"):
            criteria = connection.execute(text(f"SELECT criterion FROM {table}")).scalars().all()
            assert criteria == [""], table
        assert connection.execute(text("SELECT COUNT(*) FROM ratingchange")).scalar() == 1
    # The keys hold per criterion: a named criterion may be rated beside "",
    # the same criterion twice may not.
    with engine.begin() as connection:
        connection.execute(text(RATING), {"id": 2, "criterion": "fluency"})
        connection.execute(text(SCORE), {"id": 2, "criterion": "fluency"})
    for statement in (RATING, SCORE):
        with pytest.raises(IntegrityError), engine.begin() as connection:
            connection.execute(text(statement), {"id": 3, "criterion": "fluency"})
    downgrade(engine, BEFORE)
    schema = inspect(engine)
    assert "criterion" not in schema.get_table_names()
    for table in ("rating", "llmscore", "judgefailure"):
        assert "criterion" not in {c["name"] for c in schema.get_columns(table)}
    with engine.connect() as connection:
        assert connection.execute(text("SELECT id FROM rating")).scalars().all() == [1]
        assert connection.execute(text("SELECT id FROM llmscore")).scalars().all() == [1]
    # The old key is back: a second rating of the same item and scale is refused.
    with pytest.raises(IntegrityError), engine.begin() as connection:
        connection.execute(text(OLD_KEY_RATING))
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
