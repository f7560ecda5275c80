"""What tests/analysis/test_one_analysis.py checks, for the tests of other study shapes:
every number the dashboard shows is the report's (value, interval, text printed)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pandas as pd
import pytest

from annotator.analysis.columns import POOLED
from annotator.analysis.matrices import temperature_label
from annotator.render.dashboard_types import Shown

CONFIDENCE = 0.90
# The alt-test's dashboard verdict and the report's epsilon grid are computed by two
# functions of annotator.metrics.alttest; everything else is the same computation.
TOL = 1e-12


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
    if field == "statistics":
        # Any further statistic (analysis.model.Statistic): its row of the report's table.
        shown_row = part.statistics[path[3]]
        frame = tables.statistics
        mine = frame[(frame["scale"] == scale) & (frame["statistic"] == shown_row.key)]
        if shown_row.model is None:
            mine = mine[mine["model"].isna()]
        else:
            mine = mine[mine["model"] == shown_row.model]
        assert len(mine) == 1, f"{len(mine)} rows of {shown_row.key} in the statistics table"
        return mine.iloc[0], "value", "", 3
    if field == "raters":
        rater = part.raters[path[3]].rater
        return _row(tables.rater_quality, scale=scale, rater=rater), "median_seconds", None, 1
    raise AssertionError(f"no report table for the dashboard's {path}")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def assert_every_dashboard_number_is_the_reports(dash, tables, settings) -> None:
    """Every Shown of ``dash`` is in a row of the report's ``tables``: its value, its
    interval and the text printed."""
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
            # "": the statistics table's own low and high columns.
            stem = f"{interval}_" if interval else ""
            low, high = row[f"{stem}low"], row[f"{stem}high"]
            assert (number.low, number.high) == pytest.approx((low, high), abs=TOL), where
            text += f" [{low:.{digits}f}, {high:.{digits}f}]"
            assert number.ci_label == "90% CI", where
            checked["interval"] += 1
        assert number.text == text, where
    # The study has numbers of every kind, intervals among them.
    kinds = {path[2] for path, _ in numbers}
    assert kinds >= {"icc_a1", "icc_ak", "alpha", "retest", "retest_pooled", "ensemble"}
    assert kinds >= {"models", "alttest", "consistency", "raters", "statistics"}
    assert checked["value"] > 50 and checked["interval"] >= 10
