"""The study protocol as pure functions: block orders, item orders, the gap.

Nothing here touches the database, so every order is a function of stored
numbers (a rater's place in the study, a seed) and can be recomputed and
tested on its own.
"""

from __future__ import annotations

import random
import secrets
from datetime import datetime, timedelta

__all__ = [
    "SEED_LIMIT",
    "new_seed",
    "williams_rows",
    "balanced_block_order",
    "random_block_order",
    "item_order",
    "next_block_opens",
]

# Seeds are stored in INTEGER columns, which are 32-bit signed on PostgreSQL.
SEED_LIMIT = 2**31


def new_seed() -> int:
    return secrets.randbelow(SEED_LIMIT)


def williams_rows(n: int) -> list[list[int]]:
    """The rows of a Williams design for ``n`` treatments (0 .. n-1).

    Over one full cycle of rows every treatment appears equally often in
    every position, and every treatment directly follows every other one
    equally often (first-order carryover balance). For even ``n`` one Latin
    square of ``n`` rows does this; for odd ``n`` it takes the square and its
    mirror image, ``2n`` rows.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    # The classic first row 0, 1, n-1, 2, n-2, 3, ...; row i adds i to every
    # entry (mod n).
    first = [0] + [(k + 1) // 2 if k % 2 == 1 else n - k // 2 for k in range(1, n)]
    rows = [[(value + i) % n for value in first] for i in range(n)]
    if n % 2 == 1 and n > 1:
        rows += [list(reversed(row)) for row in rows]
    return rows


def balanced_block_order(sequence: int, n_scales: int) -> tuple[int, list[int]]:
    """The Latin-square row for the rater who joined ``sequence``-th (0-based).

    Rows are handed out in turn, so each full cycle of raters (``n`` or
    ``2n`` of them) is balanced. Returns the row number and the order of
    scale indexes.
    """
    rows = williams_rows(n_scales)
    row = sequence % len(rows)
    return row, list(rows[row])


def random_block_order(seed: int, n_scales: int) -> list[int]:
    """A uniformly random order of scale indexes drawn from the rater's seed."""
    order = list(range(n_scales))
    random.Random(seed).shuffle(order)
    return order


def item_order(
    seed: int,
    regular: list[int],
    gold: list[int] = (),
    *,
    attention_per_session: int = 0,
    retest_share: float = 0.0,
    retest_min_distance: int = 10,
) -> list[dict]:
    """The presentation order of one session, drawn from the session's seed.

    ``regular`` are the items every rater rates; ``gold`` the items with a
    gold score, which serve only as attention checks (see
    :mod:`annotator.collect.block_states`). The result is a list of
    ``{"item": id, "repeat": bool, "attention": bool}`` entries:

    * the regular items in a random order;
    * ``attention_per_session`` gold items (all of them if there are fewer),
      each put at a random place;
    * ``round(retest_share * len(regular))`` regular items shown a second
      time, each with at least ``retest_min_distance`` other entries between
      the first and the second showing. Items too close to the end for that
      distance are never chosen, so a short session may get fewer repeats
      (none when it is shorter than the distance).

    The inputs are sorted first, so the order depends only on the seed and
    the sets of items, not on the order the database returned them in.
    """
    rng = random.Random(seed)
    items = sorted(regular)
    rng.shuffle(items)
    entries = [{"item": item, "repeat": False, "attention": False} for item in items]

    checks = sorted(gold)
    checks = rng.sample(checks, min(attention_per_session, len(checks)))
    for item in checks:
        at = rng.randint(0, len(entries))
        entries.insert(at, {"item": item, "repeat": False, "attention": True})

    wanted = round(retest_share * len(items))
    if wanted and items:
        # An entry at index i can be repeated at index r >= i + 1 + distance;
        # inserting later repeats only pushes entries apart, never closer.
        last_eligible = len(entries) - 1 - retest_min_distance
        eligible = [i for i, e in enumerate(entries) if not e["attention"] and i <= last_eligible]
        chosen = sorted(rng.sample(eligible, min(wanted, len(eligible))))
        repeated = [entries[i]["item"] for i in chosen]
        for item in repeated:
            first = next(i for i, e in enumerate(entries) if e["item"] == item)
            at = rng.randint(first + 1 + retest_min_distance, len(entries))
            entries.insert(at, {"item": item, "repeat": True, "attention": False})
    return entries


def next_block_opens(previous_completed_at: datetime, gap_days: float) -> datetime:
    """The earliest start of a block: ``gap_days`` after the previous one ended."""
    return previous_completed_at + timedelta(days=gap_days)
