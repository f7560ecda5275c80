"""Judge-assisted estimates in the study's analysis, the dashboard and the report.

A synthetic study whose last items no human rated (the LLMs scored them all): the
analysis's rows are :func:`ppi_mean` on the item scores read here straight from the
frames; every number the dashboard shows is the report's table's (the checks of
test_one_analysis); the section is absent when every item is rated.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from flask import render_template
from lxml import html as lxml_html

from annotator.analysis.settings import study_settings
from annotator.analysis.study_analysis import analyse, report_tables
from annotator.data.frames import study_frames
from annotator.metrics import ppi_mean
from annotator.render.dashboard import study_dashboard
from annotator.render.report.html import render_report
from annotator.services.dashboards import LiveDashboard
from tests.analysis import one_analysis

# 100 items over two benchmarks: the last 30 unrated, so each benchmark has 35 rated
# items (at least the 30 asked for) and 15 the judges alone scored.
SPEC = {"n_items": 100, "n_raters": 3, "models": ("gpt", "llama"), "seed": 5}


@pytest.fixture
def partly_rated(session, make_study):
    study = make_study(**SPEC, unrated_items=30, missing=0.05, repeats=4, slug="partly")
    frames = study_frames(session, study)
    settings = replace(study_settings(study), confidence=one_analysis.CONFIDENCE, n_resamples=20)
    return frames, settings, study


def _item_scores(frames, benchmark, scale, judge, temperature):
    """Human mean and judge score per item, from the long frames (runs averaged)."""
    r = frames.ratings
    r = r[(r["benchmark"] == benchmark) & (r["scale"] == scale)]
    r = r[~r["is_repeat"] & ~r["is_attention_check"]]
    human = r.groupby("item")["value"].mean()
    llm = frames.llm
    llm = llm[(llm["benchmark"] == benchmark) & (llm["scale"] == scale) & (llm["model"] == judge)]
    llm = llm[np.isclose(llm["temperature"].astype(float), temperature)]
    return human, llm.groupby("item")["value"].mean()


def test_rows_are_ppi_mean_of_the_item_scores(partly_rated):
    frames, settings, _ = partly_rated
    analysis = analyse(frames, settings)
    table = analysis.judge_assisted
    assert len(table) == 2 * 3 * 2  # benchmarks x scales x judges
    assert table.equals(analysis.tables.judge_assisted)
    for row in table.itertuples(index=False):
        human, judge = _item_scores(frames, row.benchmark, row.scale, row.judge, 1.0)
        unrated = judge.index.difference(human.index)
        assert (len(human), len(unrated)) == (row.n_rated, row.n_unrated) == (35, 15)
        expected = ppi_mean(
            human.to_numpy(),
            judge.reindex(human.index).to_numpy(),
            judge.reindex(unrated).to_numpy(),
            confidence=one_analysis.CONFIDENCE,
        )
        assert row.estimate == pytest.approx(expected.estimate, abs=1e-12)
        assert (row.estimate_low, row.estimate_high) == pytest.approx(expected.interval)
        assert row.human_mean == pytest.approx(human.mean(), abs=1e-12)
        assert (row.human_mean_low, row.human_mean_high) == pytest.approx(expected.human_interval)
        assert row.effective_n == pytest.approx(expected.effective_n)
        # The synthetic judges follow the items closely: the judge narrows the interval.
        assert row.estimate_high - row.estimate_low < row.human_mean_high - row.human_mean_low


def test_every_dashboard_number_is_the_reports(app, partly_rated):
    frames, settings, study = partly_rated
    dash = study_dashboard(frames, settings=settings)
    tables = report_tables(frames, settings=settings)
    assert len(dash.judge_assisted) == 12
    paths = [p for p, _ in one_analysis.shown_numbers(dash) if p[0] == "judge_assisted"]
    assert len(paths) == 36
    # The whole check of test_one_analysis, judge-assisted numbers included.
    one_analysis.assert_every_dashboard_number_is_the_reports(dash, tables, settings)
    with app.test_request_context():
        page = render_template("lead/_dashboard.html", study=study, live=LiveDashboard(dash))
    assert "Human mean score, judge-assisted" in page
    for row in dash.judge_assisted:
        assert row.estimate.text in page and row.human_mean.text in page
    report = lxml_html.fromstring(render_report(tables, study=study.slug))
    shown = report.xpath("//table[@data-table='judge_assisted']/tbody/tr")
    assert len(shown) == 12


def test_no_section_when_every_item_is_rated(app, session, make_study):
    study = make_study(**SPEC, slug="rated")
    frames = study_frames(session, study)
    dash = study_dashboard(frames)
    tables = report_tables(frames)
    assert dash.judge_assisted == () and tables.judge_assisted.empty
    with app.test_request_context():
        page = render_template("lead/_dashboard.html", study=study, live=LiveDashboard(dash))
    assert "judge-assisted" not in page
    report = render_report(tables, study=study.slug)
    assert "judge_assisted" not in report and "judge-assisted" not in report


def test_too_few_rated_items_or_a_judge_missing_an_item_leave_rows_out(session, make_study):
    # 60 items, 40 unrated: 10 rated items per benchmark, fewer than 30.
    few = make_study(n_items=60, n_raters=2, models=("gpt",), unrated_items=40, slug="few")
    assert analyse(study_frames(session, few)).judge_assisted.empty
    frames = study_frames(session, make_study(**SPEC, unrated_items=30, slug="gap"))
    # gpt has no score of one unrated item: its rows of that benchmark and scale go.
    llm = frames.llm
    dropped = llm.index[(llm["model"] == "gpt") & (llm["item"] == "item-00099")]
    benchmark = llm.loc[dropped[0], "benchmark"]
    frames = replace(frames, llm=llm.drop(dropped))
    table = analyse(frames).judge_assisted
    gone = table[(table["judge"] == "gpt") & (table["benchmark"] == benchmark)]
    assert gone.empty and len(table) == 12 - 3
