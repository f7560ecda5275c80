"""PostgreSQL writes a new rating, its history row and the block's update in one
statement (annotator.collect.scoring._create_in_one_statement); the rows must be
those of the three statements SQLite runs."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.collect import scoring
from annotator.db import get_engine
from annotator.models import Block, Rating, RatingChange

from .conftest import blocks_of, item_url, join, start

HTMX = {"HX-Request": "true"}


def _stored(app, rater: int) -> tuple:
    """What the rater's first block holds, by position (ids left out)."""
    with Session(get_engine(app)) as session:
        block = session.exec(
            select(Block).where(Block.rater_id == rater, Block.position == 1)
        ).one()
        ratings = session.exec(select(Rating).where(Rating.block_id == block.id)).all()
        by_id = {r.id: r.position for r in ratings}
        changes = session.exec(
            select(RatingChange)
            .where(RatingChange.rating_id.in_(list(by_id)))
            .order_by(RatingChange.id)
        ).all()
        return (
            (block.completed_at, block.current_position, block.current_served_at),
            sorted(
                (
                    r.position,
                    r.value,
                    r.served_at,
                    r.submitted_at,
                    r.is_repeat,
                    r.is_attention_check,
                    r.source,
                    r.study_version,
                    r.rater_id == rater,
                    r.scale_id == block.scale_id,
                )
                for r in ratings
            ),
            [
                (
                    by_id[c.rating_id],
                    c.value,
                    c.previous_value,
                    c.changed_at,
                    c.reason,
                    c.actor_id == rater,
                )
                for c in changes
            ],
        )


@pytest.mark.postgresql_only
def test_one_statement_stores_what_three_statements_store(app, make_study, clock, monkeypatch):
    if get_engine(app).dialect.name != "postgresql":
        pytest.skip("the one-statement write is PostgreSQL's (SQLite has no INSERT in a CTE)")
    study = make_study(n_items=6)
    clients = {"one": app.test_client(), "three": app.test_client()}
    raters = {name: join(app, client, study.slug) for name, client in clients.items()}
    blocks = {}
    for name, client in clients.items():
        block = blocks_of(app, raters[name])[0]
        assert start(client, block.id).status_code == 302
        blocks[name] = blocks_of(app, raters[name])[0]
        assert client.get(item_url(block.id, 1)).status_code == 200
    one_statement = scoring._in_one_statement
    total = len(blocks["one"].item_order)
    # New ratings by htmx (serving the next place in the same write), a
    # revision, a repeated submission, a plain post (no serving), and the
    # last place, which completes the block.
    steps = [(p, "2.5", True) for p in range(1, total - 1)]
    steps += [(2, "3.5", True), (2, "3.5", True), (total - 1, "1", False), (total, "0", True)]
    for position, value, htmx in steps:
        clock.advance(seconds=7)
        for name, client in clients.items():
            monkeypatch.setattr(
                scoring,
                "_in_one_statement",
                one_statement if name == "one" else (lambda session: False),
            )
            if not htmx:
                client.get(item_url(blocks[name].id, position))
            response = client.post(
                item_url(blocks[name].id, position),
                data={"score": value},
                headers=HTMX if htmx else {},
            )
            assert response.status_code in (200, 302), response.text
        assert _stored(app, raters["one"]) == _stored(app, raters["three"])
    final = _stored(app, raters["one"])
    assert final[0][0] is not None and len(final[1]) == total and len(final[2]) == total + 1
