"""Sessions end when they should (issue 27): logging out, a new password and a
password reset end every session and remember cookie of the account, and
logging in costs one hash check whether or not the account exists."""

from __future__ import annotations

from unittest import mock

import pytest
from sqlmodel import Session, select
from werkzeug import security

from annotator.db import get_engine
from annotator.models import User
from annotator.web.auth.passwords import dummy_hash
from tests.conftest import LEAD_EMAIL, LEAD_PASSWORD

from .conftest import CONFIRMED

REMEMBER = "remember_token"
PASSWORD = "a long password"


def copy_cookie(app, source, name: str):
    """A new browser holding only ``source``'s cookie ``name`` (a copied cookie)."""
    thief = app.test_client()
    thief.set_cookie(name, source.get_cookie(name).value)
    return thief


def _user(app, user_id: int) -> User:
    with Session(get_engine(app)) as session:
        return session.get(User, user_id)


def test_a_lead_cookie_saved_before_logout_is_refused_after_it(app, lead_client):
    copied = copy_cookie(app, lead_client, "session")
    assert copied.get("/lead/").status_code == 200
    assert lead_client.post("/logout").status_code == 302
    response = copied.get("/lead/")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_a_password_reset_ends_the_leads_sessions(app, lead_client, runner):
    copied = copy_cookie(app, lead_client, "session")
    result = runner.invoke(
        args=["lead", "reset-password", LEAD_EMAIL, "--password", "another password"]
    )
    assert result.exit_code == 0, result.output
    for ended in (copied, lead_client):
        response = ended.get("/lead/")
        assert response.status_code == 302 and "/login" in response.headers["Location"]
    fresh = app.test_client()
    fresh.post("/login", data={"username": LEAD_EMAIL, "password": "another password"})
    assert fresh.get("/lead/").status_code == 200


def test_a_raters_remember_cookie_is_refused_after_logout(app, client, rater):
    remembered = copy_cookie(app, client, REMEMBER)
    assert remembered.get("/rate/").status_code == 200
    assert client.post("/logout", data=CONFIRMED).status_code == 302
    assert remembered.get("/rate/").status_code == 302
    assert client.get("/rate/").status_code == 302


def test_changing_a_password_asks_for_the_current_one(app, client, rater):
    assert (
        client.post("/rate/account", data={"password": PASSWORD, "confirm": PASSWORD}).status_code
        == 302
    )
    first = _user(app, rater).password_hash
    form = client.get("/rate/account").text
    assert "Your current password" in form and 'autocomplete="current-password"' in form
    new = "a newer password"
    for current in ("", "not the password"):
        response = client.post(
            "/rate/account", data={"current": current, "password": new, "confirm": new}
        )
        assert response.status_code == 422
        assert "current password is wrong" in response.text
        assert _user(app, rater).password_hash == first


def test_a_new_password_ends_every_other_session(app, client, rater):
    other = app.test_client()
    assert other.get(f"/r/{_user(app, rater).return_token}").status_code == 302
    remembered = copy_cookie(app, client, REMEMBER)
    client.post("/rate/account", data={"password": PASSWORD, "confirm": PASSWORD})
    for ended in (other, remembered):
        assert ended.get("/rate/").status_code == 302
    # This browser stays logged in, its remember cookie too.
    assert client.get("/rate/").status_code == 200
    assert copy_cookie(app, client, REMEMBER).get("/rate/").status_code == 200


# ------------------------------------------------------------ login timing


@pytest.fixture
def hash_checks():
    """Count the password hash checks of every code path (a spy, not a timer)."""
    with mock.patch.object(
        security, "check_password_hash", wraps=security.check_password_hash
    ) as spy:
        yield spy


@pytest.mark.parametrize(
    "username",
    [LEAD_EMAIL, "nobody@example.org", "R-NOSUCH"],
    ids=["lead", "unknown-email", "unknown-code"],
)
def test_every_failed_login_checks_one_hash(app, lead_client, hash_checks, username):
    response = app.test_client().post(
        "/login", data={"username": username, "password": "wrong password"}
    )
    assert response.status_code == 401
    assert hash_checks.call_count == 1


def test_a_rater_without_a_password_costs_one_hash_check(app, client, rater, hash_checks):
    code = _user(app, rater).rater_code
    response = app.test_client().post("/login", data={"username": code, "password": "guess it"})
    assert response.status_code == 401 and hash_checks.call_count == 1


def test_the_dummy_hash_has_the_hasher_and_cost_of_real_ones(app, lead_client):
    with Session(get_engine(app)) as session:
        real = session.exec(select(User).where(User.email == LEAD_EMAIL)).one().password_hash
    # The method field names the hasher and its cost (e.g. scrypt:32768:8:1); the
    # app in context chose it (PASSWORD_HASH_METHOD).
    with app.app_context():
        assert dummy_hash().split("$")[0] == real.split("$")[0]
        assert not security.check_password_hash(dummy_hash(), LEAD_PASSWORD)
