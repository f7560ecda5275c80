"""The rule of the CSV exports' formula escaping, cell by cell (no heavy imports).

:mod:`annotator.data.csv_escape` applies it to the exports' columns (its
docstring says why); :func:`annotator.metrics.read_matrix` undoes it. It lives
here because the metrics run without the rest of the app.
"""

from __future__ import annotations

import re

__all__ = ["FORMULA_STARTS", "needs_escape", "escape_cell", "unescape_cell"]

#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)


def needs_escape(text: str) -> bool:
    """Whether ``text`` is written with a leading ``'``.

    True when, after any leading ``'``, it starts with one of
    :data:`FORMULA_STARTS` and is not a plain number.
    """
    rest = text.lstrip("'")
    return rest[:1] in FORMULA_STARTS and rest != "" and not _NUMBER.fullmatch(rest)


def escape_cell(text: str) -> str:
    """The cell as written to a CSV export: ``'`` first if :func:`needs_escape`."""
    return "'" + text if needs_escape(text) else text


def unescape_cell(text: str) -> str:
    """The cell as it was before :func:`escape_cell`; other cells unchanged."""
    if text.startswith("'") and needs_escape(text[1:]):
        return text[1:]
    return text
