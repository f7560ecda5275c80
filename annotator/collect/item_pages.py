"""What the rater sees: the entry at a place of their block, with where they are.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import bindparam, update
from sqlalchemy.exc import NoResultFound
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, select

from ..clock import now
from ..models import AuditAction, AuditEvent, Benchmark, Block, Item, Rating
from ..models.revision import bump_revision, study_of_scale
from .rated_places import next_position, passed_over, ratings_by_position

__all__ = [
    "ItemPage",
    "item_page",
    "item_and_benchmark",
    "items_and_benchmarks",
    "open_item",
    "report_unshown_item",
    "serve",
    "update_block",
]


# Built once; the SET clause comes from the parameters' names.
_UPDATE_BLOCK = update(Block.__table__).where(Block.__table__.c.id == bindparam("block_key"))


def update_block(session: Session, block: Block, **values) -> None:
    """Set columns of ``block`` with one UPDATE, in this transaction.

    A Core UPDATE instead of the ORM's unit of work: on every score post the
    flush of a changed block (change tracking, then the UPDATE built for it)
    cost more than the statement. The loaded object gets the same values as
    committed ones, so the session has nothing left to flush for it; a
    rollback expires it and the next access reads the database again.
    """
    session.execute(_UPDATE_BLOCK, {"block_key": block.id, **values})
    if values.keys() & {"started_at", "completed_at", "item_order"}:
        # A started, completed or reordered block (an item passed over or dealt
        # to it) changes what the analysis sees; serving the next place does not.
        bump_revision(session, study_of_scale(block.scale_id))
    for name, value in values.items():
        set_committed_value(block, name, value)


def serve(session: Session, block: Block, position: int) -> None:
    """Note when the entry at ``position`` was first shown."""
    if block.current_position != position:
        update_block(session, block, current_position=position, current_served_at=now())


@dataclass
class ItemPage:
    """One entry of a block as the rater sees it, with where they are."""

    block: Block
    position: int
    item: Item
    benchmark: Benchmark
    # The rater's rating of this entry, if any: the page then revises it.
    existing: Rating | None
    rated: int
    # The first unrated place (None when all are rated).
    frontier: int | None
    # A break reminder is due before this new entry.
    break_due: bool

    @property
    def total(self) -> int:
        return len(self.block.item_order)

    @property
    def passed_over(self) -> bool:
        """Whether the rater passed over this place (its item could not be shown)."""
        return passed_over(self.block, self.position)


# Built once (see annotator.collect.block_states._BLOCK_STATE). A Core
# statement, its rows made into models without the ORM: the page only reads
# the item and its benchmark, and the ORM's execution and loading of the two
# cost about as much as the rest of the query on every score post.
_ITEM_COLUMNS = tuple(Item.__table__.c.keys())
_BENCHMARK_COLUMNS = tuple(Benchmark.__table__.c.keys())
_ITEM_PAGE = (
    select(*Item.__table__.c, *Benchmark.__table__.c)
    .join_from(
        Item.__table__,
        Benchmark.__table__,
        Benchmark.__table__.c.id == Item.__table__.c.benchmark_id,
    )
    # Two keys: a score post reads the posted item and the next one in one statement
    # (item_and_benchmark passes its one key twice).
    .where(Item.__table__.c.id.in_((bindparam("item_key"), bindparam("other_key"))))
)


def items_and_benchmarks(
    session: Session, item_id: int, other_id: int | None = None
) -> dict[int, tuple[Item, Benchmark]]:
    """Items with their benchmarks by id, in one query: ``item_id`` and ``other_id``."""
    rows = session.connection().execute(
        _ITEM_PAGE, {"item_key": item_id, "other_key": item_id if other_id is None else other_id}
    )
    split = len(_ITEM_COLUMNS)
    found = {}
    for row in rows:
        # Validated when stored: model_construct skips pydantic's validation.
        item = Item.model_construct(**dict(zip(_ITEM_COLUMNS, row[:split], strict=True)))
        found[item.id] = (
            item,
            Benchmark.model_construct(**dict(zip(_BENCHMARK_COLUMNS, row[split:], strict=True))),
        )
    return found


def item_and_benchmark(session: Session, item_id: int) -> tuple[Item, Benchmark]:
    """The item and its benchmark, in one query (for :func:`item_page`'s ``loaded``)."""
    found = items_and_benchmarks(session, item_id)
    if item_id not in found:
        raise NoResultFound(f"no item with id {item_id}")
    return found[item_id]


def item_page(
    session: Session,
    block: Block,
    position: int,
    rated: Mapping[int, Rating],
    *,
    break_every: int | None,
    loaded: tuple[Item, Benchmark] | None = None,
) -> ItemPage:
    """The page for ``position`` from the block's ratings already loaded.

    ``loaded``: the entry's item and benchmark if already read in this
    transaction (:func:`item_and_benchmark`).
    """
    item, benchmark = loaded or item_and_benchmark(session, block.item_order[position - 1]["item"])
    existing = rated.get(position)
    done_before = position - 1
    break_due = bool(
        existing is None and break_every and done_before > 0 and done_before % break_every == 0
    )
    return ItemPage(
        block=block,
        position=position,
        item=item,
        benchmark=benchmark,
        existing=existing,
        rated=len(rated),
        frontier=next_position(block, rated),
        break_due=break_due,
    )


def open_item(
    session: Session,
    block: Block,
    position: int,
    *,
    break_every: int | None,
    positions: set[int] | None = None,
) -> ItemPage | int:
    """What a rater asking for ``position`` sees; the caller commits.

    A place beyond the first unrated one returns that place (an ``int``) to
    go to instead; the first unrated place is marked as served from now.
    ``positions``: the block's rated places if already read in this
    transaction (``BlockState.rated_places``).
    """
    rated = ratings_by_position(session, block, positions)
    frontier = next_position(block, rated)
    if frontier is not None and position > frontier:
        return frontier
    if position == frontier:
        serve(session, block, position)
    return item_page(session, block, position, rated, break_every=break_every)


def report_unshown_item(session: Session, page: ItemPage, error: BaseException) -> bool:
    """Record in the audit log that ``page``'s item could not be shown; the caller commits.

    Its benchmark's template failed to render (a study stored before the
    study file's checks, or a template raising on this item's fields). One
    event per rater and item, however often the page is opened; returns
    whether one was added.
    """
    block = page.block
    earlier = session.exec(
        select(AuditEvent.details).where(
            AuditEvent.action == AuditAction.ITEM_NOT_SHOWN,
            AuditEvent.subject_id == block.rater_id,
            AuditEvent.study_id == page.item.study_id,
        )
    ).all()
    if any(details.get("item") == page.item.external_id for details in earlier):
        return False
    session.add(
        AuditEvent(
            subject_id=block.rater_id,
            study_id=page.item.study_id,
            action=AuditAction.ITEM_NOT_SHOWN,
            details={
                "item": page.item.external_id,
                "benchmark": page.benchmark.name,
                "block": block.id,
                "position": page.position,
                "error": f"{type(error).__name__}: {error}"[:500],
            },
        )
    )
    return True
