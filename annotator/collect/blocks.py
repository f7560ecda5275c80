"""A rater's blocks, serving an item and storing a score: the names in one place.

The code lives in modules by responsibility (this one keeps the import
names the app, the tests and older code use):

- :mod:`.block_states`: what a rater may do with each block, starting one;
- :mod:`.rated_places`: a block's rated places and the next one;
- :mod:`.item_pages`: the entry at a place as the rater sees it;
- :mod:`.scoring`: storing a score (the hot path of a study);
- :mod:`.unshown_items`: passing over an item that cannot be shown.
"""

from __future__ import annotations

from .block_states import (
    BlockState,
    BlockStatus,
    BlockUnavailable,
    block_state,
    block_states,
    count_blocks,
    start_block,
)
from .item_pages import ItemPage, item_page, open_item, serve
from .rated_places import RatedPlaces, next_position, ratings_by_position
from .scoring import Scored, Submitted, rate_item, submit_score

__all__ = [
    "BlockUnavailable",
    "BlockState",
    "block_states",
    "block_state",
    "count_blocks",
    "start_block",
    "ratings_by_position",
    "RatedPlaces",
    "next_position",
    "serve",
    "submit_score",
    "Submitted",
    "ItemPage",
    "item_page",
    "open_item",
    "Scored",
    "rate_item",
    "BlockStatus",
]
