"""What the importers share: the report, bulk inserts, and looking up a row's
item, scale and score (checked by the rater form's parser)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import chain, islice

from sqlmodel import Session, select
from tqdm import tqdm

from ..collect.scores import ScoreError, parse_score, scale_range
from ..models import Item, Scale, Study
from ..words import plural
from .readers import Problems, Row
from .sql import fetch_rows

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
    # PostgreSQL: how the new rows' foreign keys were checked, ``SET_BASED``
    # or ``ROW_BY_ROW`` (the fallback, see :func:`foreign_key_triggers_off`);
    # "" when nothing was inserted or on SQLite.
    foreign_key_checks: str = ""

    def summary(self, what: str) -> str:
        """One line for the CLI; ``what`` is the singular noun ("rating")."""
        text = (
            f"{plural(self.rows, 'row')} read: {plural(self.created, what)} added, "
            f"{self.updated} updated, {self.unchanged} already present"
        )
        if self.raters_created:
            text += f"; {plural(self.raters_created, 'rater')} created"
        if self.foreign_key_checks == ROW_BY_ROW:
            text += f" ({ROW_BY_ROW_NOTE})"
        return text


SET_BASED = "set-based"
ROW_BY_ROW = "row-by-row"
ROW_BY_ROW_NOTE = (
    "foreign keys checked row by row: the database role may not set "
    "session_replication_role, see docs/deploy.md for the faster import"
)


def _chunks(
    rows: Iterable, progress: bool, description: str, *, total: int | None = None
) -> Iterator[list]:
    """``rows`` (a list, or any iterable with its ``total``) in lists of ``CHUNK``."""
    if total is None:
        total = len(rows)
    bar = tqdm(total=total, desc=description, unit="row", disable=not progress or None)
    rows = iter(rows)
    while chunk := list(islice(rows, CHUNK)):
        yield chunk
        bar.update(len(chunk))
    bar.close()


def _insert_rows(session: Session, model, rows: list[dict]) -> None:
    """Insert many rows of plain values fast, in the session's transaction.

    The rows go to the DB-API driver directly: SQLAlchemy's executemany built
    and type-converted the parameters of every row (two thirds of the 180,000
    rating import's time). Each column's conversion (datetimes to text on
    SQLite) is SQLAlchemy's own, run once per distinct value.

    SQLite: one ``executemany``. PostgreSQL: psycopg sends an executemany as
    one statement per row, which took 16 s for 180,000 ratings, so the rows go
    through COPY instead (what PostgreSQL documents for bulk loading).
    Rows holding JSON (dicts, lists) go through SQLAlchemy, which encodes them.
    """
    if not rows:
        return
    connection = session.connection()
    table = model.__table__
    columns = list(rows[0])
    plain = not any(isinstance(v, dict | list) for v in rows[0].values())
    if not plain:
        connection.execute(table.insert(), rows)
        return
    dialect = connection.dialect
    driver = connection.connection.driver_connection
    quote = dialect.identifier_preparer
    if dialect.name == "postgresql":
        copy_rows(
            driver, quote.format_table(table), columns, ([row[c] for c in columns] for row in rows)
        )
        return
    if dialect.paramstyle != "qmark":
        connection.execute(table.insert(), rows)
        return
    values = _bound_values(table, columns, rows, dialect)
    sql = (
        f"INSERT INTO {quote.format_table(table)} ({', '.join(quote.quote(c) for c in columns)}) "
        f"VALUES ({', '.join('?' for _ in columns)})"
    )
    cursor = driver.cursor()
    try:
        cursor.executemany(sql, values)
    finally:
        cursor.close()


def insert_tuples(
    session: Session,
    model,
    columns: list[str],
    rows: Iterable[tuple],
    constants: dict,
    *,
    progress: bool,
    description: str,
    total: int,
) -> None:
    """Insert ``rows`` (tuples of plain ints, floats and text, in ``columns``' order),
    each with the same ``constants`` (column -> value), in the session's transaction.

    :func:`_insert_rows` without a dict per row: the constants are converted once
    as SQLAlchemy binds them, and each row goes to SQLite's ``executemany`` as
    the tuple the import built, with the constants appended (building, then
    taking apart, 180,000 dicts was 0.15 s of the import's 1.45 s of CPU). The row columns must be values the driver takes as they are (ints,
    floats, text: checked on the first row; a date or a flag, which SQLAlchemy
    converts, belongs in ``constants``). Elsewhere (PostgreSQL) the rows go to
    :func:`_insert_rows`.
    """
    connection = session.connection()
    dialect = connection.dialect
    table = model.__table__
    names = [*columns, *constants]
    if dialect.name != "sqlite" or dialect.paramstyle != "qmark":
        for chunk in _chunks(rows, progress, description, total=total):
            _insert_rows(
                session,
                model,
                [dict(zip(names, (*row, *constants.values()), strict=True)) for row in chunk],
            )
        return
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return
    for column, value in zip(columns, first, strict=True):
        process = table.c[column].type._cached_bind_processor(dialect)
        # A Float column's to_float leaves a float as it is; a date or a flag would change.
        if process is not None and (value is not None and type(process(value)) is not type(value)):
            raise ValueError(f"columns: {column!r} needs a conversion; give it in constants")
    rows = chain([first], rows)
    converted = []
    for column, value in constants.items():
        process = table.c[column].type._cached_bind_processor(dialect)
        converted.append(value if process is None else process(value))
    tail = tuple(converted)
    quote = dialect.identifier_preparer
    sql = (
        f"INSERT INTO {quote.format_table(table)} ({', '.join(quote.quote(c) for c in names)}) "
        f"VALUES ({', '.join('?' for _ in names)})"
    )
    cursor = connection.connection.driver_connection.cursor()
    try:
        for chunk in _chunks(rows, progress, description, total=total):
            cursor.executemany(sql, [row + tail for row in chunk])
    finally:
        cursor.close()


def copy_rows(driver, table: str, columns: list[str], rows: Iterable[list]) -> None:
    """PostgreSQL: ``COPY`` ``rows`` (lists of plain values) into ``table``'s ``columns``.

    Binary COPY with the columns' own types, read from the catalogue: psycopg
    then packs each value in C instead of formatting it as text, and the server
    does not parse text back (text COPY took 0.65 s of client time for
    180,000 ratings, binary 0.26 s).
    """
    from psycopg.sql import SQL, Identifier  # only on PostgreSQL

    with driver.cursor() as cursor:
        cursor.execute(
            "SELECT attname, atttypid FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            (table,),
        )
        types = dict(cursor.fetchall())
        sql = SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
            SQL(table), SQL(", ").join(map(Identifier, columns))
        )
        with cursor.copy(sql) as copy:
            copy.set_types([types[c] for c in columns])
            for row in rows:
                copy.write_row(row)


def _bound_values(table, columns: list[str], rows: list[dict], dialect) -> list[tuple]:
    """The rows as parameter tuples, each value converted as SQLAlchemy would bind it."""
    data = [[row[c] for row in rows] for c in columns]
    for index, column in enumerate(columns):
        process = table.c[column].type._cached_bind_processor(dialect)
        if process is None:
            continue
        # Imports repeat few distinct values per converted column (one
        # timestamp, a source, a flag), so each is converted once.
        seen: dict = {}
        converted = []
        for value in data[index]:
            try:
                converted.append(seen[value])
            except KeyError:
                seen[value] = process(value)
                converted.append(seen[value])
            except TypeError:
                converted.append(process(value))
        data[index] = converted
    return list(zip(*data, strict=True))


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def _batches(values: list, size: int) -> Iterable[list]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _item_ids(session: Session, study: Study) -> dict[str, int]:
    """The study's item ids by external id, through the driver's cursor: 2 ms for
    5,000 items, where the ORM's rows took 6-57 ms (an LLM-scores import of 30,000
    rows does 0.3 s of work in all)."""
    query = select(Item.external_id, Item.id).where(Item.study_id == study.id)
    return dict(fetch_rows(session, query))


def _cell_text(value: object) -> str | None:
    """A score cell as text for the score parser (JSONL cells may be numbers)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        # Positional notation, as a person would have typed it: 1e-05 -> 0.00001.
        return format(Decimal(repr(value)), "f")
    return repr(value)


@dataclass(frozen=True, slots=True)
class PlainScale:
    """A scale's fields as plain attributes (what the score parser reads)."""

    id: int
    name: str
    min: float
    max: float
    step: float

    @classmethod
    def of(cls, scale: Scale) -> PlainScale:
        return cls(scale.id, scale.name, scale.min, scale.max, scale.step)


class RowChecker:
    """Looks up a row's item, scale and score, each distinct cell checked once.

    A file of 180,000 ratings holds a few thousand distinct item ids and a few
    hundred distinct scores per scale; checking each once (the score by the
    rater form's parser, see :mod:`annotator.collect.scores`) instead of per row
    is what makes the checks cheap. Every row still gets its own problems.
    """

    def __init__(self, items: dict[str, int], scales: dict[str, Scale]) -> None:
        self.items = items
        # Plain copies: reading an ORM attribute per row took a tenth of the import.
        self.scales = {name: PlainScale.of(scale) for name, scale in scales.items()}
        self._item: dict[object, tuple[int | None, str]] = {}
        self._scale: dict[object, tuple[PlainScale | None, str]] = {}
        self._score: dict[tuple, tuple[float | None, str]] = {}
        # The text cells found valid, for :meth:`cells`: item id by cell; by
        # scale cell, the scale and its valid score cells (on the scale's
        # step, and any precision).
        self._valid_item: dict[str, int] = {}
        self._valid_scale: dict[str, tuple[PlainScale, dict[str, float], dict[str, float]]] = {}
        self._valid_scores: dict[int, tuple[dict[str, float], dict[str, float]]] = {
            scale.id: ({}, {}) for scale in self.scales.values()
        }

    def cells(
        self, row: Row, problems: Problems, *, any_precision: bool = False
    ) -> tuple[int | None, PlainScale | None, float | None]:
        """:meth:`item`, :meth:`scale` and :meth:`score` of the row at once.

        Text cells already found valid (every CSV cell is text) are looked up
        in one dictionary each, without the three calls and their keys: the
        checks took half of the parse of 180,000 ratings. Any other row goes
        through the three checks, which report its problems.
        """
        values = row.values
        raw_item, raw_scale, raw_score = values["item_id"], values["scale"], values["score"]
        if type(raw_item) is str and type(raw_scale) is str and type(raw_score) is str:
            item = self._valid_item.get(raw_item)
            scale = self._valid_scale.get(raw_scale)
            if item is not None and scale is not None:
                value = scale[2 if any_precision else 1].get(raw_score)
                if value is not None:
                    return item, scale[0], value
                # A score cell not seen yet (most are, in a file of LLM scores).
                value = self.score(row, scale[0], problems, any_precision=any_precision)
                return item, scale[0], value
        item = self.item(row, problems)
        scale = self.scale(row, problems)
        return item, scale, self.score(row, scale, problems, any_precision=any_precision)

    def valid_text(
        self, raw_item: str, raw_scale: str, raw_score: str
    ) -> tuple[int, PlainScale, float] | None:
        """The item, scale and score of three text cells each already found valid
        on an earlier row (the score on the scale's step), else None: the row then
        goes through :meth:`cells`, which checks it and reports its problems."""
        item = self._valid_item.get(raw_item)
        scale = self._valid_scale.get(raw_scale)
        if item is None or scale is None:
            return None
        value = scale[1].get(raw_score)
        if value is None:
            return None
        return item, scale[0], value

    def item(self, row: Row, problems: Problems) -> int | None:
        raw = row.values["item_id"]
        # type(raw): in JSON, 1 and True are equal keys but other cells.
        raw = (raw, type(raw))
        try:
            found, problem = self._item[raw]
        except (KeyError, TypeError):
            item_id = _text(raw[0])
            found = self.items.get(item_id)
            problem = f"unknown item {item_id!r} (import the items first)"
            _remember(self._item, raw, (found, problem))
            if found is not None and raw[1] is str:
                self._valid_item[raw[0]] = found
        if found is None:
            problems.add(row.line, "item_id", problem)
        return found

    def scale(self, row: Row, problems: Problems) -> PlainScale | None:
        raw = row.values["scale"]
        raw = (raw, type(raw))
        try:
            scale, problem = self._scale[raw]
        except (KeyError, TypeError):
            name = _text(raw[0])
            scale = self.scales.get(name)
            problem = f"unknown scale {name!r} (the study has: {', '.join(self.scales)})"
            _remember(self._scale, raw, (scale, problem))
            if scale is not None and raw[1] is str:
                self._valid_scale[raw[0]] = (scale, *self._valid_scores[scale.id])
        if scale is None:
            problems.add(row.line, "scale", problem)
        return scale

    def score(
        self,
        row: Row,
        scale: PlainScale | None,
        problems: Problems,
        *,
        any_precision: bool = False,
    ) -> float | None:
        """The row's score, checked by the parser of the rater's form."""
        if scale is None:
            return None
        raw = row.values["score"]
        key = (raw, type(raw), scale.id, any_precision)
        try:
            value, problem = self._score[key]
        except (KeyError, TypeError):
            value, problem = _check_score(raw, scale, any_precision)
            _remember(self._score, key, (value, problem))
            if value is not None and key[1] is str:
                self._valid_scores[scale.id][any_precision][raw] = value
        if value is None:
            problems.add(row.line, "score", problem)
        return value


def _remember(cache: dict, key, value) -> None:
    # An unhashable JSON cell (a list) is checked each time. (Not
    # contextlib.suppress: its object per call took a tenth of the import.)
    try:  # noqa: SIM105
        cache[key] = value
    except TypeError:
        pass


def _check_score(raw: object, scale: PlainScale, any_precision: bool) -> tuple[float | None, str]:
    try:
        return parse_score(_cell_text(raw), scale, any_precision=any_precision), ""
    except ScoreError as exc:
        allowed = scale_range(scale, any_precision=any_precision)
        return None, f"{exc.problem}; the scale {scale.name} takes numbers {allowed}"
