"""The judge runner against a fake endpoint: what is stored, retried, failed and skipped."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotator.judge.runner import JudgeError, JudgeSettings, run_judge
from annotator.models import Item, JudgeFailure, LLMScore, Scale, Study
from tests.fake_openai import Reply, default_reply, score_for


def _study(session, slug: str = "small") -> Study:
    return session.exec(select(Study).where(Study.slug == slug)).one()


def _scores(session) -> list[LLMScore]:
    session.expire_all()
    return list(session.exec(select(LLMScore).order_by(LLMScore.id)))


def _failures(session) -> list[JudgeFailure]:
    session.expire_all()
    return list(session.exec(select(JudgeFailure).order_by(JudgeFailure.id)))


def _items(session) -> dict[int, Item]:
    return {item.id: item for item in session.exec(select(Item))}


def _settings(endpoint, **options) -> JudgeSettings:
    options.setdefault("model", "fake-judge")
    return JudgeSettings(base_url=endpoint.url, **options)


def test_every_score_is_stored_as_the_endpoint_gave_it(session, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    study = _study(session)
    report = run_judge(session, study, _settings(endpoint, runs=2, temperature=0.7))
    items = _items(session)
    scales = {s.id: s for s in session.exec(select(Scale))}
    scores = _scores(session)
    # 4 items x 2 scales x 2 runs, one request each.
    assert len(items) == 4
    assert report.scores == report.stored == len(scores) == 16
    assert report.requests == len(endpoint.requests) == 16
    assert report.failed == report.cached == 0
    assert report.prompt_tokens == 160 and report.completion_tokens == 32
    answered = dict(endpoint.answers)
    for score in scores:
        item = items[score.item_id]
        # The prompt the endpoint answered for this item and scale.
        prompts = [
            p
            for p in answered
            if all(str(v) in p for v in item.fields.values())
            and f'"{scales[score.scale_id].max:g}")' in p
        ]
        assert len(prompts) == 1
        assert score.value == pytest.approx(float(answered[prompts[0]]), abs=1e-12)
        assert score.temperature == 0.7 and score.model == "fake-judge"
        assert len(score.prompt_hash) == 64
        assert score.run.startswith("t0.7-") and score.run.endswith(score.prompt_hash[:12])
    assert {s.run.split("-")[1] for s in scores} == {"1", "2"}
    assert all(r["temperature"] == 0.7 and r["model"] == "fake-judge" for r in endpoint.requests)


def test_a_second_run_makes_no_request(session, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    study = _study(session)
    run_judge(session, study, _settings(endpoint))
    before = [(s.id, s.value) for s in _scores(session)]
    sent = len(endpoint.requests)
    again = run_judge(session, study, _settings(endpoint))
    assert len(endpoint.requests) == sent == 8
    assert again.cached == again.scores == 8 and again.requests == again.stored == 0
    assert [(s.id, s.value) for s in _scores(session)] == before


def test_another_temperature_or_more_runs_ask_only_for_the_new_scores(
    session, small_study, fake_endpoint
):
    endpoint = fake_endpoint()
    study = _study(session)
    run_judge(session, study, _settings(endpoint, scales=("0-5",)))
    more = run_judge(session, study, _settings(endpoint, scales=("0-5",), runs=3))
    assert (more.cached, more.stored) == (4, 8)
    other = run_judge(session, study, _settings(endpoint, scales=("0-5",), temperature=0.1))
    assert (other.cached, other.stored) == (0, 4)
    assert len(endpoint.requests) == 16 == len(_scores(session))


@pytest.mark.parametrize("concurrency", [1, 4])
def test_concurrency_bounds_the_requests_in_flight(
    session, small_study, fake_endpoint, concurrency
):
    endpoint = fake_endpoint(delay=0.05)
    report = run_judge(session, _study(session), _settings(endpoint, concurrency=concurrency))
    assert report.stored == 8
    if concurrency == 1:
        assert endpoint.max_in_flight == 1
    else:
        assert 1 < endpoint.max_in_flight <= concurrency


@pytest.mark.parametrize("status", [429, 500, 503])
def test_rate_limits_and_server_errors_are_retried_and_store_one_score(
    session, small_study, fake_endpoint, status
):
    failed_once: set[str] = set()

    def reply(request, n):
        prompt = request["messages"][-1]["content"]
        if prompt not in failed_once:
            failed_once.add(prompt)
            return Reply(status=status, headers={"retry-after-ms": "5"})
        return default_reply(request, n)

    endpoint = fake_endpoint(reply)
    report = run_judge(session, _study(session), _settings(endpoint, scales=("0-5",)))
    scores = _scores(session)
    assert report.stored == len(scores) == 4 and report.failed == 0
    # Each score took two HTTP requests (the client retried), and one was stored.
    assert len(endpoint.requests) == 8
    assert sorted(s.value for s in scores) == sorted(float(v) for _, v in endpoint.answers)


def test_errors_past_the_retries_are_failures_not_scores(session, small_study, fake_endpoint):
    endpoint = fake_endpoint(lambda request, n: Reply(status=500, headers={"retry-after-ms": "1"}))
    report = run_judge(
        session, _study(session), _settings(endpoint, scales=("0-5",), max_retries=2, limit=2)
    )
    assert report.failed == 2 and report.stored == 0 and _scores(session) == []
    assert len(endpoint.requests) == 2 * 3  # one request and two retries each
    failures = _failures(session)
    assert len(failures) == 2
    assert all(f.raw_reply is None and "500" in f.error for f in failures)


@pytest.mark.parametrize(
    "bad",
    [
        "I cannot rate this.",
        "Somewhere between 2 and 4.",
        "",
        "7.5",  # outside the 0-5 scale
        "-1",
    ],
)
def test_a_reply_without_a_valid_score_is_asked_again_then_recorded_with_its_text(
    session, small_study, fake_endpoint, bad
):
    endpoint = fake_endpoint(lambda request, n: Reply(content=bad))
    report = run_judge(
        session, _study(session), _settings(endpoint, scales=("0-5",), limit=1, attempts=3)
    )
    assert len(endpoint.requests) == report.requests == 3
    assert report.failed == 1 and report.stored == 0
    assert _scores(session) == []
    (failure,) = _failures(session)
    assert failure.raw_reply == bad and failure.error
    assert failure.model == "fake-judge" and failure.temperature == 1.0
    assert len(failure.prompt_hash) == 64
    if bad == "7.5":
        assert "outside the scale" in failure.error and "from 0 to 5" in failure.error


def test_a_malformed_reply_then_a_good_one_stores_the_good_one(session, small_study, fake_endpoint):
    def reply(request, n):
        return Reply(content="Hmm, hard to say." if n == 1 else "Score: 3.25")

    endpoint = fake_endpoint(reply)
    report = run_judge(
        session, _study(session), _settings(endpoint, scales=("0-5",), limit=1, concurrency=1)
    )
    assert (report.requests, report.stored, report.failed) == (2, 1, 0)
    assert [s.value for s in _scores(session)] == [3.25]
    assert _failures(session) == []


def test_a_reply_that_is_not_a_completion_is_a_failure(session, small_study, fake_endpoint):
    endpoint = fake_endpoint(lambda request, n: Reply(body='{"unexpected": true}'))
    report = run_judge(
        session, _study(session), _settings(endpoint, scales=("0-5",), limit=1, attempts=2)
    )
    assert report.failed == 1 and _scores(session) == []
    assert len(endpoint.requests) == 2


def test_failures_are_asked_for_again_by_the_next_run(session, small_study, fake_endpoint):
    broken = fake_endpoint(lambda request, n: Reply(content="no idea"))
    study = _study(session)
    run_judge(session, study, _settings(broken, scales=("0-5",), attempts=1))
    assert len(_failures(session)) == 4
    healthy = fake_endpoint()
    report = run_judge(session, study, _settings(healthy, scales=("0-5",)))
    assert report.stored == 4 and len(healthy.requests) == 4
    # The failures stay on record; they never became scores.
    assert len(_failures(session)) == 4


def test_an_interrupted_run_resumes_where_it_stopped(session, small_study, fake_endpoint):
    def refuse_after_four(request, n):
        return Reply(status=401) if n > 4 else default_reply(request, n)

    endpoint = fake_endpoint(refuse_after_four)
    study = _study(session)
    with pytest.raises(JudgeError, match="refused the API key"):
        run_judge(session, study, _settings(endpoint, concurrency=1))
    kept = _scores(session)
    assert len(kept) == 4
    healthy = fake_endpoint()
    report = run_judge(session, study, _settings(healthy))
    assert (report.cached, report.stored) == (4, 4)
    assert len(healthy.requests) == 4
    asked = set(healthy.prompts())
    assert not asked & {p for p, _ in endpoint.answers}
    assert len(_scores(session)) == 8


def test_an_unknown_model_stops_the_run(session, small_study, fake_endpoint):
    endpoint = fake_endpoint(lambda request, n: Reply(status=404))
    with pytest.raises(JudgeError, match="does not know model 'fake-judge'"):
        run_judge(session, _study(session), _settings(endpoint, limit=1))
    assert _scores(session) == [] and _failures(session) == []


def test_a_changed_prompt_is_a_new_version_and_the_old_scores_stay(
    session, small_study, fake_endpoint
):
    endpoint = fake_endpoint()
    study = _study(session)
    run_judge(session, study, _settings(endpoint, scales=("0-5",)))
    old = {(s.id, s.value, s.prompt_hash) for s in _scores(session)}
    # Only the sts-b benchmark's prompt changes.
    study.source_toml = study.source_toml.replace(
        'name = "sts-b"\n',
        'name = "sts-b"\njudge_template = "Similarity of {{ sentence1 }} and '
        '{{ sentence2 }}? Answer (\\"{min}\\"\u2013\\"{max}\\")."\n',
    )
    session.add(study)
    session.commit()
    report = run_judge(session, study, _settings(endpoint, scales=("0-5",)))
    sts = {i.id for i in _items(session).values() if i.external_id.startswith("s")}
    assert report.cached == 4 - len(sts) and report.stored == len(sts) == 3
    new_prompts = endpoint.prompts()[4:]
    assert all(p.startswith("Similarity of ") for p in new_prompts)
    scores = _scores(session)
    assert old <= {(s.id, s.value, s.prompt_hash) for s in scores}
    hashes = {s.item_id: set() for s in scores}
    for s in scores:
        hashes[s.item_id].add(s.prompt_hash)
    assert all(len(hashes[i]) == (2 if i in sts else 1) for i in hashes)


def test_unknown_scale_is_refused_before_any_request(session, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    with pytest.raises(JudgeError, match=r"unknown scale '0-7' \(the study has: 0-5, 0-100\)"):
        run_judge(session, _study(session), _settings(endpoint, scales=("0-7",)))
    assert endpoint.requests == []


def test_attention_checks_are_not_judged(session, runner, fake_endpoint, tmp_path):
    from tests.conftest import DATA

    items = tmp_path / "items.csv"
    items.write_text(
        "item_id,benchmark,sentence1,sentence2,gold_score,gold_tolerance\n"
        "a,sts-b,One.,Two.,,\n"
        "check,sts-b,Pick the maximum.,Pick the maximum.,1,0.05\n"
    )
    for args in (
        ["study", "create", DATA / "small-study.toml"],
        ["items", "import", "small", items],
    ):
        assert runner.invoke(args=[str(a) for a in args]).exit_code == 0
    endpoint = fake_endpoint()
    report = run_judge(session, _study(session), _settings(endpoint, scales=("0-5",)))
    assert report.stored == 1 and "Pick the maximum" not in endpoint.prompts()[0]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("runs", 0, "runs must be at least 1"),
        ("concurrency", 0, "concurrency must be at least 1"),
        ("temperature", 2.5, "temperature must be between 0 and 2"),
        ("limit", 0, "limit must be at least 1"),
        ("model", " ", "model: the model name is empty"),
    ],
)
def test_settings_are_checked(option, value, message):
    options = {"model": "m", option: value}
    with pytest.raises(ValueError, match=message):
        JudgeSettings(**options)


def test_score_for_is_within_the_prompt_bounds():
    # The fake endpoint's own rule, checked so the tests above rest on it.
    assert 0 <= float(score_for('x ("0"\u2013"5")')) <= 5
    assert 10 <= float(score_for('y ("10"\u2013"20")')) <= 20


def test_logprobs_give_an_expected_score_as_another_judge(session, small_study, fake_endpoint):
    import math

    def reply(request, n):
        assert request["logprobs"] is True and request["top_logprobs"] == 20
        top = [("4", math.log(0.6)), ("3", math.log(0.3)), ("Hi", math.log(0.1))]
        return Reply(content="4", logprobs=[("4", math.log(0.6), top)])

    endpoint = fake_endpoint(reply)
    study = _study(session)
    report = run_judge(session, study, _settings(endpoint, logprobs=True))
    scores = _scores(session)
    sampled = [s for s in scores if s.model == "fake-judge"]
    expected = [s for s in scores if s.model == "fake-judge (expected)"]
    assert report.stored == len(sampled) == 8 and all(s.value == 4 for s in sampled)
    # Only on 0-5: on 0-100 a score may span several tokens.
    assert len(expected) == 4
    assert {s.scale_id for s in expected} == {
        session.exec(select(Scale.id).where(Scale.name == "0-5")).one()
    }
    # (4 * 0.6 + 3 * 0.3) / (0.6 + 0.3), worked by hand; "Hi" is no score.
    assert all(s.value == pytest.approx(11 / 3) for s in expected)
    assert {(s.item_id, s.run) for s in expected} <= {(s.item_id, s.run) for s in sampled}


def test_temperatures_close_together_are_other_runs(session, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    study = _study(session)
    for temperature in (0.1234567, 0.1234568):
        report = run_judge(
            session, study, _settings(endpoint, scales=("0-5",), limit=1, temperature=temperature)
        )
        assert report.stored == 1
    assert sorted(s.temperature for s in _scores(session)) == [0.1234567, 0.1234568]


def test_a_per_scale_judge_template_is_used_on_its_scale_only(session, small_study, fake_endpoint):
    study = _study(session)
    study.source_toml = study.source_toml.replace(
        'name = "sts-b"\n',
        'name = "sts-b"\njudge_template = { "0-100" = "Percent: {{ sentence1 }} '
        '(\\"{min}\\"\u2013\\"{max}\\")" }\n',
    )
    session.add(study)
    session.commit()
    endpoint = fake_endpoint()
    run_judge(session, study, _settings(endpoint, limit=1, concurrency=1))
    prompts = endpoint.prompts()
    assert len(prompts) == 2
    assert [p.startswith("Percent: ") for p in prompts] == [False, True]
    assert '("0"\u2013"100")' in prompts[1] and '("0"\u2013"5")' in prompts[0]
    assert len({s.prompt_hash for s in _scores(session)}) == 2
