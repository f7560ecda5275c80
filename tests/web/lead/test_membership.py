"""Each study's pages only for its own team: members (owner, analyst) and admins.

The walks below take every ``/lead/studies/<slug>...`` route from the app's
URL map, so a route added later is checked without being listed here.
"""

from __future__ import annotations

import pytest
from flask import url_for

from annotator.db import session_scope
from annotator.study.studies import create_lead
from tests.conftest import DATA
from tests.web.lead.conftest import PASSWORD, csrf_token, login, snapshot

# The owners' pages: raters, their links, invites and every change. Whatever
# else a study has is for its analysts too.
OWNER_ONLY = {
    "lead.raters",
    "lead.eligible_download",
    "lead.invites",
    "lead.lift_rater_gap",
    "lead.rotate_rater_link",
    "lead.withdraw_rater_view",
    "lead.exclude_rater_view",
    "lead.include_rater_view",
    # A job's cancel and rerun: its owners' and its starter's (the walk's job is the owner's).
    "lead.job_cancel",
    "lead.job_rerun",
    "lead.judge_start",
}
# The POST routes an analyst may use: starting (or joining) a job that builds what
# they may read. They write the job tables alone.
ANALYST_POSTS = {"lead.report_start", "lead.export_start"}
JOB_TABLES = {"job", "jobresult"}

# Forms whose POST without their own fields (the walk's) is answered with the
# form again and its problems, rather than done at once or redirected.
FORM_AGAIN = {"lead.judge_start": 422}
FORM_POSTS = {(endpoint, "POST") for endpoint in FORM_AGAIN}


def study_routes(app, team, *, rater_id: int | None = None) -> list[tuple[str, str, str]]:
    """(endpoint, method, URL) of every GET and POST route of study ``team.slug``."""
    values = {
        "slug": team.slug,
        "rater_id": rater_id or team.rater_id,
        "version": 1,
        "job_id": team.job_id,
    }
    routes = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if not rule.rule.startswith("/lead/studies/<slug>"):
                continue
            # A route with an argument not in `values` fails here: give it one.
            url = url_for(rule.endpoint, **{name: values[name] for name in rule.arguments})
            for method in sorted(rule.methods & {"GET", "POST"}):
                routes.append((rule.endpoint, method, url))
    # The pages, fragments, exports, downloads and reports of a study today.
    assert len({endpoint for endpoint, _, _ in routes}) >= 14
    return routes


def _request(client, method: str, url: str, token: str, **form):
    if method == "GET":
        return client.get(url)
    return client.post(url, data={"csrf_token": token, **form})


# A POST that would do its change at once: confirmed, with a reason and a count.
CONFIRMED = {"confirmed": "yes", "reason": "a reason", "count": "3"}


def test_a_lead_outside_the_team_gets_404_everywhere_and_changes_nothing(team):
    outsider = login(team.app, "outsider@example.org")
    token = csrf_token(outsider, "/lead/")
    before = snapshot(team.app)
    for endpoint, method, url in study_routes(team.app, team):
        response = _request(outsider, method, url, token, **CONFIRMED)
        assert response.status_code == 404, (endpoint, method, response.status_code)
        assert "Small test study" not in response.get_data(as_text=True)
    # htmx's dashboard fragment too.
    assert outsider.get("/lead/studies/small", headers={"HX-Request": "true"}).status_code == 404
    assert snapshot(team.app) == before


@pytest.mark.parametrize("email", ["owner@example.org", "admin@example.org"])
def test_the_owner_and_the_admin_reach_every_route(team, email):
    """The walk's addresses and CSRF token are valid: the 404s above are refusals."""
    lead = login(team.app, email)
    token = csrf_token(lead, "/lead/")
    for endpoint, method, url in study_routes(team.app, team):
        # Unconfirmed: a change asks first; only an invite is made at once.
        response = _request(lead, method, url, token, count="1")
        expected = (FORM_AGAIN[endpoint],) if (endpoint, method) in FORM_POSTS else (200, 302)
        assert response.status_code in expected, (endpoint, method, response.status_code)


