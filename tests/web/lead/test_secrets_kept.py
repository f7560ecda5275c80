"""Secrets are never stored or shown (issue 36, findings 1 and 8).

A fake endpoint echoes the key it was sent (a canary) in the bodies and headers of
its 400, 422, 500, 401 and 404 replies and in a reply's text; after judge runs from
the web, the canary is in no table, no file of the instance folder, no export, no
page and no log line; nor is the endpoint's address in a page an analyst reads.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import select as sa_select
from sqlmodel import Session, SQLModel, select

from annotator.db import get_engine, session_scope
from annotator.jobs import Job
from annotator.models import JudgeFailure
from annotator.study.studies import create_lead
from tests.conftest import DATA
from tests.fake_openai import SENT_KEY, Reply, echo_key_reply
from tests.web.lead.conftest import PASSWORD, csrf_token, login

CANARY = "sk-canary-7f3a9c1e5b2d4f60a8e1"
CANARY_VARIABLE = "ANNOTATOR_TEST_CANARY_KEY"
SECRET = "session-secret-canary-5e1d9a"
# What a cut secret becomes (annotator.redaction.REDACTED).
REDACTED = "[redacted]"
# Each item's first prompt gets one of these, in the order the items are first asked.
PLAN = [400, 422, 500, 200]


def _every_row(app) -> str:
    with get_engine(app).connect() as connection:
        return repr(
            {
                table.name: connection.execute(sa_select(table)).all()
                for table in SQLModel.metadata.sorted_tables
            }
        )


def _every_file(folder: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.fixture
def echoing(make_app, fake_endpoint, monkeypatch, tmp_path):
    """A study whose owner and analyst use an endpoint that echoes the key it gets."""
    monkeypatch.setenv(CANARY_VARIABLE, CANARY)
    mode = {"status": None}
    plan: dict[str, int] = {}

    def reply(request, n):
        if mode["status"] is not None:
            return echo_key_reply(mode["status"])
        prompt = request["messages"][-1]["content"]
        status = plan.setdefault(prompt, PLAN[len(plan) % len(PLAN)])
        if status == 200:
            # A reply whose text quotes the key (an endpoint that echoes its request).
            return Reply(content=f"I was called with {SENT_KEY}")
        return echo_key_reply(status)

    endpoint = fake_endpoint(reply)
    endpoints = {"hosted": {"base_url": endpoint.url, "api_key_env": CANARY_VARIABLE}}
    app = make_app(WTF_CSRF_ENABLED=True, JUDGE_ENDPOINTS=endpoints, SECRET_KEY=SECRET)
    with app.app_context(), session_scope(app) as session:
        for name in ("owner", "analyst"):
            create_lead(session, f"{name}@example.org", PASSWORD)
    runner = app.test_cli_runner()
    for args in (
        ["study", "create", DATA / "small-study.toml", "--owner", "owner@example.org"],
        ["items", "import", "small", DATA / "items.csv"],
        ["ratings", "import", "small", DATA / "ratings.csv"],
        ["study", "share", "small", "analyst@example.org", "--role", "analyst"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return app, endpoint, mode, tmp_path / "instance"


def _start(client, scale: str) -> str:
    token = csrf_token(client, "/lead/studies/small/judge")
    form = {"csrf_token": token, "endpoint": "hosted", "model": "m", "scales": [scale]}
    response = client.post(
        "/lead/studies/small/judge", data={**form, "runs": "1", "temperature": "1"}
    )
    assert response.status_code == 303, response.get_data(as_text=True)
    return response.headers["Location"]


def test_a_key_echoed_by_the_endpoint_is_stored_and_shown_nowhere(echoing, caplog):
    app, endpoint, mode, instance = echoing
    caplog.set_level(logging.INFO)
    # The client libraries' debug lines print the replies' headers.
    for name in ("openai", "httpx", "httpcore", "annotator", "huey"):
        caplog.set_level(logging.DEBUG, logger=name)
    owner = login(app, "owner@example.org")
    # 400, 422, 500 and a reply quoting the key: four failures, each item's own.
    failures_run = _start(owner, "0-5")
    # 401 (the key refused) and 404 (the address or model wrong): the run stops.
    mode["status"] = 401
    refused_run = _start(owner, "0-100")
    mode["status"] = 404
    unknown_run = _start(owner, "0-100")
    # An error object in a 200 reply (what a streaming server sends as its error
    # event, here whole): four more failures, of replies without a score.
    mode["status"] = 200
    error_in_reply_run = _start(owner, "0-5")
    # The endpoint did get the key, and echoed it.
    assert set(endpoint.keys) == {f"Bearer {CANARY}"}
    with Session(get_engine(app)) as session:
        failures = session.exec(select(JudgeFailure)).all()
        jobs = session.exec(select(Job).order_by(Job.id)).all()
    errors = {f.error.split(" - ")[0] for f in failures}
    assert len(failures) == 8 and errors >= {
        "BadRequestError: Error code: 400",
        "UnprocessableEntityError: Error code: 422",
        "InternalServerError: Error code: 500",
    }
    assert any(f.raw_reply == f"I was called with {REDACTED}" for f in failures)
    refusals = [f for f in failures if "Error code" in f.error]
    assert len(refusals) == 3 and all(REDACTED in f.error for f in refusals)
    assert [job.status for job in jobs] == ["done", "failed", "failed", "done"]
    assert "the server refused the API key" in jobs[1].error and REDACTED in jobs[1].error
    assert "does not know model 'm'" in jobs[2].error
    # No table, file, export, page or log line holds the key, nor the session secret.
    assert CANARY not in _every_row(app) and SECRET not in _every_row(app)
    for path, data in _every_file(instance).items():
        assert CANARY.encode() not in data and SECRET.encode() not in data, path
    analyst = login(app, "analyst@example.org")
    pages = [
        failures_run,
        refused_run,
        unknown_run,
        error_in_reply_run,
        "/lead/studies/small",
        "/lead/studies/small/judge-failures",
    ]
    pages += [f"/lead/studies/small/export?format={f}&scale=0-5" for f in ("long", "matrix")]
    for client in (owner, analyst):
        for url in pages:
            response = client.get(url)
            assert response.status_code == 200, url
            text = response.get_data(as_text=True)
            assert CANARY not in text and SECRET not in text, url
    cli = app.test_cli_runner().invoke(args=["judge", "failures", "small", "--json"])
    assert cli.exit_code == 0 and "Error code: 400" in cli.output and CANARY not in cli.output
    assert CANARY not in caplog.text and SECRET not in caplog.text
    # The log did see the refusals (what a line about them says is not empty).
    assert any(str(endpoint.url) in record.getMessage() for record in caplog.records)
    # Members read the endpoint's name; its address is in the log only.
    text = analyst.get(unknown_run).get_data(as_text=True)
    assert (
        "the address of the endpoint &#39;hosted&#39; is wrong" in text and endpoint.url not in text
    )
    assert "127.0.0.1" not in text
