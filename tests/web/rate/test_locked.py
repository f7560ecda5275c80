"""A score posted while another process holds SQLite's write lock is stored once.

SQLite only (its file lock is the point), so the app gets a SQLite file of
its own even when the suite runs on PostgreSQL.
"""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

import annotator.db

from .conftest import blocks_of, item_url, join, ratings_of, start


@pytest.fixture
def sqlite_app(make_app, tmp_path, monkeypatch):
    # Far shorter than the lock is held below: SQLite gives up with "database
    # is locked" and only the retried transaction can store the score. (Set
    # before the engine opens its first connection.)
    monkeypatch.setattr(annotator.db, "SQLITE_BUSY_TIMEOUT_MS", 20)
    path = tmp_path / "locked.sqlite"
    return make_app(DATABASE_URL=f"sqlite:///{path}"), path


def test_a_score_post_waits_out_another_writer(sqlite_app, tmp_path, monkeypatch):
    import json

    from annotator.data.importers import import_items
    from annotator.db import session_scope
    from annotator.study.studies import create_study
    from annotator.study.studyfile import parse_study_file
    from tests.data.studies import item_rows, study_toml

    app, path = sqlite_app
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps(r) for r in item_rows(3, 0)) + "\n", "utf-8")
    with session_scope(app) as session:
        import_items(session, create_study(session, parse_study_file(study_toml())), items)
    locked_errors = []
    real = annotator.db.is_database_locked

    def spy(exc):
        locked_errors.append(real(exc))
        return locked_errors[-1]

    monkeypatch.setattr(annotator.db, "is_database_locked", spy)
    client = app.test_client()
    rater = join(app, client, "rt")
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    client.get(item_url(block.id, 1))

    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.15, lambda: other.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    response = client.post(item_url(block.id, 1), data={"score": "2.5"})
    release.join()
    other.close()
    assert response.status_code == 302, response.text
    assert time.monotonic() - started >= 0.1
    assert True in locked_errors
    assert [(r.position, r.value) for r in ratings_of(app, rater)] == [(1, 2.5)]
