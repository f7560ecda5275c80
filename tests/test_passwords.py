"""The password hash: scrypt in production, whatever the tests set for speed.

Every other test runs with the cheap ``PASSWORD_HASH_METHOD`` of tests/conftest.py;
these check that an app configured as a deployment is (no setting, no test config)
hashes with werkzeug's scrypt, and that a lead logs in with such a hash.
"""

from __future__ import annotations

import re

from sqlmodel import SQLModel, select
from werkzeug.security import check_password_hash

from annotator import create_app
from annotator.db import get_engine, session_scope
from annotator.models import User
from annotator.study.studies import create_lead
from annotator.web.auth.passwords import dummy_hash
from tests.conftest import CHEAP_PASSWORD_HASH, LEAD_EMAIL, LEAD_PASSWORD

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def test_a_deployed_app_hashes_with_scrypt_and_its_lead_logs_in(
    database_url, tmp_path, monkeypatch
):
    # As `annotator serve` builds it: settings from the environment only.
    monkeypatch.delenv("ANNOTATOR_PASSWORD_HASH_METHOD")
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path / "instance"))
    monkeypatch.setenv("ANNOTATOR_DATABASE_URL", database_url)
    app = create_app()
    try:
        assert app.config.get("PASSWORD_HASH_METHOD") is None
        SQLModel.metadata.create_all(get_engine(app))
        with app.app_context(), session_scope(app) as session:
            create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
        with app.app_context(), session_scope(app) as session:
            stored = session.exec(select(User).where(User.email == LEAD_EMAIL)).one()
            # werkzeug's default: "scrypt:32768:8:1$salt$hash".
            assert stored.password_hash.startswith("scrypt:32768:8:1$")
            assert check_password_hash(stored.password_hash, LEAD_PASSWORD)
            # Unknown accounts cost the same: the dummy hash is scrypt too.
            assert dummy_hash().startswith("scrypt:32768:8:1$")

        client = app.test_client()
        token = TOKEN.search(client.get("/login").get_data(as_text=True)).group(1)
        wrong = {"username": LEAD_EMAIL, "password": "not the password", "csrf_token": token}
        assert client.post("/login", data=wrong).status_code == 401
        right = {**wrong, "password": LEAD_PASSWORD}
        response = client.post("/login", data=right)
        assert response.status_code == 302 and response.headers["Location"].endswith("/lead/")
        assert client.get("/lead/").status_code == 200
    finally:
        get_engine(app).dispose()


def test_the_tests_cheap_hash_is_used_by_every_path(app, runner, db_session):
    """The setting reaches the CLI's leads, the web's dummy hash and a reset."""
    method = CHEAP_PASSWORD_HASH.rsplit(":", 1)[0] + ":1$"
    for args in (
        ["lead", "create", "cli@example.org", "--password", LEAD_PASSWORD],
        ["lead", "reset-password", "cli@example.org", "--password", "another password"],
    ):
        result = runner.invoke(args=args)
        assert result.exit_code == 0, result.output
        lead = db_session.exec(select(User).where(User.email == "cli@example.org")).one()
        db_session.refresh(lead)
        assert lead.password_hash.startswith(method), lead.password_hash
    assert check_password_hash(lead.password_hash, "another password")
    with app.app_context():
        assert dummy_hash().startswith(method)
