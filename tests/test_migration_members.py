"""Migration c4d8a2e6f1b3: every existing lead owns every existing study, the first
lead is the admin, raters are members of nothing; downgrading removes it all."""

from __future__ import annotations

from sqlalchemy import inspect, text

from annotator import migrate
from annotator.db import get_engine

BEFORE, REVISION = "5e2b7c41d0a9", "c4d8a2e6f1b3"


def _study(id_: int) -> str:
    return (
        "INSERT INTO study (id, slug, name, session_gap_days, scale_order, consent,"
        " demographics, attention_checks, test_retest, source_toml, created_at, version,"
        f" withdrawn_ratings) VALUES ({id_}, 's{id_}', 'S', 7, 'balanced', '', '[]', '{{}}',"
        " '{}', '', '2026-03-01', 1, 'keep')"
    )


def _user(id_: int, role: str, email: str) -> str:
    return (
        'INSERT INTO "user" (id, role, email, source, created_at, status)'
        f" VALUES ({id_}, '{role}', '{email}', 'invite', '2026-03-01', 'active')"
    )


def test_existing_leads_own_existing_studies(make_app):
    from tests.helpers import downgrade

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, BEFORE)
    with engine.begin() as connection:
        for statement in [
            _study(1),
            _study(2),
            # The first lead by id (3), not by position in the table, is the admin.
            _user(5, "lead", "later@example.org"),
            _user(3, "lead", "first@example.org"),
            _user(4, "rater", "rater@example.org"),
        ]:
            connection.execute(text(statement))
    migrate.upgrade(engine, REVISION)
    with engine.connect() as connection:
        members = connection.execute(
            text("SELECT study_id, user_id, role FROM studymember ORDER BY study_id, user_id")
        ).all()
        admins = connection.execute(text('SELECT id, is_admin FROM "user" ORDER BY id')).all()
        events = connection.execute(
            text(
                "SELECT action, subject_id, study_id, actor_id FROM auditevent"
                " ORDER BY action, study_id, subject_id"
            )
        ).all()
    assert [tuple(row) for row in members] == [
        (1, 3, "owner"),
        (1, 5, "owner"),
        (2, 3, "owner"),
        (2, 5, "owner"),
    ]
    assert [tuple(row) for row in admins] == [(3, True), (4, False), (5, False)]
    assert [tuple(row) for row in events] == [
        ("lead-admin-granted", 3, None, None),
        ("study-shared", 3, 1, None),
        ("study-shared", 5, 1, None),
        ("study-shared", 3, 2, None),
        ("study-shared", 5, 2, None),
    ]

    downgrade(engine, BEFORE)
    schema = inspect(engine)
    assert "studymember" not in schema.get_table_names()
    assert "is_admin" not in {column["name"] for column in schema.get_columns("user")}
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()


def test_a_database_without_leads_gets_no_members(make_app):
    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, BEFORE)
    with engine.begin() as connection:
        connection.execute(text(_study(1)))
    migrate.upgrade(engine, REVISION)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM studymember")).scalar() == 0
        assert connection.execute(text("SELECT count(*) FROM auditevent")).scalar() == 0
