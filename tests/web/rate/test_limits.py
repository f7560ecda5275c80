"""Bodies and fields too large to read get a styled 413 and store nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import func
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import Demographics, Rating

from .conftest import blocks_of, item_url, join, start


def _count(app, model) -> int:
    with Session(get_engine(app)) as session:
        return session.exec(select(func.count()).select_from(model)).one()


def test_a_huge_login_body_is_refused_unread(client):
    response = client.post(
        "/login",
        data=b"username=a&password=" + b"x" * (100 * 1024 * 1024),
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 413
    assert "That was too much to send" in response.get_data(as_text=True)


@pytest.mark.parametrize("size", [2001, 300 * 1024, 2 * 1024 * 1024])
def test_an_overlong_score_field_is_refused(app, client, study, size):
    rater = join(app, client, study.slug)
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    client.get(item_url(block.id, 1))
    response = client.post(item_url(block.id, 1), data={"score": "1" + " " * size})
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "nothing was saved" in page and "<html" in page
    assert _count(app, Rating) == 0


def test_a_repeated_field_is_checked_in_every_copy(app, client, study):
    from werkzeug.datastructures import MultiDict

    rater = join(app, client, study.slug)
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    data = MultiDict([("score", "1"), ("score", "x" * 5000)])
    assert client.post(item_url(block.id, 1), data=data).status_code == 413


def test_an_overlong_query_string_is_refused(client):
    assert client.get("/login?next=" + "a" * 3000).status_code == 413


def test_ordinary_forms_pass(app, client, study):
    join(app, client, study.slug)
    assert _count(app, Demographics) == 1


@pytest.mark.parametrize("age", ["٣٤", "３４", "𝟑𝟒"])
def test_a_questionnaire_number_takes_ascii_digits_only(app, client, study, age):
    from .conftest import ANSWERS, new_invite

    token = new_invite(app, study.slug)
    client.post(f"/invite/{token}", data={"decision": "agree"})
    response = client.post("/rate/demographics", data={**ANSWERS, "age": age})
    assert response.status_code in (200, 422)
    assert "Please enter a number with the digits 0-9." in response.get_data(as_text=True)
    assert _count(app, Demographics) == 0


def test_nul_characters_are_refused_before_the_database(app, client, lead_client, study):
    """PostgreSQL refuses NUL in text: it must not reach a query."""
    assert lead_client.get(f"/lead/studies/{study.slug}%00").status_code == 404
    assert client.get("/invite/abc%00def").status_code == 404
    assert client.post("/login", data={"username": "a\x00b", "password": "x"}).status_code == 400
    assert client.get("/login?next=%00").status_code == 400
