"""Parsing and applying ``--where``: the pure part, on plain frames."""

from __future__ import annotations

import pandas as pd
import pytest

from annotator.data.export_scope import ExportError
from annotator.data.selection import describe_where, matching_raters, parse_where

DEMOGRAPHICS = pd.DataFrame(
    {
        "rater": ["a", "b", "c", "d"],
        "gender": ["female", "male", "female", None],
        "age": [25.0, 31.0, 31.0, 40.0],  # a number question: matched by its text
    },
    dtype=object,
)
QUESTIONS = [{"key": "gender", "choices": ["female", "male", "self-describe"]}, {"key": "age"}]


@pytest.mark.parametrize(
    ("clauses", "expected"),
    [
        (None, {}),
        ([], {}),
        (["gender=female"], {"gender": ("female",)}),
        (["gender=female", "age=31"], {"gender": ("female",), "age": ("31",)}),
        (["gender=female", "gender=male"], {"gender": ("female", "male")}),
        ("gender=female, age=31", {"gender": ("female",), "age": ("31",)}),
        ("gender = female & age=31", {"gender": ("female",), "age": ("31",)}),
        (" ", {}),
        ({"gender": ["female"]}, {"gender": ("female",)}),  # parsed already
    ],
)
def test_parse_where(clauses, expected):
    assert parse_where(clauses) == expected


@pytest.mark.parametrize("clause", ["gender", "=female", "gender=", "gender female"])
def test_a_clause_without_key_or_value_is_refused(clause):
    with pytest.raises(ExportError, match=f"where clause {clause.strip()!r} is not KEY=VALUE"):
        parse_where([clause])


@pytest.mark.parametrize(
    ("where", "raters"),
    [
        ({}, ["a", "b", "c", "d"]),
        ({"gender": ("female",)}, ["a", "c"]),
        ({"gender": ("female",), "age": ("31",)}, ["c"]),
        ({"gender": ("female", "male")}, ["a", "b", "c"]),
        ({"gender": ("self-describe",)}, []),  # offered, answered by no one
        ({"age": ("40",)}, ["d"]),
    ],
)
def test_matching_raters(where, raters):
    assert matching_raters(DEMOGRAPHICS, where, questions=QUESTIONS) == raters


def test_unknown_keys_and_values_name_the_known_ones():
    with pytest.raises(ExportError, match=r"no demographic question 'shoe' \(known: gender, age\)"):
        matching_raters(DEMOGRAPHICS, {"shoe": ("1",)}, questions=QUESTIONS)
    with pytest.raises(ExportError) as caught:
        matching_raters(DEMOGRAPHICS, {"gender": ("robot",)}, questions=QUESTIONS)
    assert "known values of gender: female, male, self-describe" in str(caught.value)
    with pytest.raises(ExportError, match=r"known values of age: 25, 31, 40"):
        matching_raters(DEMOGRAPHICS, {"age": ("99",)}, questions=QUESTIONS)


def test_describe_where():
    assert describe_where({}) == "all raters"
    assert describe_where(parse_where(["gender=female", "gender=male", "age=31"])) == (
        "gender=female|male AND age=31"
    )
