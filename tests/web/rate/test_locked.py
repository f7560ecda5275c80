"""A score posted while another process holds SQLite's write lock is stored once."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from sqlalchemy.engine import make_url

import annotator.db
from tests.conftest import SERVER_URL

from .conftest import blocks_of, item_url, join, ratings_of, start

pytestmark = pytest.mark.skipif(bool(SERVER_URL), reason="SQLite's file lock")


@pytest.fixture
def short_busy_timeout(monkeypatch):
    # Far shorter than the lock is held below: SQLite gives up with "database
    # is locked" and only the retried transaction can store the score. (Set
    # before the app's engine opens its first connection.)
    monkeypatch.setattr(annotator.db, "SQLITE_BUSY_TIMEOUT_MS", 20)


def test_a_score_post_waits_out_another_writer(short_busy_timeout, app, client, study, monkeypatch):
    locked_errors = []
    real = annotator.db.is_database_locked

    def spy(exc):
        locked_errors.append(real(exc))
        return locked_errors[-1]

    monkeypatch.setattr(annotator.db, "is_database_locked", spy)
    rater = join(app, client, study.slug)
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    client.get(item_url(block.id, 1))

    other = sqlite3.connect(
        make_url(app.config["DATABASE_URL"]).database, isolation_level=None, check_same_thread=False
    )
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
