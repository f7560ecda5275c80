"""Security headers on every response (Flask-Talisman and annotator/web/security_headers.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotator.collect.crowd import MTURK_HOSTS
from tests.conftest import LEAD_EMAIL, LEAD_PASSWORD

from .conftest import blocks_of, join, new_invite, start

TEMPLATES = Path(__file__).resolve().parents[3] / "templates"


def _csp(response) -> dict[str, str]:
    policy = response.headers["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


def _assert_locked_down(response, referrer="same-origin"):
    csp = _csp(response)
    assert csp["script-src"] == "'self'" and csp["style-src"] == "'self'"
    assert csp["default-src"] == "'self'" and csp["object-src"] == "'none'"
    assert csp["frame-ancestors"] == "'none'"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == referrer
    # Plain http (a laptop): no HSTS.
    assert "Strict-Transport-Security" not in response.headers


def test_anonymous_responses(client):
    for response in (
        client.get("/login"),
        client.get("/no-such-page"),
        client.get("/static/app.js"),
        client.get("/rate/blocks/99999999999999999999"),
        client.post("/login", data={"username": "x", "password": "y" * 3000}),
    ):
        _assert_locked_down(response, referrer=response.headers["Referrer-Policy"])
        assert response.headers["Referrer-Policy"] in ("same-origin", "no-referrer")
    _assert_locked_down(client.get("/login"))


def test_lead_pages(app, lead_client, small_study):
    _assert_locked_down(lead_client.get("/lead/"))
    _assert_locked_down(lead_client.get("/lead/studies/small"))
    _assert_locked_down(lead_client.get("/lead/studies/small/export?format=long"))
    # Pages that show invite and return links send no referrer at all.
    _assert_locked_down(lead_client.get("/lead/studies/small/invites"), referrer="no-referrer")
    _assert_locked_down(lead_client.get("/lead/studies/small/raters"), referrer="no-referrer")


def test_rater_pages_send_no_referrer(app, client, study):
    token = new_invite(app, study.slug)
    _assert_locked_down(client.get(f"/invite/{token}"), referrer="no-referrer")
    rater = join(app, client, study.slug)
    _assert_locked_down(client.get("/rate/"), referrer="no-referrer")
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    _assert_locked_down(client.get(f"/rate/blocks/{block.id}/items/1"), referrer="no-referrer")


def test_hsts_over_https_only(make_app):
    app = make_app()
    client = app.test_client()
    secure = client.get("/login", base_url="https://localhost")
    # A year (Talisman's: 365.24 days); no includeSubDomains, the app may share a domain.
    assert secure.headers["Strict-Transport-Security"] == "max-age=31556926"
    assert "; Secure" in secure.headers["Set-Cookie"]
    assert "Strict-Transport-Security" not in client.get("/login").headers
    # Behind a proxy (PROXY_FIX): the client's scheme decides.
    proxied = make_app(PROXY_FIX=1).test_client()
    response = proxied.get("/login", headers={"X-Forwarded-Proto": "https"})
    assert response.headers["Strict-Transport-Security"] == "max-age=31556926"


def test_mturk_frames_the_rating_pages_alone(make_app):
    app = make_app(MTURK_FRAME=True)
    client = app.test_client()
    rater_page = client.get("/s/no-such-study")
    assert _csp(rater_page)["frame-ancestors"] == " ".join(MTURK_HOSTS)
    assert _csp(rater_page)["script-src"] == "'self'"
    assert "X-Frame-Options" not in rater_page.headers
    assert rater_page.headers["Referrer-Policy"] == "no-referrer"
    # The lead's pages (confirmations included) and the login page stay unframeable.
    for response in (client.get("/login"), client.get("/lead/")):
        assert _csp(response)["frame-ancestors"] == "'none'"
        assert response.headers["X-Frame-Options"] == "DENY"
    assert app.config["SESSION_COOKIE_SAMESITE"] == "None"


def test_a_lead_login_keeps_working(make_app):
    from annotator.db import session_scope
    from annotator.study.studies import create_lead

    app = make_app()
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    response = app.test_client().post(
        "/login", data={"username": LEAD_EMAIL, "password": LEAD_PASSWORD}
    )
    assert response.status_code == 302


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I), "an inline <script>"),
    (re.compile(r"<style\b", re.I), "a <style> element"),
    (re.compile(r"\sstyle\s*=", re.I), "a style= attribute"),
    (re.compile(r"\shx-on", re.I), "an hx-on attribute"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "an event handler attribute"),
    (re.compile(r"javascript:", re.I), "a javascript: address"),
]


@pytest.mark.parametrize("path", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: p.name)
def test_templates_have_nothing_the_policy_blocks(path):
    text = path.read_text("utf-8")
    found = [what for pattern, what in INLINE if pattern.search(text)]
    assert found == [], f"{path.relative_to(TEMPLATES)}: {', '.join(found)}"
