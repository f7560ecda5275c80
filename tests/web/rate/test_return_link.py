"""Raters are never locked out: return links, the logout warning, logins.

Each rater who consented has a personal return link; the lead can show and
replace it; logging out without a password warns first; codes are
case-insensitive; failed logins are limited per account and address only.
"""

from __future__ import annotations

import re

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.models import AuditAction, AuditEvent, User
from annotator.study.studies import create_lead
from tests.conftest import LEAD_EMAIL, LEAD_PASSWORD

from .conftest import CONFIRMED, blocks_of, item_url, join, new_invite, progress, rate_all, start

LINK = re.compile(r"http://localhost/r/([A-Za-z0-9_-]+)")


def _user(app, user_id: int) -> User:
    with Session(get_engine(app)) as session:
        return session.get(User, user_id)


def _link_on(html: str) -> str:
    match = LINK.search(html)
    assert match, "no return link on the page"
    return match.group(0)


def test_a_rater_gets_a_long_personal_link_shown_on_the_dashboard(app, client, rater):
    user = _user(app, rater)
    # 32 random bytes, URL-safe: 43 characters.
    assert user.return_token is not None and len(user.return_token) >= 43
    page = client.get("/rate/")
    assert "Keep this link to come back" in page.text
    assert _link_on(page.text) == f"http://localhost/r/{user.return_token}"
    other = join(app, app.test_client(), "rt")
    assert _user(app, other).return_token != user.return_token


def test_the_link_is_shown_after_each_block(app, client, rater):
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    rate_all(client, block.id, 10)
    done = client.get(f"/rate/blocks/{block.id}/done")
    assert "Keep this link to come back" in done.text
    assert _link_on(done.text).endswith(_user(app, rater).return_token)


def test_links_use_the_configured_base_url(make_app, study):
    app = make_app(BASE_URL="https://rate.example.org/")
    client = app.test_client()
    rater = join(app, client, study.slug)
    page = client.get("/rate/")
    assert f"https://rate.example.org/r/{_user(app, rater).return_token}" in page.text


def test_logout_without_a_password_warns_and_the_link_brings_the_rater_back(app, client, rater):
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    rate_all(client, block.id, 2, value="1.5")
    client.get(item_url(block.id, 3))

    warning = client.post("/logout")
    assert warning.status_code == 200
    assert "Log out?" in warning.text and "only way back" in warning.text
    link = _link_on(warning.text)
    assert 'name="confirmed" value="yes"' in warning.text
    # Still logged in until confirmed.
    assert client.get("/rate/").status_code == 200

    assert client.post("/logout", data=CONFIRMED).status_code == 302
    assert "/login" in client.get("/rate/").headers["Location"]

    # Another browser: the link logs the rater in and Resume continues at item 3.
    other = app.test_client()
    response = other.get(link.removeprefix("http://localhost"))
    assert response.status_code == 302 and response.headers["Location"].endswith("/rate/")
    assert response.headers["Referrer-Policy"] == "no-referrer"
    dashboard = other.get("/rate/")
    assert "In progress: 2 / 10 rated." in dashboard.text
    resume = other.get(f"/rate/blocks/{block.id}")
    assert resume.headers["Location"].endswith(item_url(block.id, 3))
    assert progress(other.get(item_url(block.id, 3)).text) == "3 / 10"


def test_logout_with_a_password_needs_no_warning(app, client, rater):
    client.post("/rate/account", data={"password": "rater-pass-1", "confirm": "rater-pass-1"})
    response = client.post("/logout")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_unknown_and_rotated_links_get_a_clear_page(app, client, rater, lead_client):
    old = _user(app, rater).return_token
    for token in ("no-such-token", old + "x"):
        page = app.test_client().get(f"/r/{token}")
        assert page.status_code == 404
        assert "This return link is not valid" in page.text
        assert "ask the team" in page.text

    url = f"/lead/studies/rt/raters/{rater}/rotate-link"
    confirm = lead_client.post(url)
    assert confirm.status_code == 200 and "Replace the return link" in confirm.text
    assert _user(app, rater).return_token == old
    done = lead_client.post(url, data=CONFIRMED)
    assert done.status_code == 302
    new = _user(app, rater).return_token
    assert new != old
    assert new in lead_client.get(done.headers["Location"]).text
    # The old link is refused (no login loop), the new one works.
    refused = app.test_client().get(f"/r/{old}")
    assert refused.status_code == 404 and "not valid" in refused.text
    assert app.test_client().get(f"/r/{new}").status_code == 302
    with Session(get_engine(app)) as session:
        (event,) = session.exec(
            select(AuditEvent).where(AuditEvent.action == AuditAction.RETURN_LINK_ROTATED)
        ).all()
        lead = session.exec(select(User).where(User.email == LEAD_EMAIL)).one()
        assert (event.actor_id, event.subject_id, event.details) == (lead.id, rater, {"via": "web"})


