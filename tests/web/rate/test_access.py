"""Who may open what: every rater route against every role, CSRF, cookies, rate limits."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.models import Rating, User
from tests.conftest import LEAD_EMAIL, LEAD_PASSWORD

from .conftest import blocks_of, item_url, join, new_invite, rate_all, start


def _rater_routes(block_id: int) -> list[tuple[str, str]]:
    return [
        ("GET", "/rate/"),
        ("GET", "/rate/demographics"),
        ("POST", "/rate/demographics"),
        ("GET", "/rate/account"),
        ("POST", "/rate/account"),
        ("POST", f"/rate/blocks/{block_id}/start"),
        ("GET", f"/rate/blocks/{block_id}"),
        ("GET", item_url(block_id, 1)),
        ("POST", item_url(block_id, 1)),
        ("GET", f"/rate/blocks/{block_id}/done"),
        ("GET", "/rate/thanks"),
    ]


def _lead_routes(slug: str, rater_id: int) -> list[tuple[str, str]]:
    return [
        ("GET", f"/lead/studies/{slug}/raters"),
        ("POST", f"/lead/studies/{slug}/raters/{rater_id}/lift-gap"),
    ]


def _call(client, method: str, url: str):
    if method == "GET":
        return client.get(url)
    return client.post(url, data={"score": "1", "password": "x", "confirm": "x"})


@pytest.fixture
def setting(app, client, study):
    """A rater with a started block, logged in on ``client``."""
    rater = join(app, client, study.slug)
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    return rater, block


def test_anonymous_visitors_are_sent_to_login(app, setting, study):
    rater, block = setting
    anonymous = app.test_client()
    for method, url in _rater_routes(block.id) + _lead_routes(study.slug, rater):
        response = _call(anonymous, method, url)
        assert response.status_code == 302, (method, url)
        assert "/login" in response.headers["Location"], (method, url)
    assert ratings_count(app) == 0


def ratings_count(app) -> int:
    with Session(get_engine(app)) as session:
        return len(session.exec(select(Rating)).all())


def test_leads_are_refused_on_rater_pages(app, setting, lead_client):
    _rater, block = setting
    for method, url in _rater_routes(block.id):
        assert _call(lead_client, method, url).status_code == 403, (method, url)
    assert ratings_count(app) == 0


def test_raters_are_refused_on_lead_pages(app, client, setting, study):
    rater, _block = setting
    for method, url in _lead_routes(study.slug, rater) + [
        ("GET", "/lead/"),
        ("GET", f"/lead/studies/{study.slug}"),
        ("GET", f"/lead/studies/{study.slug}/export?format=long"),
    ]:
        assert _call(client, method, url).status_code == 403, (method, url)


def test_a_rater_never_reaches_another_raters_blocks(app, client, setting, study):
    _rater, block = setting
    rate_all(client, block.id, 2, value="4.2")
    other = app.test_client()
    other_id = join(app, other, study.slug)
    for method, url in _rater_routes(block.id):
        if "/blocks/" in url:
            assert _call(other, method, url).status_code == 404, (method, url)
    with Session(get_engine(app)) as session:
        assert {r.rater_id for r in session.exec(select(Rating))} == {_rater}
    # Their own pages carry no score of anyone else.
    own = blocks_of(app, other_id)[0]
    start(other, own.id)
    for url in ("/rate/", item_url(own.id, 1)):
        assert "4.2" not in other.get(url).text


def test_raters_of_another_study_are_404_on_the_lead_page(app, make_study, lead_client):
    from tests.data.studies import study_toml

    first = make_study(study_toml(slug="s-one"))
    rater = join(app, app.test_client(), first.slug)
    second = make_study(study_toml(slug="s-two"))
    page = lead_client.get(f"/lead/studies/{second.slug}/raters")
    with Session(get_engine(app)) as session:
        code = session.get(User, rater).rater_code
    assert page.status_code == 200 and code not in page.text


def test_csrf_is_required_on_every_post(make_app, study):
    app = make_app(WTF_CSRF_ENABLED=True)
    client = app.test_client()
    token = new_invite(app, study.slug)
    assert client.post(f"/invite/{token}", data={"decision": "agree"}).status_code == 400
    page = client.get(f"/invite/{token}")
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    assert (
        client.post(f"/invite/{token}", data={"decision": "agree", "csrf_token": csrf}).status_code
        == 302
    )
    answers = {"gender": "male", "age": "40"}
    assert client.post("/rate/demographics", data=answers).status_code == 400
    assert (
        client.post("/rate/demographics", data={**answers, "csrf_token": csrf}).status_code == 302
    )
    with Session(get_engine(app)) as session:
        rater = session.exec(select(User).where(User.role == "rater")).one()
    block = blocks_of(app, rater.id)[0]
    for url, data in [
        (f"/rate/blocks/{block.id}/start", {}),
        (item_url(block.id, 1), {"score": "1"}),
        ("/rate/account", {"password": "long-password", "confirm": "long-password"}),
        ("/logout", {}),
    ]:
        assert client.post(url, data=data).status_code == 400, url
    assert blocks_of(app, rater.id)[0].started_at is None
    assert (
        client.post(f"/rate/blocks/{block.id}/start", data={"csrf_token": csrf}).status_code == 302
    )
    # htmx sends the token in a header (static/app.js).
    client.get(item_url(block.id, 1))
    response = client.post(
        item_url(block.id, 1),
        data={"score": "1"},
        headers={"HX-Request": "true", "X-CSRFToken": csrf},
    )
    assert response.status_code == 200
    assert ratings_count(app) == 1


def test_lead_post_needs_csrf(make_app, study):
    app = make_app(WTF_CSRF_ENABLED=True)
    rater = join_without_csrf(app, study.slug)
    from annotator.study.studies import create_lead

    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    lead = app.test_client()
    csrf = lead.get("/login").text.split('name="csrf_token" value="')[1].split('"')[0]
    lead.post(
        "/login", data={"username": LEAD_EMAIL, "password": LEAD_PASSWORD, "csrf_token": csrf}
    )
    url = f"/lead/studies/{study.slug}/raters/{rater}/lift-gap"
    assert lead.post(url).status_code == 400
    assert lead.post(url, data={"confirmed": "yes"}).status_code == 400
    assert lead.post(url, data={"csrf_token": csrf, "confirmed": "yes"}).status_code == 302


def join_without_csrf(app, slug: str) -> int:
    """Join with CSRF switched off for the setup only (Flask-WTF reads it per request)."""
    app.config["WTF_CSRF_ENABLED"] = False
    try:
        return join(app, app.test_client(), slug)
    finally:
        app.config["WTF_CSRF_ENABLED"] = True


def test_session_cookies_are_httponly_and_samesite(app, study):
    client = app.test_client()
    token = new_invite(app, study.slug)
    response = client.post(f"/invite/{token}", data={"decision": "agree"})
    cookies = response.headers.getlist("Set-Cookie")
    names = {c.split("=", 1)[0]: c for c in cookies}
    assert {"session", "remember_token"} <= set(names)
    for name in ("session", "remember_token"):
        assert "HttpOnly" in names[name] and "SameSite=Lax" in names[name], names[name]


def test_login_attempts_are_rate_limited(make_app, study):
    app = make_app(RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="5 per minute")
    client = app.test_client()
    statuses = [
        client.post("/login", data={"username": "R-NOBODY", "password": "wrong"}).status_code
        for _ in range(7)
    ]
    assert statuses[:5] == [401] * 5
    assert statuses[5:] == [429, 429]


def test_a_rater_logs_in_with_code_and_password(app, client, study):
    rater = join(app, client, study.slug)
    client.post("/rate/account", data={"password": "rater-pass-1", "confirm": "rater-pass-1"})
    with Session(get_engine(app)) as session:
        code = session.get(User, rater).rater_code
    other = app.test_client()
    bad = other.post("/login", data={"username": code, "password": "nope-nope"})
    assert bad.status_code == 401
    good = other.post("/login", data={"username": code, "password": "rater-pass-1"})
    assert good.headers["Location"].endswith("/rate/")


def test_the_password_form_takes_its_csrf_token(make_app, study):
    # The Flask-WTF form checks the same token the app-wide CSRF check does.
    app = make_app(WTF_CSRF_ENABLED=True)
    rater = join_without_csrf(app, study.slug)
    client = app.test_client()
    with Session(get_engine(app)) as session:
        token = session.get(User, rater).return_token
    client.get(f"/r/{token}")
    page = client.get("/rate/account")
    assert 'minlength="8"' in page.text
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    data = {"password": "rater-pass-1", "confirm": "rater-pass-1"}
    assert client.post("/rate/account", data=data).status_code == 400
    assert client.post("/rate/account", data={**data, "csrf_token": csrf}).status_code == 302
    with Session(get_engine(app)) as session:
        assert session.get(User, rater).password_hash


@pytest.mark.parametrize(
    ("username", "password"),
    [("", "whatever"), ("R-NOBODY", ""), ("x" * 400, "whatever")],
)
def test_an_incomplete_login_is_refused_like_a_wrong_one(client, username, password):
    response = client.post("/login", data={"username": username, "password": password})
    assert response.status_code == 401
    assert "Unknown user or wrong password." in response.text
