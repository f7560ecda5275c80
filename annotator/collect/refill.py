"""An overlap study's place given back when its item was passed over.

In an overlap design (:mod:`annotator.collect.dealing`) each pool item has
``raters_per_item`` places per scale. A rater who passes over an item that
could not be shown (:func:`annotator.collect.unshown_items.pass_over`) leaves
their place without a rating, so the item would end one rating short.
:func:`give_back_place` hands that place on instead:

* while the seats of the scale that have not started their block can take
  every open place (``items_per_rater`` each), the place goes back to the
  pool: a block yet to start is dealt it with the other open places (the even
  split counts it);
* otherwise it is added at the end of the open block, on that scale, of the
  rater holding the fewest places who does not have the item yet; the block
  grows by one place;
* when no such block is open (all the others are done), the place stays short,
  and the audit event of the pass-over says so.

The rater who passed the item over keeps the passed-over entry in their block
(nothing is rated there). If the item still fails for the next rater, they pass
it over in turn and the place moves on again, until the lead fixes the template.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from sqlalchemy import delete, func, insert, update
from sqlmodel import Session, select

from ..clock import now
from ..models import Block, ItemShare, RaterStatus, Scale, Study, User
from ..models.revision import bump_revision
from .dealing import _lock, overlap_spec, planned_raters, study_pool

__all__ = ["give_back_place"]

KEPT_OPEN = "back to the pool for the next block dealt"
SHORT = "one rating short: no other rater's block on this scale is open"


def _started_seats(session: Session, study: Study, scale_id: int) -> int:
    return session.exec(
        select(func.count(Block.id))
        .join(User, User.id == Block.rater_id)
        .where(
            User.study_id == study.id,
            User.status == RaterStatus.ACTIVE,
            Block.scale_id == scale_id,
            Block.started_at.is_not(None),
        )
    ).one()


def _open_blocks(session: Session, study: Study, block: Block, item_id: int) -> list[Block]:
    """Other active raters' started, unfinished blocks on ``block``'s scale without
    ``item_id``, fewest places first (then the oldest)."""
    holding_item = select(ItemShare.block_id).where(
        ItemShare.item_id == item_id, ItemShare.scale_id == block.scale_id
    )
    places = (
        select(func.count(ItemShare.id))
        .where(ItemShare.block_id == Block.id)
        .correlate(Block)
        .scalar_subquery()
    )
    candidates = session.exec(
        select(Block)
        .join(User, User.id == Block.rater_id)
        .where(
            User.study_id == study.id,
            User.status == RaterStatus.ACTIVE,
            Block.scale_id == block.scale_id,
            Block.id != block.id,
            Block.started_at.is_not(None),
            Block.completed_at.is_(None),
            Block.id.not_in(holding_item),
        )
        .order_by(places, Block.id)
    ).all()
    return [b for b in candidates if all(e["item"] != item_id for e in b.item_order)]


def give_back_place(session: Session, block: Block, item_id: int) -> str | None:
    """Hand on ``block``'s place of ``item_id`` (passed over); what became of it.

    None when the study is crossed or the item holds no place of the pool in this
    block (an anchor or an attention check). Otherwise a sentence for the audit log:
    back to the pool, added to another rater's block, or one rating short.
    """
    scale = session.get(Scale, block.scale_id)
    study = session.get(Study, scale.study_id)
    spec = overlap_spec(study)
    if spec is None:
        return None
    _lock(session, study)
    share = session.exec(
        select(ItemShare).where(ItemShare.block_id == block.id, ItemShare.item_id == item_id)
    ).first()
    if share is None:
        return None
    session.execute(delete(ItemShare).where(ItemShare.id == share.id))
    pool = study_pool(session, study, spec)
    unstarted = planned_raters(study, spec, len(pool.pool)) - _started_seats(
        session, study, block.scale_id
    )
    held = session.exec(
        select(func.count(ItemShare.id)).where(
            ItemShare.study_id == study.id, ItemShare.scale_id == block.scale_id
        )
    ).one()
    open_places = len(pool.pool) * spec.raters_per_item - held
    # The blocks still to start take every open place only if their loads allow it.
    capacity = open_places if spec.items_per_rater is None else unstarted * spec.items_per_rater
    if unstarted > 0 and capacity >= open_places:
        return KEPT_OPEN
    for other in _open_blocks(session, study, block, item_id):
        order = [*other.item_order, {"item": item_id, "repeat": False, "attention": False}]
        # Only while the block is still open: a block completed meanwhile is left as it is.
        grown = session.execute(
            update(Block.__table__)
            .where(Block.__table__.c.id == other.id, Block.__table__.c.completed_at.is_(None))
            .values(item_order=order)
        )
        if grown.rowcount != 1:
            continue
        # The block has one more entry: the blocks frame counts them.
        bump_revision(session, study.id)
        session.execute(
            insert(ItemShare.__table__).values(
                study_id=study.id,
                item_id=item_id,
                scale_id=block.scale_id,
                slot=share.slot,
                block_id=other.id,
                taken_at=now(),
            )
        )
        session.expire(other)
        return f"added to block {other.id} of another rater"
    return KEPT_OPEN if unstarted > 0 else SHORT
