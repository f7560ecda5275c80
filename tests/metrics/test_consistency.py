"""Self-consistency across runs against krippendorff and pingouin, and its degenerate cases."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest

from annotator.metrics import self_consistency, self_consistency_table
from tests.metrics.references import pingouin_icc

TOL = 1e-9


def _runs(noise: float, seed: int = 0, n: int = 40, runs: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 5, (n, 1))
    return np.clip(np.round(truth + rng.normal(0, noise, (n, runs))), 0, 5)


def _pingouin_icc_a1(x: np.ndarray) -> tuple[float, tuple[float, float]]:
    value, ci = pingouin_icc(x)["ICC(A,1)"]
    return float(value), tuple(ci)


def test_equals_references():
    x = _runs(0.6)
    res = self_consistency(x)
    for level in ("interval", "ordinal", "nominal"):
        ref = krippendorff.alpha(reliability_data=x.T, level_of_measurement=level)
        assert getattr(res, f"alpha_{level}") == pytest.approx(ref, abs=TOL)
    value, ci = _pingouin_icc_a1(x)
    assert res.icc_a1 == pytest.approx(value, abs=TOL)
    assert res.ci_a1 == pytest.approx(ci, abs=TOL)
    assert res.identical_share == pytest.approx(np.mean(x.max(axis=1) == x.min(axis=1)))
    assert (res.n_items, res.n_complete, res.n_runs, res.integer) == (40, 40, 3, True)


def test_low_variance_judge_scores_higher_than_noisy_one():
    steady, noisy = self_consistency(_runs(0.2)), self_consistency(_runs(1.0))
    assert steady.alpha_interval > noisy.alpha_interval
    assert steady.icc_a1 > noisy.icc_a1
    assert steady.identical_share > noisy.identical_share


def test_fractional_scores_skip_ordinal_and_nominal():
    x = _runs(0.3) + 0.25
    x[0, 0] = 0.1
    res = self_consistency(x)
    assert not res.integer and math.isnan(res.alpha_ordinal) and math.isnan(res.alpha_nominal)
    with pytest.raises(ValueError, match="fractional"):
        self_consistency(x, integer=True)


def test_degenerate_cases():
    with pytest.warns(RuntimeWarning, match="undefined"):
        const = self_consistency(np.full((5, 3), 4.0))
    assert math.isnan(const.alpha_interval) and math.isnan(const.icc_a1)
    assert const.identical_share == 1.0
    # Two items.
    two = np.array([[1.0, 1.0, 2.0], [4.0, 5.0, 4.0]])
    res = self_consistency(two)
    ref = krippendorff.alpha(reliability_data=two.T, level_of_measurement="interval")
    assert res.alpha_interval == pytest.approx(ref, abs=TOL)
    assert res.identical_share == 0.0
    # Missing cells: alpha uses every pairable item, ICC and identical share the complete ones.
    x = _runs(0.5, seed=3)
    x[0, 1] = np.nan
    x[1, :2] = np.nan  # one run left: not pairable
    res = self_consistency(x)
    ref = krippendorff.alpha(reliability_data=x.T, level_of_measurement="interval")
    assert res.alpha_interval == pytest.approx(ref, abs=TOL)
    assert (res.n_items, res.n_complete) == (39, 38)
    assert res.icc_a1 == pytest.approx(_pingouin_icc_a1(x[2:])[0], abs=TOL)
    with pytest.raises(ValueError, match="at least 2 runs"):
        self_consistency(np.ones((4, 1)))
    with pytest.raises(ValueError, match="no item"):
        self_consistency([[1, np.nan], [np.nan, 2]])


def test_table_per_model_scale_and_temperature():
    rows = []
    for model, noise in (("steady", 0.2), ("noisy", 1.0)):
        x = _runs(noise, seed=1)
        for i in range(x.shape[0]):
            for r in range(x.shape[1]):
                rows.append(
                    {
                        "item": i,
                        "model": model,
                        "scale": "0-5",
                        "temperature": 1.0,
                        "run": f"r{r}",
                        "value": x[i, r],
                    }
                )
    rows.append(
        {"item": 0, "model": "once", "scale": "0-5", "temperature": np.nan, "run": "", "value": 2.0}
    )
    table = self_consistency_table(pd.DataFrame(rows))
    by = table.set_index("model")
    assert by.loc["steady", "alpha_interval"] > by.loc["noisy", "alpha_interval"]
    assert by.loc["steady", "alpha_interval"] == pytest.approx(
        self_consistency(_runs(0.2, seed=1)).alpha_interval, abs=TOL
    )
    assert "at least 2 runs" in by.loc["once", "note"]
    assert math.isnan(by.loc["once", "icc_a1"])


def test_table_says_when_an_item_has_two_scores_in_one_run():
    frame = pd.DataFrame(
        {
            "item": [1, 1, 2, 2, 1],
            "model": "m",
            "scale": "s",
            "temperature": 1.0,
            "run": ["a", "b", "a", "b", "a"],
            "value": [1.0, 2.0, 3.0, 3.0, 4.0],
        }
    )
    row = self_consistency_table(frame).iloc[0]
    assert "item '1' has two scores in run 'a'" in row["note"]
    assert math.isnan(row["alpha_interval"])
    with pytest.raises(ValueError, match="no column 'run'"):
        self_consistency_table(frame.drop(columns="run"))
