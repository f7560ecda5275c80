"""Dealing items in an overlap design: each item to ``raters_per_item`` raters per scale.

A study with ``[assignment] design = "overlap"`` does not give every rater
every item. Its regular items are split into

* the *anchor* items (:func:`anchor_ids`), which every rater rates on every
  scale, so that ICC(A,1) has a complete items x raters block; and
* the *pool*: each pool item has ``k = raters_per_item`` places (shares) per
  scale, taken by blocks when they start (:class:`~annotator.models.ItemShare`).

**Seats.** The study needs ``R`` raters: ``ceil(pool x k / items_per_rater)``,
or ``crowd.max_raters`` when ``items_per_rater`` is not given. A rater who
consents takes a seat; when ``R`` raters who have not left hold seats, the
study is full (crowd entry and invite links say so, :class:`StudyFull`).

**Loads.** A block starting on a scale where ``s`` seats have no block yet
and ``T`` shares are open takes ``ceil(T / s)`` of them: the classic
even split, so the loads of one scale stay within one item of each other
(``floor(P k / R)`` or ``ceil(P k / R)``). It takes first the items
with as many open places as open seats (so no later rater would need an
item twice), then the items whose raters it shares fewest items with (pairs
of raters overlap as evenly as the greedy choice gets), ties broken by the
block's seed.

**Leaving.** A rater has left when they withdrew, were excluded, were
screened out by attention checks, or let ``abandon_after_days`` pass with a
block unfinished (no rating in that time) or an open block not started;
:func:`release_departed` excludes the last two (audited, with the reason)
and deletes the shares of everyone who left, so their items go back to the
pool and their seat to a newcomer. *All* of a leaver's shares go back, the
rated ones too, because their ratings no longer count (withdrawn and
excluded raters' ratings enter no export or statistic,
:func:`annotator.study.raters.counted_rater`). This is what keeps both
promises at once: each pool item ends with exactly ``k`` counted ratings
per scale, and the loads stay within one item; keeping a leaver's partial
ratings would leave a remainder the remaining seats cannot split evenly.
A lead who includes such a rater again gets their ratings back, on top
of the ``k``. Leaving is detected when someone is dealt or admitted (no
background job): the first request after the deadline does it.

**Races.** Dealing takes the study row's write lock first (an UPDATE, which
PostgreSQL holds as a row lock and SQLite as its database write lock), so
two raters starting at once are dealt one after the other, each seeing the
other's shares; the unique key on (item, scale, slot) would turn any race
the lock missed into an error, never into a ``k+1``-th place.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, insert, update
from sqlmodel import Session, select

from ..clock import now
from ..models import Block, Item, ItemShare, RaterStatus, Rating, Role, Study, User
from ..study.assignment_spec import anchor_item_ids
from ..study.raters import exclude_rater
from ..study.studyfile import AssignmentSpec, assignment_settings, crowd_settings

__all__ = [
    "StudyFull",
    "Pool",
    "overlap_spec",
    "anchor_ids",
    "study_pool",
    "planned_raters",
    "departed_raters",
    "release_departed",
    "seats_full",
    "take_seat",
    "deal_block",
]


class StudyFull(Exception):
    """The study has all the raters it needs (crowd ``max_raters`` or overlap seats)."""


def overlap_spec(study: Study) -> AssignmentSpec | None:
    """The study's ``[assignment]`` table when it is an overlap design; ``None`` when crossed."""
    spec = assignment_settings(study.source_toml)
    return spec if spec.design == "overlap" else None


def anchor_ids(study: Study, spec: AssignmentSpec, regular: dict[int, str]) -> set[int]:
    """The anchor items among ``regular`` (item id -> external id); see
    :func:`annotator.study.assignment_spec.anchor_item_ids` for the draw."""
    chosen = anchor_item_ids(spec, study.slug, regular.values())
    return {item_id for item_id, external in regular.items() if external in chosen}


@dataclass
class Pool:
    """A study's regular items, split into anchors and the pool."""

    anchors: set[int]
    pool: list[int]


def study_pool(session: Session, study: Study, spec: AssignmentSpec) -> Pool:
    rows = session.exec(
        select(Item.id, Item.external_id).where(
            Item.study_id == study.id, Item.gold_score.is_(None)
        )
    ).all()
    regular = dict(rows)
    anchors = anchor_ids(study, spec, regular)
    return Pool(anchors=anchors, pool=sorted(set(regular) - anchors))


def planned_raters(study: Study, spec: AssignmentSpec, pool_size: int) -> int:
    """``R``: how many raters the study needs (at least ``raters_per_item``)."""
    k = spec.raters_per_item
    if spec.items_per_rater is None:
        wanted = crowd_settings(study.crowd).max_raters
    else:
        wanted = math.ceil(pool_size * k / spec.items_per_rater)
    return max(wanted, k)


# ------------------------------------------------------------------ leaving


