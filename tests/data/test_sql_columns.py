"""``fetch_columns`` (numeric columns straight into numpy) against ``fetch_rows``.

On PostgreSQL the columns come packed in one ``bytea``; the reference is the
driver's own rows of the same query. Runs on SQLite, and on PostgreSQL with
ANNOTATOR_TEST_DATABASE_URL.
"""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import BigInteger, Float, cast, literal, null
from sqlmodel import select

from annotator.data.sql import fetch_columns, fetch_rows
from annotator.models import LLMScore, Rating


def test_the_same_values_as_the_drivers_rows(session, make_study):
    make_study(n_items=30, n_raters=5, runs=2, missing=0.3)
    query = select(Rating.item_id, Rating.rater_id, Rating.value, Rating.id).order_by(Rating.id)
    rows = fetch_rows(session, query)
    assert len(rows) > 50
    columns = fetch_columns(session, query, ["int32", "int64", "float64", "int64"])
    assert [c.dtype for c in columns] == [np.int32, np.int64, np.float64, np.int64]
    for position, column in enumerate(columns):
        # Exact: the float column bit for bit.
        expected = np.array([row[position] for row in rows], dtype=column.dtype)
        assert column.tobytes() == expected.tobytes()


def test_floats_keep_every_bit(session, make_study):
    make_study(n_items=10, n_raters=2, runs=1)
    # (Not -0.0: SQLite stores it as the integer 0.)
    awkward = [0.1 + 0.2, 1 / 3, -2.5e-7, 5e-324, 1.7976931348623157e308]
    scores = session.exec(select(LLMScore).order_by(LLMScore.id).limit(len(awkward))).all()
    for score, value in zip(scores, awkward, strict=True):
        score.value = value
    session.add_all(scores)
    session.flush()
    query = select(LLMScore.value).where(LLMScore.id.in_([s.id for s in scores]))
    (values,) = fetch_columns(session, query.order_by(LLMScore.id), ["float64"])
    assert values.tobytes() == np.array(awkward).tobytes()


def test_no_rows(session, make_study):
    make_study(n_items=5, n_raters=2)
    query = select(Rating.item_id, Rating.value).where(Rating.item_id < 0)
    assert fetch_rows(session, query) == []
    items, values = fetch_columns(session, query, ["int32", "float64"])
    assert items.dtype == np.int32 and values.dtype == np.float64
    assert len(items) == len(values) == 0


@pytest.mark.postgresql_only
def test_a_null_is_refused_on_postgresql(session, make_study):
    make_study(n_items=5, n_raters=2)
    query = select(Rating.item_id, cast(null(), Float).label("missing"))
    if session.connection().dialect.name != "postgresql":
        pytest.skip("SQLite reads a NULL float as NaN, the rows as numpy.array reads them")
    with pytest.raises(ValueError, match="NULL"):
        fetch_columns(session, query, ["int32", "float64"])


@pytest.mark.postgresql_only
def test_an_integer_column_is_not_read_as_a_narrower_type(session, make_study):
    make_study(n_items=5, n_raters=2)
    if session.connection().dialect.name != "postgresql":
        pytest.skip("the packed form is PostgreSQL's")
    # A bigint cannot be sent as a 4-byte integer: PostgreSQL refuses rather
    # than truncating (no implicit cast from bigint to integer).
    query = select(cast(literal(2**40), BigInteger).label("big"))
    with pytest.raises(Exception, match="int4send"):
        fetch_columns(session, query, ["int32"])
    session.rollback()


def test_the_importers_still_load_no_numpy():
    """fetch_columns lives beside fetch_rows, which the importers use; numpy
    (a quarter of a second and 12 MiB to load) stays out of their process."""
    import subprocess
    import sys

    code = "import sys, annotator.data.importers; print('numpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
