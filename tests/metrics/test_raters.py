"""Rater quality: leave-one-out agreement against pingouin, the flags at their thresholds."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pingouin as pg
import pytest

from annotator.metrics.raters import rater_quality


def _matrix(seed: int = 0, n_items: int = 40, n_raters: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.normal(5, 2, n_items)
    values = truth[:, None] + rng.normal(0, 1, (n_items, n_raters))
    values[:, 0] += 1.5  # a biased rater: absolute agreement sees it
    values = np.clip(np.round(values, 1), 0, 10)
    values[rng.random(values.shape) < 0.15] = np.nan
    return pd.DataFrame(
        values,
        index=pd.Index([f"i{i}" for i in range(n_items)], name="item"),
        columns=[f"r{j}" for j in range(n_raters)],
    )


def test_leave_one_out_icc_and_mae_match_pingouin_and_pandas():
    wide = _matrix()
    result = rater_quality(wide, scale_min=0, scale_max=10)
    for rater in wide.columns:
        others = wide.drop(columns=rater).mean(axis=1, skipna=True)
        pair = pd.DataFrame({"self": wide[rater], "others": others}).dropna()
        long = pair.reset_index().melt(id_vars="item", var_name="who", value_name="score")
        with warnings.catch_warnings():
            # pingouin 0.7 uses a pandas keyword that pandas 3.1 deprecates; not ours.
            warnings.filterwarnings("ignore", message="The inplace keyword")
            table = pg.intraclass_corr(long, targets="item", raters="who", ratings="score")
        expected = table.set_index("Type").loc["ICC(A,1)", "ICC"]
        row = result.rater(rater)
        assert row.n_compared == len(pair)
        assert row.loo_icc_a1 == pytest.approx(expected, abs=1e-10)
        mae = (pair["self"] - pair["others"]).abs().mean() / 10
        assert row.loo_mae_share == pytest.approx(mae, rel=1e-12)
    # The biased rater agrees least and is furthest off.
    icc_by_rater = {r.rater: r.loo_icc_a1 for r in result.raters}
    assert min(icc_by_rater, key=icc_by_rater.get) == "r0"


@pytest.mark.parametrize(("n_same", "flagged"), [(8, True), (7, False), (10, True)])
def test_straight_lining_at_the_threshold(n_same, flagged):
    wide = _matrix(n_items=10)
    wide = wide.fillna(1.0)
    wide["r1"] = [3.3] * n_same + [4.0 + k for k in range(10 - n_same)]
    result = rater_quality(wide, scale_min=0, scale_max=10)
    row = result.rater("r1")
    assert row.modal_value == 3.3
    assert row.modal_share == pytest.approx(n_same / 10)
    assert row.straight_lining is flagged
    assert result.straight_share == 0.8


def test_speeding_against_the_pooled_median():
    wide = _matrix(n_items=20, n_raters=6)
    seconds = pd.DataFrame(20.0, index=wide.index, columns=wide.columns)
    seconds["r2"] = 5.0  # a quarter of the pooled median (20 s): below 0.3
    seconds["r3"] = 7.0  # 0.35 of it: not flagged
    result = rater_quality(wide, scale_min=0, scale_max=10, seconds=seconds)
    assert result.study_median_seconds == 20.0
    assert [r.speeding for r in result.raters] == [False, False, True, False, False, False]
    assert result.rater("r2").median_seconds == 5.0
    stricter = rater_quality(wide, scale_min=0, scale_max=10, seconds=seconds, speed_fraction=0.4)
    assert stricter.rater("r3").speeding


def test_without_timings_nothing_is_speeding():
    result = rater_quality(_matrix(), scale_min=0, scale_max=10)
    assert not any(r.speeding for r in result.raters)
    assert np.isnan(result.study_median_seconds)
    assert result.to_dict()["raters"][0]["median_seconds"] is None


def test_a_rater_alone_on_their_items_has_no_comparison():
    wide = pd.DataFrame({"a": [1.0, 2.0, np.nan], "b": [np.nan, np.nan, 3.0]})
    row = rater_quality(wide, scale_min=0, scale_max=5).rater("a")
    assert row.n_items == 2 and row.n_compared == 0
    assert np.isnan(row.loo_icc_a1) and np.isnan(row.loo_mae_share)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scale_min": 5, "scale_max": 5}, "scale_max"),
        ({"straight_share": 0}, "straight_share"),
        ({"speed_fraction": 1.0}, "speed_fraction"),
    ],
)
def test_bad_options(kwargs, message):
    options = {"scale_min": 0, "scale_max": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        rater_quality(_matrix(), **options)


def test_ratings_must_be_a_frame():
    with pytest.raises(ValueError, match="ratings must be"):
        rater_quality(np.zeros((3, 3)), scale_min=0, scale_max=1)
