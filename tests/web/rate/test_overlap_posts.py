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

from .conftest import HTMX, blocks_of, item_url, join, start, statements


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
        with statements(app) as seen:
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


def test_a_rater_excluded_for_going_quiet_stores_nothing_more(app, tmp_path, clock):
    # Issue 35's overlap detail, a right checked at the post (issue 36, finding 3).
    from annotator.collect.dealing import overlap_spec, release_departed
    from annotator.models import RaterStatus, Rating, Study, User

    folder = tmp_path / "ov"
    folder.mkdir()
    toml = sim.overlap_toml(k=2, per_rater=4, slug="ov", extra="abandon_after_days = 1\n")
    with app.app_context(), Session(get_engine(app)) as session:
        sim.make_overlap_study(session, folder, toml, 12)
    client = app.test_client()
    rater = join(app, client, "ov")
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    client.get(item_url(block.id, 1))
    assert client.post(item_url(block.id, 1), data={"score": "3"}).status_code == 302
    # Two quiet days: the next dealing excludes them and gives their items back.
    clock.advance(days=2)
    with app.app_context(), Session(get_engine(app)) as session:
        study = session.exec(select(Study).where(Study.slug == "ov")).one()
        assert release_departed(session, study, overlap_spec(study)) == 4
        session.commit()
        assert session.get(User, rater).status == RaterStatus.EXCLUDED
    client.get(item_url(block.id, 2))
    response = client.post(item_url(block.id, 2), data={"score": "3"}, follow_redirects=True)
    assert "Your places in this study went to other raters" in response.text
    with Session(get_engine(app)) as session:
        positions = session.exec(select(Rating.position).where(Rating.rater_id == rater)).all()
    assert positions == [1]
