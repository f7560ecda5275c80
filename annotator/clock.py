"""The app's one source of the current time.

Everything that needs "now" (the gap between blocks, served and submitted
times) calls :func:`now`, so tests can move time forward by replacing the
clock in ``app.extensions`` instead of patching ``datetime``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from flask import Flask, current_app, has_app_context

__all__ = ["utcnow", "now", "init_app", "FrozenClock"]

_EXTENSION_KEY = "annotator.clock"


def utcnow() -> datetime:
    """Timezone-aware UTC time (SQLModel stores aware datetimes only)."""
    return datetime.now(UTC)


class FrozenClock:
    """A clock for tests that stays still until moved."""

    def __init__(self, start: datetime | None = None) -> None:
        if start is not None and start.utcoffset() is None:
            raise ValueError("start must be timezone-aware (e.g. tzinfo=UTC)")
        self.current = start or utcnow()

    def __call__(self) -> datetime:
        return self.current

    def advance(self, **kwargs: float) -> datetime:
        self.current += timedelta(**kwargs)
        return self.current


def init_app(app: Flask) -> None:
    app.extensions[_EXTENSION_KEY] = app.config.get("CLOCK") or utcnow


def now() -> datetime:
    """The current time from the app's clock (timezone-aware UTC)."""
    if has_app_context():
        clock: Callable[[], datetime] = current_app.extensions[_EXTENSION_KEY]
        return clock()
    return utcnow()
