"""Fixtures of the lead pages' tests: a study shared with a team of leads."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select as sa_select
from sqlmodel import SQLModel, select

from annotator.db import get_engine, session_scope
from annotator.jobs import Job, JobResult, JobStatus
from annotator.models import Role, StudyRole, User
from annotator.study.members import share_study
from annotator.study.studies import create_invites, create_lead, create_study, get_study
from annotator.study.studyfile import parse_study_file
from tests.conftest import DATA

PASSWORD = "team-password-1"
_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(client: FlaskClient, path: str) -> str:
    """The CSRF token of the form on the page at ``path`` (the session's token)."""
    page = client.get(path).get_data(as_text=True)
    match = _TOKEN.search(page)
    assert match, f"no csrf_token on {path}"
    return match.group(1)


def login(app, email: str) -> FlaskClient:
    """A client logged in as the lead ``email``, through the login form and its CSRF token."""
    client = app.test_client()
    response = client.post(
        "/login",
        data={"username": email, "password": PASSWORD, "csrf_token": csrf_token(client, "/login")},
    )
    assert response.status_code == 302, response.get_data(as_text=True)
    return client


def snapshot(app) -> dict[str, list]:
    """Every row of every table, to show that a request changed nothing."""
    with get_engine(app).connect() as connection:
        return {
            table.name: connection.execute(
                sa_select(table).order_by(*table.primary_key.columns)
            ).all()
            for table in SQLModel.metadata.sorted_tables
        }


@dataclass
class Team:
    app: object
    slug: str
    rater_id: int
    job_id: int


@pytest.fixture
def csrf_app(make_app):
    """An app that checks CSRF tokens, as in production."""
    return make_app(WTF_CSRF_ENABLED=True)


@pytest.fixture
def team(csrf_app) -> Team:
    """Study ``small`` (items, imported ratings, an invite, a rater with a return link)
    with its owner ``owner@`` and analyst ``analyst@``; ``outsider@`` owns study
    ``other`` only; ``admin@`` is the first lead, so the admin."""
    runner = csrf_app.test_cli_runner()
    with csrf_app.app_context(), session_scope(csrf_app) as session:
        for name in ("admin", "owner", "analyst", "outsider"):
            create_lead(session, f"{name}@example.org", PASSWORD)
    for args in (
        ["study", "create", DATA / "small-study.toml", "--owner", "owner@example.org"],
        ["items", "import", "small", DATA / "items.csv"],
        ["ratings", "import", "small", DATA / "ratings.csv"],
        ["study", "share", "small", "analyst@example.org", "--role", "analyst"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    other = (DATA / "small-study.toml").read_text().replace('slug = "small"', 'slug = "other"')
    with session_scope(csrf_app) as session:
        study = get_study(session, "small")
        create_invites(session, study, 1)
        rater = session.exec(
            select(User).where(User.study_id == study.id, User.role == Role.RATER)
        ).first()
        rater.return_token = "a-return-token-of-the-rater-0123456789abcdefgh"
        session.add(rater)
        rater_id = rater.id
        other_study = create_study(session, parse_study_file(other), source_toml=other)
        # A finished report job of the owner's (the job pages' walk needs one).
        owner = session.exec(select(User).where(User.email == "owner@example.org")).one()
        job = Job(
            study_id=study.id,
            kind="report",
            params_key="0" * 64,
            data_version="0" * 64,
            status=JobStatus.DONE,
            result_filename="small-report.html",
            result_mimetype="text/html",
            created_by=owner.id,
        )
        session.add(job)
        session.flush()
        session.add(JobResult(job_id=job.id, data=b"<html>report</html>"))
        job_id = job.id
        outsider = session.exec(select(User).where(User.email == "outsider@example.org")).one()
        share_study(session, other_study, outsider, StudyRole.OWNER, actor=None, via="cli")
    return Team(app=csrf_app, slug="small", rater_id=rater_id, job_id=job_id)
