"""``annotator db backup`` and ``db restore``: a restored fresh database gives
the same exports, byte for byte, and the same rows in every table."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, text
from sqlmodel import Session, SQLModel, select

from annotator.data.exporters import render_export
from annotator.db import get_engine, normalise_url, session_scope
from annotator.models import User
from annotator.study.studies import get_study
from tests.conftest import DATA

FORMATS = [
    ("long", {}),
    ("matrix", {"scale": "0-5"}),
    ("matrix", {"scale": "0-100"}),
    ("alttest", {"scale": "0-5"}),
    ("demographics", {}),
]


def _exports(app) -> list[str]:
    with session_scope(app) as session:
        study = get_study(session, "small")
        return [render_export(session, study, fmt, **options).text for fmt, options in FORMATS]


def _all_rows(app) -> dict[str, list[tuple]]:
    """Every row of every table of the models, in primary-key order."""
    engine = get_engine(app)
    with engine.connect() as connection:
        return {
            table.name: [
                tuple(row)
                for row in connection.execute(table.select().order_by(*table.primary_key.columns))
            ]
            for table in SQLModel.metadata.sorted_tables
        }


@pytest.fixture
def filled(app, runner, small_study):
    """The small study with LLM scores, one excluded rater and a lead."""
    for args in (
        ["llm-scores", "import", "small", str(DATA / "llm_scores.csv")],
        ["raters", "exclude", "small", "cy", "--reason", "pilot"],
        ["lead", "create", "lead@example.org", "--password", "a-long-password"],
    ):
        result = runner.invoke(args=args)
        assert result.exit_code == 0, result.output
    return app


@pytest.fixture
def fresh_url(tmp_path, server_engine, database_url):
    """A second, empty database: a new SQLite file, or a new PostgreSQL database
    whose URL uses the same schema name as the test's own."""
    if server_engine is None:
        yield f"sqlite:///{tmp_path / 'restored.sqlite'}"
        return
    name = "restore_" + uuid.uuid4().hex[:12]
    with server_engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    source = create_engine(normalise_url(database_url)).url
    yield source.set(database=name).render_as_string(hide_password=False)
    with server_engine.connect() as connection:
        connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))


def test_backup_then_restore_into_a_fresh_database(filled, runner, make_app, fresh_url, tmp_path):
    exports = _exports(filled)
    rows = _all_rows(filled)
    assert len(rows["rating"]) == 12 and len(rows["llmscore"]) == 7
    backup = tmp_path / "annotator.backup"
    result = runner.invoke(args=["db", "backup", "--out", str(backup)])
    assert result.exit_code == 0, result.output
    assert f"to {backup}" in result.output and backup.stat().st_size > 0
    assert not backup.with_name(backup.name + ".partial").exists()

    fresh = make_app(create_schema=False, DATABASE_URL=fresh_url)
    result = fresh.test_cli_runner().invoke(args=["db", "restore", str(backup)])
    assert result.exit_code == 0, result.output
    assert "Restored" in result.output and "db upgrade" not in result.output

    assert _exports(fresh) == exports
    assert _all_rows(fresh) == rows
    # The restored database is one the app works on: its lead can log in.
    client = fresh.test_client()
    response = client.post(
        "/login", data={"username": "lead@example.org", "password": "a-long-password"}
    )
    assert response.status_code == 302


def test_restore_refuses_a_database_in_use_without_force(filled, runner, tmp_path):
    backup = tmp_path / "annotator.backup"
    assert runner.invoke(args=["db", "backup", "--out", str(backup)]).exit_code == 0
    with session_scope(filled) as session:
        session.add(User(role="lead", email="later@example.org"))
    refused = runner.invoke(args=["db", "restore", str(backup)])
    assert refused.exit_code == 1
    assert "the database is not empty" in refused.output and "--force" in refused.output
    with Session(get_engine(filled)) as session:
        assert session.exec(select(User).where(User.email == "later@example.org")).first()

    forced = runner.invoke(args=["db", "restore", str(backup), "--force"])
    assert forced.exit_code == 0, forced.output
    with Session(get_engine(filled)) as session:
        # Back to the backup: the later lead is gone, the rest is there.
        assert session.exec(select(User).where(User.email == "later@example.org")).first() is None
        assert session.exec(select(User).where(User.email == "lead@example.org")).first()


def test_restore_refuses_a_file_that_is_no_backup(app, make_app, fresh_url, tmp_path):
    junk = tmp_path / "junk.backup"
    junk.write_text("this is not a backup\n")
    fresh = make_app(create_schema=False, DATABASE_URL=fresh_url)
    result = fresh.test_cli_runner().invoke(args=["db", "restore", str(junk)])
    assert result.exit_code == 1
    assert "junk.backup" in result.output and "not a" in result.output


def test_backup_of_a_missing_sqlite_file_is_refused(make_app, tmp_path):
    # A SQLite URL on either test database: the file is what is missing.
    missing = tmp_path / "none" / "annotator.sqlite"
    app = make_app(create_schema=False, DATABASE_URL=f"sqlite:///{missing}")
    result = app.test_cli_runner().invoke(args=["db", "backup", "--out", str(tmp_path / "b")])
    assert result.exit_code == 1 and "nothing to back up" in result.output
    assert not missing.exists() and not (tmp_path / "b").exists()
