"""The lead's pages: login, studies, invites, exports; raters are refused."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from annotator.db import session_scope
from annotator.models import Role, User

DATA = Path(__file__).parent / "data"


@pytest.fixture
def lead_client(app, client, runner):
    runner.invoke(args=["lead", "create", "lead@example.org", "--password", "correct horse"])
    runner.invoke(args=["study", "create", str(DATA / "small-study.toml")])
    runner.invoke(args=["items", "import", "small", str(DATA / "items.csv")])
    runner.invoke(args=["ratings", "import", "small", str(DATA / "ratings.csv")])
    response = client.post(
        "/login", data={"username": "lead@example.org", "password": "correct horse"}
    )
    assert response.status_code == 302 and response.headers["Location"].endswith("/lead/")
    return client


def test_wrong_password_is_refused(app, client, runner):
    runner.invoke(args=["lead", "create", "lead@example.org", "--password", "correct horse"])
    response = client.post("/login", data={"username": "lead@example.org", "password": "nope"})
    assert response.status_code == 401
    assert b"Unknown user or wrong password." in response.data


def test_studies_page_lists_counts(lead_client):
    page = lead_client.get("/lead/").get_data(as_text=True)
    assert "Small test study" in page
    assert "<td>4</td><td>3</td><td>12</td><td>0</td>" in page.replace("\n", "").replace(
        "      ", ""
    )


def test_study_page_and_export_download(lead_client):
    page = lead_client.get("/lead/studies/small")
    assert page.status_code == 200 and b"0-100" in page.data
    response = lead_client.get("/lead/studies/small/export?format=matrix&scale=0-5")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="small-matrix-0-5.csv"'
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [r["item_id"] for r in rows] == ["s1", "s2", "s3", "t1"]
    assert rows[0]["ann"] == "4.75"
    assert "2 of 12 human cell(s) missing" in response.headers["X-Annotator-Notes"]


def test_export_error_uses_web_words_and_keeps_the_leads_choices(lead_client):
    response = lead_client.get(
        "/lead/studies/small/export?format=alttest&benchmark=truthfulqa&complete=1"
    )
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "This export is for one scale: choose one under “Scale”." in page
    assert "--scale" not in page
    assert '<option value="alttest" selected>' in page
    assert '<option value="truthfulqa" selected>' in page
    assert 'name="complete" value="1" checked' in page
    assert (
        '<select id="scale" name="scale" aria-invalid="true" aria-describedby="export-error">'
        in page
    )


def test_export_error_for_an_unknown_choice_keeps_the_others(lead_client):
    response = lead_client.get("/lead/studies/small/export?format=matrix&scale=0-5&benchmark=nope")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "Unknown benchmark &#39;nope&#39;: choose one under “Benchmark”." in page
    assert '<option value="matrix" selected>' in page
    assert '<option value="0-5" selected>' in page


def test_invites_are_created_and_listed(lead_client):
    response = lead_client.post(
        "/lead/studies/small/invites", data={"count": "2"}, follow_redirects=True
    )
    page = response.get_data(as_text=True)
    assert "2 invite link(s) created." in page
    assert page.count("http://localhost/invite/") == 2
    bad = lead_client.post(
        "/lead/studies/small/invites", data={"count": "0"}, follow_redirects=True
    )
    assert b"Give a number of invites from 1 to 500." in bad.data


def test_unknown_study_is_404(lead_client):
    assert lead_client.get("/lead/studies/nope").status_code == 404
    assert lead_client.get("/lead/studies/nope/export?format=long").status_code == 404


@pytest.mark.parametrize(
    "path",
    ["/lead/", "/lead/studies/small", "/lead/studies/small/invites", "/lead/studies/small/export"],
)
def test_lead_pages_refuse_raters_and_anonymous_users(app, client, runner, path):
    runner.invoke(args=["study", "create", str(DATA / "small-study.toml")])
    anonymous = client.get(path)
    assert anonymous.status_code == 302 and "/login" in anonymous.headers["Location"]
    with session_scope(app) as session:
        rater = User(role=Role.RATER, rater_code="R-TEST01")
        session.add(rater)
        session.flush()
        rater_id = rater.id
    with client.session_transaction() as flask_session:
        flask_session["_user_id"] = str(rater_id)
        flask_session["_fresh"] = True
    assert client.get(path).status_code == 403
    assert client.post(path).status_code in (403, 405)


def test_login_next_only_follows_local_paths(app, client, runner):
    runner.invoke(args=["lead", "create", "lead@example.org", "--password", "correct horse"])
    form = {"username": "lead@example.org", "password": "correct horse"}
    evil = client.post("/login?next=https://evil.example/", data=form)
    assert evil.headers["Location"].endswith("/lead/")
    client.post("/logout")
    local = client.post("/login?next=/lead/studies/x", data=form)
    assert local.headers["Location"].endswith("/lead/studies/x")


def test_raters_page_counts_imported_ratings_per_scale(lead_client):
    page = lead_client.get("/lead/studies/small/raters").get_data(as_text=True)
    rows = {
        code: row
        for row in page.split("<tr>")[1:]
        for code in ("ann", "bob", "cy")
        if f"<code>{code}</code>" in row
    }
    assert set(rows) == {"ann", "bob", "cy"}
    assert "0-5: 4 imported ratings" in rows["ann"] and "0-100: 2 imported ratings" in rows["ann"]
    assert "0-5: 4 imported ratings" in rows["bob"] and "0-100" not in rows["bob"]
    assert "0-5: 2 imported ratings" in rows["cy"]
    for row in rows.values():
        assert '<span class="muted">none</span>' not in row.split("</td>")[1]
        assert "imported, no link needed" in row
