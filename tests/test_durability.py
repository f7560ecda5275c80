"""Every SQLite connection the tool opens commits durably (``PRAGMA synchronous`` is 2).

In WAL mode only ``synchronous=FULL`` keeps a committed transaction through a
power cut (annotator.db.make_durable). SQLite's default for it is a compile-time
option, FULL on Debian's build: so that these tests could fail, every connection
opened here starts as a build whose default is NORMAL would (``synchronous=1``),
and the tool must set FULL itself. Each connection's setting is read when the
tool closes it (or at the end, if still open), whoever opened it: the server's
engine, the job queue and its worker, the CLI and its migrations, the rate
limit, backups and restores.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sqlite3.dbapi2

import pytest
from flask import Flask
from limits.storage import storage_from_string
from sqlalchemy import text

from annotator import create_app
from annotator.db import get_engine, make_engine, session_scope
from annotator.jobs import get_queue

FULL = 2


class _Recorded(sqlite3.Connection):
    """A connection that starts at NORMAL and notes its setting when closed."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.database = str(args[0] if args else kwargs.get("database"))
        self.execute("PRAGMA synchronous=NORMAL")
        self.synchronous_at_close: int | None = None

    def close(self) -> None:
        with contextlib.suppress(sqlite3.ProgrammingError):  # closed already
            (self.synchronous_at_close,) = self.execute("PRAGMA synchronous").fetchone()
        super().close()

    def synchronous(self) -> int:
        if self.synchronous_at_close is not None:
            return self.synchronous_at_close
        (value,) = self.execute("PRAGMA synchronous").fetchone()
        return value

    @property
    def read_only(self) -> bool:
        # A read-only connection never commits (the backup's source).
        return "mode=ro" in self.database


@pytest.fixture
def opened(monkeypatch) -> list[_Recorded]:
    """Every sqlite3 connection opened during the test, in any module."""
    connections: list[_Recorded] = []
    connect = sqlite3.connect

    def recording_connect(*args, **kwargs):
        connection = connect(*args, factory=_Recorded, **kwargs)
        connections.append(connection)
        return connection

    # SQLAlchemy calls sqlite3.dbapi2.connect, the others sqlite3.connect.
    monkeypatch.setattr(sqlite3, "connect", recording_connect)
    monkeypatch.setattr(sqlite3.dbapi2, "connect", recording_connect)
    return connections


def _assert_all_full(connections: list[_Recorded], *, expect: set[str]) -> None:
    written = [c for c in connections if not c.read_only]
    found = {kind for kind in expect if any(kind in c.database for c in written)}
    assert found == expect, (expect - found, [c.database for c in written])
    settings = {c.database: c.synchronous() for c in written}
    assert set(settings.values()) == {FULL}, settings


@pytest.fixture
def file_app(tmp_path, monkeypatch, clock) -> Flask:
    """An app on a SQLite file, with its job queue and rate limit on files too."""
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path / "instance"))
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": f"sqlite:///{tmp_path / 'instance' / 'annotator.sqlite'}",
            "SECRET_KEY": "test-secret",
            "WTF_CSRF_ENABLED": False,
            "CLOCK": clock,
            "JOBS_IMMEDIATE": False,
            "JOBS_QUEUE_NAME": "durability",
        }
    )
    yield app
    get_engine(app).dispose()


def test_server_cli_migrations_and_rate_limit_commit_durably(file_app, opened):
    runner = file_app.test_cli_runner()
    # The CLI, and the migrations it runs.
    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        args=["lead", "create", "lead@example.org", "--password", "a long password 1"]
    )
    assert result.exit_code == 0, result.output
    # The server: a login reads and writes the database.
    client = file_app.test_client()
    response = client.post(
        "/login", data={"username": "lead@example.org", "password": "a long password 1"}
    )
    assert response.status_code == 302
    # The rate-limit file of the app's instance (its storage, built from the app's
    # URI as the limiter builds it: the limiter object is one per process, so in a
    # test process it may still hold an earlier app's storage).
    storage = storage_from_string(file_app.config["RATELIMIT_STORAGE_URI"])
    assert storage.incr("durability", 60) == 1
    with session_scope(file_app) as session:
        session.execute(text("SELECT 1"))
    get_engine(file_app).dispose()
    _assert_all_full(opened, expect={"annotator.sqlite", "ratelimit"})


def test_job_queue_and_worker_engine_commit_durably(file_app, opened, tmp_path):
    # The worker builds its own app from the same settings (annotator worker):
    # its engine and its consumer's queue connection.
    worker_app = create_app({**file_app.config, "JOBS_QUEUE_NAME": "durability"})
    huey = get_queue(worker_app)
    huey.storage.enqueue(b"a message")
    assert huey.storage.dequeue() == b"a message"
    with session_scope(worker_app) as session:
        session.execute(text("SELECT 1"))
    get_engine(worker_app).dispose()
    huey.storage.close()
    _assert_all_full(opened, expect={"jobs.sqlite", "annotator.sqlite"})


def test_backup_and_restore_write_durably(tmp_path, opened):
    from annotator.data.backup import backup_database, restore_database
    from annotator.migrate import upgrade

    engine = make_engine(f"sqlite:///{tmp_path / 'live.sqlite'}")
    upgrade(engine)
    backup_database(engine, tmp_path / "copy.sqlite")
    restore_database(engine, tmp_path / "copy.sqlite", force=True)
    engine.dispose()
    _assert_all_full(opened, expect={"live.sqlite", "copy.sqlite.partial"})
