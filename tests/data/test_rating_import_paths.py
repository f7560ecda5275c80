"""A CSV file of ratings is read by position, each row whose cells were all found
valid on earlier rows taken without the checks (annotator.data.rating_import); a
JSONL file goes through every check on every row. The same rows must store the
same ratings and raise the same problems either way."""

from __future__ import annotations

import csv
import json
import re

import pytest
from sqlmodel import select

from annotator.data.importers import import_ratings
from annotator.data.readers import InputError
from annotator.models import Demographics, Item, Rating, Scale, Study, User
from tests.conftest import DATA

HEADER = ["item_id", "rater", "scale", "score", "gender"]
ITEMS = ["s1", "s2", "s3", "t1"]
GENDERS = ["female", "male", "non-binary"]


@pytest.fixture
def paths_study(runner) -> str:
    """The small study's scales and items, without ratings."""
    for args in (
        ["study", "create", DATA / "small-study.toml"],
        ["items", "import", "small", DATA / "items.csv"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return "small"


def _good_rows() -> list[list[str]]:
    # Ten raters, every item on both scales, a few scores again and again: after the
    # first rows every cell is one found valid before.
    rows = []
    for r in range(10):
        for scale, scores in (("0-5", ["1", "2.5", "4"]), ("0-100", ["10", "55.5"])):
            for i, item in enumerate(ITEMS):
                rows.append([item, f"r{r}", scale, scores[(r + i) % len(scores)], GENDERS[r % 3]])
    return rows


def _write(tmp_path, rows: list[list[str]], suffix: str):
    path = tmp_path / f"ratings{suffix}"
    if suffix == ".csv":
        with open(path, "w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows([HEADER, *rows])
    else:
        lines = [json.dumps(dict(zip(HEADER, row, strict=True))) for row in rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _stored(session) -> tuple[list[tuple], list[tuple]]:
    ratings = session.exec(
        select(User.rater_code, Item.external_id, Scale.name, Rating.value)
        .join(User, User.id == Rating.rater_id)
        .join(Item, Item.id == Rating.item_id)
        .join(Scale, Scale.id == Rating.scale_id)
    ).all()
    answers = session.exec(
        select(User.rater_code, Demographics.answers).join(User, User.id == Demographics.user_id)
    ).all()
    return sorted(map(tuple, ratings)), sorted(
        (c, json.dumps(a, sort_keys=True)) for c, a in answers
    )


def _import(session, path):
    study = session.exec(select(Study).where(Study.slug == "small")).one()
    try:
        return import_ratings(session, study, path), _stored(session)
    finally:
        session.rollback()


def test_csv_and_jsonl_store_the_same_ratings(session, paths_study, tmp_path):
    rows = _good_rows()
    csv_report, csv_stored = _import(session, _write(tmp_path, rows, ".csv"))
    jsonl_report, jsonl_stored = _import(session, _write(tmp_path, rows, ".jsonl"))
    assert csv_report.created == jsonl_report.created == len(rows) == len(csv_stored[0])
    assert csv_stored == jsonl_stored
    assert len(csv_stored[1]) == 10


def _problems(session, path) -> list[str]:
    with pytest.raises(InputError) as caught:
        _import(session, path)
    # Without the file's name; the CSV's header is line 1, so its rows are one line
    # further than the JSONL's.
    shift = 1 if path.suffix == ".csv" else 0

    def line(match: re.Match) -> str:
        return f"line {int(match.group(1)) - shift}"

    return [
        re.sub(r"line (\d+)", line, p.replace(str(path), "FILE")) for p in caught.value.problems
    ]


def test_late_problems_are_found_on_either_path(session, paths_study, tmp_path):
    rows = _good_rows()
    # Each after every cell of it was found valid on earlier rows.
    rows += [
        ["s1", "r0", "0-5", "2.5", "female"],  # r0 rated s1 on 0-5 already
        ["s2", "r1", "0-5", "1", "non-binary"],  # r1 answered male before (and rated s2 already)
        ["s3", "r0", "0-5", "1", "female"],  # a duplicate key again
        ["s1", "", "0-5", "1", "female"],  # no rater
        ["zz", "r2", "0-5", "1", "non-binary"],  # unknown item
        ["s1", "r3", "0-5", "5.001", "female"],  # off the scale's step and range
        ["s1", "r4", "0-7", "1", "male"],  # unknown scale
        ["t1", "r5", "0-100", "10", "woman"],  # not a choice (and not r5's answer)
    ]
    from_csv = _problems(session, _write(tmp_path, rows, ".csv"))
    from_jsonl = _problems(session, _write(tmp_path, rows, ".jsonl"))
    assert from_csv == from_jsonl
    n = len(_good_rows())
    expected = [
        (n + 1, "already on line"),
        (n + 2, "other demographic answers than on line"),
        (n + 3, "already on line"),
        (n + 4, "the rater code is empty"),
        (n + 5, "unknown item 'zz'"),
        (n + 6, "the scale 0-5 takes"),
        (n + 7, "unknown scale '0-7'"),
        (n + 8, "'woman' is not one of"),
    ]
    for line, message in expected:
        assert any(f"line {line}" in p and message in p for p in from_csv), (line, from_csv)
    assert session.exec(select(Rating)).first() is None
