"""Exports of a study's data: long, matrix, alt-test JSON and demographics.

All exports identify raters by their pseudonymous code only. The matrix and
alt-test exports are in :mod:`annotator.data.matrix_export`.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlmodel import Session, select

from ..models import (
    Demographics,
    Role,
    Study,
    User,
)
from ..study.raters import counted_rater
from .alttest_text import alttest_cells, alttest_export, alttest_json
from .csv_escape import escape_cells
from .export_scope import ExportError
from .long_rows import (
    LONG_COLUMNS,
    _long_chunks,
    _long_context,
    demographic_keys,
    long_export,
)
from .matrix_export import MatrixExport, matrix_export
from .selection import Where, raters_where

__all__ = [
    "LONG_COLUMNS",
    "ExportError",
    "MatrixExport",
    "long_export",
    "matrix_export",
    "alttest_export",
    "demographics_export",
    "FORMATS",
    "RenderedExport",
    "render_export",
]


# ----------------------------------------------------------- demographics


def demographics_export(session: Session, study: Study) -> pd.DataFrame:
    """One row per rater, keyed by rater code."""
    rows = session.exec(
        select(User, Demographics)
        .join(Demographics, Demographics.user_id == User.id, isouter=True)
        .where(User.study_id == study.id, User.role == Role.RATER)
        .where(counted_rater(User.id))  # whose ratings count
        .order_by(User.rater_code)
    ).all()
    answers = [d.answers if d else {} for _, d in rows]
    keys = demographic_keys(study, answers)
    records = []
    for (user, _), given in zip(rows, answers, strict=True):
        record = {
            "rater": user.rater_code,
            "source": user.source,
            "consented_at": user.consented_at,
            "declined_at": user.declined_at,
        }
        record.update({key: given.get(key, "") for key in keys})
        records.append(record)
    return pd.DataFrame(records, columns=["rater", "source", "consented_at", "declined_at", *keys])


# -------------------------------------------------------------- rendering

FORMATS = ("long", "matrix", "alttest", "demographics")


@dataclass
class RenderedExport:
    """An export's file: its text, or for a streamed export the pieces of it.

    ``parts()`` gives the pieces to write one after another (the long export
    is written chunk by chunk, never held whole); ``text`` joins them. For a
    streamed export ``rows`` is counted as the pieces are produced.
    """

    body: str | Iterator[str]
    rows: int
    mimetype: str
    filename: str
    # For the matrix: the summary of missing cells.
    notes: str = ""

    def parts(self) -> Iterator[str]:
        if isinstance(self.body, str):
            yield self.body
        else:
            yield from self.body

    @property
    def text(self) -> str:
        if not isinstance(self.body, str):
            self.body = "".join(self.body)
        return self.body


def number_text(value: object) -> str:
    """A number as people write it: ``4`` not ``4.0``, empty for a missing one.

    Other floats are written as Python's shortest repr, which reads back as the
    same float: a stored score appears exactly as it was typed or imported.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def _number_texts(values: np.ndarray) -> np.ndarray:
    """``number_text`` of every value of a float array (any shape), in numpy.

    Each distinct value (bit for bit) is written once and the texts are put
    back in place: scores repeat (a scale in steps of 0.01 has a few hundred
    values), and writing a float is the costly part. numpy's ``astype(str)``
    writes a float64 as Python's shortest ``repr`` does (checked against
    ``repr`` in tests/data/test_long_export.py); whole numbers go through int64
    as ``str(int(value))``. Values beyond int64 take the Python path.
    """
    values = np.asarray(values, dtype=float)
    bits, inverse = np.unique(values.reshape(-1).view(np.int64), return_inverse=True)
    distinct = bits.view(np.float64)
    text = distinct.astype(str).astype(object)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(distinct) & (distinct == np.trunc(distinct))
    small = whole & (np.abs(distinct) < 2**62)
    text[small] = distinct[small].astype(np.int64).astype(str)
    large = whole & ~small
    text[large] = [number_text(float(v)) for v in distinct[large]]
    text[np.isnan(distinct)] = ""
    return text[inverse.reshape(-1)].reshape(values.shape)


def _number_column(column: pd.Series) -> pd.Series:
    """:func:`_number_texts` of a float column."""
    return pd.Series(_number_texts(column.to_numpy(dtype=float)), index=column.index)


def _csv(frame: pd.DataFrame, *, header: bool = True) -> str:
    # pandas writes a float column with ".0" on whole numbers (and an integer
    # column holding a gap becomes float: block_position, revisions), so float
    # columns are written as text by number_text.
    dtypes = frame.dtypes.to_numpy()
    floats = np.flatnonzero(dtypes == "float64")
    texts = [
        position
        for position, dtype in enumerate(dtypes)
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
    ]
    frame = frame.copy()
    if len(floats):
        numbers = _number_texts(frame.iloc[:, floats].to_numpy(dtype=float))
        for j, position in enumerate(floats):
            frame.isetitem(position, numbers[:, j])
    # Text cells that a spreadsheet would run as formulas (csv_escape).
    for position in texts:
        frame.isetitem(position, escape_cells(frame.iloc[:, position]))
    frame.columns = escape_cells(np.array([str(c) for c in frame.columns], dtype=object))
    return frame.to_csv(index=False, header=header, lineterminator="\n")


