"""The judge on a rubric study: a request per criterion, or one for all of them.

The small study with three criteria (fluency and coherence on every benchmark,
relevance on sts-b only): 3 sts-b items x 3 criteria + 1 truthfulqa item x 2 = 11
scores per scale, 22 on the study's two scales.
"""

from __future__ import annotations

import json
import re

import pytest
from sqlmodel import select

from annotator.judge.runner import JudgeSettings, run_judge
from annotator.models import Item, JudgeFailure, LLMScore, Scale, Study
from tests.fake_openai import Reply, score_for

DEFINITIONS = {
    "fluency": "Is the text **well written**?",
    "coherence": "Does it hang together?",
    "relevance": "Is the second sentence about the first?",
}


def _scores(session) -> list[LLMScore]:
    session.expire_all()
    return list(session.exec(select(LLMScore).order_by(LLMScore.id)))


def _settings(endpoint, **options) -> JudgeSettings:
    return JudgeSettings(model="fake-judge", base_url=endpoint.url, **options)


def _study(session) -> Study:
    return session.exec(select(Study).where(Study.slug == "rubric")).one()


def test_each_criterion_is_asked_with_its_name_and_definition(session, rubric_study, fake_endpoint):
    endpoint = fake_endpoint()
    report = run_judge(session, _study(session), _settings(endpoint))
    scores = _scores(session)
    assert report.scores == report.stored == report.requests == len(scores) == 22
    items = {i.id: i.external_id for i in session.exec(select(Item))}
    per_item = {}
    for score in scores:
        per_item.setdefault(items[score.item_id], set()).add(score.criterion)
    assert per_item == {
        "s1": set(DEFINITIONS),
        "s2": set(DEFINITIONS),
        "s3": set(DEFINITIONS),
        "t1": {"fluency", "coherence"},
    }
    by_prompt = dict(endpoint.answers)
    for prompt in by_prompt:
        named = [c for c in DEFINITIONS if f"Criterion: {c}\n{DEFINITIONS[c]}" in prompt]
        assert len(named) == 1, prompt
    # Each score is the answer to the one prompt of its item, scale and criterion.
    fields = {i.id: i.fields for i in session.exec(select(Item))}
    scales = {s.id: s for s in session.exec(select(Scale))}
    for score in scores:
        prompts = [
            p
            for p in by_prompt
            if f"Criterion: {score.criterion}\n" in p
            and all(str(v) in p for v in fields[score.item_id].values())
            and f'"{scales[score.scale_id].max:g}")' in p
        ]
        assert len(prompts) == 1
        assert score.value == pytest.approx(float(by_prompt[prompts[0]]), abs=1e-12)
    # Every criterion has a prompt version of its own.
    assert len({(s.criterion, s.prompt_hash) for s in scores}) == len(
        {s.prompt_hash for s in scores}
    )
    again = run_judge(session, _study(session), _settings(endpoint))
    assert again.requests == 0 and again.cached == again.scores == 22
    # The study page's summary: one prompt version per benchmark and criterion.
    from annotator.judge.history import judge_run_summaries

    for summary in judge_run_summaries(session, _study(session)):
        assert summary.scores == 11 and summary.most_versions == 1
        assert list(summary.prompt_versions) == [
            "sts-b (fluency)",
            "sts-b (coherence)",
            "sts-b (relevance)",
            "truthfulqa (fluency)",
            "truthfulqa (coherence)",
        ]


def _together(skip: dict[str, str] | None = None, out_of_range: str | None = None):
    """Replies of JSON scores by criterion; ``skip``: item text -> criterion left out."""

    def reply(request, n):
        prompt = request["messages"][-1]["content"]
        asked = re.findall(r"^- (\w+): ", prompt, flags=re.MULTILINE)
        scores = {c: float(score_for(prompt)) for c in asked}
        for text, criterion in (skip or {}).items():
            if text in prompt:
                scores.pop(criterion, None)
        if out_of_range in scores:
            scores[out_of_range] = 1000
        return Reply(content=json.dumps(scores))

    return reply


