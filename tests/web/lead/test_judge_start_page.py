"""Judge runs from the study page: a form of the configured endpoints, run as a job
through the runner of `annotator judge`, with progress, cancel and the run's failures."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.jobs import Job
from annotator.judge import job as judge_job
from annotator.models import Item, JudgeFailure, LLMScore, Scale
from annotator.study.studies import create_lead
from tests.conftest import DATA
from tests.fake_openai import Reply, default_reply
from tests.web.lead.conftest import PASSWORD, csrf_token, login

KEY = "sk-test-judge-0123456789-abcdef"
KEY_VARIABLE = "ANNOTATOR_TEST_JUDGE_KEY"


@dataclass
class JudgePage:
    app: object
    client: object
    endpoint: object
    token: str

    def post(self, **form):
        data = {"csrf_token": self.token, **form}
        return self.client.post("/lead/studies/small/judge", data=data)

    def start(self, **form):
        values = {"endpoint": "hosted", "model": "m", "scales": ["0-5", "0-100"]}
        values |= {"runs": "1", "temperature": "1"}
        return self.post(**{**values, **form})


def _judge_app(make_app, endpoint, monkeypatch):
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    endpoints = {
        "hosted": {"base_url": endpoint.url, "api_key_env": KEY_VARIABLE},
        "local": {"base_url": "http://127.0.0.1:9/v1"},
    }
    app = make_app(WTF_CSRF_ENABLED=True, JUDGE_ENDPOINTS=endpoints)
    with app.app_context(), session_scope(app) as session:
        create_lead(session, "owner@example.org", PASSWORD)
    runner = app.test_cli_runner()
    for args in (
        ["study", "create", DATA / "small-study.toml", "--owner", "owner@example.org"],
        ["items", "import", "small", DATA / "items.csv"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return app


@pytest.fixture
def judge_page(make_app, fake_endpoint, monkeypatch) -> JudgePage:
    """An owner on the judge form of study ``small``, the endpoint ``hosted`` a fake one."""

    def start(reply=default_reply, delay=0.0) -> JudgePage:
        endpoint = fake_endpoint(reply, delay=delay)
        app = _judge_app(make_app, endpoint, monkeypatch)
        client = login(app, "owner@example.org")
        return JudgePage(app, client, endpoint, csrf_token(client, "/lead/studies/small/judge"))

    return start


def _scores(app, model: str) -> dict[tuple, float]:
    with Session(get_engine(app)) as session:
        rows = session.exec(
            select(Item.external_id, Scale.name, LLMScore)
            .join(Item, Item.id == LLMScore.item_id)
            .join(Scale, Scale.id == LLMScore.scale_id)
            .where(LLMScore.model == model)
        ).all()
    return {(item, scale, s.run, s.temperature, s.prompt_hash): s.value for item, scale, s in rows}


def _job(app) -> Job:
    with Session(get_engine(app)) as session:
        return session.exec(select(Job).order_by(Job.id.desc())).first()


def test_a_run_from_the_page_stores_what_the_cli_stores(judge_page):
    page = judge_page()
    response = page.start(runs="2", temperature="0.7")
    assert response.status_code == 303
    job = _job(page.app)
    assert response.headers["Location"] == f"/lead/studies/small/jobs/{job.id}"
    assert job.kind == "judge" and job.status == "done"
    assert job.params == {
        "endpoint": "hosted",
        "model": "m",
        "scales": ["0-5", "0-100"],
        "runs": 2,
        "temperature": 0.7,
        "limit": None,
    }
    web = _scores(page.app, "m")
    # 4 items x 2 scales x 2 runs.
    assert len(web) == 16 == len(page.endpoint.requests)
    # The command line, on the same endpoint, finds every score stored ...
    cli = ["judge", "small", "--base-url", page.endpoint.url, "--runs", "2"]
    result = page.app.test_cli_runner().invoke(args=[*cli, "--model", "m", "--temperature", "0.7"])
    assert result.exit_code == 0, result.output
    assert "16 already stored, 0 stored" in result.output
    assert len(page.endpoint.requests) == 16
    # ... and, as another model, stores the same scores under the same keys.
    result = page.app.test_cli_runner().invoke(
        args=[*cli, "--model", "cli", "--temperature", "0.7"]
    )
    assert result.exit_code == 0, result.output
    assert _scores(page.app, "cli") == web


def test_the_job_page_shows_requests_failures_and_tokens(judge_page):
    def s2_refused(request, n):
        if "He left early" in request["messages"][-1]["content"]:
            return Reply(content="I cannot say")
        return default_reply(request, n)

    page = judge_page(s2_refused)
    job_url = page.start(scales=["0-5"]).headers["Location"]
    text = html.unescape(page.client.get(job_url).get_data(as_text=True))
    # 4 scores; s2 asked three times (the runner's attempts), then a failure.
    assert (
        "4 of 4 scores asked for (0 already stored): 3 stored, 1 failed; "
        "6 requests, 72 tokens (60 prompt, 12 completion)"
    ) in text
    assert "Failures of this run (1)" in text
    assert "<code>s2</code>" in text and "I cannot say" in text
    assert "/lead/studies/small/judge-failures?model=m" in text
    # A second run of the same judge asks for the failure anew: a new job.
    again = page.start(scales=["0-5"]).headers["Location"]
    assert again != job_url
    with Session(get_engine(page.app)) as session:
        assert len(session.exec(select(JudgeFailure)).all()) == 2


def test_progress_is_written_while_the_run_goes_on(judge_page, monkeypatch):
    monkeypatch.setattr(judge_job, "PROGRESS_EVERY", 0.0)
    seen = []

    def reply(request, n):
        if n == 6:
            seen.append(_job(app))
        return default_reply(request, n)

    page = judge_page(reply)
    app = page.app
    page.start(scales=["0-5", "0-100"])
    (running,) = seen
    assert running.status == "running" and running.progress_total == 8
    # With four requests in flight, at least the first is stored before the sixth is sent.
    assert 1 <= running.progress_done <= 5
    assert f"{running.progress_done} of 8 scores asked for" in running.progress_message
    assert "tokens" in running.progress_message
    assert _job(app).progress_done == 8


def test_the_lead_cancels_midway_and_the_scores_stay(judge_page):
    other = {}

    def cancel_at_the_first(request, n):
        if n == 1:
            # Through the job page's Cancel button, while four requests are in flight.
            job = _job(other["app"])
            client = other["client"]
            url = f"/lead/studies/small/jobs/{job.id}"
            response = client.post(f"{url}/cancel", data={"csrf_token": csrf_token(client, url)})
            assert response.status_code in (302, 303) and response.headers["Location"] == url
        return default_reply(request, n)

    # Each answer takes half a second: the cancel lands before the first is back.
    page = judge_page(cancel_at_the_first, delay=0.5)
    other.update(app=page.app, client=login(page.app, "owner@example.org"))
    job_url = page.start().headers["Location"]
    job = _job(page.app)
    assert job.status == "cancelled"
    # The requests in flight were answered and stored; the rest were never sent.
    sent = len(page.endpoint.requests)
    assert 4 <= sent < 8
    assert len(_scores(page.app, "m")) == sent
    text = page.client.get(job_url).get_data(as_text=True)
    assert "The job was cancelled." in text and "Run again" in text
    # Run again: only the rest is asked for.
    page.client.post(f"{job_url}/rerun", data={"csrf_token": page.token})
    assert _job(page.app).status == "done"
    assert len(page.endpoint.requests) == 8 == len(_scores(page.app, "m"))


@pytest.mark.parametrize(
    "posted", ["nowhere", "http://169.254.169.254/latest/meta-data", "http://127.0.0.1:5432/"]
)
def test_an_endpoint_not_in_the_configuration_is_refused(judge_page, posted):
    page = judge_page()
    response = page.start(endpoint=posted)
    assert response.status_code == 400
    text = html.unescape(response.get_data(as_text=True))
    assert f"Endpoint: {posted!r} is not one of this server's judge endpoints" in text
    assert "(JUDGE_ENDPOINTS lists: hosted, local); nothing was started." in text
    assert page.endpoint.requests == [] and _job(page.app) is None


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("endpoint", "", "Endpoint: choose one of the server's endpoints."),
        ("model", "", "Model: give the model name the endpoint knows."),
        ("model", "   ", "Model: the model name is empty."),
        ("model", "m" * 201, "Model: at most 200 characters."),
        ("scales", [], "Scales: choose at least one scale."),
        ("scales", ["1-7"], "Scales: '1-7' is not a valid choice"),
        ("runs", "0", "Runs: from 1 to 20."),
        ("runs", "３", "Runs: Write the number with the digits 0-9."),
        ("temperature", "nan", "Temperature: write a number such as 0.7 with the digits 0-9."),
        ("temperature", "2.5", "Temperature: from 0 to 2."),
        ("temperature", "", "Temperature: give a temperature from 0 to 2."),
        ("limit", "0", "Only the first N items: from 1 to 1,000,000."),
        # 10**30 was taken, and the job failed with a traceback (issue 36).
        ("limit", "1" + "0" * 30, "Only the first N items: from 1 to 1,000,000."),
    ],
)
def test_each_field_is_checked_with_a_message_naming_it(judge_page, field, value, message):
    page = judge_page()
    response = page.start(**{field: value})
    assert response.status_code == 422
    text = html.unescape(response.get_data(as_text=True))
    assert message in text, text[text.find("judge-problems") :][:600]
    assert page.endpoint.requests == [] and _job(page.app) is None


def test_the_key_never_appears_in_a_page_or_a_job_row(judge_page):
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}})
    refuse = {"on": False}

    def reply(request, n):
        return Reply(status=401, body=body) if refuse["on"] else default_reply(request, n)

    page = judge_page(reply)
    done_url = page.start(scales=["0-5"]).headers["Location"]
    refuse["on"] = True
    failed_url = page.start(scales=["0-100"]).headers["Location"]
    assert set(page.endpoint.keys) == {f"Bearer {KEY}"}
    with Session(get_engine(page.app)) as session:
        jobs = session.exec(select(Job)).all()
        assert [job.status for job in jobs] == ["done", "failed"]
        assert "Incorrect API key provided: [redacted]" in jobs[1].error
        assert KEY not in repr([job.model_dump() for job in jobs])
    pages = [
        done_url,
        failed_url,
        "/lead/studies/small",
        "/lead/studies/small/judge",
        "/lead/studies/small/judge-failures",
    ]
    for url in pages:
        response = page.client.get(url)
        assert response.status_code == 200, url
        assert KEY not in response.get_data(as_text=True), url
    text = html.unescape(page.client.get(failed_url).get_data(as_text=True))
    assert "the server refused the API key" in text and "[redacted]" in text


def test_the_form_offers_the_configured_endpoints_by_name_only(judge_page):
    page = judge_page()
    text = page.client.get("/lead/studies/small/judge").get_data(as_text=True)
    assert '<option value="hosted">hosted</option>' in text
    assert '<option value="local">local</option>' in text
    assert page.endpoint.url not in text and "127.0.0.1:9" not in text
    # The study page leads there.
    study = page.client.get("/lead/studies/small").get_data(as_text=True)
    assert 'href="/lead/studies/small/judge"' in study


def test_without_endpoints_the_page_says_how_to_list_them(team):
    owner = login(team.app, "owner@example.org")
    response = owner.get("/lead/studies/small/judge")
    assert response.status_code == 200
    assert "This server lists no judge endpoints" in response.get_data(as_text=True)
    token = csrf_token(owner, "/lead/studies/small/judge")
    refused = owner.post(
        "/lead/studies/small/judge",
        data={"csrf_token": token, "endpoint": "any", "model": "m", "scales": "0-5"},
    )
    assert refused.status_code == 400
    assert "(JUDGE_ENDPOINTS lists: none)" in refused.get_data(as_text=True)


@pytest.mark.parametrize(("email", "status"), [("outsider@", 404), ("analyst@", 403)])
def test_only_the_studys_owners_start_a_judge(team, email, status):
    lead = login(team.app, f"{email}example.org")
    token = csrf_token(lead, "/lead/")
    assert lead.get("/lead/studies/small/judge").status_code == status
    posted = lead.post(
        "/lead/studies/small/judge",
        data={"csrf_token": token, "endpoint": "any", "model": "m", "scales": "0-5"},
    )
    assert posted.status_code == status
    with Session(get_engine(team.app)) as session:
        assert session.exec(select(Job).where(Job.kind == "judge")).all() == []
