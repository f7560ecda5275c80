"""What a score post is checked for beyond its value, at the moment it arrives.

The page a rater saw is no proof of what may be stored now: an item whose
template fails to render was never shown (its page offers only to pass it
over), and a rater of an overlap design who was excluded for going quiet
gave their places back to the pool. A post for either is refused, whatever
the form says, with nothing stored.
"""

from __future__ import annotations

from ...collect.dealing import overlap_spec
from ...models import Benchmark, Item, RaterStatus, Study, User
from ..display import render_item_text

__all__ = ["score_refusal"]


def score_refusal(study: Study, rater: User, item: Item, benchmark: Benchmark) -> str | None:
    """Why a score for ``item`` (of ``benchmark``) may not be stored, or None.

    The item and its benchmark come from the caller's one read of the posted
    item and the next one (a post's statements: benchmarks/score_post.py).
    """
    if rater.status != RaterStatus.ACTIVE and overlap_spec(study) is not None:
        return (
            "Your places in this study went to other raters, so this rating was not "
            "stored; there is nothing more to rate."
        )
    try:
        render_item_text(benchmark, item)
    except Exception:  # a study's template may raise anything on some fields
        return (
            "This item cannot be shown, so it cannot be rated; nothing was stored. "
            "Its page lets you go on past it."
        )
    return None