def test_one_request_for_all_criteria_fails_a_missing_criterion_alone(
    session, rubric_study, fake_endpoint
):
    endpoint = fake_endpoint(_together(skip={"He left early": "coherence"}))
    settings = _settings(endpoint, criteria="together", attempts=2)
    report = run_judge(session, _study(session), settings)
    # 4 items x 2 scales, and item s2 asked again on each scale for its coherence.
    assert report.requests == 8 + 2
    assert (report.scores, report.stored, report.failed) == (22, 20, 2)
    failures = list(session.exec(select(JudgeFailure)))
    assert {f.criterion for f in failures} == {"coherence"}
    assert all("no score for criterion 'coherence'" in f.error for f in failures)
    assert all("criterion coherence" in line for line in report.failures)
    prompts = endpoint.prompts()
    assert all("- fluency: Is the text **well written**?" in p for p in prompts)
    from annotator.judge.history import judge_failures

    listed = judge_failures(session, _study(session))
    assert {(row.where, row.scored_since) for row in listed} == {("s2 (coherence)", False)}
    assert all(row.as_json()["criterion"] == "coherence" for row in listed)
    # A run with complete replies asks only for the two missing scores.
    complete = fake_endpoint(_together())
    again = run_judge(session, _study(session), _settings(complete, criteria="together"))
    assert (again.requests, again.stored, again.cached) == (2, 2, 20)
    assert len(_scores(session)) == 22
    assert all(row.scored_since for row in judge_failures(session, _study(session)))


def test_a_score_out_of_range_fails_its_criterion_only(session, rubric_study, fake_endpoint):
    endpoint = fake_endpoint(_together(out_of_range="fluency"))
    settings = _settings(endpoint, criteria="together", attempts=1)
    report = run_judge(session, _study(session), settings)
    assert (report.stored, report.failed) == (22 - 8, 8)
    failures = list(session.exec(select(JudgeFailure)))
    assert {f.criterion for f in failures} == {"fluency"}
    assert all("the scale" in f.error for f in failures)
    assert "fluency" not in {s.criterion for s in _scores(session)}


def test_criteria_must_be_each_or_together():
    with pytest.raises(ValueError, match="criteria must be one of each, together, not 'all'"):
        JudgeSettings(model="m", criteria="all")


def test_a_changed_definition_asks_again_for_that_criterion_alone(
    session, runner, rubric_study, fake_endpoint, tmp_path
):
    endpoint = fake_endpoint()
    run_judge(session, _study(session), _settings(endpoint))
    path = tmp_path / "rubric.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("Does it hang together?", "Is it one whole?"), encoding="utf-8")
    result = runner.invoke(args=["study", "update", str(path)])
    assert result.exit_code == 0, result.output
    session.expire_all()
    again = run_judge(session, _study(session), _settings(endpoint))
    # coherence on 4 items x 2 scales, under its new prompt version; the rest cached.
    assert (again.requests, again.stored, again.cached) == (8, 8, 14)
    assert all("Criterion: coherence\nIs it one whole?" in p for p in endpoint.prompts()[22:])


def test_progress_counts_each_criterion_asked_together(session, rubric_study, fake_endpoint):
    # The web job's progress: 22 scores in 8 requests (one per item and scale).
    endpoint = fake_endpoint(_together())
    seen = []

    def on_progress(report, done, total):
        seen.append((done, total, report.stored))

    settings = _settings(endpoint, criteria="together", concurrency=1)
    report = run_judge(session, _study(session), settings, on_progress=on_progress)
    assert report.requests == 8 and report.stored == 22
    assert {total for _, total, _ in seen} == {22}
    # Before the first request, then after each request: its item's 3 or 2 criteria.
    done = [d for d, _, _ in seen]
    assert done[0] == 0 and done[-1] == 22 and len(done) == 9
    assert sorted(b - a for a, b in zip(done, done[1:], strict=False)) == [2, 2] + [3] * 6
    assert all(stored == d for d, _, stored in seen)
