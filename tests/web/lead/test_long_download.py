"""The long export downloads from the study page as the same file the CLI writes (in chunks)."""

from __future__ import annotations

import csv
import io

from annotator.data import long_rows
from tests.conftest import DATA


def test_long_export_streams_the_same_file_as_the_cli(app, lead_client, small_study, monkeypatch):
    # Chunks of two rows: the file is made of several pieces.
    monkeypatch.setattr(long_rows, "LONG_CHUNK", 2)
    response = lead_client.get(f"/lead/studies/{small_study}/export?format=long")
    assert response.status_code == 200
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
