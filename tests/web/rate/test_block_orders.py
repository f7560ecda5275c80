"""Block orders (balanced Latin square, seeded random) and item orders as stored for raters who join."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from sqlmodel import Session, select

from annotator.collect import protocol
from annotator.db import get_engine
from annotator.models import Block, BlockAssignment, Item, Scale

from .conftest import blocks_of, join, start, study_toml

FOUR_SCALES = """
[[scales]]
name = "a"
min = 0
max = 5
step = 0.01

[[scales]]
name = "b"
min = 0
max = 10
step = 0.01

[[scales]]
name = "c"
min = 0
max = 100
step = 0.1

[[scales]]
name = "d"
min = 1
max = 7
step = 0.5
"""


def _orders_from_database(app, study_id: int) -> list[list[str]]:
    """Each rater's block order, read back from the stored sessions."""
    with Session(get_engine(app)) as session:
        names = {
            s.id: s.name for s in session.exec(select(Scale).where(Scale.study_id == study_id))
        }
        rows = session.exec(
            select(Block.rater_id, Block.position, Block.scale_id)
            .where(Block.scale_id.in_(list(names)))
            .order_by(Block.rater_id, Block.position)
        ).all()
    orders: dict[int, list[str]] = {}
    for rater_id, _position, scale_id in rows:
        orders.setdefault(rater_id, []).append(names[scale_id])
    return list(orders.values())


@pytest.mark.parametrize(
    ("scales", "n_scales", "n_raters"),
    [(None, 3, 6), (None, 3, 12), (FOUR_SCALES, 4, 4), (FOUR_SCALES, 4, 12)],
)
def test_balanced_order_puts_every_scale_equally_often_in_every_position(
    app, make_study, scales, n_scales, n_raters
):
    toml = study_toml(slug="latin") if scales is None else study_toml(slug="latin", scales=scales)
    study = make_study(toml, n_items=2)
    for _ in range(n_raters):
        join(app, app.test_client(), study.slug)
    orders = _orders_from_database(app, study.id)
    assert len(orders) == n_raters
    for order in orders:
        assert len(set(order)) == n_scales  # every scale once per rater
    counts = Counter((position, name) for order in orders for position, name in enumerate(order))
    expected = n_raters // n_scales
    assert len(counts) == n_scales * n_scales
    assert set(counts.values()) == {expected}
    # First-order carryover: every ordered pair of scales follows directly
    # equally often over full cycles of the design.
    pairs = Counter(pair for order in orders for pair in itertools.pairwise(order))
    assert len(pairs) == n_scales * (n_scales - 1)
    assert len(set(pairs.values())) == 1


def test_balanced_assignment_is_recorded_in_turn(app, make_study):
    study = make_study(study_toml(slug="turns"), n_items=2)
    users = [join(app, app.test_client(), study.slug) for _ in range(7)]
    with Session(get_engine(app)) as session:
        assignments = {
            a.user_id: a
            for a in session.exec(
                select(BlockAssignment).where(BlockAssignment.study_id == study.id)
            )
        }
    assert [assignments[u].sequence for u in users] == list(range(7))
    # Three scales need 2 * 3 rows; the seventh rater starts the cycle again.
    assert [assignments[u].latin_row for u in users] == [0, 1, 2, 3, 4, 5, 0]
    assert [b.scale_id for b in blocks_of(app, users[6])] == assignments[users[6]].scale_ids
    assert assignments[users[6]].scale_ids == assignments[users[0]].scale_ids


def test_random_order_is_drawn_from_the_stored_seed(app, make_study):
    study = make_study(study_toml(slug="rnd", scale_order="random"), n_items=2)
    users = [join(app, app.test_client(), study.slug) for _ in range(8)]
    with Session(get_engine(app)) as session:
        scales = [
            s.id
            for s in session.exec(
                select(Scale).where(Scale.study_id == study.id).order_by(Scale.position)
            )
        ]
        for user in users:
            assignment = session.exec(
                select(BlockAssignment).where(BlockAssignment.user_id == user)
            ).one()
            assert assignment.method == "random" and assignment.latin_row is None
            order = protocol.random_block_order(assignment.seed, 3)
            assert [scales[i] for i in order] == assignment.scale_ids
            assert [b.scale_id for b in blocks_of(app, user)] == assignment.scale_ids
        seeds = {
            a.seed
            for a in session.exec(
                select(BlockAssignment).where(BlockAssignment.study_id == study.id)
            )
        }
    # One generator per rater, not one shared between them.
    assert len(seeds) == len(users)


def test_sessions_have_their_own_stored_seed_and_order(app, client, rater):
    blocks = blocks_of(app, rater)
    assert len({b.seed for b in blocks}) == len(blocks)
    assert start(client, blocks[0].id).status_code == 302
    block = blocks_of(app, rater)[0]
    with Session(get_engine(app)) as session:
        items = [i.id for i in session.exec(select(Item))]
    assert block.item_order == protocol.item_order(block.seed, items)
    # Starting again (a second click on Start) keeps the stored order.
    assert start(client, block.id).status_code == 302
    assert blocks_of(app, rater)[0].item_order == block.item_order
