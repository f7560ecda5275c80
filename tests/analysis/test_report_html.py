"""The report's HTML: every table cell is the frame's value, nothing is fetched from outside."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pandas as pd
import pytest
from lxml import html as lxml_html

from annotator.analysis.report.html import frame_view, render_report


@dataclass
class HandTables:
    """Hand-built stand-in with the shape of ReportTables (only the fields the page reads)."""

    table2: pd.DataFrame
    alttest: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    settings: dict = field(default_factory=dict)


@pytest.fixture
def hand_tables() -> HandTables:
    table2 = pd.DataFrame(
        {
            "scale": ["0-5", "0-10", "0-100"],
            "n_items": [40, 40, 40],
            "icc_a1_human": [0.61, 0.58, 0.61],
            "icc_human_llm": [0.853, 0.805, 0.840],
            "nmae": [0.111, 0.122, 0.115],
        }
    )
    alttest = pd.DataFrame(
        {
            "scale": ["0-5"] * 2,
            "model": ["gpt", "llama"],
            "epsilon": [0.2, 0.2],
            "winning_rate": [2 / 3, float("nan")],
            "advantage_probability": [0.7123456789, 0.4],
            "passed": [True, False],
        }
    )
    return HandTables(
        table2=table2,
        alttest=alttest,
        notes=["llama: 12 of 30 items per rater so far <b>"],
        settings={"runs": "mean", "temperature": 0.0, "epsilon": 0.2},
    )


def _tables(page: str) -> dict[str, pd.DataFrame]:
    """Each table of the page as a frame of its cells' full-precision values."""
    tree = lxml_html.fromstring(page)
    out = {}
    for table in tree.xpath("//table[@data-table]"):
        columns = [th.get("data-column") for th in table.xpath("./thead/tr/th")]
        rows = [
            [td.get("data-value") for td in tr.xpath("./td")] for tr in table.xpath("./tbody/tr")
        ]
        out[table.get("data-table")] = pd.DataFrame(rows, columns=columns)
    return out


def _same(expected: pd.DataFrame, shown: pd.DataFrame) -> None:
    assert list(shown.columns) == [str(c) for c in expected.columns]
    assert len(shown) == len(expected)
    for column in expected.columns:
        for want, got in zip(expected[column], shown[str(column)], strict=True):
            if isinstance(want, bool):
                assert got == str(want).lower()
            elif isinstance(want, float):
                assert (math.isnan(want) and got == "nan") or float(got) == want
            else:
                assert got == str(want)


def test_every_cell_is_the_frames_value(hand_tables):
    page = render_report(hand_tables, generated_at=datetime(2026, 3, 2, tzinfo=UTC))
    shown = _tables(page)
    assert set(shown) == {"table2", "alttest"}
    _same(hand_tables.table2, shown["table2"])
    _same(hand_tables.alttest, shown["alttest"])
    # The text shows three decimals; the cell keeps the full value.
    assert ">0.712<" in page and 'data-value="0.7123456789"' in page


def test_best_value_per_column_is_marked_with_ties(hand_tables):
    page = render_report(hand_tables)
    tree = lxml_html.fromstring(page)
    columns = [th.get("data-column") for th in tree.xpath("//table[@data-table='table2']//th")]
    marked = {}
    for tr in tree.xpath("//table[@data-table='table2']/tbody/tr"):
        for column, td in zip(columns, tr.xpath("./td"), strict=True):
            if "best" in (td.get("class") or ""):
                marked.setdefault(column, []).append(td.text)
    # Highest ICC (a tie on 0.610 marks both), lowest nMAE; counts and names unmarked.
    assert marked == {
        "icc_a1_human": ["0.610", "0.610"],
        "icc_human_llm": ["0.853"],
        "nmae": ["0.111"],
    }
    # Tables other than Table 2 mark nothing.
    assert not tree.xpath("//table[@data-table='alttest']//td[contains(@class, 'best')]")


def test_notes_and_settings_are_shown_escaped(hand_tables):
    page = render_report(hand_tables)
    assert "12 of 30 items per rater so far &lt;b&gt;" in page
    tree = lxml_html.fromstring(page)
    settings = dict(
        zip(
            tree.xpath("//dl[@class='settings']/dt/text()"),
            tree.xpath("//dl[@class='settings']/dd/text()"),
            strict=True,
        )
    )
    assert settings == {"runs": "mean", "temperature": "0", "epsilon": "0.2"}


def test_nothing_is_fetched_from_outside(hand_tables):
    page = render_report(hand_tables)
    tree = lxml_html.fromstring(page)
    for element in tree.iter():
        for attribute in ("src", "href", "srcset", "action", "data"):
            value = element.get(attribute)
            if value is not None:
                assert value.startswith(("#", "data:image/png;base64,")), (element.tag, value)
    assert not tree.xpath("//link | //script | //iframe | //object | //embed")
    assert not re.search(
        r"url\(|@import|https?:|//[a-z]", page.split("<body>", 1)[0].split("<style>")[1]
    )


def test_an_empty_frame_says_so():
    tables = HandTables(table2=pd.DataFrame(columns=["scale", "nmae"]), alttest=pd.DataFrame())
    page = render_report(tables)
    tree = lxml_html.fromstring(page)
    (cell,) = tree.xpath("//table[@data-table='table2']/tbody/tr/td")
    assert cell.text.startswith("no rows")


def test_frame_view_keeps_a_named_index():
    frame = pd.DataFrame({"icc": [0.5, 0.7]}, index=pd.Index(["gpt", "llama"], name="model"))
    view = frame_view(frame, best=True)
    assert view.columns == ["model", "icc"]
    assert [[c.raw for c in row] for row in view.rows] == [["gpt", "0.5"], ["llama", "0.7"]]
    assert [row[1].css for row in view.rows] == ["", "best"]
