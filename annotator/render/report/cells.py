"""Table cells, table views, figures and sections: the pieces the report's template lays out."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["Cell", "Figure", "FrameView", "Section", "frame_view", "text_columns"]


@dataclass(frozen=True)
class Cell:
    """One table cell: ``text`` as shown, ``raw`` the full-precision value for scripts."""

    text: str
    raw: str
    css: str = ""


@dataclass(frozen=True)
class FrameView:
    columns: list[str]
    rows: list[list[Cell]]
    #: Whether some cell is weak (:mod:`.caution`): the section then says why.
    weak: bool = False

    @property
    def headers(self) -> list[tuple[str, str]]:
        """``(column name, header in words)`` of each column (:mod:`.words`)."""
        from .words import column_words

        return [(c, column_words(c)) for c in self.columns]


@dataclass
class Figure:
    key: str
    caption: str
    alt: str
    uri: str
    width: int
    height: int


@dataclass
class Section:
    key: str
    heading: str
    caption: str
    frame: FrameView
    best: bool = False
    within: str | None = None
    text_columns: frozenset[str] = frozenset()
    figures: list[Figure] = field(default_factory=list)
    worst: list[str] = field(default_factory=list)
    empty: str = ""

    def __post_init__(self) -> None:
        # A figure with nothing to draw is None (:func:`.figures.figure`): not drawn.
        self.figures = [f for f in self.figures if f is not None]
        # One row is best of nothing: no cell is marked, and the caption says none.
        if len(self.frame.rows) < 2:
            self.best = False


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA and NaT are not equal to themselves
    except (TypeError, ValueError):
        return False


def _cell(value: Any, *, best: bool = False, weak: bool = False) -> Cell:
    """Format one value: floats to 3 decimals (as the paper), the full value in ``raw``.

    A weak value (:mod:`.caution`) is greyed and never best."""
    import numpy as np

    if _is_missing(value):
        return Cell("–", "nan", "missing")
    css = "weak" if weak else "best" if best else ""
    if isinstance(value, bool | np.bool_):
        return Cell("yes" if value else "no", str(bool(value)).lower(), css)
    if isinstance(value, int | np.integer):
        return Cell(str(int(value)), str(int(value)), css)
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isinf(number):
            return Cell("∞" if number > 0 else "−∞", repr(number), css)
        return Cell(f"{number:.3f}".replace("-", "−"), repr(number), css)
    return Cell(str(value), str(value), css or "text")


def frame_view(frame: pd.DataFrame, *, best: pd.DataFrame | None = None) -> FrameView:
    """A DataFrame as rows of formatted cells (a named index becomes columns).

    ``best`` (same index, one boolean column per marked column, as
    :func:`annotator.render.table_files.mark_best` returns) marks the paper's bold cells;
    a table of one row marks none (it is best of nothing), and a weak cell
    (:func:`.caution.weak_cells`) is greyed instead.
    """
    from .caution import weak_cells

    if frame.index.names != [None]:
        frame = frame.reset_index()
        best = best.reset_index(drop=True) if best is not None else None
    frame = frame.reset_index(drop=True)
    columns = [str(c) for c in frame.columns]
    flags = best.reset_index(drop=True) if best is not None and len(frame) > 1 else None
    weak = weak_cells(frame).to_numpy(dtype=bool)
    rows = []
    for position, record in enumerate(frame.itertuples(index=False, name=None)):
        rows.append(
            [
                _cell(
                    value,
                    best=bool(
                        flags is not None and column in flags and flags[column].iloc[position]
                    ),
                    weak=bool(weak[position, j]),
                )
                for j, (column, value) in enumerate(zip(columns, record, strict=True))
            ]
        )
    shown_weak = any(c.css == "weak" for row in rows for c in row)
    return FrameView(columns, rows, weak=shown_weak)


def text_columns(frame: pd.DataFrame) -> frozenset[str]:
    if frame.index.names != [None]:
        frame = frame.reset_index()
    return frozenset(str(c) for c in frame.columns if frame[c].dtype.kind not in "fiub")


# Columns that describe a row rather than hold a result: a table whose other numbers
# are all missing was not computed, however many of these it has.
_DESCRIPTIVE = frozenset({"epsilon", "x", "seed", "confidence", "level", "temperature"})


def computed(frame: FrameView) -> bool:
    """Whether the table holds a result: a row with a number that is not missing in a
    column that is not a count (``n_*``) or a setting of the row (:data:`_DESCRIPTIVE`).
    A table of words and counts only is computed when it has a row."""
    if not frame.rows:
        return False
    results = [
        j
        for j, column in enumerate(frame.columns)
        if not column.startswith("n_") and column not in _DESCRIPTIVE
    ]
    numbers = [
        j for j in results if any(row[j].css not in ("text", "missing") for row in frame.rows)
    ]
    if not any(row[j].css == "missing" for row in frame.rows for j in results):
        return True
    return bool(numbers)
