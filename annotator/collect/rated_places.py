"""A block's rated places: which places of its order are rated, and which comes next.

A place whose item could not be shown and that the rater passed over (its
entry of ``Block.item_order`` has :data:`PASSED_OVER`, see
:mod:`.unshown_items`) is never the next place: the block goes on, and
completes, without a rating there.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from sqlalchemy import bindparam
from sqlmodel import Session, select

from ..models import Block, Rating

__all__ = ["PASSED_OVER", "RatedPlaces", "ratings_by_position", "next_position", "passed_over"]

# The key of an entry of ``Block.item_order`` set when its place was passed
# over: its value is when (an ISO 8601 time); why is in the audit log.
PASSED_OVER = "passed_over"


# Built once (see annotator.collect.block_states._BLOCK_STATE).
_POSITIONS = select(Rating.position).where(Rating.block_id == bindparam("block_key"))


class RatedPlaces(Mapping[int, Rating]):
    """A block's ratings by position, loading a rating only when it is asked for.

    A score post needs every rated place (which place comes next, how many
    are done) but at most two ratings themselves (the place scored and the
    one after it), which mostly do not exist yet. The places are one cheap
    column query; building a full ORM object for each of up to a block's
    hundred-odd ratings on every post cost more than the rest of the query.
    A rating added in this transaction is kept (``rated[position] = rating``).
    Iterating over the values loads each rating: the callers here do not.
    """

    def __init__(self, session: Session, block: Block, positions: set[int] | None = None) -> None:
        self._session = session
        self._block_id = block.id
        if positions is None:
            positions = set(session.exec(_POSITIONS, params={"block_key": block.id}).all())
        self._positions = set(positions)
        self._loaded: dict[int, Rating] = {}

    def __contains__(self, position: object) -> bool:
        return position in self._positions

    def __len__(self) -> int:
        return len(self._positions)

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(p for p in self._positions if p is not None))

    def __getitem__(self, position: int) -> Rating:
        if position not in self._positions:
            raise KeyError(position)
        if position not in self._loaded:
            self._loaded[position] = self._session.exec(
                select(Rating)
                .where(Rating.block_id == self._block_id, Rating.position == position)
                .order_by(Rating.id.desc())
            ).first()
        return self._loaded[position]

    def __setitem__(self, position: int, rating: Rating) -> None:
        self._positions.add(position)
        self._loaded[position] = rating

    @property
    def places(self) -> set[int]:
        """The rated places (the set itself: read it, do not change it)."""
        return self._positions


def ratings_by_position(
    session: Session, block: Block, positions: set[int] | None = None
) -> RatedPlaces:
    """The block's ratings by position (loaded one by one when asked for, see RatedPlaces).

    ``positions``: the rated places as already read in this transaction
    (``BlockState.rated_places``), instead of reading them again.
    """
    return RatedPlaces(session, block, positions)


def next_position(
    block: Block, rated: Mapping[int, Rating], *, besides: int | None = None
) -> int | None:
    """The first place of the order (1-based) neither rated nor passed over; ``None`` when none.

    ``besides``: a place to count as rated too (one about to be stored).
    """
    # A set's own membership test: Mapping.__contains__ is a Python call per
    # place, up to a block's length on every score post.
    places = rated.places if isinstance(rated, RatedPlaces) else rated.keys()
    order = block.item_order
    for position in range(1, len(order) + 1):
        if (
            position not in places
            and position != besides
            and PASSED_OVER not in order[position - 1]
        ):
            return position
    return None


def passed_over(block: Block, position: int) -> bool:
    """Whether the place ``position`` (1-based) of the block was passed over."""
    return PASSED_OVER in block.item_order[position - 1]
