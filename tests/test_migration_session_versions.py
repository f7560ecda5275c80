"""Migration b7e2f1a4c9d0: every account starts at session version 0, crowd
raters lose their return links and passwords (they come back by the
platform's link), the crowd entry table is new; downgrading removes both."""

from __future__ import annotations

from sqlalchemy import inspect, text

from annotator import migrate
from annotator.db import get_engine

BEFORE = "c4d8a2e6f1b3"


def test_existing_accounts_migrate(make_app):
    from tests.helpers import downgrade

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, BEFORE)
    with engine.begin() as connection:
        connection.execute(
            text(
                # is_admin: the membership migration before this one adds it, NOT NULL.
                'INSERT INTO "user" (id, role, email, password_hash, rater_code, source,'
                " return_token, platform_id, status, created_at, is_admin) VALUES"
                " (1, 'lead', 'l@example.org', 'scrypt:lead', NULL, 'invite', NULL, NULL,"
                " 'active', '2026-03-01', TRUE),"
                " (2, 'rater', NULL, 'scrypt:invited', 'R-INV', 'invite', 'tok-invited', NULL,"
                " 'active', '2026-03-01', FALSE),"
                " (3, 'rater', NULL, 'scrypt:crowd', 'R-CRD', 'crowd', 'tok-crowd', 'PID1',"
                " 'active', '2026-03-01', FALSE)"
            )
        )
    migrate.upgrade(engine)
    with engine.connect() as connection:
        rows = connection.execute(
            text('SELECT id, session_version, password_hash, return_token FROM "user" ORDER BY id')
        ).all()
        assert [tuple(row) for row in rows] == [
            (1, 0, "scrypt:lead", None),
            (2, 0, "scrypt:invited", "tok-invited"),
            (3, 0, None, None),
        ]
        assert connection.execute(text("SELECT COUNT(*) FROM crowdentry")).scalar() == 0
    downgrade(engine, BEFORE)
    schema = inspect(engine)
    assert "crowdentry" not in schema.get_table_names()
    assert "session_version" not in {c["name"] for c in schema.get_columns("user")}
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
