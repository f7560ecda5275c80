"""One analysis: every number the dashboard shows is the report's, at the study's confidence.

The dashboard (:func:`study_dashboard`) and the report's tables
(:func:`report_tables`) are computed apart on one study with humans and two LLMs and a
confidence of 0.90, not the default 0.95. Every :class:`Shown` of the dashboard is found
in a row of the report's tables (value, interval and the text printed), and the
rendered dashboard prints each text with the interval's coverage.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from flask import render_template

from annotator.analysis.model import DASHBOARD_PARTS, PARTS
from annotator.analysis.settings import study_settings
from annotator.analysis.study_analysis import analyse, report_tables
from annotator.data.frames import study_frames
from annotator.render.dashboard import study_dashboard
from annotator.services.dashboards import LiveDashboard
from tests.analysis.one_analysis import (
    CONFIDENCE,
    assert_every_dashboard_number_is_the_reports,
    shown_numbers,
)


@pytest.fixture
def study_numbers(session, make_study):
    """(dashboard, report tables, settings, study) of one study at confidence 0.90."""
    study = make_study(
        n_items=40, n_raters=4, models=("gpt", "llama"), repeats=4, missing=0.05, seed=11
    )
    frames = study_frames(session, study)
    settings = replace(study_settings(study), confidence=CONFIDENCE, n_resamples=20)
    return (
        study_dashboard(frames, settings=settings),
        report_tables(frames, settings=settings),
        settings,
        study,
    )


def test_every_dashboard_number_is_the_reports(study_numbers):
    dash, tables, settings, _ = study_numbers
    assert_every_dashboard_number_is_the_reports(dash, tables, settings)


def test_the_intervals_are_narrower_than_at_the_default_confidence(session, study_numbers):
    # First principles: a 90% interval lies within the 95% one of the same estimate.
    # The comparison above cannot see a confidence dropped by both sides; this can.
    dash, _, settings, study = study_numbers
    default = study_dashboard(
        study_frames(session, study), settings=replace(settings, confidence=0.95)
    )
    at_95 = dict(shown_numbers(default))
    narrower = 0
    for path, number in shown_numbers(dash):
        if number.low is None:
            continue
        wide = at_95[path]
        assert number.value == wide.value, path
        assert wide.low < number.low <= number.value <= number.high < wide.high, path
        assert wide.ci_label == "95% CI"
        narrower += 1
    assert narrower >= 10


def test_the_rendered_dashboard_prints_the_same_text(app, study_numbers):
    dash, tables, _, study = study_numbers
    assert tables.settings["confidence"] == CONFIDENCE and dash.ci_label == "90% CI"
    with app.test_request_context():
        page = render_template("lead/_dashboard.html", study=study, live=LiveDashboard(dash))
    assert "95% CI" not in page
    assert "ICC(A,1) [90% CI]" in page
    for path, number in shown_numbers(dash):
        if number.value is not None:
            assert number.text in page, ".".join(map(str, path))


def test_the_dashboard_computes_only_its_parts(session, make_study):
    study = make_study(n_items=12, n_raters=3, models=("gpt", "llama"), seed=2)
    frames = study_frames(session, study)
    quick = analyse(frames, parts=DASHBOARD_PARTS)
    assert quick.tables is None and all(part.panel is not None for part in quick.scales)
    full = analyse(frames)
    assert full.tables is not None
    # The same panel gives the dashboard's ICC and Table 2's.
    for q, f in zip(quick.scales, full.scales, strict=True):
        assert q.panel.human_icc == f.panel.human_icc
    with pytest.raises(ValueError, match="parts: unknown part 'figures'"):
        analyse(frames, parts=(*PARTS, "figures"))


def test_the_report_captions_give_the_studys_coverage(study_numbers):
    # The correlation and self-consistency tables are computed at the study's
    # confidence; their captions must not say 95%.
    from annotator.render.report.agreement_sections import agreement_sections

    _dash, tables, _settings, _study = study_numbers
    captions = {section.key: section.caption for section in agreement_sections(tables)}
    assert "90% Fisher-z intervals" in captions["correlations"]
    assert "with its 90% interval" in captions["consistency"]
    assert not any("95%" in caption for caption in captions.values())
