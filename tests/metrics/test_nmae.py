from __future__ import annotations

import numpy as np
import pytest

from annotator.metrics import nmae


@pytest.mark.parametrize(
    ("a", "b", "scale", "expected"),
    [
        ([1.0, 2.0, 4.0], [2.0, 2.0, 3.0], (0, 5), (1 + 0 + 1) / 3 / 5),
        ([0, 100], [100, 0], (0, 100), 1.0),
        ([3, 3], [3, 3], (1, 5), 0.0),
        # 2-D: per-item means across raters (paper, eq. 4-5), missing cells ignored.
        ([[1, 3], [2, np.nan]], [[2], [4]], (0, 10), (0 + 2) / 2 / 10),
    ],
)
def test_values(a, b, scale, expected):
    assert nmae(a, b, scale_min=scale[0], scale_max=scale[1]) == pytest.approx(expected)


def test_symmetric():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0, 5, 50), rng.uniform(0, 5, 50)
    assert nmae(a, b, scale_min=0, scale_max=5) == nmae(b, a, scale_min=0, scale_max=5)


def test_nan_policy():
    with pytest.raises(ValueError, match="no score"):
        nmae([1, np.nan], [1, 2], scale_min=0, scale_max=5)
    assert nmae([1, np.nan], [2, 2], scale_min=0, scale_max=5, nan_policy="omit") == 0.2


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "message"),
    [
        ([1], [1], {"scale_min": 5, "scale_max": 5}, "scale_max"),
        ([1, 2], [1], {"scale_min": 0, "scale_max": 5}, "same items"),
        (["x"], [1], {"scale_min": 0, "scale_max": 5}, "numbers"),
        ([[[1]]], [1], {"scale_min": 0, "scale_max": 5}, "1-D"),
        ([], [], {"scale_min": 0, "scale_max": 5}, "no item"),
    ],
)
def test_input_checks(a, b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        nmae(a, b, **kwargs)


def test_keyword_only():
    with pytest.raises(TypeError):
        nmae([1], [1], 0, 5)  # type: ignore[misc]


def test_pandas_inputs_are_paired_by_index():
    pd = pytest.importorskip("pandas")
    a = pd.Series([1.0, 2.0, 4.0], index=["x", "y", "z"])
    b = pd.Series([3.0, 2.0, 2.0], index=["z", "y", "x"])  # same items, other order
    # Paired by label: |1-2| + |2-2| + |4-3| over 3 items, on a 0-5 scale.
    assert nmae(a, b, scale_min=0, scale_max=5) == pytest.approx(2 / 3 / 5)
    frame = pd.DataFrame({"r1": [3.0, 2.0, 2.0], "r2": [3.0, 2.0, 2.0]}, index=["z", "y", "x"])
    assert nmae(a, frame, scale_min=0, scale_max=5) == pytest.approx(2 / 3 / 5)


def test_pandas_inputs_with_different_items_are_refused():
    pd = pytest.importorskip("pandas")
    a = pd.Series([1.0, 2.0], index=["x", "y"])
    b = pd.Series([1.0, 2.0], index=["x", "w"])
    with pytest.raises(ValueError, match="different items"):
        nmae(a, b, scale_min=0, scale_max=5)
    with pytest.raises(ValueError, match="repeats item 'x'"):
        nmae(pd.Series([1.0, 2.0], index=["x", "x"]), a, scale_min=0, scale_max=5)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0, 6.0], [1.0, 2.0], r"a holds 1 score outside the scale \[0, 5\], first 6"),
        ([1.0, 2.0], [[1.0, -0.5], [2.0, 2.0]], r"b holds 1 .* first -0.5 for item 0"),
    ],
)
def test_scores_outside_the_scale_are_refused(a, b, message):
    with pytest.raises(ValueError, match=message):
        nmae(a, b, scale_min=0, scale_max=5)
