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


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA and NaT are not equal to themselves
    except (TypeError, ValueError):
        return False


def _cell(value: Any, *, best: bool = False) -> Cell:
    """Format one value: floats to 3 decimals (as the paper), the full value in ``raw``."""
    import numpy as np

    if _is_missing(value):
        return Cell("–", "nan", "missing")
    css = "best" if best else ""
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
    :func:`annotator.render.table_files.mark_best` returns) marks the paper's bold cells.
    """
    if frame.index.names != [None]:
        frame = frame.reset_index()
        best = best.reset_index(drop=True) if best is not None else None
    columns = [str(c) for c in frame.columns]
    flags = best.reset_index(drop=True) if best is not None else None
    rows = []
    for position, record in enumerate(frame.itertuples(index=False, name=None)):
        rows.append(
            [
                _cell(
                    value,
                    best=bool(
                        flags is not None and column in flags and flags[column].iloc[position]
                    ),
                )
                for column, value in zip(columns, record, strict=True)
            ]
        )
    return FrameView(columns, rows)


def text_columns(frame: pd.DataFrame) -> frozenset[str]:
    if frame.index.names != [None]:
        frame = frame.reset_index()
    return frozenset(str(c) for c in frame.columns if frame[c].dtype.kind not in "fiub")
