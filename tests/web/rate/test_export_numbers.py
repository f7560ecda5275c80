"""Exports write numbers as people expect: checked on the CSV text itself."""

from __future__ import annotations

import csv
import io

from sqlmodel import Session

from annotator.db import get_engine
from annotator.models import Item

from .conftest import blocks_of, item_url, start


def _export(app, slug: str, *args: str) -> list[dict[str, str]]:
    result = app.test_cli_runner().invoke(args=["export", slug, *args, "--out", "-"])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_integers_without_point_zero_scores_as_stored_means_rounded(
    app, client, rater, study, tmp_path
):
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    block = blocks_of(app, rater)[0]
    for position, value in ((1, "4"), (2, "2.35"), (3, "3"), (1, "4.5")):
        client.get(item_url(block.id, position))
        response = client.post(item_url(block.id, position), data={"score": value})
        assert response.status_code == 302, response.text
    with Session(get_engine(app)) as session:
        first, second = (
            session.get(Item, entry["item"]).external_id for entry in block.item_order[:2]
        )
    scores = tmp_path / "llm.csv"
    # The mean of 3.86 and 4.0 is 3.9299999999999997 in binary floating point.
    scores.write_text(
        f"item_id,model,scale,score,run,temperature\n{first},judge,0-5,3.86,1,0.7\n"
        f"{first},judge,0-5,4.0,2,0.7\n{second},judge,0-5,0.1,1,1\n"
    )
    imported = app.test_cli_runner().invoke(args=["llm-scores", "import", study.slug, str(scores)])
    assert imported.exit_code == 0, imported.output

    rows = _export(app, study.slug, "--format", "long")
    human = {r["item_id"]: r for r in rows if r["kind"] == "human"}
    assert human[first]["score"] == "4.5" and human[first]["revisions"] == "1"
    assert human[second]["score"] == "2.35" and human[second]["revisions"] == "0"
    assert {r["block_position"] for r in human.values()} == {"1"}
    assert sorted(r["presentation_position"] for r in human.values()) == ["1", "2", "3"]
    assert sorted(r["score"] for r in human.values()) == ["2.35", "3", "4.5"]
    llm = [(r["item_id"], r["score"], r["temperature"], r["revisions"]) for r in rows[3:]]
    assert sorted(llm) == sorted(
        [(first, "3.86", "0.7", ""), (first, "4", "0.7", ""), (second, "0.1", "1", "")]
    )

    # The judge ran at two temperatures and the study names no main one: each is
    # exported on its own, never averaged with the other; by default at the judge's
    # most common, 0.7 (annotator.data.temperatures).
    export = ["--format", "matrix", "--scale", "0-5", "--temperature"]
    matrix = {r["item_id"]: r for r in _export(app, study.slug, *export, "0.7")}
    assert {r["item_id"]: r for r in _export(app, study.slug, *export[:-1])} == matrix
    rater_column = [c for c in matrix[first] if c not in ("item_id", "benchmark", "llm:judge")][0]
    assert matrix[first][rater_column] == "4.5" and matrix[second][rater_column] == "2.35"
    assert matrix[first]["llm:judge"] == "3.93"
    assert matrix[second]["llm:judge"] == ""
    matrix = {r["item_id"]: r for r in _export(app, study.slug, *export, "1")}
    assert matrix[first]["llm:judge"] == ""
    assert matrix[second]["llm:judge"] == "0.1"