def test_an_analyst_reads_but_gets_403_on_the_owners_routes_and_changes_nothing(team):
    analyst = login(team.app, "analyst@example.org")
    token = csrf_token(analyst, "/lead/")
    routes = study_routes(team.app, team)
    # No changes of the study's data: every route that takes a POST is an owner's,
    # but for starting the jobs that build what an analyst reads.
    posts = {endpoint for endpoint, method, _ in routes if method == "POST"}
    assert posts <= OWNER_ONLY | ANALYST_POSTS
    before = snapshot(team.app)
    for endpoint, method, url in routes:
        response = _request(analyst, method, url, token, **CONFIRMED)
        # A started job sends the lead to its page.
        expected = 403 if endpoint in OWNER_ONLY else 302 if endpoint in ANALYST_POSTS else 200
        assert response.status_code == expected, (endpoint, method, response.status_code)
    # The role is checked before the rater: an unknown rater gets the same 403.
    for endpoint, method, url in study_routes(team.app, team, rater_id=999_999):
        if endpoint in OWNER_ONLY:
            response = _request(analyst, method, url, token, **CONFIRMED)
            assert response.status_code == 403, (endpoint, method)
    after = snapshot(team.app)
    assert {t: rows for t, rows in after.items() if t not in JOB_TABLES} == {
        t: rows for t, rows in before.items() if t not in JOB_TABLES
    }
    # The analyst's report and export jobs are the new files; the owner's job is untouched
    # (the study page keeps its dashboard as a job's result too).
    files = [row.kind for row in after["job"] if row.kind != "dashboard"]
    assert files == [row.kind for row in before["job"] if row.kind != "dashboard"] + [
        "report",
        "export",
    ]
    assert after["job"][0] == before["job"][0]


def test_the_study_page_shows_the_raters_section_to_owners_only(team):
    owner_page = login(team.app, "owner@example.org").get("/lead/studies/small")
    analyst_page = login(team.app, "analyst@example.org").get("/lead/studies/small")
    assert b"/lead/studies/small/raters" in owner_page.data
    assert b"/lead/studies/small/invites" in owner_page.data
    assert analyst_page.status_code == 200
    assert b"/lead/studies/small/raters" not in analyst_page.data
    assert b"/lead/studies/small/invites" not in analyst_page.data
    assert b"You are an analyst of this study" in analyst_page.data


@pytest.mark.parametrize(
    ("email", "shown"),
    [
        ("outsider@example.org", ["other"]),
        ("analyst@example.org", ["small"]),
        ("owner@example.org", ["small"]),
        ("admin@example.org", ["small", "other"]),
    ],
)
def test_the_study_list_shows_a_leads_own_studies(team, email, shown):
    page = login(team.app, email).get("/lead/").get_data(as_text=True)
    for slug in ("small", "other"):
        assert (f"<code>{slug}</code>" in page) == (slug in shown), slug


def test_a_study_nobody_was_given_is_the_admins_alone(team, tmp_path):
    text = (DATA / "small-study.toml").read_text().replace('slug = "small"', 'slug = "nobodys"')
    path = tmp_path / "nobodys.toml"
    path.write_text(text)
    # Several leads and no --owner: the study has no member yet.
    result = team.app.test_cli_runner().invoke(args=["study", "create", str(path)])
    assert result.exit_code == 0, result.output
    assert "No owner yet: only the admins see it" in result.output
    assert login(team.app, "admin@example.org").get("/lead/studies/nobodys").status_code == 200
    for email in ("owner@example.org", "analyst@example.org", "outsider@example.org"):
        assert login(team.app, email).get("/lead/studies/nobodys").status_code == 404


def test_a_lead_without_studies_is_told_how_to_get_one(csrf_app):
    with csrf_app.app_context(), session_scope(csrf_app) as session:
        create_lead(session, "admin@example.org", PASSWORD)
        create_lead(session, "new@example.org", PASSWORD)
    page = login(csrf_app, "new@example.org").get("/lead/").get_data(as_text=True)
    assert "No study has been shared with you yet" in page
    assert "annotator study share STUDY new@example.org --role owner" in page
    page = login(csrf_app, "admin@example.org").get("/lead/").get_data(as_text=True)
    assert "No study yet. Create one from a study file" in page
