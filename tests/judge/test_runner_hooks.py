"""The runner's progress callback and stop check (what a job from the web page uses)."""

from __future__ import annotations

from sqlmodel import select

from annotator.judge.runner import JudgeSettings, run_judge
from annotator.models import LLMScore, Study
from tests.fake_openai import Reply, default_reply


def _study(session) -> Study:
    return session.exec(select(Study).where(Study.slug == "small")).one()


def _n_scores(session) -> int:
    session.expire_all()
    return len(session.exec(select(LLMScore)).all())


def test_progress_counts_scores_requests_failures_and_tokens(session, small_study, fake_endpoint):
    def s2_refused(request, n):
        if "He left early" in request["messages"][-1]["content"]:
            return Reply(content="no idea")
        return default_reply(request, n)

    endpoint = fake_endpoint(s2_refused)
    seen = []

    def on_progress(report, done, total):
        seen.append((done, total, report.requests, report.failed, report.tokens))

    settings = JudgeSettings(model="m", base_url=endpoint.url, concurrency=1, attempts=2)
    report = run_judge(session, _study(session), settings, on_progress=on_progress)
    # 4 items x 2 scales; s2 asked twice on each scale, then failed.
    assert [s[:2] for s in seen] == [(n, 8) for n in range(9)]
    assert seen[-1][2:] == (10, 2, 120) == (report.requests, report.failed, report.tokens)
    assert len(endpoint.requests) == 10
    # Counts only grow, one score at a time.
    assert all(a[2] <= b[2] and a[3] <= b[3] for a, b in zip(seen, seen[1:], strict=False))


def test_a_stop_between_requests_keeps_the_scores_stored(session, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    asked = []

    def should_stop():
        asked.append(len(endpoint.requests))
        return len(endpoint.requests) >= 3

    settings = JudgeSettings(model="m", base_url=endpoint.url, concurrency=1)
    report = run_judge(session, _study(session), settings, should_stop=should_stop)
    assert report.cancelled
    assert len(endpoint.requests) == 3 == report.stored == _n_scores(session)
    # Asked before each request and once more, then never again.
    assert asked == [0, 0, 1, 2, 3]
    # The next run asks only for the rest.
    rest = run_judge(session, _study(session), settings)
    assert (rest.cached, rest.stored, rest.cancelled) == (3, 5, False)


def test_a_stop_before_the_first_request_asks_nothing(session, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    settings = JudgeSettings(model="m", base_url=endpoint.url)
    report = run_judge(session, _study(session), settings, should_stop=lambda: True)
    assert report.cancelled and report.requests == 0
    assert endpoint.requests == [] and _n_scores(session) == 0


def test_with_concurrency_the_requests_in_flight_finish_and_are_stored(
    session, small_study, fake_endpoint
):
    endpoint = fake_endpoint(delay=0.05)
    settings = JudgeSettings(model="m", base_url=endpoint.url, concurrency=4)
    report = run_judge(
        session, _study(session), settings, should_stop=lambda: len(endpoint.requests) >= 2
    )
    assert report.cancelled
    # Those already sent when the stop was seen are answered and stored, no more sent.
    sent = len(endpoint.requests)
    assert 2 <= sent < 8
    assert report.stored == sent == _n_scores(session)
