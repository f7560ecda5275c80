"""The verdict summary: one row per judge x scale, its words from the alt-test, what an
undecided one still needs, the winning rate's interval against statsmodels', and the
same lines on the dashboard and in the report."""

from __future__ import annotations

import pytest
from statsmodels.stats.proportion import proportion_confint

from annotator.analysis.matrices import human_ratings, llm_matrix, rater_dicts
from annotator.analysis.model import DASHBOARD_PARTS, REPORT_PARTS
from annotator.analysis.settings import study_settings
from annotator.analysis.study_analysis import analyse
from annotator.analysis.verdict import verdict_summary, winning_rate_interval
from annotator.data.frames import study_frames
from annotator.metrics import TooFewItemsError, alt_test
from annotator.render.dashboard import dashboard_of
from annotator.render.report import report_of
from annotator.render.verdict import verdict_lines


@pytest.mark.parametrize(
    ("won", "tested", "confidence"), [(0, 5, 0.95), (4, 5, 0.95), (5, 5, 0.9), (7, 13, 0.99)]
)
def test_winning_rate_interval_is_statsmodels_exact_interval(won, tested, confidence):
    expected = proportion_confint(won, tested, alpha=1 - confidence, method="beta")
    assert winning_rate_interval(won, tested, confidence=confidence) == pytest.approx(expected)


def test_winning_rate_interval_names_bad_counts():
    with pytest.raises(ValueError, match="n_tested"):
        winning_rate_interval(0, 0, confidence=0.95)
    with pytest.raises(ValueError, match="n_won"):
        winning_rate_interval(6, 5, confidence=0.95)


def _analysis(session, study, parts=DASHBOARD_PARTS):
    return analyse(study_frames(session, study), study_settings(study), parts=parts)


def test_each_verdict_is_the_alt_test_of_its_judge_and_scale(session, make_study):
    study = make_study(slug="decided", n_items=40, n_raters=4, models=("judge-a", "judge-b"))
    analysis = _analysis(session, study)
    summary = verdict_summary(analysis)
    assert {(v.scale, v.judge) for v in summary.rows} == {
        (s, m) for s in analysis.frames.scale_names for m in ("judge-a", "judge-b")
    }
    frames = analysis.frames
    for v in summary.rows:
        humans = rater_dicts(human_ratings(frames, v.scale))
        llm = llm_matrix(frames, v.scale, temperature=analysis.temperature)[v.judge].dropna()
        result = alt_test(humans=humans, llm=llm.to_dict(), epsilon=summary.epsilon)
        words = "may replace the raters" if result.passed else "may not replace the raters"
        assert (v.words, v.winning_rate, v.n_raters) == (
            words,
            pytest.approx(result.winning_rate),
            result.n_tested,
        )
        assert v.needs == () and v.winning_rate_low <= v.winning_rate <= v.winning_rate_high


def test_undecided_verdicts_say_what_they_still_need(session, make_study):
    few = make_study(slug="few-items", n_items=12, n_raters=3, models=("judge-a",))
    rows = verdict_summary(_analysis(session, few)).rows
    assert rows and all(v.words == "not decided yet" for v in rows)
    frames = study_frames(session, few)
    for v in rows:
        humans = rater_dicts(human_ratings(frames, v.scale))
        llm = llm_matrix(frames, v.scale, temperature=1.0)[v.judge].dropna()
        with pytest.raises(TooFewItemsError) as caught:
            alt_test(humans=humans, llm=llm.to_dict())
        short = caught.value.min_items_per_human - caught.value.most_items
        assert f"about {short} more items per rater" in v.needs[0]
        assert v.winning_rate is None and v.reason
        # The reason says the ratings still needed, as the needs do, not a setting.
        assert f"about {short} more items per rater" in v.reason
        assert f"at most {caught.value.most_items} so far" in v.reason
        assert "min_items_per_human" not in v.reason and "Lower" not in v.reason

    one = make_study(slug="one-rater", n_items=40, n_raters=1, models=("judge-a",))
    rows = verdict_summary(_analysis(session, one)).rows
    assert rows and all(v.decision == "undecided" for v in rows)
    assert all("1 more rater on this scale" in v.needs for v in rows)


def test_dashboard_and_report_show_the_same_lines(session, make_study):
    study = make_study(
        slug="assisted",
        n_items=40,
        n_raters=3,
        benchmarks=("sts-b",),
        models=("judge-a",),
        unrated_items=6,
    )
    dash_analysis = _analysis(session, study)
    lines = verdict_lines(verdict_summary(dash_analysis))
    assert dashboard_of(dash_analysis).verdicts == lines
    # Judge-assisted means are shown where the analysis has them.
    assert not dash_analysis.judge_assisted.empty
    assert all(" vs " in line.assisted for line in lines)
    report_analysis = _analysis(session, study, parts=REPORT_PARTS)
    assert verdict_lines(verdict_summary(report_analysis)) == lines
    html = report_of(report_analysis, title="t", study="assisted").html
    assert html.index('id="verdict"') < html.index('id="settings"')
    for line in lines:
        row = html[html.index(f'id="{line.anchor}"') :].split("</tr>")[0]
        assert line.verdict in row and line.winning_rate in row
