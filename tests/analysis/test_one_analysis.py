"""One analysis: every number the dashboard shows is the report's, at the study's confidence.

The dashboard (:func:`study_dashboard`) and the report's tables
(:func:`report_tables`) are computed apart on one study with humans and two LLMs and a
confidence of 0.90, not the default 0.95. Every :class:`Shown` of the dashboard is found
in a row of the report's tables (value, interval and the text printed), and the
rendered dashboard prints each text with the interval's coverage.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import replace
from typing import Any

import pandas as pd
import pytest
from flask import render_template

from annotator.analysis.columns import POOLED
from annotator.analysis.dashboard import study_dashboard
from annotator.analysis.dashboard_types import Shown
from annotator.analysis.live import LiveDashboard
from annotator.analysis.matrices import temperature_label
from annotator.analysis.settings import study_settings
from annotator.analysis.study_analysis import DASHBOARD_PARTS, PARTS, analyse
from annotator.analysis.tables import report_tables
from annotator.data.frames import study_frames

CONFIDENCE = 0.90
# The alt-test's dashboard verdict and the report's epsilon grid are computed by two
# functions of annotator.metrics.alttest; everything else is the same computation.
TOL = 1e-12


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


def shown_numbers(value: Any, path: tuple = ()) -> list[tuple[tuple, Shown]]:
    """Every Shown in a dashboard, with its path of (field, index or key) steps."""
    if isinstance(value, Shown):
        return [(path, value)]
    if dataclasses.is_dataclass(value):
        out = []
        for f in dataclasses.fields(value):
            out += shown_numbers(getattr(value, f.name), (*path, f.name))
        return out
    if isinstance(value, tuple | list):
        out = []
        for i, v in enumerate(value):
            out += shown_numbers(v, (*path, i))
        return out
    return []


def _row(frame: pd.DataFrame, **keys: Any) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for column, value in keys.items():
        if isinstance(value, float):
            mask &= (frame[column] - value).abs() < 1e-12
        else:
            mask &= frame[column] == value
    found = frame[mask]
    assert len(found) == 1, f"{len(found)} rows of {keys} in the report's table"
    return found.iloc[0]


def report_value(dash, tables, settings, path: tuple) -> tuple[pd.Series, str, str | None, int]:
    """The report's row for a dashboard number at ``path``: (row, value column, interval
    column stem or None, digits the dashboard prints)."""
    if path[0] == "judge_assisted":
        shown_row = dash.judge_assisted[path[1]]
        keys = {"benchmark": shown_row.benchmark, "scale": shown_row.scale}
        row = _row(tables.judge_assisted, **keys, judge=shown_row.judge)
        if path[2] == "effective_n":
            return row, "effective_n", None, 0
        return row, path[2], path[2], 3
    part = dash.scales[path[1]]
    scale = part.scale
    field = path[2]
    if field in ("icc_a1", "icc_ak"):
        row = _row(tables.scales, scale=scale)
        column = f"{field}_human"
        return row, column, column, 3
    if field == "alpha":
        return _row(tables.scales, scale=scale), "alpha_human", None, 3
    if field in ("retest", "retest_pooled"):
        rater = part.retest[path[3]].rater if field == "retest" else POOLED
        stat = path[-1]
        return _row(tables.retest, scale=scale, rater=rater), stat, None, 3
    if field == "ensemble":
        row = _row(tables.scales, scale=scale)
        if path[-1] == "icc_a1":
            return row, "icc_human_llm", "icc_human_llm", 3
        return row, "nmae", None, 3
    if field == "models":
        model = part.models[path[3]].model
        row = _row(tables.models, scale=scale, model=model)
        if path[-1] == "icc_a1":
            return row, "icc_human_llm", "icc_human_llm", 3
        return row, "nmae", None, 3
    if field == "alttest":
        model = part.alttest[path[3]].model
        row = _row(tables.alttest, scale=scale, model=model, epsilon=float(settings.epsilon))
        return row, path[-1], None, 2
    if field == "consistency":
        shown_row = part.consistency[path[3]]
        rows = tables.consistency[
            (tables.consistency["scale"] == scale)
            & (tables.consistency["model"] == shown_row.model)
        ]
        rows = rows[rows["temperature"].map(temperature_label) == shown_row.temperature]
        assert len(rows) == 1
        column = {"alpha": "alpha_interval", "icc_a1": "icc_a1", "identical": "identical_share"}
        stat = path[-1]
        return rows.iloc[0], column[stat], "icc_a1" if stat == "icc_a1" else None, 3
    if field == "raters":
        rater = part.raters[path[3]].rater
        return _row(tables.rater_quality, scale=scale, rater=rater), "median_seconds", None, 1
    raise AssertionError(f"no report table for the dashboard's {path}")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def test_every_dashboard_number_is_the_reports(study_numbers):
    dash, tables, settings, _ = study_numbers
    numbers = shown_numbers(dash)
    assert len(numbers) > 60
    checked = {"value": 0, "interval": 0}
    for path, number in numbers:
        row, column, interval, digits = report_value(dash, tables, settings, path)
        expected = row[column]
        where = f"{'.'.join(map(str, path))} against {column}"
        if _missing(expected):
            assert number.value is None, where
            assert number.text == "n/a" and number.reason, where
            continue
        assert number.value == pytest.approx(float(expected), abs=TOL, rel=0), where
        text = f"{float(expected):.{digits}f}"
        checked["value"] += 1
        if interval is not None:
            low, high = row[f"{interval}_low"], row[f"{interval}_high"]
            assert (number.low, number.high) == pytest.approx((low, high), abs=TOL), where
            text += f" [{low:.{digits}f}, {high:.{digits}f}]"
            assert number.ci_label == "90% CI", where
            checked["interval"] += 1
        assert number.text == text, where
    # The study has numbers of every kind, intervals among them.
    kinds = {path[2] for path, _ in numbers}
    assert kinds >= {"icc_a1", "icc_ak", "alpha", "retest", "retest_pooled", "ensemble"}
    assert kinds >= {"models", "alttest", "consistency", "raters"}
    assert checked["value"] > 50 and checked["interval"] >= 10


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
    from annotator.analysis.report.agreement_sections import agreement_sections

    _dash, tables, _settings, _study = study_numbers
    captions = {section.key: section.caption for section in agreement_sections(tables)}
    assert "90% Fisher-z intervals" in captions["correlations"]
    assert "with its 90% interval" in captions["consistency"]
    assert not any("95%" in caption for caption in captions.values())
