"""Migration e3b9c6d2a1f4: the stored LLM scores' key gains the temperature
(a NULL temperature keyed as -1); downgrading restores the old key unless a
run is stored at two temperatures, which it refuses rather than delete."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from annotator import migrate
from annotator.db import get_engine

BEFORE = "e5a9c3f81d27"
AFTER = "e3b9c6d2a1f4"
SCORE = (
    "INSERT INTO llmscore (item_id, scale_id, model, run, temperature, value, created_at)"
    " VALUES (1, 1, 'm', '1', {temperature}, {value}, '2026-03-01')"
)


def _insert(engine, temperature: str, value: float) -> None:
    with engine.begin() as connection:
        connection.execute(text(SCORE.format(temperature=temperature, value=value)))


def _key_index(engine) -> str:
    """The new key's definition as the database stores it."""
    query = (
        "SELECT indexdef FROM pg_indexes WHERE indexname = :name AND schemaname = current_schema()"
        if engine.dialect.name == "postgresql"
        else "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = :name"
    )
    with engine.connect() as connection:
        found = connection.execute(
            text(query), {"name": "uq_llmscore_item_scale_model_temperature_run"}
        ).scalar()
    return (found or "").lower()


def test_scores_keep_and_the_key_gains_the_temperature(make_app):
    from tests.helpers import downgrade

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, BEFORE)
    with engine.begin() as connection:
        for statement in [
            "INSERT INTO study (id, slug, name, session_gap_days, scale_order, consent,"
            " demographics, attention_checks, test_retest, crowd, source_toml, created_at,"
            " version, withdrawn_ratings) VALUES (1, 's', 'S', 7, 'balanced', '', '[]', '{}',"
            " '{}', '{}', '', '2026-03-01', 1, 'keep')",
            "INSERT INTO scale (id, study_id, name, min, max, step, position)"
            " VALUES (1, 1, 'x', 1, 5, 1, 0)",
            "INSERT INTO benchmark (id, study_id, name, instructions, template, position)"
            " VALUES (1, 1, 'b', '', '', 0)",
            "INSERT INTO item (id, study_id, external_id, benchmark_id, fields, created_at)"
            " VALUES (1, 1, 'i1', 1, '{}', '2026-03-01')",
        ]:
            connection.execute(text(statement))
    _insert(engine, "1.0", 4)
    with pytest.raises(IntegrityError):  # the old key: one run 1 per model
        _insert(engine, "0.1", 2)

    # To this migration only: the rubric migration after it renames the key.
    migrate.upgrade(engine, AFTER)
    assert "coalesce(temperature" in _key_index(engine)
    _insert(engine, "0.1", 2)
    _insert(engine, "NULL", 3)
    for temperature in ("1.0", "NULL"):
        with pytest.raises(IntegrityError):
            _insert(engine, temperature, 5)
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT temperature, value FROM llmscore ORDER BY id")).all()
    assert [tuple(row) for row in rows] == [(1.0, 4.0), (0.1, 2.0), (None, 3.0)]

    downgrade(engine, AFTER)  # the migrations after this one first
    with pytest.raises(RuntimeError, match="1 \\(item, scale, model, run\\) key"):
        downgrade(engine, BEFORE)
    assert migrate.current_revision(engine) == AFTER
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM llmscore WHERE temperature IS NULL OR value = 2"))
    downgrade(engine, BEFORE)
    assert _key_index(engine) == ""
    with pytest.raises(IntegrityError):
        _insert(engine, "0.1", 2)
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
