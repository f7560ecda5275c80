"""A score post in an overlap study runs the same statements as in a crossed one:
the dealing happens when a block starts, never on a post."""

from __future__ import annotations

import pytest
from sqlalchemy import func
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import ItemShare
from tests.collect import overlap_sim as sim
from tests.data.studies import study_toml

from .conftest import blocks_of, item_url, join, start
from .test_query_count import HTMX, _statements


def _one_post(app, tmp_path, toml: str, slug: str) -> tuple[list[str], int]:
    folder = tmp_path / slug
    folder.mkdir()
    with app.app_context(), Session(get_engine(app)) as session:
        sim.make_overlap_study(session, folder, toml, 12)
    client = app.test_client()
    rater = join(app, client, slug)
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    block = blocks_of(app, rater)[0]
    for position in (1, 2):
        assert client.get(item_url(block.id, position)).status_code == 200
        with _statements(app) as seen:
            response = client.post(item_url(block.id, position), data={"score": "3"}, headers=HTMX)
        assert response.status_code == 200, response.text
    with Session(get_engine(app)) as session:
        shares = session.exec(
            select(func.count(ItemShare.id)).where(ItemShare.block_id == block.id)
        ).one()
    return list(seen), shares


@pytest.mark.parametrize("anchors", [0, 2])
def test_an_overlap_post_runs_the_statements_of_a_crossed_post(app, tmp_path, anchors):
    crossed, no_shares = _one_post(app, tmp_path, study_toml(slug="cr", gap_days=0), "cr")
    overlap_toml = sim.overlap_toml(k=2, anchors=anchors, per_rater=4, slug="ov")
    overlap, shares = _one_post(app, tmp_path, overlap_toml, "ov")
    assert no_shares == 0 and shares == 4
    assert [s.split()[0] for s in overlap] == [s.split()[0] for s in crossed]
    assert len(overlap) == len(crossed)
