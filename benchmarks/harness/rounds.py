"""Interleaved rounds of named sides.

Two versions timed one after the other see the machine in two states (this
machine is shared, and its speed moves 2.5-3x between sittings); alternating the
sides in every round, and reversing their order every other round (A B, B A, ...),
puts each side in the same states, so their ratio holds even when the absolute
times do not.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["Rounds", "best_of", "interleave"]


@dataclass
class Rounds:
    """The measurements of each side, in the order they were taken."""

    times: dict[str, list[float]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return min((len(v) for v in self.times.values()), default=0)

    def best(self, side: str) -> float:
        return min(self.times[side])

    def median(self, side: str) -> float:
        return statistics.median(self.times[side])

    def ratio(self, side: str, reference: str, *, by: str = "best") -> float:
        """``side``'s best (or median, ``by="median"``) over ``reference``'s."""
        if by not in ("best", "median"):
            raise ValueError(f"by must be 'best' or 'median', not {by!r}")
        pick = self.best if by == "best" else self.median
        return pick(side) / pick(reference)


def interleave(
    sides: Mapping[str, Callable[[], object]],
    rounds: int,
    *,
    warm: int = 0,
    measured: bool = False,
) -> Rounds:
    """Run every side once per round, alternating their order.

    Each side is timed here by its wall time; with ``measured=True`` each side
    returns its own measurement instead (seconds of CPU, a child process's wall
    time, a server's CPU per request...). ``warm`` rounds are run first and
    dropped (imports, caches, the database's pages).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    names = list(sides)
    result = Rounds({name: [] for name in names})
    for number in range(warm + rounds):
        for name in names if number % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            value = sides[name]()
            elapsed = float(value) if measured else time.perf_counter() - start
            if number >= warm:
                result.times[name].append(elapsed)
    return result


def best_of(function: Callable[[], object], repeat: int) -> tuple[float, object]:
    """The fastest of ``repeat`` wall times of ``function()``, and its last result."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - start)
    return best, value
