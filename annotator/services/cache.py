"""The one per-process cache of results keyed on a data version.

A :class:`VersionedCache` keeps, per key (a database, a study, a variant), the last
result built and the version of the data it was built from; a lookup at another
version builds again. One lock per key: a second request while the first builds
waits for it instead of building the same result twice. The raters page's quality
tables (:mod:`annotator.services.rater_quality`) and the judge runs' summaries
(:mod:`annotator.judge.history`) use it; stored dashboards are kept in the database
instead (:mod:`annotator.services.dashboards`), shared by every server process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["VersionedCache"]


class VersionedCache:
    """At most ``size`` results, the least recently used dropped first.

    Parameters
    ----------
    size : int
        How many keys are kept.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"size: must be at least 1, got {size}")
        self.size = size
        self._kept: OrderedDict[Hashable, tuple[Any, Any]] = OrderedDict()
        self._locks: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: Callable[[], Any], build: Callable[[], Any]) -> Any:
        """The result kept for ``key`` if built at ``version()``, else ``build()``, kept.

        ``version`` is called under the key's lock, so a build that waited reads
        the version after the build it waited for.
        """
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            current = version()
            with self._lock:
                hit = self._kept.get(key)
                if hit is not None and hit[0] == current:
                    self._kept.move_to_end(key)
                    return hit[1]
            result = build()
            with self._lock:
                self._kept[key] = (current, result)
                self._kept.move_to_end(key)
                while len(self._kept) > self.size:
                    self._kept.popitem(last=False)
            return result

    def clear(self) -> None:
        """Forget every kept result (tests; after a schema reset)."""
        with self._lock:
            self._kept.clear()
