"""Behind a reverse proxy (ANNOTATOR_PROXY_FIX): client address, scheme, host, cookies."""

from __future__ import annotations

import pytest

from annotator import create_app

HTTPS_PROXY = {
    "X-Forwarded-For": "203.0.113.7",
    "X-Forwarded-Proto": "https",
    "X-Forwarded-Host": "study.example.org",
}


def _failed_login(client, address: str):
    return client.post(
        "/login",
        data={"username": "nobody", "password": "wrong"},
        headers={"X-Forwarded-For": address},
    ).status_code


@pytest.mark.parametrize("proxy_fix", [1, "1", True, {"x_for": 1, "x_proto": 1, "x_host": 1}])
def test_the_proxy_names_the_client_the_scheme_and_the_host(make_app, proxy_fix):
    app = make_app(PROXY_FIX=proxy_fix)
    seen = {}

    @app.route("/_where")
    def where():
        from flask import request, url_for

        from annotator.study.studies import link_base_url

        seen.update(
            address=request.remote_addr,
            link=link_base_url(),
            external=url_for("auth.login", _external=True),
        )
        return "ok"

    assert app.test_client().get("/_where", headers=HTTPS_PROXY).status_code == 200
    assert seen == {
        "address": "203.0.113.7",
        # Invite and return links (no BASE_URL set) name the address the rater used.
        "link": "https://study.example.org/",
        "external": "https://study.example.org/login",
    }


def test_without_proxy_fix_forwarded_headers_are_ignored(make_app):
    app = make_app()
    seen = {}

    @app.route("/_where")
    def where():
        from flask import request

        seen.update(address=request.remote_addr, url=request.host_url)
        return "ok"

    response = app.test_client().get("/_where", headers=HTTPS_PROXY)
    assert seen == {"address": "127.0.0.1", "url": "http://localhost/"}
    assert all("Secure" not in c for c in response.headers.getlist("Set-Cookie"))


def test_every_cookie_is_secure_over_https_only(make_app, study_with_invite):
    app = make_app(PROXY_FIX=1)
    token = study_with_invite(app)
    # Consenting sets both the session and the remember cookie.
    https = app.test_client().post(
        f"/invite/{token()}", data={"decision": "agree"}, headers=HTTPS_PROXY
    )
    cookies = https.headers.getlist("Set-Cookie")
    assert {c.split("=", 1)[0] for c in cookies} >= {"session", "remember_token"}
    assert all(c.endswith("; Secure") or "; Secure;" in c for c in cookies), cookies
    plain = app.test_client().post(f"/invite/{token()}", data={"decision": "agree"})
    cookies = plain.headers.getlist("Set-Cookie")
    assert cookies and all("secure" not in c.lower() for c in cookies), cookies


@pytest.fixture
def study_with_invite(tmp_path):
    """``study_with_invite(app)`` -> a function returning a fresh invite token."""
    import json

    from annotator.data.importers import import_items
    from annotator.db import session_scope
    from annotator.study.studies import create_invites, create_study, get_study
    from annotator.study.studyfile import parse_study_file
    from tests.data.studies import item_rows, study_toml

    def setup(app):
        path = tmp_path / "items.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in item_rows(3, 0)) + "\n", "utf-8")
        with session_scope(app) as session:
            import_items(session, create_study(session, parse_study_file(study_toml())), path)

        def token() -> str:
            with session_scope(app) as session:
                return create_invites(session, get_study(session, "rt"), 1)[0].token

        return token

    return setup


def test_the_login_limit_counts_each_client_behind_the_proxy(make_app):
    app = make_app(PROXY_FIX=1, RATELIMIT_ENABLED=True, LOGIN_ADDRESS_RATE_LIMIT="2 per minute")
    client = app.test_client()
    assert [_failed_login(client, "198.51.100.1") for _ in range(3)] == [401, 401, 429]
    # Another client behind the same proxy is not locked out by the first.
    assert _failed_login(client, "198.51.100.2") == 401


def test_without_proxy_fix_every_client_is_the_proxy(make_app):
    # The negative control of the test above: all clients share one count.
    app = make_app(RATELIMIT_ENABLED=True, LOGIN_ADDRESS_RATE_LIMIT="2 per minute")
    client = app.test_client()
    assert [_failed_login(client, "198.51.100.1") for _ in range(2)] == [401, 401]
    assert _failed_login(client, "198.51.100.2") == 429


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("proxy", "'proxy' is not a number of proxies"),
        ({"x_for": 1, "x_forwarded": 1}, "(unknown: x_forwarded)"),
        ({"x_for": "one"}, "is not a number of proxies nor a mapping"),
    ],
)
def test_a_bad_proxy_fix_setting_is_refused_by_name(
    database_url, tmp_path, monkeypatch, setting, message
):
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path / "instance"))
    with pytest.raises(ValueError, match=r"PROXY_FIX") as error:
        create_app({"DATABASE_URL": database_url, "PROXY_FIX": setting, "SECRET_KEY": "x"})
    assert message in str(error.value)
