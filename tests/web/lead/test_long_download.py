"""The long export downloads from the study page as the same file the CLI writes,
streamed in chunks with a session of its own that is always closed."""

from __future__ import annotations

import csv
import io
import tracemalloc

import pytest
from sqlalchemy import text

from annotator.data import long_rows
from annotator.db import get_engine
from tests.conftest import DATA


def test_long_export_streams_the_same_file_as_the_cli(app, lead_client, small_study, monkeypatch):
    # Chunks of two rows: the file is made of several pieces.
    monkeypatch.setattr(long_rows, "LONG_CHUNK", 2)
    with lead_client.get(f"/lead/studies/{small_study}/export?format=long") as response:
        assert response.status_code == 200
        assert response.is_streamed
        assert response.headers["Content-Disposition"] == 'attachment; filename="small-long.csv"'
        downloaded = response.get_data(as_text=True)
    cli = app.test_cli_runner().invoke(
        args=["export", small_study, "--format", "long", "--out", "-"], catch_exceptions=False
    )
    assert cli.exit_code == 0, cli.output
    assert downloaded == cli.output
    rows = list(csv.DictReader(io.StringIO(downloaded)))
    # One row per rating of tests/data/ratings.csv.
    with open(DATA / "ratings.csv") as handle:
        expected = sum(1 for _ in handle) - 1
    assert len(rows) == expected and {r["kind"] for r in rows} == {"human"}
    assert get_engine(app).pool.checkedout() == 0


def _nothing_holds_the_rating_table(app) -> None:
    """No connection is out, and (on PostgreSQL) no transaction holds a lock on
    ``rating``: an exclusive lock is granted at once (NOWAIT fails otherwise)."""
    engine = get_engine(app)
    assert engine.pool.checkedout() == 0
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.execute(text("LOCK TABLE rating IN ACCESS EXCLUSIVE MODE NOWAIT"))


def test_a_download_never_read_holds_no_connection(app, small_study):
    # Called directly: the test client always reads the first piece of a body.
    from annotator.db import session_scope
    from annotator.study.studies import get_study
    from annotator.web.lead.long_download import long_export_response

    with session_scope(app) as session:
        study = get_study(session, small_study)
    with app.app_context():
        response = long_export_response(study, scale="0-5")
        try:
            # The choices were checked; no row is read until the body is.
            _nothing_holds_the_rating_table(app)
        finally:
            response.close()
        _nothing_holds_the_rating_table(app)
        # And the closed response's session is not left half-used: a new one reads all.
        again = long_export_response(study, scale="0-5")
        with again:
            rows = list(csv.DictReader(io.StringIO(again.get_data(as_text=True))))
        with open(DATA / "ratings.csv") as handle:
            on_scale = sum(1 for r in csv.DictReader(handle) if r["scale"] == "0-5")
        assert len(rows) == on_scale and {r["scale"] for r in rows} == {"0-5"}
    _nothing_holds_the_rating_table(app)


def test_a_client_that_goes_away_midway_leaves_no_transaction(
    app, lead_client, small_study, monkeypatch
):
    monkeypatch.setattr(long_rows, "LONG_CHUNK", 2)
    response = lead_client.get(f"/lead/studies/{small_study}/export?format=long", buffered=False)
    body = iter(response.response)
    first = next(body)
    assert first.startswith(b"kind,study,item_id,")
    assert len(first.splitlines()) == 3  # the header and the first chunk of two rows
    # Midway: the stream holds its connection (and, on PostgreSQL, its cursor).
    assert get_engine(app).pool.checkedout() == 1
    # The client goes away: the server closes the response without reading on.
    response.close()
    _nothing_holds_the_rating_table(app)


@pytest.mark.parametrize("query", ["scale=1-7", "benchmark=nope", "where=gender%3Dnobody"])
def test_a_refused_choice_answers_with_the_form_and_holds_nothing(
    app, lead_client, small_study, query
):
    response = lead_client.get(f"/lead/studies/{small_study}/export?format=long&{query}")
    assert response.status_code in (200, 422)
    _nothing_holds_the_rating_table(app)


def _stream_peak(lead_client, slug: str) -> tuple[int, int]:
    """Peak bytes allocated by Python (tracemalloc) while the long export of
    ``slug`` is downloaded and each piece thrown away, and the body's length."""
    length = 0
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        response = lead_client.get(f"/lead/studies/{slug}/export?format=long", buffered=False)
        assert response.status_code == 200
        for piece in response.response:
            length += len(piece)
        response.close()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return peak, length


def test_the_long_download_streams_in_constant_memory(app, lead_client, monkeypatch):
    """Four times the ratings: the body is four times as long, the peak memory
    of the download hardly grows. A body built whole (or rows read whole) would
    add at least the body's growth to the peak; the bound is a quarter of it."""
    from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
    from annotator.db import session_scope

    monkeypatch.setattr(long_rows, "LONG_CHUNK", 200)
    spec = {"n_raters": 5, "scales": (("0-5", 0.0, 5.0, 0.1),), "models": ("gpt",), "runs": 1}
    with session_scope(app) as session:
        build_synthetic_study(session, SyntheticSpec(slug="base", n_items=400, **spec))
        build_synthetic_study(session, SyntheticSpec(slug="four", n_items=1600, seed=1, **spec))
    _stream_peak(lead_client, "base")  # the first download imports and caches what it needs
    small_peak, small_body = _stream_peak(lead_client, "base")
    large_peak, large_body = _stream_peak(lead_client, "four")
    assert large_body > 3.5 * small_body > 3.5 * 400 * 5 * 100
    assert large_peak - small_peak < (large_body - small_body) / 4, (small_peak, large_peak)
    assert get_engine(app).pool.checkedout() == 0


@pytest.mark.postgresql_only
def test_postgresql_sends_the_rows_a_chunk_at_a_time(app, lead_client, small_study, monkeypatch):
    """On PostgreSQL the rows come through a server-side cursor, a chunk per
    FETCH: the driver's default cursor would receive the whole result into the
    client's memory (libpq's, which tracemalloc does not see) before the first row."""
    if get_engine(app).dialect.name != "postgresql":
        pytest.skip("PostgreSQL's server-side cursor (the suite's PostgreSQL run checks it)")
    monkeypatch.setattr(long_rows, "LONG_CHUNK", 2)
    response = lead_client.get(f"/lead/studies/{small_study}/export?format=long", buffered=False)
    body = iter(response.response)
    next(body)
    try:
        with get_engine(app).connect() as connection:
            streaming = connection.execute(
                text(
                    "SELECT query FROM pg_stat_activity "
                    "WHERE pid <> pg_backend_pid() AND datname = current_database() "
                    "AND state = 'idle in transaction'"
                )
            ).scalars()
            assert [q for q in streaming if q.startswith("FETCH FORWARD 2 FROM")], "no cursor"
    finally:
        response.close()
    _nothing_holds_the_rating_table(app)