def _last_activity(session: Session, rater_ids: list[int]) -> dict[int, object]:
    if not rater_ids:
        return {}
    return dict(
        session.exec(
            select(Rating.rater_id, func.max(Rating.submitted_at))
            .where(Rating.rater_id.in_(rater_ids))
            .group_by(Rating.rater_id)
        ).all()
    )


def departed_raters(session: Session, study: Study, spec: AssignmentSpec) -> dict[int, str]:
    """Active raters who have left without saying so, by id, with why (nothing written).

    Screened out by attention checks; or for ``abandon_after_days``: a block
    started with no rating since, or an open block (the first after
    consenting, a later one after its gap) not started.
    """
    from .protocol import next_block_opens

    # Columns, not models: a block's model parses its whole item order.
    raters = session.exec(
        select(User.id, User.screened_out_at, User.consented_at).where(
            User.study_id == study.id,
            User.role == Role.RATER,
            User.status == RaterStatus.ACTIVE,
            User.consented_at.is_not(None),
        )
    ).all()
    limit = timedelta(days=spec.abandon_after_days)
    current = now()
    blocks: dict[int, list] = defaultdict(list)
    for block in session.exec(
        select(
            Block.rater_id,
            Block.position,
            Block.started_at,
            Block.completed_at,
            Block.gap_lifted_at,
        )
        .join(User, User.id == Block.rater_id)
        .where(User.study_id == study.id, User.status == RaterStatus.ACTIVE)
        .order_by(Block.rater_id, Block.position)
    ).all():
        blocks[block.rater_id].append(block)
    last_rating = _last_activity(session, [r.id for r in raters])
    gone: dict[int, str] = {}
    for rater in raters:
        if rater.screened_out_at is not None:
            gone[rater.id] = "screened out by attention checks"
            continue
        previous_done = rater.consented_at
        for block in blocks[rater.id]:
            if block.completed_at is not None:
                previous_done = block.completed_at
                continue
            if block.started_at is not None:
                since = max(block.started_at, last_rating.get(rater.id) or block.started_at)
                what = f"left block {block.position} unfinished"
            else:
                gap = 0 if block.position == 1 else study.session_gap_days
                since = next_block_opens(previous_done, gap)
                if block.gap_lifted_at is not None:
                    since = min(since, block.gap_lifted_at)
                what = f"did not start block {block.position} once it opened"
            if current - since > limit:
                gone[rater.id] = f"{what} for {spec.abandon_after_days:g} days"
            break
    return gone


def release_departed(session: Session, study: Study, spec: AssignmentSpec) -> int:
    """Exclude the raters who left (see :func:`departed_raters`) and give back every
    share held by a rater who no longer counts. Returns how many shares went back."""
    for rater_id, why in departed_raters(session, study, spec).items():
        exclude_rater(
            session,
            session.get(User, rater_id),
            actor=None,
            via="overlap-dealing",
            reason=f"left the study: {why}; their items went back to the pool",
        )
    not_counted = select(Block.id).join(User, User.id == Block.rater_id)
    not_counted = not_counted.where(User.study_id == study.id, User.status != RaterStatus.ACTIVE)
    result = session.execute(
        delete(ItemShare).where(ItemShare.study_id == study.id, ItemShare.block_id.in_(not_counted))
    )
    return result.rowcount or 0


# -------------------------------------------------------------------- seats


def _lock(session: Session, study: Study) -> None:
    # A write to the study row before any read of the shares: PostgreSQL's
    # row lock, SQLite's database write lock (pysqlite opens the transaction
    # at the first write), held to the commit by whoever deals.
    table = Study.__table__
    session.execute(update(table).where(table.c.id == study.id).values(version=table.c.version))


def _active_raters(session: Session, study: Study, besides: set[int] = frozenset()) -> int:
    ids = session.exec(
        select(User.id).where(
            User.study_id == study.id,
            User.role == Role.RATER,
            User.status == RaterStatus.ACTIVE,
            User.consented_at.is_not(None),
        )
    ).all()
    return len(set(ids) - besides)


def seats_full(session: Session, study: Study, spec: AssignmentSpec) -> bool:
    """Whether ``R`` raters who have not left hold seats (read only, for pages)."""
    pool = study_pool(session, study, spec)
    departed = set(departed_raters(session, study, spec))
    return _active_raters(session, study, departed) >= planned_raters(study, spec, len(pool.pool))


def take_seat(session: Session, study: Study) -> None:
    """Before admitting a rater to an overlap study: :class:`StudyFull` when no seat is free.

    Releases the seats of raters who left first. A crossed study has no seats.
    """
    spec = overlap_spec(study)
    if spec is None:
        return
    _lock(session, study)
    release_departed(session, study, spec)
    pool = study_pool(session, study, spec)
    if _active_raters(session, study) >= planned_raters(study, spec, len(pool.pool)):
        raise StudyFull(study.slug)


