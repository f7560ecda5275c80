"""What the importers share: the report, bulk inserts, and looking up a row's
item, scale and score (checked by the rater form's parser)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal

from sqlmodel import Session, select
from tqdm import tqdm

from ..collect.scores import ScoreError, parse_score, scale_range
from ..models import Item, Scale, Study
from .readers import Problems, Row

__all__ = ["ImportReport"]

# Rows written per INSERT statement: large enough to be fast, small enough to
# stay under SQLite's and PostgreSQL's parameter limits.
CHUNK = 2000


@dataclass
class ImportReport:
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    raters_created: int = 0

    def summary(self, what: str) -> str:
        text = (
            f"{self.rows} row(s) read: {self.created} {what} added, "
            f"{self.updated} updated, {self.unchanged} already present"
        )
        if self.raters_created:
            text += f"; {self.raters_created} rater(s) created"
        return text


def _chunks(rows: list, progress: bool, description: str) -> Iterator[list]:
    bar = tqdm(total=len(rows), desc=description, unit="row", disable=not progress or None)
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        yield chunk
        bar.update(len(chunk))
    bar.close()


def _insert_rows(session: Session, model, rows: list[dict]) -> None:
    """Insert many rows of plain values fast, in the session's transaction.

    SQLite: one executemany. PostgreSQL: psycopg sends an executemany as one
    statement per row, which took 16 s for 180,000 ratings, so the rows go
    through COPY instead (what PostgreSQL documents for bulk loading).
    Multi-row VALUES was tried and is slower on both: SQLAlchemy compiles
    thousands of bound parameters per statement.
    """
    if not rows:
        return
    connection = session.connection()
    table = model.__table__
    columns = list(rows[0])
    plain = not any(isinstance(v, dict | list) for v in rows[0].values())
    if connection.dialect.name != "postgresql" or not plain:
        connection.execute(table.insert(), rows)
        return
    quote = connection.dialect.identifier_preparer
    sql = (
        f"COPY {quote.format_table(table)} ({', '.join(quote.quote(c) for c in columns)}) "
        "FROM STDIN"
    )
    with connection.connection.driver_connection.cursor() as cursor, cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row([row[c] for c in columns])


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def _batches(values: list, size: int) -> Iterable[list]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _item_ids(session: Session, study: Study) -> dict[str, int]:
    return dict(
        session.exec(select(Item.external_id, Item.id).where(Item.study_id == study.id)).all()
    )


def _lookup_item(items: dict[str, int], row: Row, problems: Problems) -> int | None:
    item_id = _text(row.values["item_id"])
    found = items.get(item_id)
    if found is None:
        problems.add(row.line, "item_id", f"unknown item {item_id!r} (import the items first)")
    return found


def _lookup_scale(scales: dict[str, Scale], row: Row, problems: Problems) -> Scale | None:
    name = _text(row.values["scale"])
    scale = scales.get(name)
    if scale is None:
        problems.add(
            row.line, "scale", f"unknown scale {name!r} (the study has: {', '.join(scales)})"
        )
    return scale


def _cell_text(value: object) -> str | None:
    """A score cell as text for the score parser (JSONL cells may be numbers)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        # Positional notation, as a person would have typed it: 1e-05 -> 0.00001.
        return format(Decimal(repr(value)), "f")
    return repr(value)


def _lookup_score(
    row: Row, scale: Scale | None, problems: Problems, *, any_precision: bool = False
) -> float | None:
    """The row's score, checked by the parser of the rater's form (see collect.scores)."""
    raw = _cell_text(row.values["score"])
    if scale is None:
        return None
    try:
        return parse_score(raw, scale, any_precision=any_precision)
    except ScoreError as exc:
        allowed = scale_range(scale, any_precision=any_precision)
        problems.add(
            row.line, "score", f"{exc.problem}; the scale {scale.name} takes numbers {allowed}"
        )
        return None
