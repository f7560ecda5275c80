"""Migration a7d3c91e5b20: existing studies and ratings become version 1, every
rater active; downgrading removes it all again."""

from __future__ import annotations

from sqlalchemy import inspect, text

from annotator import migrate
from annotator.db import get_engine

BEFORE = "160690878d0b"


def test_existing_rows_are_back_filled(make_app):
    from tests.helpers import downgrade

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, BEFORE)
    with engine.begin() as connection:
        for statement in [
            "INSERT INTO study (id, slug, name, session_gap_days, scale_order, consent,"
            " demographics, attention_checks, test_retest, source_toml, created_at)"
            " VALUES (1, 's', 'S', 7, 'balanced', '', '[]', '{}', '{}', 'slug = \"s\"',"
            " '2026-03-01')",
            "INSERT INTO scale (id, study_id, name, min, max, step, position)"
            " VALUES (1, 1, 'x', 1, 5, 1, 0)",
            "INSERT INTO benchmark (id, study_id, name, instructions, template, position)"
            " VALUES (1, 1, 'b', '', '', 0)",
            "INSERT INTO item (id, study_id, external_id, benchmark_id, fields, created_at)"
            " VALUES (1, 1, 'i1', 1, '{}', '2026-03-01')",
            'INSERT INTO "user" (id, role, rater_code, source, created_at)'
            " VALUES (1, 'rater', 'R-A', 'invite', '2026-03-01')",
            "INSERT INTO rating (id, rater_id, item_id, scale_id, value, position,"
            " is_repeat, is_attention_check, submitted_at, source)"
            " VALUES (1, 1, 1, 1, 3, 1, false, false, '2026-03-01', 'app')",
        ]:
            connection.execute(text(statement))
    migrate.upgrade(engine)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT study_version FROM rating")).all() == [(1,)]
        assert connection.execute(text("SELECT version, withdrawn_ratings FROM study")).all() == [
            (1, "keep")
        ]
        assert connection.execute(text('SELECT status, status_reason FROM "user"')).all() == [
            ("active", None)
        ]
        assert connection.execute(
            text("SELECT study_id, version, source_toml FROM studyversion")
        ).all() == [(1, 1, 'slug = "s"')]
    downgrade(engine, BEFORE)
    assert "studyversion" not in inspect(engine).get_table_names()
    assert "study_version" not in {c["name"] for c in inspect(engine).get_columns("rating")}
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
