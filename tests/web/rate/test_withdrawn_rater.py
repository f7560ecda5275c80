"""A rater who withdraws is logged out and their link stops working; an
excluded rater may go on rating (their ratings are left out until included)."""

from __future__ import annotations

from sqlmodel import Session

from annotator.db import get_engine
from annotator.models import User

from .conftest import blocks_of, item_url, ratings_of, start


def _code(app, user_id: int) -> str:
    with Session(get_engine(app)) as session:
        return session.get(User, user_id).rater_code


def _token(app, user_id: int) -> str | None:
    with Session(get_engine(app)) as session:
        return session.get(User, user_id).return_token


def test_withdrawn_rater_is_logged_out_and_their_link_ends(app, client, runner, study, rater):
    token = _token(app, rater)
    assert client.get("/rate/").status_code == 200
    result = runner.invoke(args=["raters", "withdraw", study.slug, _code(app, rater)])
    assert result.exit_code == 0, result.output
    response = client.get("/rate/")
    assert response.status_code == 302 and "/login" in response.headers["Location"]
    other = app.test_client()
    refused = other.get(f"/r/{token}")
    assert refused.status_code == 403 and "You have withdrawn" in refused.text


def test_excluded_rater_goes_on_rating(app, client, runner, study, rater):
    result = runner.invoke(
        args=["raters", "exclude", study.slug, _code(app, rater), "--reason", "pilot"]
    )
    assert result.exit_code == 0, result.output
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    client.get(item_url(block.id, 1))
    assert client.post(item_url(block.id, 1), data={"score": "2"}).status_code == 302
    assert len(ratings_of(app, rater)) == 1
