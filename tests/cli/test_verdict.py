"""``annotator verdict`` on the demo and on the guide's rubric example, its words checked
against the alt-test run here on the study's own alt-test exports."""

from __future__ import annotations

import csv
import io
import json

import pytest
from statsmodels.stats.proportion import proportion_confint

from annotator.analysis.settings import study_settings
from annotator.db import session_scope
from annotator.demo import load_demo
from annotator.metrics import TooFewItemsError, alt_test
from annotator.study.studies import get_study
from tests.conftest import ROOT

WORDS = {True: "may replace the raters", False: "may not replace the raters"}


@pytest.fixture
def demo(app):
    with app.app_context(), session_scope(app) as session:
        load_demo(session, base_url="http://127.0.0.1:5000", instance_path=app.instance_path)
    return "demo"


@pytest.fixture
def rubric_example(runner):
    """docs/rubrics.md's example: examples/rubric-summeval.toml and its files."""
    examples = ROOT / "examples"
    for args in (
        ["study", "create", examples / "rubric-summeval.toml"],
        ["items", "import", "rubric-summeval", examples / "rubric-items.jsonl"],
        ["ratings", "import", "rubric-summeval", examples / "rubric-ratings.csv"],
        ["llm-scores", "import", "rubric-summeval", examples / "rubric-llm-scores.csv"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return "rubric-summeval"


def _verdicts(runner, slug: str, *args: str) -> dict:
    result = runner.invoke(args=["verdict", slug, "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _expected(runner, app, tmp_path, slug: str, scale: str, criterion: str = "") -> dict:
    """Per judge: the alt-test of the study's alt-test export, run here."""
    out = tmp_path / f"{slug}-{scale}-{criterion}.json"
    args = ["export", slug, "--format", "alttest", "--scale", scale, "--out", str(out)]
    result = runner.invoke(args=args + (["--criterion", criterion] if criterion else []))
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    with app.app_context(), session_scope(app) as session:
        settings = study_settings(get_study(session, slug))
    options = {"epsilon": settings.epsilon, "scoring": settings.scoring, "q": settings.q}
    expected = {}
    for judge, scores in data["llm"].items():
        try:
            expected[judge] = alt_test(humans=data["humans"], llm=scores, **options)
        except TooFewItemsError as exc:
            expected[judge] = exc
    return expected


def _check(row: dict, expected) -> None:
    if isinstance(expected, TooFewItemsError):
        assert row["decision"] == "undecided" and row["words"] == "not decided yet"
        short = expected.min_items_per_human - expected.most_items
        assert any(f"about {short} more items per rater" in need for need in row["needs"])
        assert row["winning_rate"] is None
        return
    assert row["words"] == WORDS[expected.passed]
    assert row["winning_rate"] == pytest.approx(expected.winning_rate)
    assert row["n_raters"] == expected.n_tested and row["n_items"] == expected.n_items
    assert row["needs"] == []
    # The interval: the exact binomial one of statsmodels (a second implementation).
    won = round(expected.winning_rate * expected.n_tested)
    low, high = proportion_confint(won, expected.n_tested, alpha=0.05, method="beta")
    assert (row["winning_rate_low"], row["winning_rate_high"]) == pytest.approx((low, high))


def test_demo_verdicts_match_the_alt_test_of_its_exports(runner, app, demo, tmp_path):
    payload = _verdicts(runner, demo)
    rows = {(r["scale"], r["judge"]): r for r in payload["verdicts"]}
    assert set(rows) == {(s, j) for s in ("0-5", "0-10", "0-100") for j in ("judge-a", "judge-b")}
    for scale in ("0-5", "0-10", "0-100"):
        for judge, expected in _expected(runner, app, tmp_path, demo, scale).items():
            _check(rows[scale, judge], expected)
    # The demo's story (annotator/demo.py): judge-a passes on 0-5 and 0-10, judge-b nowhere.
    passed = {key for key, row in rows.items() if row["decision"] == "replace"}
    assert passed == {("0-5", "judge-a"), ("0-10", "judge-a")}

    table = runner.invoke(args=["verdict", demo])
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    for (scale, judge), row in rows.items():
        line = next(x for x in lines if x.split()[:2] == [judge, scale])
        assert row["words"] in line and "5 raters, 40 items" in line

    text = runner.invoke(args=["verdict", demo, "--format", "csv"]).output
    read = list(csv.DictReader(io.StringIO(text)))
    assert [(r["scale"], r["judge"], r["verdict"]) for r in read] == [
        (r["scale"], r["judge"], r["words"]) for r in payload["verdicts"]
    ]


def test_rubric_example_is_undecided_and_says_what_it_needs(runner, app, rubric_example, tmp_path):
    payload = _verdicts(runner, rubric_example)
    criteria = ("coherence", "consistency", "fluency", "relevance")
    assert payload["criteria"] == list(criteria)
    rows = {(r["criterion"], r["judge"]): r for r in payload["verdicts"]}
    assert set(rows) == {(c, j) for c in criteria for j in ("judge-a", "judge-b")}
    for criterion in criteria:
        expected = _expected(runner, app, tmp_path, rubric_example, "1-5", criterion)
        for judge, result in expected.items():
            _check(rows[criterion, judge], result)

    one = _verdicts(runner, rubric_example, "--criterion", "fluency")
    assert {r["criterion"] for r in one["verdicts"]} == {"fluency"}
    two = _verdicts(runner, rubric_example, "--criterion", "fluency", "--criterion", "coherence")
    assert {r["criterion"] for r in two["verdicts"]} == {"fluency", "coherence"}
    table = runner.invoke(args=["verdict", rubric_example]).output
    assert table.count("not decided yet") == 8 and "more items per rater" in table


def test_unknown_study_and_criterion_fail_clearly(runner, rubric_example):
    result = runner.invoke(args=["verdict", "nope"])
    assert result.exit_code != 0 and "no study with slug 'nope'" in result.output
    result = runner.invoke(args=["verdict", rubric_example, "--criterion", "taste"])
    assert result.exit_code != 0 and "'taste' is not a criterion" in result.output
    both = ["verdict", rubric_example, "--criterion", "taste", "--criterion", "fluency"]
    result = runner.invoke(args=both)
    assert result.exit_code != 0 and "unknown criterion 'taste'" in result.output