# ------------------------------------------------------------------ dealing


def _pick(
    rng: random.Random,
    open_places: dict[int, int],
    holders: dict[int, list[int]],
    load: int,
    *,
    seats_open: int | None = None,
    pair_target: float = 0.0,
) -> list[int]:
    """``load`` items for one rater: the items that need every open seat, then the
    items whose raters this rater shares the fewest items with.

    A greedy choice written here (no library deals under these two
    constraints). An item with as many open places as there are open seats
    (``seats_open``) must be taken now, or some later rater would need it
    twice; they are never more than ``load``. Every other pick minimises
    the sum over the item's raters of (items shared with them so far minus
    ``pair_target``, the share each pair gets when overlaps are even), so a
    rater meets raters they have met least; each pick adds one to those
    overlaps. Less half ``pair_target`` per open place of the item, which
    keeps the items' open places level, so the last raters are not left
    with items whose raters they share many with already (the weight
    one-half did best in simulations of 6 to 30 raters). Ties at random.
    The scores are one matrix-vector product per pick (items x raters
    incidence), as a Python loop over the items cost most of a block start.
    """
    # Imported here: the rating pages and `annotator init` import this module,
    # and only a block start of an overlap study needs numpy.
    import numpy as np

    items = sorted(item for item, places in open_places.items() if places > 0)
    if not items:
        return []
    raters = sorted({rater for item in items for rater in holders[item]})
    column = {rater: j for j, rater in enumerate(raters)}
    incidence = np.zeros((len(items), len(raters)))
    for row, item in enumerate(items):
        for rater in holders[item]:
            incidence[row, column[rater]] = 1.0
    places = np.array([open_places[item] for item in items], dtype=float)
    base = -pair_target / 2 * places + 1e-9 * np.array([rng.random() for _ in items])
    if seats_open is not None:
        base -= 1e12 * (places >= seats_open)
    overlap = np.zeros(len(raters))
    taken = np.zeros(len(items), dtype=bool)
    picked: list[int] = []
    for _ in range(min(load, len(items))):
        score = base + incidence @ (overlap - pair_target)
        score[taken] = np.inf
        best = int(np.argmin(score))
        taken[best] = True
        picked.append(items[best])
        overlap += incidence[best]
    return picked


def deal_block(session: Session, study: Study, spec: AssignmentSpec, block: Block) -> list[int]:
    """Deal ``block`` its share of the pool on its scale; the block's regular items.

    Anchors plus the dealt items (unsorted; :func:`protocol.item_order`
    shuffles them). Raises :class:`StudyFull` when the scale has no open
    place left for this rater. The caller commits.
    """
    _lock(session, study)
    release_departed(session, study, spec)
    pool = study_pool(session, study, spec)
    k = spec.raters_per_item
    rows = session.exec(
        select(ItemShare.item_id, ItemShare.slot, ItemShare.block_id, Block.rater_id)
        .join(Block, Block.id == ItemShare.block_id)
        .where(ItemShare.study_id == study.id, ItemShare.scale_id == block.scale_id)
    ).all()
    taken: dict[int, set[int]] = defaultdict(set)
    holders: dict[int, list[int]] = defaultdict(list)
    blocks_holding = set()
    for item_id, slot, block_id, rater_id in rows:
        taken[item_id].add(slot)
        holders[item_id].append(rater_id)
        blocks_holding.add(block_id)
    if block.id in blocks_holding:
        # Dealt already (a repeated start): the same items again.
        mine = [item_id for item_id, _, block_id, _ in rows if block_id == block.id]
        return sorted(pool.anchors) + sorted(mine)
    open_places = {item: k - len(taken[item]) for item in pool.pool}
    total_open = sum(open_places.values())
    seats = planned_raters(study, spec, len(pool.pool))
    seats_open = seats - len(blocks_holding)
    if pool.pool and (total_open == 0 or seats_open <= 0):
        raise StudyFull(study.slug)
    load = math.ceil(total_open / seats_open) if pool.pool else 0
    if spec.items_per_rater is not None:
        load = min(load, spec.items_per_rater)
    # Shares of the pool per pair of raters when every pair shares as many.
    pair_target = len(pool.pool) * k * (k - 1) / (seats * (seats - 1)) if seats > 1 else 0.0
    picked = _pick(
        random.Random(block.seed),
        open_places,
        holders,
        load,
        seats_open=seats_open,
        pair_target=pair_target,
    )
    current = now()
    if picked:
        session.execute(
            insert(ItemShare.__table__),
            [
                {
                    "study_id": study.id,
                    "item_id": item_id,
                    "scale_id": block.scale_id,
                    "slot": min(set(range(k)) - taken[item_id]),
                    "block_id": block.id,
                    "taken_at": current,
                }
                for item_id in picked
            ],
        )
    return sorted(pool.anchors) + picked
