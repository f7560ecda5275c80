"""The rater's form and ``ratings import`` accept exactly the same scores.

Both go through ``annotator.collect.scores.parse_score``; each string below is
fed to both faces and must be stored as the same value, or refused by both for
the same reason.
"""

from __future__ import annotations

import csv

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import Item, Rating, User

from .conftest import ACCEPTED, REJECTED, blocks_of, item_url, ratings_of, start

# The strings of the issue (accepted by the import, refused by the form) first.
REFUSED = [
    ("3.14159", "too many decimals"),
    ("1e0", "is not a number"),
    ("2.355", "too many decimals"),
    # Other scripts' digits (Arabic-Indic, fullwidth, mathematical bold):
    # ``\d`` and ``Decimal`` read them as 3, the README promises 0-9.
    ("٣", "digits other than 0-9"),
    ("３", "digits other than 0-9"),
    ("𝟑", "digits other than 0-9"),
    ("2.٥", "digits other than 0-9"),
    *REJECTED,
]


IMPORT_WORDS = {
    "Please enter a score.": "the score is empty",
    "too long": "the score is longer than 40 characters",
}


def _web(app, client, rater, raw: str) -> tuple[int, float | None, str]:
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    block = blocks_of(app, rater)[0]
    client.get(item_url(block.id, 1))
    response = client.post(item_url(block.id, 1), data={"score": raw})
    stored = ratings_of(app, rater)
    return response.status_code, stored[0].value if stored else None, response.text


def _import(app, tmp_path, slug: str, raw: str) -> tuple[int, float | None, str]:
    path = tmp_path / "ratings.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "rater", "scale", "score"])
        writer.writerow(["s1", "imported", "0-5", raw])
    result = app.test_cli_runner().invoke(args=["ratings", "import", slug, str(path)])
    with Session(get_engine(app)) as session:
        stored = session.exec(
            select(Rating.value)
            .join(User, User.id == Rating.rater_id)
            .join(Item, Item.id == Rating.item_id)
            .where(User.rater_code == "imported", Item.external_id == "s1")
        ).first()
    return result.exit_code, stored, result.output


@pytest.mark.parametrize(("raw", "value"), ACCEPTED)
def test_both_store_the_same_value(app, client, rater, study, tmp_path, raw, value):
    status, web_value, _ = _web(app, client, rater, raw)
    code, import_value, output = _import(app, tmp_path, study.slug, raw)
    assert status == 302 and code == 0, output
    assert web_value == import_value == value


@pytest.mark.parametrize(("raw", "reason"), REFUSED)
def test_both_refuse_for_the_same_reason(app, client, rater, study, tmp_path, raw, reason):
    status, web_value, page = _web(app, client, rater, raw)
    code, import_value, output = _import(app, tmp_path, study.slug, raw)
    assert status == 422 and web_value is None
    assert code != 0 and import_value is None, output
    assert reason in page
    assert f"{tmp_path / 'ratings.csv'}: line 2, column 'score': " in output
    assert "the scale 0-5 takes numbers from 0 to 5 in steps of 0.01" in output
    # The same problem in a file's words: where it is, then the scale.
    assert IMPORT_WORDS.get(reason, reason) in output