def test_the_lead_sees_each_raters_link(app, client, rater, lead_client):
    page = lead_client.get("/lead/studies/rt/raters")
    assert f"http://localhost/r/{_user(app, rater).return_token}" in page.text
    assert "Replace link" in page.text


def test_declined_raters_have_no_link(app, study):
    client = app.test_client()
    token = new_invite(app, study.slug)
    first = client.post(f"/invite/{token}", data={"decision": "decline"})
    # Declining asks once more; nothing is stored yet.
    assert first.status_code == 200 and "Decline to take part?" in first.text
    with Session(get_engine(app)) as session:
        assert session.exec(select(User).where(User.role == "rater")).all() == []
    client.post(f"/invite/{token}", data={"decision": "decline", **CONFIRMED})
    with Session(get_engine(app)) as session:
        (user,) = session.exec(select(User).where(User.role == "rater")).all()
        assert user.declined_at is not None and user.return_token is None


def test_rater_codes_are_case_insensitive_at_login(app, client, rater):
    client.post("/rate/account", data={"password": "rater-pass-1", "confirm": "rater-pass-1"})
    code = _user(app, rater).rater_code
    for typed in (code.lower(), code.swapcase(), f"  {code.lower()} "):
        other = app.test_client()
        response = other.post("/login", data={"username": typed, "password": "rater-pass-1"})
        assert response.status_code == 302, typed
        assert response.headers["Location"].endswith("/rate/")


# ------------------------------------------------------------ rate limits


def _raters_with_passwords(app, client, slug: str, n: int) -> list[str]:
    codes = []
    for _ in range(n):
        browser = app.test_client()
        rater = join(app, browser, slug)
        browser.post("/rate/account", data={"password": "rater-pass-1", "confirm": "rater-pass-1"})
        codes.append(_user(app, rater).rater_code)
    return codes


@pytest.fixture
def limited_app(make_app, study):
    # Made after ``study`` (whose app has the limiter off): the limiter is
    # one object that the last app configures.
    return make_app(RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="5 per minute")


def test_a_lab_behind_one_address_is_not_locked_out(limited_app):
    app = limited_app
    codes = _raters_with_passwords(app, app.test_client(), "rt", 12)
    for code in codes:
        response = app.test_client().post(
            "/login", data={"username": code, "password": "rater-pass-1"}
        )
        assert response.status_code == 302, code
    # The limiter is on: failures for one account do hit it.
    wrong = {"username": codes[0], "password": "wrong-one"}
    assert [app.test_client().post("/login", data=wrong).status_code for _ in range(6)][-1] == 429


def test_failures_are_limited_per_account_not_per_address(limited_app):
    app = limited_app
    victim, colleague = _raters_with_passwords(app, app.test_client(), "rt", 2)
    client = app.test_client()
    statuses = [
        client.post("/login", data={"username": victim, "password": "wrong-one"}).status_code
        for _ in range(7)
    ]
    assert statuses == [401] * 5 + [429] * 2
    # The same account, in another case, is the same account.
    locked = client.post("/login", data={"username": victim.lower(), "password": "rater-pass-1"})
    assert locked.status_code == 429
    assert "Too many attempts" in locked.text and "Retry-After" in locked.headers
    # Someone else at the same address still logs in.
    response = client.post("/login", data={"username": colleague, "password": "rater-pass-1"})
    assert response.status_code == 302


def test_lead_rotation_is_for_leads_only(app, client, rater):
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    url = f"/lead/studies/rt/raters/{rater}/rotate-link"
    assert client.post(url, data=CONFIRMED).status_code == 403
    assert "/login" in app.test_client().post(url, data=CONFIRMED).headers["Location"]


def test_replacing_a_link_ends_the_sessions_opened_with_it(app, client, rater, lead_client):
    # Someone who used a leaked link stays logged in on their device unless
    # the replacement also ends that session.
    leaked = app.test_client()
    old = _user(app, rater).return_token
    assert leaked.get(f"/r/{old}").status_code == 302
    assert leaked.get("/rate/").status_code == 200
    assert client.get("/rate/").status_code == 200

    lead_client.post(f"/lead/studies/rt/raters/{rater}/rotate-link", data=CONFIRMED)

    for ended in (leaked, client):
        response = ended.get("/rate/")
        assert response.status_code == 302 and "/login" in response.headers["Location"]
    fresh = app.test_client()
    assert fresh.get(f"/r/{_user(app, rater).return_token}").status_code == 302
    assert fresh.get("/rate/").status_code == 200
