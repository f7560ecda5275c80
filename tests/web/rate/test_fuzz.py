"""Fuzzing the score post: 1,000 generated bad scores and malformed posts (hypothesis).

Each must get an answer below 500 and store nothing. What makes a score bad
is decided here by construction (no digit at all, a value outside 0-5, a
third decimal that is not zero, a non-finite word, junk after a number), not
by the app's parser, so the test does not grade the parser with itself.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func
from sqlmodel import Session, select
from werkzeug.datastructures import MultiDict

from annotator.db import get_engine
from annotator.models import Rating, RatingChange
from tests.data.studies import study_toml

from .conftest import blocks_of, item_url, join, start

ONE_SCALE = """
[[scales]]
name = "0-5"
min = 0
max = 5
step = 0.01
"""
FUZZ = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


def _no_digit(text: str) -> bool:
    return not any(c.isdigit() or c.isdecimal() for c in text)


def _number_text(value: Decimal, comma: bool) -> str:
    text = format(value, "f")
    return text.replace(".", ",") if comma else text


outside = st.one_of(
    st.decimals(min_value=Decimal("5.01"), max_value=Decimal("1e9"), places=2),
    st.decimals(min_value=Decimal("-1e9"), max_value=Decimal("-0.01"), places=2),
).map(lambda d: _number_text(d, comma=False))
too_precise = st.builds(
    lambda whole, cents, extra, comma: _number_text(Decimal(f"{whole}.{cents:02d}{extra}"), comma),
    st.integers(0, 4),
    st.integers(0, 99),
    # At least one non-zero decimal beyond the second.
    st.integers(1, 9999).filter(lambda n: n % 10 != 0).map(str),
    st.booleans(),
)
not_finite = st.sampled_from(["nan", "NaN", "inf", "-inf", "+Infinity", "INF", "-nan"])
no_digit = st.text(max_size=60).filter(_no_digit)
junk_after = st.builds(
    lambda number, junk: f"{number}{junk}",
    st.sampled_from(["1", "2.5", "4,25", "0"]),
    st.text(min_size=1, max_size=10).filter(
        lambda s: _no_digit(s) and s.strip() != "" and s.strip(" .,") == s.strip()
    ),
)
exponent = st.builds(lambda m, e: f"{m}e{e}", st.integers(0, 5), st.integers(-3, 3))
bad_scores = st.one_of(outside, too_precise, not_finite, no_digit, junk_after, exponent)


@pytest.fixture
def block(app, client, make_study):
    """A rater of a one-scale study (0-5, step 0.01) with the first block started."""
    study = make_study(study_toml(scales=ONE_SCALE, gap_days=0), n_items=5)
    rater = join(app, client, study.slug)
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    assert client.get(item_url(block.id, 1)).status_code == 200
    return block.id


def _stored(app) -> tuple[int, int]:
    with Session(get_engine(app)) as session:
        return (
            session.exec(select(func.count(Rating.id))).one(),
            session.exec(select(func.count(RatingChange.id))).one(),
        )


@settings(max_examples=600, **FUZZ)
@given(score=bad_scores, htmx=st.booleans())
def test_bad_scores_store_nothing(app, client, block, score, htmx):
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.post(item_url(block, 1), data={"score": score}, headers=headers)
    # A NUL character is refused before the form is read (annotator.web.limits: no
    # field holds one, and PostgreSQL errs on it), every other bad score by the form.
    expected = 400 if "\x00" in score else 422
    assert response.status_code == expected, (score, response.status_code)
    assert _stored(app) == (0, 0)


def _malformed(draw_kind, score, position):
    """(path, keyword arguments of client.post) for one kind of malformed post."""
    if draw_kind == "no score field":
        return "/rate/blocks/{block}/items/1", {"data": {"value": score}}
    if draw_kind == "bad score first of two":
        return "/rate/blocks/{block}/items/1", {
            "data": MultiDict([("score", score), ("score", "3")])
        }
    if draw_kind == "json body":
        return "/rate/blocks/{block}/items/1", {
            "data": json.dumps({"score": 3}),
            "content_type": "application/json",
        }
    if draw_kind == "raw bytes":
        return "/rate/blocks/{block}/items/1", {
            "data": score.encode("utf-8", "surrogatepass") + b"%ff%fe&score=%80",
            "content_type": "application/x-www-form-urlencoded",
        }
    if draw_kind == "broken multipart":
        return "/rate/blocks/{block}/items/1", {
            "data": b"--xx\r\nContent-Disposition: form-data; name=score\r\n\r\n" + b"4",
            "content_type": "multipart/form-data; boundary=xx",
        }
    if draw_kind == "a good score ahead of its turn":
        # Only place 1 has been shown: any other place is refused.
        return f"/rate/blocks/{{block}}/items/{position}", {"data": {"score": "3"}}
    if draw_kind == "another block":
        return item_url(999_999, 1), {"data": {"score": "3"}}
    raise AssertionError(draw_kind)


KINDS = [
    "no score field",
    "bad score first of two",
    "json body",
    "raw bytes",
    "broken multipart",
    "a good score ahead of its turn",
    "another block",
]


@settings(max_examples=400, **FUZZ)
@given(
    kind=st.sampled_from(KINDS),
    score=bad_scores,
    position=st.integers(2, 5),
    htmx=st.booleans(),
)
def test_malformed_posts_store_nothing(app, client, block, kind, score, position, htmx):
    path, kwargs = _malformed(kind, score, position)
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.post(path.format(block=block), headers=headers, **kwargs)
    assert response.status_code < 500, (kind, score, response.status_code)
    assert response.status_code in (200, 302, 400, 404, 422), (kind, response.status_code)
    assert _stored(app) == (0, 0)
