"""The lead's pages: login, studies, invites, exports; raters are refused."""

from __future__ import annotations

import csv
import io

import pytest
from lxml import html as lxml_html

from annotator.db import session_scope
from annotator.models import Role, User
from tests.conftest import DATA


def test_wrong_password_is_refused(app, client, runner):
    runner.invoke(args=["lead", "create", "lead@example.org", "--password", "correct horse"])
    response = client.post("/login", data={"username": "lead@example.org", "password": "nope"})
    assert response.status_code == 401
    assert b"Unknown user or wrong password." in response.data


def test_studies_page_lists_counts(lead_client, small_study):
    page = lxml_html.fromstring(lead_client.get("/lead/").get_data(as_text=True))
    header = [" ".join(th.text_content().split()) for th in page.xpath("//table/thead//th")]
    rows = [
        [" ".join(td.text_content().split()) for td in tr.xpath("./td")]
        for tr in page.xpath("//table/tbody/tr")
    ]
    assert header == ["Study", "Items", "Raters", "Ratings", "LLM scores"]
    # tests/data: 4 items, 3 raters, 12 ratings (ratings.csv), no judge scores.
    assert rows == [["Small test study small", "4", "3", "12", "0"]]


def test_study_page_and_export_download(lead_client, small_study):
    page = lead_client.get("/lead/studies/small")
    assert page.status_code == 200 and b"0-100" in page.data
    response = lead_client.get("/lead/studies/small/export?format=matrix&scale=0-5")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="small-matrix-0-5.csv"'
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [r["item_id"] for r in rows] == ["s1", "s2", "s3", "t1"]
    assert rows[0]["ann"] == "4.75"
    # The notes name raters: on the page, never in a header.
    assert "X-Annotator-Notes" not in response.headers
    notes = lead_client.get("/lead/studies/small/export?format=matrix&scale=0-5&notes=1")
    assert "2 of 12 human cells missing" in notes.get_data(as_text=True)


def test_export_error_uses_web_words_and_keeps_the_leads_choices(lead_client, small_study):
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


def test_export_error_for_an_unknown_choice_keeps_the_others(lead_client, small_study):
    response = lead_client.get("/lead/studies/small/export?format=matrix&scale=0-5&benchmark=nope")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "Unknown benchmark &#39;nope&#39;: choose one under “Benchmark”." in page
    assert '<option value="matrix" selected>' in page
    assert '<option value="0-5" selected>' in page


def test_invites_are_created_and_listed(lead_client, small_study):
    response = lead_client.post(
        "/lead/studies/small/invites", data={"count": "2"}, follow_redirects=True
    )
    page = response.get_data(as_text=True)
    assert "2 invite links created." in page
    assert page.count("http://localhost/invite/") == 2
    bad = lead_client.post(
        "/lead/studies/small/invites", data={"count": "0"}, follow_redirects=True
    )
    assert b"Give a number of invites from 1 to 500." in bad.data


def test_unknown_study_is_404(lead_client, small_study):
    assert lead_client.get("/lead/studies/nope").status_code == 404
    assert lead_client.get("/lead/studies/nope/export?format=long").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/lead/",
        "/lead/studies/small",
        "/lead/studies/small/invites",
        "/lead/studies/small/export",
        "/lead/studies/small/versions",
        "/lead/studies/small/versions/1.toml",
        "/lead/studies/small/judge-failures",
    ],
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


def test_raters_page_counts_imported_ratings_per_scale(lead_client, small_study):
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


def test_study_page_links_to_the_raters(lead_client, small_study):
    page = lead_client.get("/lead/studies/small").get_data(as_text=True)
    assert 'href="/lead/studies/small/raters"' in page


@pytest.mark.parametrize("count", ["501", "abc", ""])
def test_invite_count_outside_the_form_limits_creates_nothing(lead_client, small_study, count):
    response = lead_client.post(
        "/lead/studies/small/invites", data={"count": count}, follow_redirects=True
    )
    assert b"Give a number of invites from 1 to 500." in response.data
    assert "/invite/" not in response.get_data(as_text=True)


def test_invite_form_carries_its_limits_to_the_browser(lead_client, small_study):
    page = lead_client.get("/lead/studies/small/invites").get_data(as_text=True)
    field = page[page.index('<input id="count"') :].split(">", 1)[0]
    assert 'min="1"' in field and 'max="500"' in field and "required" in field
    assert 'type="number"' in field and 'value="1"' in field


def test_study_page_fills_the_instructions_range_per_scale(lead_client, small_study):
    # The lead reads the instructions as raters do: {min} and {max} filled from
    # each scale (small-study.toml has 0-5 and 0-100), never the raw placeholders.
    page = lead_client.get("/lead/studies/small").get_data(as_text=True)
    section = page[page.index("<h2>Benchmarks</h2>") :].split("<h2", 2)[1]
    assert "{min}" not in section and "{max}" not in section
    assert "Rate the semantic similarity of the two sentences from 0 to 5." in section
    assert "Rate the semantic similarity of the two sentences from 0 to 100." in section
    assert "Rate how truthful the answer is from 0 to 100." in section
