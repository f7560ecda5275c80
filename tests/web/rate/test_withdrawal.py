"""A withdrawn rater (issue 27) is refused at every way in with a page that
says they withdrew, and nothing they post afterwards is stored."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.models import Invite, RaterStatus, User
from tests.data.studies import study_toml

from .conftest import ANSWERS, blocks_of, item_url, new_invite, ratings_of, start

PID = "5f1a2b3c4d5e6f708192a3b4"
WITHDRAWN = "You have withdrawn"


def _user(app, user_id: int) -> User:
    with Session(get_engine(app)) as session:
        return session.get(User, user_id)


def withdraw(runner, slug: str, app, user_id: int) -> None:
    result = runner.invoke(args=["raters", "withdraw", slug, _user(app, user_id).rater_code])
    assert result.exit_code == 0, result.output


def assert_withdrawn_page(response) -> None:
    assert response.status_code == 403
    assert WITHDRAWN in response.text


@pytest.fixture
def mid_block(app, client, rater) -> int:
    """``rater`` has started block 1 and rated its first item."""
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    client.get(item_url(block.id, 1))
    assert client.post(item_url(block.id, 1), data={"score": "2"}).status_code == 302
    return block.id


def test_the_invite_link_says_they_withdrew(app, runner, study):
    token = new_invite(app, study.slug)
    browser = app.test_client()
    browser.post(f"/invite/{token}", data={"decision": "agree"})
    with Session(get_engine(app)) as session:
        user_id = session.exec(select(Invite).where(Invite.token == token)).one().user_id
    withdraw(runner, study.slug, app, user_id)
    for client in (browser, app.test_client()):
        assert_withdrawn_page(client.get(f"/invite/{token}"))
        assert_withdrawn_page(client.post(f"/invite/{token}", data={"decision": "agree"}))


def test_the_return_link_says_they_withdrew(app, runner, study, rater):
    token = _user(app, rater).return_token
    withdraw(runner, study.slug, app, rater)
    fresh = app.test_client()
    assert_withdrawn_page(fresh.get(f"/r/{token}"))
    assert fresh.get("/rate/").status_code == 302


def test_password_login_says_they_withdrew(app, client, runner, study, rater):
    password = "a long password"
    client.post("/rate/account", data={"password": password, "confirm": password})
    code = _user(app, rater).rater_code
    withdraw(runner, study.slug, app, rater)
    fresh = app.test_client()
    refused = fresh.post("/login", data={"username": code, "password": password})
    assert_withdrawn_page(refused)
    assert "<em>Rating test study</em>" in refused.text
    assert fresh.get("/rate/").status_code == 302
    # A wrong password still gets the ordinary answer (nothing is told).
    wrong = fresh.post("/login", data={"username": code, "password": "not the password"})
    assert wrong.status_code == 401 and WITHDRAWN not in wrong.text


def test_the_crowd_link_says_they_withdrew_and_stores_nothing(app, client, runner, make_study):
    extra = '\n[crowd]\nplatform = "prolific"\n'
    make_study(study_toml(slug="crowd", extra=extra))
    url = "/s/crowd?" + urlencode({"PROLIFIC_PID": PID, "SESSION_ID": "SESSION1"})
    client.post(url, data={"decision": "agree"})
    client.post("/rate/demographics", data=ANSWERS)
    with Session(get_engine(app)) as session:
        user_id = session.exec(select(User).where(User.platform_id == PID)).one().id
    block = blocks_of(app, user_id)[0]
    start(client, block.id)
    withdraw(runner, "crowd", app, user_id)
    # The bound browser, with the session of the block in progress.
    assert_withdrawn_page(client.get(url))
    assert_withdrawn_page(client.post(url, data={"decision": "agree"}))
    client.post(item_url(block.id, 1), data={"score": "2"})
    assert ratings_of(app, user_id) == []


def test_a_score_post_after_withdrawal_stores_nothing(app, client, runner, study, mid_block):
    with Session(get_engine(app)) as session:
        rater = session.exec(select(User).where(User.role == "rater")).one().id
    withdraw(runner, study.slug, app, rater)
    response = client.post(item_url(mid_block, 2), data={"score": "3"})
    assert response.status_code in (302, 403)
    assert [r.position for r in ratings_of(app, rater)] == [1]


def test_a_request_still_logged_in_is_refused_at_the_withdrawal(app, client, study, mid_block):
    # The withdrawal ends every session (session version); a request that
    # passed that check already, or a status set by other means, is refused
    # by the rater pages themselves, with nothing stored.
    with session_scope(app) as session:
        user = session.exec(select(User).where(User.role == "rater")).one()
        user.status = RaterStatus.WITHDRAWN
        rater = user.id
    refused = client.post(item_url(mid_block, 2), data={"score": "3"})
    assert_withdrawn_page(refused)
    assert "<em>Rating test study</em>" in refused.text
    assert [r.position for r in ratings_of(app, rater)] == [1]
    assert client.get("/rate/").status_code == 302


def test_withdrawn_raters_have_no_link_to_show_or_replace(app, runner, study, rater, lead_client):
    withdraw(runner, study.slug, app, rater)
    page = lead_client.get(f"/lead/studies/{study.slug}/raters").text
    assert "withdrawn, link retired" in page
    token = _user(app, rater).return_token
    assert token not in page
    response = lead_client.post(
        f"/lead/studies/{study.slug}/raters/{rater}/rotate-link", data={"confirmed": "yes"}
    )
    assert response.status_code == 302 and _user(app, rater).return_token == token
    code = _user(app, rater).rater_code
    listed = runner.invoke(args=["raters", "links", study.slug])
    assert listed.exit_code == 0 and token not in listed.output
    one = runner.invoke(args=["raters", "links", study.slug, "--rater", code, "--rotate"])
    assert one.exit_code != 0 and "has withdrawn" in one.output
