"""The reference apps benchmarks/load.py measures the app against
(benchmarks/harness/reference_apps.py) do the work they claim: a floor that skipped a
check or a write would make the app look worse than it is."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from annotator.db import make_engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from harness import reference_apps  # noqa: E402

_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def floor(database_url, monkeypatch):
    # On the test database (a PostgreSQL schema in CI's second pass): the floor
    # app writes with one statement there and with three on SQLite.
    engine = make_engine(database_url)
    auto = "" if engine.dialect.name == "sqlite" else " GENERATED ALWAYS AS IDENTITY"
    with engine.begin() as connection:
        for table in reference_apps.FLOOR_TABLES:
            connection.execute(text(table.format(auto=auto)))
    monkeypatch.setenv("LOAD_WRITE_URL", database_url)
    app = reference_apps.floor_app()
    yield app, engine
    engine.dispose()


def _signed_in(app, rater: int):
    client = app.test_client()
    page = client.get(f"/hello?rater={rater}").text
    return client, _CSRF.search(page).group(1)


def _rows(engine):
    with engine.connect() as connection:
        ratings = connection.execute(
            text(
                "SELECT b.rater, r.position, r.value FROM floor_rating r "
                "JOIN floor_block b ON b.id = r.block_id ORDER BY b.rater, r.position"
            )
        ).all()
        changes = connection.execute(
            text("SELECT rating_id, value FROM floor_change ORDER BY rating_id")
        ).all()
        block = connection.execute(
            text("SELECT rater, current_position FROM floor_block ORDER BY rater")
        ).all()
    return [tuple(r) for r in ratings], [tuple(c) for c in changes], [tuple(b) for b in block]


def test_the_floor_app_stores_a_rating_its_history_and_the_blocks_progress(floor):
    app, engine = floor
    client, csrf = _signed_in(app, 7)
    for item, score in enumerate(["1.5", "4", "2.25"]):
        response = client.post(
            "/hello", data={"score": score, "csrf_token": csrf, "rater": 7, "item": item}
        )
        assert response.status_code == 200
        # The next item's form, with a CSRF field the next post can use.
        assert _CSRF.search(response.text)
        assert f"Item {item + 2}" in response.text
    ratings, changes, blocks = _rows(engine)
    assert ratings == [(7, 1, 1.5), (7, 2, 4.0), (7, 3, 2.25)]
    assert [value for _, value in changes] == [1.5, 4.0, 2.25]
    assert blocks == [(7, 4)]


def test_a_retried_post_stores_nothing_more(floor):
    app, engine = floor
    client, csrf = _signed_in(app, 1)
    form = {"score": "3", "csrf_token": csrf, "rater": 1, "item": 0}
    assert client.post("/hello", data=form).status_code == 200
    assert client.post("/hello", data=form).status_code == 200
    ratings, changes, _ = _rows(engine)
    assert ratings == [(1, 1, 3.0)]
    assert len(changes) == 1


@pytest.mark.parametrize(
    ("signed_in", "form", "status"),
    [
        (False, {"score": "3", "item": 0}, 400),  # no CSRF token: refused before the view
        (True, {"score": "3", "csrf_token": "forged", "item": 0}, 400),
        (True, {"score": "three", "item": 0}, 422),
        (True, {"score": "3", "item": 1}, 409),  # a place beyond the next one
    ],
)
def test_the_floor_app_refuses_what_the_app_refuses(floor, signed_in, form, status):
    app, engine = floor
    if signed_in:
        client, csrf = _signed_in(app, 2)
        form = {"csrf_token": csrf, **form}
    else:
        client = app.test_client()
    assert client.post("/hello", data=form).status_code == status
    assert _rows(engine)[0] == []


def test_the_floor_app_needs_a_signed_in_rater(floor):
    app, engine = floor
    client, csrf = _signed_in(app, 3)
    # The CSRF secret stays in the session; only the rater who signed in is gone.
    with client.session_transaction() as session:
        del session["rater"]
    response = client.post("/hello", data={"score": "3", "item": 0, "csrf_token": csrf})
    assert response.status_code == 403
    assert _rows(engine)[0] == []
