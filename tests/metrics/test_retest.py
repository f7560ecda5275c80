"""Test-retest reliability against the krippendorff package and pingouin."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest

from annotator.metrics import RetestResult, retest_reliability
from tests.metrics.references import pingouin_icc


def _study(seed, *, raters=4, items=25, noise=0.6):
    """Long table: every rater rates every item twice (sessions 1 and 2), rows shuffled."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 5, items)
    rows = []
    for r in range(raters):
        bias = rng.normal(0, 0.3)
        for session in (1, 2):
            scores = np.clip(truth + bias + rng.normal(0, noise, items), 0, 5).round(2)
            rows += [(f"R{r}", f"i{i}", float(s), session) for i, s in enumerate(scores)]
    frame = pd.DataFrame(rows, columns=["rater", "item", "score", "occasion"])
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _wide(frame):
    return frame.pivot_table(index=["rater", "item"], columns="occasion", values="score")


def _pingouin_icc_a1(wide):
    return float(pingouin_icc(wide.to_numpy())["ICC(A,1)"][0])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_per_rater_and_pooled_match_references(seed, level):
    frame = _study(seed)
    res = retest_reliability(frame, level=level)
    assert isinstance(res, RetestResult)
    wide = _wide(frame)
    for row in res.raters:
        mine = wide.loc[row.rater]
        ref = krippendorff.alpha(reliability_data=mine.to_numpy().T, level_of_measurement=level)
        assert row.alpha == pytest.approx(ref, abs=1e-10)
        assert row.icc_a1 == pytest.approx(_pingouin_icc_a1(mine), abs=1e-9)
        assert row.n_items == 25
    pooled = krippendorff.alpha(reliability_data=wide.to_numpy().T, level_of_measurement=level)
    assert res.alpha == pytest.approx(pooled, abs=1e-10)
    assert res.icc_a1 == pytest.approx(_pingouin_icc_a1(wide), abs=1e-9)
    assert (res.n_pairs, res.n_single, res.n_extra) == (100, 0, 0)
    assert [row.rater for row in res.raters] == list(pd.unique(frame["rater"]))


def test_first_two_ratings_by_occasion_are_used():
    frame = pd.DataFrame(
        {
            "rater": ["a"] * 8 + ["b"],
            "item": [1, 2, 3, 1, 2, 3, 1, 3, 1],
            "score": [1.0, 3.0, 5.0, 1.5, 3.0, 4.5, 9.0, 9.0, 2.0],
            "occasion": [1, 1, 1, 2, 2, 2, 3, 3, 1],
        }
    ).iloc[::-1]  # the order of the rows must not matter
    res = retest_reliability(frame)
    ref = krippendorff.alpha(
        reliability_data=[[1.0, 3.0, 5.0], [1.5, 3.0, 4.5]], level_of_measurement="interval"
    )
    assert res.alpha == pytest.approx(ref)
    assert (res.n_pairs, res.n_single, res.n_extra) == (3, 1, 2)
    assert [row.rater for row in res.raters] == ["a"]


def test_rater_with_one_repeat_has_nan():
    frame = _study(5, raters=2, items=6)
    frame = frame[~((frame.rater == "R1") & (frame.item != "i0") & (frame.occasion == 2))]
    res = retest_reliability(frame)
    one = res.raters[[row.rater for row in res.raters].index("R1")]
    assert one.n_items == 1 and np.isnan(one.alpha) and np.isnan(one.icc_a1)
    assert {row["rater"]: row["alpha"] for row in res.to_dict()["raters"]}["R1"] is None


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        ({"rater": ["a"], "item": [1], "score": [1.0]}, {}, "lacks the column"),
        (
            {"rater": ["a", "a"], "item": [1, 1], "score": ["x", 2], "occasion": [1, 2]},
            {},
            "number",
        ),
        (
            {"rater": ["a", "a"], "item": [1, 1], "score": [None, 2.0], "occasion": [1, 2]},
            {},
            "missing score",
        ),
        (
            {"rater": ["a", "a"], "item": [1, 1], "score": [1, 2], "occasion": [1, 2]},
            {},
            "at least 2",
        ),
        (
            {
                "rater": ["a"] * 4,
                "item": [1, 2, 1, 2],
                "score": [1, 2, 1, 2],
                "occasion": [1, 1, 2, 2],
            },
            {"level": "cardinal"},
            "level",
        ),
        ({"rater": ["a"], "item": [1, 2]}, {}, "equal lengths"),
    ],
)
def test_input_checks(data, kwargs, message):
    with pytest.raises(ValueError, match=message):
        retest_reliability(data, **kwargs)
