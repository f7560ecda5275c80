from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from annotator.metrics import RatingMatrix, read_matrix, split_matrix

CSV = """item_id,benchmark,007,R2,llm:gpt-4o,llm:claude
1,stsb,1.5,2,3.25,
2,summeval,,4,5,4.5
"""


def test_read_matrix_splits_humans_and_models():
    m = read_matrix(io.StringIO(CSV))
    assert isinstance(m, RatingMatrix)
    assert list(m.humans.columns) == ["007", "R2"]  # codes keep their leading zeros
    assert list(m.llm.columns) == ["gpt-4o", "claude"]
    assert list(m.humans.index) == ["1", "2"]
    assert np.isnan(m.humans.loc["2", "007"]) and np.isnan(m.llm.loc["1", "claude"])
    assert m.llm.loc["1", "gpt-4o"] == 3.25
    assert list(m.benchmark) == ["stsb", "summeval"]
    both = m.ratings(include_llm=True)
    assert list(both.columns) == ["007", "R2", "llm:gpt-4o", "llm:claude"]
    assert list(m.subset("stsb").humans.index) == ["1"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("benchmark,R1\nx,1\n", "item_id"),
        ("item_id,R1\n1,high\n", "not a number"),
        ("item_id,R1\n1,1\n1,2\n", "duplicated"),
    ],
)
def test_read_matrix_errors(text, message):
    with pytest.raises(ValueError, match=message):
        read_matrix(io.StringIO(text))


def test_unknown_benchmark():
    with pytest.raises(ValueError, match="known: stsb, summeval"):
        read_matrix(io.StringIO(CSV)).subset("mmlu")


def test_split_matrix_without_benchmark_column():
    frame = pd.DataFrame({"item_id": ["a", "b"], "R1": [1.0, 2.0], "llm:m": [1.0, np.nan]})
    m = split_matrix(frame)
    assert list(m.humans.columns) == ["R1"] and list(m.llm.columns) == ["m"]
    assert list(m.benchmark) == ["", ""]
