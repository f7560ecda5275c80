"""Combining an LLM's runs: each rule against a plain-Python reference, temperatures kept apart."""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd
import pytest

from annotator.metrics.runs import (
    aggregate_run_columns,
    aggregate_run_dicts,
    aggregate_runs,
    majority,
)


def _scores(rng: np.random.Generator, *, fractional: bool) -> pd.DataFrame:
    rows = []
    for i in range(12):
        for model in ("b-model", "a-model"):
            for run in rng.permutation(4):
                value = rng.uniform(0, 5) if fractional else float(rng.integers(0, 4))
                rows.append((f"i{i}", model, f"r{run}", 1.0, value))
    # A missing cell: model a has no score of i0 at all.
    rows = [r for r in rows if not (r[0] == "i0" and r[1] == "a-model")]
    return pd.DataFrame(rows, columns=["item", "model", "run", "temperature", "value"])


def _reference(scores: pd.DataFrame, how: str) -> dict[tuple[str, str], float]:
    """Plain-Python combination of each (item, model)'s values in row order."""
    groups: dict[tuple[str, str], list[float]] = {}
    for row in scores.itertuples():
        groups.setdefault((row.item, row.model), []).append(row.value)
    out = {}
    for key, values in groups.items():
        if how == "mean":
            out[key] = statistics.fmean(values)
        elif how == "median":
            out[key] = statistics.median(values)
        elif how == "first":
            out[key] = values[0]
        else:  # majority: statistics.multimode gives every most frequent value
            out[key] = statistics.median(statistics.multimode(values))
    return out


@pytest.mark.parametrize("how", ["mean", "median", "majority", "first"])
@pytest.mark.parametrize("fractional", [False, True])
def test_each_rule_matches_plain_python(how, fractional):
    scores = _scores(np.random.default_rng(3), fractional=fractional)
    wide = aggregate_runs(scores, how=how)
    assert list(wide.columns) == ["a-model", "b-model"]
    assert list(wide.index) == [f"i{i}" for i in range(12)]
    assert np.isnan(wide.loc["i0", "a-model"])
    for (item, model), expected in _reference(scores, how).items():
        assert wide.loc[item, model] == pytest.approx(expected, rel=1e-12)


def test_each_gives_one_column_per_run():
    scores = _scores(np.random.default_rng(4), fractional=True)
    wide = aggregate_runs(scores, how="each")
    assert sorted(wide.columns) == [f"{m}#r{k}" for m in ("a-model", "b-model") for k in range(4)]
    row = scores.iloc[5]
    assert wide.loc[row["item"], f"{row['model']}#{row['run']}"] == row["value"]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([3, 3, 4], 3.0),
        ([3, 4, 4, 3], 3.5),  # a tie: the median of 3 and 4
        ([1.2, 3.4, 2.0], 2.0),  # all differ: every value ties, the median
        ([2, 2, 5, 5, 9], 3.5),
        ([np.nan, 1, 1], 1.0),
    ],
)
def test_majority_ties(values, expected):
    assert majority(np.array(values, dtype=float)) == expected


def test_majority_of_nothing_is_nan():
    assert np.isnan(majority(np.array([np.nan])))


def test_temperatures_are_never_pooled():
    scores = pd.DataFrame(
        {
            "item": ["a", "a", "b", "b"],
            "model": ["m", "m", "m", "m"],
            "run": ["greedy", "s1", "greedy", "s1"],
            "temperature": [0.0, 1.0, 0.0, 1.0],
            "value": [1.0, 3.0, 2.0, 4.0],
        }
    )
    with pytest.raises(ValueError, match=r"'m' has scores at several temperatures \(0, 1\)"):
        aggregate_runs(scores, how="mean")
    # An unknown temperature is a temperature of its own.
    scores["temperature"] = [np.nan, 1.0, np.nan, 1.0]
    with pytest.raises(ValueError, match=r"\(1, not recorded\)"):
        aggregate_runs(scores, how="mean")


@pytest.mark.parametrize(
    ("how", "column", "message"),
    [("avg", None, "how must be one of"), ("mean", "value", "lacks the column")],
)
def test_bad_arguments(how, column, message):
    scores = _scores(np.random.default_rng(0), fractional=False)
    if column:
        scores = scores.drop(columns=[column])
    with pytest.raises(ValueError, match=message):
        aggregate_runs(scores, how=how)


@pytest.mark.parametrize("how", ["mean", "median", "majority", "first"])
def test_each_columns_combine_back_to_the_same(how):
    """An ``each`` export aggregated later equals aggregating at once."""
    scores = _scores(np.random.default_rng(5), fractional=False)
    # Sort by run so that ``first`` (row order) and column order agree.
    scores = scores.sort_values(["run"], kind="stable")
    each = aggregate_runs(scores, how="each")
    once = aggregate_runs(scores, how=how)
    later = aggregate_run_columns(each, how=how)
    pd.testing.assert_frame_equal(later.reindex(once.index), once, check_names=False)
    dicts = {c: each[c].dropna().to_dict() for c in each.columns}
    combined = aggregate_run_dicts(dicts, how=how)
    assert combined["a-model"]["i3"] == pytest.approx(once.loc["i3", "a-model"])


def test_columns_without_runs_are_kept():
    wide = pd.DataFrame({"gpt": [1.0, 2.0], "llama": [3.0, np.nan]}, index=["x", "y"])
    assert aggregate_run_columns(wide, how="median") is wide
