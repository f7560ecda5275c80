"""Reading the CSV and JSONL files that leads import.

Every problem becomes one line ``FILE: line N, column C: what is wrong``, and
all problems of a file are collected before anything is written, so an import
is all-or-nothing and the lead can fix the file in one pass.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..words import plural

__all__ = [
    "InputError",
    "Problems",
    "Row",
    "iter_records",
    "iter_rows",
    "read_rows",
    "parse_number",
]

MAX_PROBLEMS_SHOWN = 50


class InputError(ValueError):
    """A file that cannot be imported; ``problems`` lists what and where."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))

    def __str__(self) -> str:
        shown = self.problems[:MAX_PROBLEMS_SHOWN]
        lines = [*shown]
        if len(self.problems) > len(shown):
            lines.append(f"... and {plural(len(self.problems) - len(shown), 'more problem')}")
        lines.append(f"{plural(len(self.problems), 'problem')}; nothing was imported.")
        return "\n".join(lines)


@dataclass
class Problems:
    """Collects problems of one file, each located by line and column."""

    path: str
    items: list[str] = field(default_factory=list)

    def add(self, line: int | None, column: str | None, message: str) -> None:
        where = self.path
        if line is not None:
            where += f": line {line}"
        if column is not None:
            where += f", column {column!r}"
        self.items.append(f"{where}: {message}")

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(self.items)


@dataclass
class Row:
    line: int
    values: dict[str, object]


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            [
                f"{path}: line {line}: the file is not UTF-8 (byte 0x{data[exc.start]:02x} "
                f"at byte {column} of the line); save it as UTF-8 and import again"
            ]
        ) from None


def _csv_records(
    text: str, required: list[str], problems: Problems
) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The header (empty after a problem with it) and the (line, cells) of each
    non-blank row with as many cells as the header, as they are parsed."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        problems.add(None, None, "the file is empty")
        return [], iter(())
    header = [name.strip() for name in header]
    missing = [name for name in required if name not in header]
    if missing:
        for name in missing:
            problems.add(1, name, f"missing column (the header has: {', '.join(header)})")
        return [], iter(())
    duplicated = {name for name in header if header.count(name) > 1}
    for name in sorted(duplicated):
        problems.add(1, name, "the column appears more than once in the header")
    if duplicated:
        return [], iter(())

    def records() -> Iterator[tuple[int, list[str]]]:
        start = reader.line_num + 1
        width = len(header)
        for record in reader:
            line = start
            start = reader.line_num + 1
            # One strip of the joined cells: whether every cell is blank.
            if not "".join(record).strip():
                continue
            if len(record) != width:
                problems.add(line, None, f"{len(record)} fields where the header has {width}")
                continue
            yield line, record

    return header, records()


def _csv_rows(text: str, required: list[str], problems: Problems) -> Iterator[Row]:
    header, records = _csv_records(text, required, problems)
    for line, record in records:
        yield Row(line, dict(zip(header, record, strict=True)))


def _jsonl_rows(text: str, required: list[str], problems: Problems) -> Iterator[Row]:
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.add(number, None, f"not valid JSON: {exc.msg} at character {exc.colno}")
            continue
        if not isinstance(value, dict):
            problems.add(number, None, "each line must be a JSON object")
            continue
        missing = [name for name in required if name not in value]
        for name in missing:
            problems.add(number, name, "missing field")
        if not missing:
            yield Row(number, value)


def iter_rows(path: str | Path, *, required: list[str], problems: Problems) -> Iterator[Row]:
    """Rows of a CSV or JSONL file (by extension), one at a time as they are
    parsed; problems go to ``problems``. A missing file or an unknown type
    raises at once."""
    path = Path(path)
    if not path.is_file():
        raise InputError([f"{path}: no such file"])
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise InputError([f"{path}: unknown file type {suffix!r}; use .csv or .jsonl"])
    text = _decode(path)
    if suffix == ".csv":
        return _csv_rows(text, required, problems)
    return _jsonl_rows(text, required, problems)


def iter_records(
    path: str | Path, *, required: list[str], problems: Problems
) -> tuple[list[str] | None, Iterator]:
    """:func:`iter_rows` for an import that reads a CSV row's cells by position:
    ``(header, records)`` with each record a ``(line, cells)`` pair (the same rows,
    lines and problems as :func:`iter_rows`, without a dict per row); for a JSONL
    file ``(None, rows)``, its :class:`Row` s. A :class:`Row` of a record is
    ``Row(line, dict(zip(header, cells)))``."""
    path = Path(path)
    if path.suffix.lower() != ".csv":
        return None, iter_rows(path, required=required, problems=problems)
    if not path.is_file():
        raise InputError([f"{path}: no such file"])
    return _csv_records(_decode(path), required, problems)


def read_rows(path: str | Path, *, required: list[str], problems: Problems) -> list[Row]:
    """Rows of a CSV or JSONL file (by extension); problems go to ``problems``."""
    return list(iter_rows(path, required=required, problems=problems))


def parse_number(raw: object) -> float:
    """A finite float from a cell (gold shares, temperatures); ``ValueError`` says
    what is wrong. Scores go through :func:`annotator.collect.scores.parse_score`."""
    if isinstance(raw, bool):
        raise ValueError(f"{raw!r} is not a number")
    if isinstance(raw, int | float):
        value = float(raw)
    else:
        text = str(raw).strip() if raw is not None else ""
        if not text:
            raise ValueError("the cell is empty")
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a finite number")
    return value
