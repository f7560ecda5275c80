"""Correlations against scipy (coefficients, p-values, Pearson's interval) and intervals'
coverage by simulation."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annotator.metrics import correlation, llm_correlations

TOL = 1e-9


def _pair(seed: int, n: int = 40):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.6 * x + rng.normal(scale=0.8, size=n)
    # Integer scores, as on a 0-5 scale: ties for the rank coefficients.
    return np.clip(np.round(2.5 + x), 0, 5), np.clip(np.round(2.5 + y), 0, 5)


@pytest.mark.parametrize("seed", range(5))
def test_pearson_and_its_interval_equal_scipy(seed):
    x, y = _pair(seed)
    res = correlation(x, y, method="pearson", confidence=0.9)
    ref = stats.pearsonr(x, y)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert res.estimate == pytest.approx(ref.statistic, abs=TOL)
    assert res.p_value == pytest.approx(ref.pvalue, abs=TOL)
    assert res.ci[0] == pytest.approx(ci.low, abs=TOL)
    assert res.ci[1] == pytest.approx(ci.high, abs=TOL)


@pytest.mark.parametrize("seed", range(5))
def test_rank_coefficients_equal_scipy(seed):
    x, y = _pair(seed)
    rho = correlation(x, y, method="spearman")
    tau = correlation(x, y, method="kendall")
    ref_rho, ref_tau = stats.spearmanr(x, y), stats.kendalltau(x, y, variant="b")
    assert rho.estimate == pytest.approx(ref_rho.statistic, abs=TOL)
    assert rho.p_value == pytest.approx(ref_rho.pvalue, abs=TOL)
    assert tau.estimate == pytest.approx(ref_tau.statistic, abs=TOL)
    assert tau.p_value == pytest.approx(ref_tau.pvalue, abs=TOL)


def test_rank_intervals_follow_fieller_hartley_pearson():
    # Independent computation of the documented formula: artanh(r) +- z * sqrt(c / (n - d)).
    x, y = _pair(7, n=25)
    for method, c, d in (("spearman", 1.06, 3), ("kendall", 0.437, 4)):
        res = correlation(x, y, method=method)
        z = np.arctanh(res.estimate)
        half = 1.959963984540054 * math.sqrt(c / (25 - d))
        assert res.ci == pytest.approx((np.tanh(z - half), np.tanh(z + half)), abs=TOL)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_interval_coverage_by_simulation(method):
    # Bivariate normal with rho = 0.5, n = 50: the population values of Spearman's rho and
    # Kendall's tau follow from rho (Pearson 1907; Greiner 1909). 400 samples: a 95%
    # interval should cover 91-99% of the time (binomial sd ~1.1 points).
    rho = 0.5
    truth = {
        "pearson": rho,
        "spearman": 6 / math.pi * math.asin(rho / 2),
        "kendall": 2 / math.pi * math.asin(rho),
    }[method]
    rng = np.random.default_rng(11)
    cov = [[1, rho], [rho, 1]]
    hits = 0
    for _ in range(400):
        xy = rng.multivariate_normal([0, 0], cov, size=50)
        low, high = correlation(xy[:, 0], xy[:, 1], method=method).ci
        hits += low <= truth <= high
    assert 0.91 <= hits / 400 <= 0.99


def test_degenerate_cases():
    with pytest.warns(RuntimeWarning, match="constant"):
        res = correlation([2, 2, 2, 2], [1, 2, 3, 4])
    assert math.isnan(res.estimate) and math.isnan(res.ci[0])
    # Two items: r is +-1 and the interval carries no information, as scipy's.
    two = correlation([1, 2], [3, 5])
    assert two.estimate == pytest.approx(1.0)
    assert two.ci == (-1.0, 1.0)
    assert tuple(stats.pearsonr([1, 2], [3, 5]).confidence_interval()) == (-1.0, 1.0)
    # Missing cells: raise, or drop the pair.
    with pytest.raises(ValueError, match="missing"):
        correlation([1, 2, np.nan, 4], [1, 2, 3, 5])
    omitted = correlation([1, 2, np.nan, 4, 3], [1, 2, 3, 5, 2], nan_policy="omit")
    assert omitted.n_items == 4
    assert omitted.estimate == pytest.approx(stats.pearsonr([1, 2, 4, 3], [1, 2, 5, 2])[0])
    with pytest.raises(ValueError, match="method"):
        correlation([1, 2], [1, 2], method="cosine")
    with pytest.raises(ValueError, match="at least 2"):
        correlation([1], [1])


def test_llm_correlations_against_scipy_per_model_and_ensemble():
    rng = np.random.default_rng(3)
    items = [f"i{k}" for k in range(30)]
    humans = pd.DataFrame(rng.integers(0, 6, size=(30, 4)), index=items, columns=list("abcd"))
    llm = pd.DataFrame(
        {"m1": humans.mean(axis=1) + rng.normal(0, 0.5, 30), "m2": rng.uniform(0, 5, 30)},
        index=items,
    )
    llm.loc["i3", "m2"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = llm_correlations(humans, llm.iloc[::-1])  # paired by index, not position
    by = {(r.model, r.method): r for r in rows}
    mean = humans.mean(axis=1)
    ens = llm.mean(axis=1, skipna=False).dropna()
    assert by["ensemble", "kendall"].estimate == pytest.approx(
        stats.kendalltau(mean[ens.index], ens).statistic, abs=TOL
    )
    assert by["ensemble", "kendall"].n_items == 29
    m2 = llm["m2"].dropna()
    assert by["m2", "spearman"].estimate == pytest.approx(
        stats.spearmanr(mean[m2.index], m2).statistic, abs=TOL
    )
    assert by["m1", "pearson"].estimate == pytest.approx(
        stats.pearsonr(mean, llm["m1"]).statistic, abs=TOL
    )
    assert by["m1", "pearson"].to_dict()["interval"] == "fisher-z"


def test_llm_correlations_says_when_no_item_has_every_raters_rating():
    # Each item misses one of the three raters: no complete row, so no human mean.
    humans = pd.DataFrame(
        {"a": [1.0, np.nan, 3.0], "b": [np.nan, 2.0, 3.0], "c": [1.0, 2.0, np.nan]},
        index=["i1", "i2", "i3"],
    )
    llm = pd.DataFrame({"m1": [1.0, 2.0, 3.0]}, index=humans.index)
    with pytest.raises(ValueError, match=r"0 of 3 items have every one of the 3 raters"):
        llm_correlations(humans, llm)
