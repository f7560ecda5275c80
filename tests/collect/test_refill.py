"""An overlap study's item passed over (it could not be shown) still gets its k ratings:
the place goes back to the pool while seats are open, else to another open block."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.collect.block_states import block_state
from annotator.collect.dealing import overlap_spec, study_pool
from annotator.collect.item_pages import item_page
from annotator.collect.rated_places import PASSED_OVER
from annotator.collect.refill import KEPT_OPEN, SHORT
from annotator.collect.scoring import submit_score
from annotator.collect.unshown_items import pass_over
from annotator.db import get_engine
from annotator.models import AuditAction, AuditEvent, Block, ItemShare
from tests.collect import overlap_sim as sim

ONE_SCALE = '\n[[scales]]\nname = "0-5"\nmin = 0\nmax = 5\nstep = 0.5\n'
K = 2


@pytest.fixture
def db(app):
    with app.app_context(), Session(get_engine(app), expire_on_commit=False) as session:
        yield session


@pytest.fixture
def study(db, tmp_path):
    # 6 pool items x k=2 places, 3 per rater: 4 seats; one scale, one block each.
    toml = sim.overlap_toml(k=K, per_rater=3, scales=ONE_SCALE)
    return sim.make_overlap_study(db, tmp_path, toml, 6)


def _joined(db, study, n: int) -> list:
    users = [sim.join(db, study) for _ in range(n)]
    for user in users:
        sim.start(db, user, sim.blocks(db, user)[0])
    return users


def _pass_over_first(db, user) -> int:
    """The rater passes over their first place; returns its item id."""
    block = sim.blocks(db, user)[0]
    page = item_page(db, block, 1, {}, break_every=None)
    pass_over(db, page, {}, ValueError("the template failed"))
    db.commit()
    return page.item.id


def _rate_the_rest(db, user) -> None:
    state = block_state(db, user, sim.blocks(db, user)[0].id)
    for position, entry in enumerate(state.block.item_order, start=1):
        if PASSED_OVER not in entry:
            submit_score(db, user, state.block, state.scale, position, "3")
    db.commit()


def _place_note(db) -> str | None:
    (event,) = db.exec(
        select(AuditEvent).where(AuditEvent.action == AuditAction.ITEM_PASSED_OVER)
    ).all()
    return event.details.get("place")


def _every_pool_item_has_k(db, study) -> None:
    pool = study_pool(db, study, overlap_spec(study)).pool
    counts = sim.counted_per_item(db, study)
    assert sorted({n for (item, _), n in counts.items() if item in pool}) == [K]
    assert len({item for item, _ in counts} & set(pool)) == len(pool)


def test_a_place_passed_over_while_seats_are_open_is_dealt_to_the_next_block(db, tmp_path):
    # 5 items x 2 places over 4 seats of 3: two seats yet to start have room for
    # the 4 open places and the one given back.
    toml = sim.overlap_toml(k=K, per_rater=3, scales=ONE_SCALE)
    study = sim.make_overlap_study(db, tmp_path, toml, 5)
    first, *others = _joined(db, study, 2)
    item = _pass_over_first(db, first)
    assert _place_note(db) == KEPT_OPEN
    block = sim.blocks(db, first)[0]
    shares = db.exec(select(ItemShare).where(ItemShare.block_id == block.id)).all()
    assert item not in {share.item_id for share in shares}
    later = _joined(db, study, 2)
    dealt = [e["item"] for user in later for e in sim.blocks(db, user)[0].item_order]
    assert item in dealt
    for user in [first, *others, *later]:
        _rate_the_rest(db, user)
    _every_pool_item_has_k(db, study)


@pytest.mark.parametrize("started", [3, 4], ids=["last-seat-full", "every-seat-started"])
def test_a_place_no_seat_can_take_goes_to_an_open_block(db, study, started):
    first, *others = _joined(db, study, started)
    lengths = {u.id: len(sim.blocks(db, u)[0].item_order) for u in others}
    item = _pass_over_first(db, first)
    note = _place_note(db)
    assert note.startswith("added to block ")
    grown = db.get(Block, int(note.split()[3]))
    db.refresh(grown)
    assert grown.item_order[-1]["item"] == item
    assert len(grown.item_order) == lengths[grown.rater_id] + 1
    others += _joined(db, study, 4 - started)
    for user in [first, *others]:
        _rate_the_rest(db, user)
    _every_pool_item_has_k(db, study)


def test_with_no_other_block_open_the_place_stays_short_and_says_so(db, study):
    first, *others = _joined(db, study, 4)
    for user in others:
        _rate_the_rest(db, user)
    _pass_over_first(db, first)
    assert _place_note(db) == SHORT
