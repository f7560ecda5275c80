"""Bad input to the public functions: a ``ValueError`` that names the parameter.

Strings where numbers are needed and arrays of the wrong dimension are refused by
the one helper of ``annotator.metrics._validation`` (not numpy's "could not convert
string to float", nor a silent flattening), whatever function they reach it through.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.metrics import (
    cohen_kappa,
    correlation,
    cross_alpha,
    fleiss_kappa,
    human_llm_agreement,
    icc,
    inter_scale_agreement,
    krippendorff_alpha,
    llm_correlations,
    nmae,
    percent_agreement,
    rater_quality,
)

SCALE = {"scale_min": 0, "scale_max": 5}
GOOD = [1.0, 2.0, 3.0, 4.0]
GOOD_MATRIX = [[1.0, 2.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0]]
WITH_TEXT = [1.0, "two", 3.0, 4.0]
MATRIX_WITH_TEXT = [[1.0, 2.0], [2.0, "x"], [3.0, 4.0], [4.0, 5.0]]

# (call, the parameter the message must start with, what the message says)
NOT_NUMBERS = {
    "correlation x": (lambda: correlation(["a", "b", "c"], [1, 2, 3]), "x", "'a' at position 0"),
    "correlation y": (lambda: correlation(GOOD, WITH_TEXT), "y", "'two' at position 1"),
    "correlation numeric strings": (lambda: correlation(["1", "2", "3"], [1, 2, 3]), "x", "'1'"),
    "cohen_kappa quadratic a": (
        lambda: cohen_kappa(["yes", "no"], [1, 0]),
        "a",
        "weights='none' takes categorical labels",
    ),
    "cohen_kappa linear b": (
        lambda: cohen_kappa([1, 0], ["yes", "no"], weights="linear"),
        "b",
        "'yes' at position 0",
    ),
    "cohen_kappa categories": (
        lambda: cohen_kappa([1, 0], [1, 1], categories=["low", "high"]),
        "categories",
        "'low'",
    ),
    "icc ratings": (lambda: icc(MATRIX_WITH_TEXT), "ratings", "'x' at position (1, 1)"),
    "icc frame": (
        lambda: icc(pd.DataFrame({"r1": [1, 2, 3], "r2": ["1", "2", "z"]})),
        "ratings",
        "'1' at position (0, 1)",
    ),
    "nmae a": (lambda: nmae(WITH_TEXT, GOOD, **SCALE), "a", "'two'"),
    "nmae b": (lambda: nmae(GOOD, MATRIX_WITH_TEXT, **SCALE), "b", "'x'"),
    "krippendorff_alpha": (
        lambda: krippendorff_alpha(MATRIX_WITH_TEXT, level="interval"),
        "ratings",
        "'x'",
    ),
    "cross_alpha b": (
        lambda: cross_alpha(GOOD_MATRIX, MATRIX_WITH_TEXT, level="interval"),
        "b",
        "'x'",
    ),
    "fleiss_kappa": (lambda: fleiss_kappa(MATRIX_WITH_TEXT), "ratings", "'x'"),
    "percent_agreement": (lambda: percent_agreement(MATRIX_WITH_TEXT), "ratings", "'x'"),
    "human_llm_agreement llm": (
        lambda: human_llm_agreement(GOOD_MATRIX, WITH_TEXT, **SCALE),
        "llm",
        "'two'",
    ),
    "llm_correlations humans": (
        lambda: llm_correlations(MATRIX_WITH_TEXT, GOOD),
        "humans",
        "'x'",
    ),
    "inter_scale_agreement": (
        lambda: inter_scale_agreement(
            pd.DataFrame({"0-5": [1, 2, 3], "0-10": [2, "n/a", 6]}),
            bounds={"0-5": (0, 5), "0-10": (0, 10)},
        ),
        "scores column '0-10'",
        "'n/a'",
    ),
    "rater_quality": (
        lambda: rater_quality(
            pd.DataFrame({"r1": [1, 2, 3], "r2": [1, "?", 3]}), scale_min=0, scale_max=5
        ),
        "ratings",
        "'?'",
    ),
}

WRONG_SHAPE = {
    "correlation x 2-D": (
        lambda: correlation(np.ones((3, 2)), np.arange(6.0)),
        "x",
        "1-D (one score per item), got an array of shape (3, 2)",
    ),
    "correlation y frame": (
        lambda: correlation([1, 2, 3], pd.DataFrame({"a": [1, 2, 3], "b": [3, 1, 2]})),
        "y",
        "shape (3, 2)",
    ),
    "cohen_kappa a 2-D": (
        lambda: cohen_kappa([[1, 2], [3, 4]], [1, 2, 3, 4]),
        "a",
        "1-D (one score per item), got an array of shape (2, 2)",
    ),
    "cohen_kappa labels 2-D": (
        lambda: cohen_kappa(["y", "n"], [["y", "n"], ["n", "n"]], weights="none"),
        "b",
        "1-D (one label per item)",
    ),
    "icc 1-D": (lambda: icc(GOOD), "ratings", "2-D (items x raters)"),
    "krippendorff_alpha 3-D": (
        lambda: krippendorff_alpha(np.ones((2, 2, 2)), level="interval"),
        "ratings",
        "2-D",
    ),
    "nmae 3-D": (lambda: nmae(np.ones((2, 2, 2)), [1, 1], **SCALE), "a", "1-D"),
}


def _assert_names(call, parameter: str, detail: str) -> None:
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{parameter} "), message
    assert detail in message, message
    assert "could not convert" not in message


@pytest.mark.parametrize(("call", "parameter", "detail"), NOT_NUMBERS.values(), ids=NOT_NUMBERS)
def test_text_where_numbers_are_needed_names_the_parameter(call, parameter, detail):
    _assert_names(call, parameter, detail)


@pytest.mark.parametrize(("call", "parameter", "detail"), WRONG_SHAPE.values(), ids=WRONG_SHAPE)
def test_an_array_of_the_wrong_dimension_names_the_parameter(call, parameter, detail):
    _assert_names(call, parameter, detail)


@pytest.mark.parametrize(
    "values",
    [
        [1, 2, None, 4],
        [1.0, 2.0, np.nan, 4.0],
        pd.Series([1, 2, pd.NA, 4], dtype="Int64"),
        np.array([1, 2, None, 4], dtype=object),
    ],
    ids=["None", "nan", "pandas NA", "object array"],
)
def test_missing_values_are_not_taken_for_text(values):
    # Missing stays missing (here refused by nan_policy, with its own message).
    with pytest.raises(ValueError, match="missing value"):
        correlation(values, [1, 2, 3, 4])
    assert correlation(values, [1, 2, 3, 5], nan_policy="omit").n_items == 3