def _matrix_csv(frame: pd.DataFrame) -> str:
    """``_csv(frame)`` of a frame of text and float columns (the matrix export),
    with the lines joined in numpy.

    pandas' CSV writer took as long as reading the ratings on 50,000 items: it
    passes every cell through the csv module. Here a float column's cells are
    :func:`_number_texts` (never quoted), a text cell is quoted by the csv
    module only when it holds a comma, a quote or a line break, and the columns
    are concatenated as arrays. Other columns: ``_csv``. Text cells and the
    header are escaped as :mod:`annotator.data.csv_escape` says.
    """
    cells = []
    for _, column in frame.items():
        if column.dtype == "float64":
            cells.append(_number_texts(column.to_numpy()))
        elif pd.api.types.is_string_dtype(column) and not column.isna().any():
            escaped = escape_cells(column.astype(str).to_numpy(dtype=object))
            cells.append(_quoted(pd.Series(escaped, index=column.index)))
        else:
            return _csv(frame)
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(
        escape_cells(np.array([str(c) for c in frame.columns], dtype=object))
    )
    if not len(frame):
        return header.getvalue()
    lines = cells[0]
    for column in cells[1:]:
        lines = lines + "," + column
    return header.getvalue() + "\n".join(lines.tolist()) + "\n"


def _quoted(column: pd.Series) -> np.ndarray:
    """The cells of a text column as the csv module writes them (QUOTE_MINIMAL)."""
    cells = column.to_numpy(dtype=object).copy()
    # One pass over all the text first: most columns hold no character to quote.
    text = "".join(cells.tolist())
    if not any(c in text for c in ',"\r\n'):
        return cells
    special = np.flatnonzero(column.str.contains(r'[,"\r\n]', regex=True).to_numpy(bool))
    for i in special.tolist():
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow([cells[i]])
        cells[i] = out.getvalue()[:-1]
    return cells


def _time_text(column: pd.Series) -> pd.Series:
    """UTC times as ``2026-01-05 09:00:27.351650+00:00``, empty where missing.

    One format for every row (pandas would drop the microseconds from a
    column whose times all fall on whole seconds), so the file does not depend
    on how it was cut into chunks. Built in numpy: the ISO text with its "T"
    turned into a space in place, then the offset appended.
    """
    values = column.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy("datetime64[us]")
    iso = np.datetime_as_string(values, unit="us")
    if len(iso) and iso.dtype.itemsize // 4 >= 26:
        # Each row is 26 UCS-4 characters "YYYY-MM-DDTHH:MM:SS.ffffff"; the
        # 11th is the "T" (NaT rows are masked below).
        chars = iso.view(np.uint32).reshape(len(iso), -1)
        chars[:, 10] = np.where(chars[:, 10] == ord("T"), ord(" "), chars[:, 10])
    text = np.strings.add(iso, "+00:00").astype(object)
    text[np.isnat(values)] = ""
    return pd.Series(text, index=column.index)


def _long_csv(
    chunks: Iterator[pd.DataFrame], export: RenderedExport, columns: list[str]
) -> Iterator[str]:
    header = True
    for frame in chunks:
        frame = frame.copy()
        for column in ("served_at", "submitted_at"):
            if isinstance(frame[column].dtype, pd.DatetimeTZDtype):
                frame[column] = _time_text(frame[column])
        yield _csv(frame, header=header)
        header = False
        export.rows += len(frame)
    if header:
        # No rows: the header alone.
        yield _csv(pd.DataFrame(columns=columns))


def render_export(
    session: Session,
    study: Study,
    fmt: str,
    *,
    scale: str | None = None,
    benchmark: str | None = None,
    complete: bool = False,
    temperature: float | None = None,
    runs: str = "mean",
    where: Where | None = None,
    criterion: str | None = None,
    judge_temperatures: tuple[tuple[str, float], ...] | None = None,
) -> RenderedExport:
    """One export as the text of its file; the CLI and the lead's pages share it.

    ``temperature`` (matrix and alttest): the LLM scores' temperature, by default
    the study's main temperature, ``judge_temperatures`` single judges' (see
    :func:`matrix_export`); ``runs`` how a model's
    runs are combined. ``where`` (every format) keeps the raters whose demographic
    answers match (:mod:`annotator.data.selection`); LLM rows stay. ``criterion``
    (matrix and alttest): the rubric criterion, required when there are several.
    """
    parts = [study.slug, fmt] + [p for p in (scale, benchmark, criterion) if p]
    stem = "-".join(parts)
    llm_options = {
        "scale": scale,
        "benchmark": benchmark,
        "temperature": temperature,
        "judge_temperatures": judge_temperatures,
        "runs": runs,
        "where": where,
        "criterion": criterion,
    }
    if fmt == "matrix":
        matrix = matrix_export(session, study, complete=complete, **llm_options)
        return RenderedExport(
            _matrix_csv(matrix.frame),
            len(matrix.frame),
            "text/csv",
            f"{stem}-{matrix.scale.name}.csv" if scale is None else f"{stem}.csv",
            matrix.missing_summary(),
        )
    if fmt == "alttest":
        # The text of json.dumps(alttest_export(...), indent=1, sort_keys=True).
        matrix = matrix_export(session, study, **llm_options)
        return RenderedExport(
            alttest_json(matrix),
            alttest_cells(matrix),
            "application/json",
            f"{stem}.json",
        )
    if fmt == "long":
        ctx = _long_context(session, study, scale=scale, benchmark=benchmark, where=where)
        export = RenderedExport("", 0, "text/csv", f"{stem}.csv")
        export.body = _long_csv(_long_chunks(session, ctx), export, ctx.columns)
        return export
    if fmt == "demographics":
        frame = demographics_export(session, study)
    else:
        raise ExportError(f"unknown format {fmt!r}", field="format", choices=FORMATS)
    chosen = raters_where(session, study, where or {})
    if chosen is not None:
        frame = frame[frame["rater"].isin(chosen)]
    return RenderedExport(_csv(frame), len(frame), "text/csv", f"{stem}.csv")
