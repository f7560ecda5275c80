"""URL converters: the ``id`` converter for every number in a route.

Werkzeug's ``int`` converter matches any number of digits, so
``/rate/blocks/99999999999999999999`` reached the database and failed there
(SQLite's integers stop at 2**63 - 1 with an ``OverflowError``, PostgreSQL's
``integer`` columns at 2**31 - 1 with an error of its own). The ``id``
converter matches only numbers a column can hold; a larger one is simply not
a route, hence a 404.
"""

from __future__ import annotations

from flask import Flask
from werkzeug.routing import IntegerConverter

__all__ = ["MAX_ID", "IdConverter", "init_app"]

# PostgreSQL's ``integer`` (the type of the id, position and version columns):
# the smallest of the database engines the app runs on.
MAX_ID = 2**31 - 1


class IdConverter(IntegerConverter):
    """Unsigned integers from 0 to :data:`MAX_ID`, written ``<id:name>``."""

    def __init__(self, map) -> None:
        super().__init__(map, min=0, max=MAX_ID)


def init_app(app: Flask) -> None:
    """Register the converter; it must come before the blueprints' routes."""
    app.url_map.converters["id"] = IdConverter
