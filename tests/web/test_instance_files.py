"""The instance folder and the SQLite file are the owner's alone.

The database holds invite and return tokens in clear: a world-readable file
(0644, the umask's default) let any local user read them.
"""

from __future__ import annotations

import os
import stat

import pytest
from sqlmodel import SQLModel

from annotator import create_app
from annotator.db import get_engine


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def usual_umask():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_new_instance_folder_and_database_are_private(tmp_path, monkeypatch, usual_umask):
    instance = tmp_path / "fresh" / "instance"
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(instance))
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "RATELIMIT_ENABLED": False})
    try:
        engine = get_engine(app)
        SQLModel.metadata.create_all(engine)
        with engine.connect() as connection:
            connection.exec_driver_sql("select count(*) from user")
            # The write-ahead log exists while a connection is open.
            wal = instance / "annotator.sqlite-wal"
            assert _mode(wal) == 0o600
    finally:
        get_engine(app).dispose()
    assert _mode(instance) == 0o700
    assert _mode(instance / "annotator.sqlite") == 0o600


def test_existing_files_keep_their_modes(tmp_path, monkeypatch, usual_umask):
    instance = tmp_path / "instance"
    instance.mkdir(mode=0o750)
    (instance / "annotator.sqlite").touch(mode=0o640)
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(instance))
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "RATELIMIT_ENABLED": False})
    get_engine(app).dispose()
    assert _mode(instance) == 0o750
    assert _mode(instance / "annotator.sqlite") == 0o640


def test_the_job_queue_and_the_rate_limit_files_are_private(tmp_path, monkeypatch, usual_umask):
    from annotator.jobs import get_queue

    instance = tmp_path / "instance"
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(instance))
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "RATELIMIT_ENABLED": True})
    try:
        queue = get_queue(app)
        queue.storage.enqueue(b"a message")
        # A failed login counts in the rate limiter's file.
        app.test_client().post("/login", data={"username": "a@b.c", "password": "wrong"})
        for name in ("jobs.sqlite", "ratelimit.sqlite"):
            assert _mode(instance / name) == 0o600, name
        wal = [p for p in instance.glob("*-wal") if p.name.startswith(("jobs", "ratelimit"))]
        assert wal and all(_mode(p) == 0o600 for p in wal)
    finally:
        get_engine(app).dispose()
