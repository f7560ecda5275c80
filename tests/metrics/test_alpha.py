from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.metrics import krippendorff_alpha

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: observers
# A-D (rows) x units 1-12 (columns), missing values as NaN.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_example(level, published):
    value = krippendorff_alpha(KRIPPENDORFF_2011.T, level=level)
    assert value == pytest.approx(published, abs=5e-4)
    package = krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level)
    assert value == pytest.approx(package, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_krippendorff_package(level, seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 6, size=(30, 1))
    x = np.clip(truth + rng.integers(-1, 2, size=(30, 5)), 0, 6).astype(float)
    x[rng.random(x.shape) < 0.25] = nan
    expected = krippendorff.alpha(reliability_data=x.T, level_of_measurement=level)
    assert krippendorff_alpha(x, level=level) == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_continuous_scores_agree_with_package(level):
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 100, size=(25, 4)).round(2)
    x[rng.random(x.shape) < 0.2] = nan
    expected = krippendorff.alpha(reliability_data=x.T, level_of_measurement=level)
    assert krippendorff_alpha(x, level=level) == pytest.approx(expected, abs=1e-10)


def test_large_continuous_interval_runs():
    # 5,000 items x 12 raters of fractional scores: the values x values matrix of the
    # krippendorff package would not fit in memory.
    rng = np.random.default_rng(0)
    truth = rng.uniform(0, 100, size=(5000, 1))
    x = truth + rng.normal(scale=5, size=(5000, 12))
    value = krippendorff_alpha(x, level="interval")
    # Expected agreement ~ var(truth) / (var(truth) + 25) for this design.
    assert value == pytest.approx(833.3 / (833.3 + 25), abs=0.01)


def test_unpairable_items_are_ignored():
    with_single = np.vstack([KRIPPENDORFF_2011.T, [7, nan, nan, nan]])
    assert krippendorff_alpha(with_single, level="interval") == krippendorff_alpha(
        KRIPPENDORFF_2011.T, level="interval"
    )


def test_single_value_is_nan():
    assert np.isnan(krippendorff_alpha([[1, 1], [1, 1]], level="interval"))


@pytest.mark.parametrize(
    ("ratings", "level", "message"),
    [
        ([[1, 2], [2, 3]], "metric", "level"),
        ([[1, nan], [nan, 2]], "nominal", "two ratings"),
        ([[-1, 2], [2, 3]], "ratio", "non-negative"),
        ([1, 2, 3], "interval", "2-D"),
    ],
)
def test_input_checks(ratings, level, message):
    with pytest.raises(ValueError, match=message):
        krippendorff_alpha(ratings, level=level)


@settings(max_examples=50, deadline=None)
@given(
    values=st.lists(st.integers(0, 20), min_size=2, max_size=15).filter(lambda v: len(set(v)) > 1),
    raters=st.integers(2, 6),
    level=st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
    data=st.data(),
)
def test_perfect_agreement_is_one(values, raters, level, data):
    x = np.repeat(np.asarray(values, dtype=float)[:, None], raters, axis=1)
    # Knock out ratings but keep at least two per item.
    for i in range(x.shape[0]):
        if raters > 2:
            drop = data.draw(st.lists(st.integers(2, raters - 1), max_size=raters - 2, unique=True))
            x[i, drop] = nan
    assert krippendorff_alpha(x, level=level) == pytest.approx(1.0)
