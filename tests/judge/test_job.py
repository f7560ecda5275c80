"""The body of a judge run started from the web: endpoint by name, key from the
environment and out of every message, progress, stop, the run's failures."""

from __future__ import annotations

import json

import pytest
from sqlmodel import select

from annotator.judge.endpoints import JudgeEndpoint
from annotator.judge.job import JudgeRunParams, run_failures, run_judge_job
from annotator.judge.runner import JudgeError
from annotator.models import LLMScore, Study
from tests.fake_openai import Reply, default_reply

KEY = "sk-test-0123456789-secret"


def _study(session) -> Study:
    return session.exec(select(Study).where(Study.slug == "small")).one()


def _params(**options) -> JudgeRunParams:
    values = dict(endpoint="hosted", model="m", scales=("0-5", "0-100"), runs=1, temperature=1.0)
    return JudgeRunParams(**{**values, **options})


def _endpoints(endpoint) -> dict[str, JudgeEndpoint]:
    return {"hosted": JudgeEndpoint("hosted", endpoint.url, "EXAMPLE_JUDGE_KEY")}


def _run(session, endpoint, params=None, **hooks):
    progress = []
    hooks.setdefault("report_progress", lambda *args: progress.append(args))
    hooks.setdefault("should_stop", lambda: False)
    result = run_judge_job(
        session, _study(session), params or _params(), endpoints=_endpoints(endpoint), **hooks
    )
    return result, progress


def test_a_run_sends_the_key_from_the_environment_and_reports(
    session, small_study, fake_endpoint, monkeypatch
):
    monkeypatch.setenv("EXAMPLE_JUDGE_KEY", KEY)
    endpoint = fake_endpoint()
    result, progress = _run(session, endpoint, _params(runs=2))
    assert endpoint.keys == [f"Bearer {KEY}"] * 16
    assert (result["stored"], result["failed"], result["requests"], result["tokens"]) == (
        16,
        0,
        16,
        16 * 12,
    )
    assert not result["cancelled"]
    assert progress[0][:2] == (0, 16) and progress[-1][:2] == (16, 16)
    assert progress[-1][2] == (
        "16 of 16 scores asked for (0 already stored): 16 stored, 0 failed; "
        "16 requests, 192 tokens (160 prompt, 32 completion)"
    )
    assert KEY not in json.dumps(result) + json.dumps(progress)
    assert KEY not in json.dumps(_params().as_json())


def test_progress_is_written_at_most_every_half_second(
    session, small_study, fake_endpoint, monkeypatch
):
    monkeypatch.setenv("EXAMPLE_JUDGE_KEY", KEY)
    ticks = iter(range(0, 1000))
    # A clock moving 0.2 s per look: every third score's progress is written.
    _, progress = _run(session, fake_endpoint(), clock=lambda: next(ticks) * 0.2)
    assert [done for done, _, _ in progress] == [0, 3, 6, 8]


def test_a_key_the_server_quotes_is_kept_out_of_the_error(
    session, small_study, fake_endpoint, monkeypatch
):
    monkeypatch.setenv("EXAMPLE_JUDGE_KEY", KEY)
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}})
    endpoint = fake_endpoint(lambda request, n: Reply(status=401, body=body))
    with pytest.raises(JudgeError) as caught:
        _run(session, endpoint)
    assert "the server refused the API key" in str(caught.value)
    assert "Incorrect API key provided: [redacted]" in str(caught.value)
    assert KEY not in str(caught.value)


def test_an_unset_key_or_a_removed_endpoint_stops_before_any_request(
    session, small_study, fake_endpoint, monkeypatch
):
    monkeypatch.delenv("EXAMPLE_JUDGE_KEY", raising=False)
    endpoint = fake_endpoint()
    with pytest.raises(JudgeError, match="variable EXAMPLE_JUDGE_KEY, which is not set"):
        _run(session, endpoint)
    with pytest.raises(JudgeError, match="'gone' is no longer in the instance's JUDGE_ENDPOINTS"):
        _run(session, endpoint, _params(endpoint="gone"))
    assert endpoint.requests == []


def test_a_stopped_run_keeps_its_scores(session, small_study, fake_endpoint, monkeypatch):
    monkeypatch.setenv("EXAMPLE_JUDGE_KEY", KEY)
    endpoint = fake_endpoint()
    progress = []
    result, _ = _run(
        session,
        endpoint,
        report_progress=lambda *args: progress.append(args),
        # Stopped once three scores are in (four requests go out at once).
        should_stop=lambda: progress[-1][0] >= 3,
        clock=iter(range(1000)).__next__,
    )
    stored = result["stored"]
    assert result["cancelled"] and 3 <= stored < 8
    assert stored == len(endpoint.requests) == len(session.exec(select(LLMScore)).all())
    assert progress[-1][:2] == (stored, 8)


def test_the_runs_failures_are_its_settings_stored_since_it_started(
    app, session, small_study, fake_endpoint, monkeypatch, clock
):
    monkeypatch.setenv("EXAMPLE_JUDGE_KEY", KEY)

    def s2_refused(request, n):
        if "He left early" in request["messages"][-1]["content"]:
            return Reply(content="no idea")
        return default_reply(request, n)

    endpoint = fake_endpoint(s2_refused)
    earlier = clock()
    # In the app's context: failures are stamped by the app's (frozen) clock.
    with app.app_context():
        _run(session, endpoint, _params(model="m", scales=("0-5",)))
        started = clock.advance(hours=1)
        result, _ = _run(session, endpoint, _params(model="m", scales=("0-5", "0-100")))
        _run(session, endpoint, _params(model="other", scales=("0-5",)))
        _run(session, endpoint, _params(model="m", scales=("0-5",), temperature=0.5))
    assert result["failed"] == 2
    rows = run_failures(session, _study(session), _params(), since=started)
    # This run's two (s2 asked again on 0-5, and on 0-100), not the first run's,
    # nor those of another model or temperature.
    # (Stored by concurrent requests: in either order.)
    assert sorted((r.item, r.scale, r.model, r.temperature) for r in rows) == [
        ("s2", "0-100", "m", 1.0),
        ("s2", "0-5", "m", 1.0),
    ]
    assert len(run_failures(session, _study(session), _params(), since=earlier)) == 3
