"""Importing items, earlier human ratings and stored LLM scores.

Each import reads and checks the whole file first; only a file without any
problem is written, in the caller's transaction. Importing the same file
again changes nothing. Rows that already exist with the same value are
counted as unchanged; a human rating imported again with a new value is
updated and the change is kept in its history.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from sqlalchemy import insert, update
from sqlmodel import Session, select
from tqdm import tqdm

from .clock import now
from .collect.scores import ScoreError, parse_score, scale_range
from .models import (
    Demographics,
    Item,
    LLMScore,
    Rating,
    RatingChange,
    Role,
    Scale,
    Study,
    User,
)
from .studies import study_benchmarks, study_scales
from .studyfile import template_fields
from .tables import InputError, Problems, Row, parse_number, read_rows

__all__ = ["ImportReport", "import_items", "import_ratings", "import_llm_scores", "InputError"]

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


# --------------------------------------------------------------------- items

ITEM_COLUMNS = ("item_id", "benchmark")
GOLD_COLUMNS = ("gold_score", "gold_tolerance")


def import_items(
    session: Session, study: Study, path: str | Path, *, progress: bool = False
) -> ImportReport:
    """Import items from CSV or JSONL: ``item_id``, ``benchmark``, then fields."""
    problems = Problems(str(path))
    rows = read_rows(path, required=list(ITEM_COLUMNS), problems=problems)
    benchmarks = {b.name: b for b in study_benchmarks(session, study)}
    needed = {name: template_fields(b.template) for name, b in benchmarks.items()}
    existing = {
        item.external_id: item
        for item in session.exec(select(Item).where(Item.study_id == study.id))
    }
    seen: dict[str, int] = {}
    new_items: list[dict] = []
    report = ImportReport(rows=len(rows))
    for row in rows:
        values = row.values
        item_id = _text(values["item_id"])
        bench_name = _text(values["benchmark"])
        if not item_id:
            problems.add(row.line, "item_id", "the item id is empty")
            continue
        if item_id in seen:
            problems.add(
                row.line,
                "item_id",
                f"duplicate item id {item_id!r} (first on line {seen[item_id]})",
            )
            continue
        seen[item_id] = row.line
        bench = benchmarks.get(bench_name)
        if bench is None:
            problems.add(
                row.line,
                "benchmark",
                f"unknown benchmark {bench_name!r} (the study has: {', '.join(benchmarks)})",
            )
            continue
        # A CSV holding several benchmarks has empty cells in the columns of
        # the others; they are not fields of this item.
        fields = {
            key: value
            for key, value in values.items()
            if key not in ITEM_COLUMNS
            and key not in GOLD_COLUMNS
            and not (value == "" and key not in needed[bench_name])
        }
        for name in sorted(needed[bench_name]):
            if name not in fields:
                problems.add(row.line, name, f"missing (the {bench_name} template uses it)")
            elif _text(fields[name]) == "":
                problems.add(row.line, name, f"empty (the {bench_name} template uses it)")
        gold = _gold(values, row, problems)
        candidate = {
            "study_id": study.id,
            "external_id": item_id,
            "benchmark_id": bench.id,
            "fields": fields,
            "gold_score": gold[0],
            "gold_tolerance": gold[1],
        }
        old = existing.get(item_id)
        if old is None:
            new_items.append(candidate)
        elif (old.benchmark_id, old.fields, old.gold_score, old.gold_tolerance) == (
            bench.id,
            fields,
            gold[0],
            gold[1],
        ):
            report.unchanged += 1
        else:
            problems.add(
                row.line,
                "item_id",
                f"item {item_id!r} is already in the study with other content; "
                "imported items are never changed (give the new version a new id)",
            )
    problems.raise_if_any()
    created_at = now()
    for chunk in _chunks(new_items, progress, "items"):
        _insert_rows(session, Item, [dict(row, created_at=created_at) for row in chunk])
    report.created = len(new_items)
    return report


def _gold(values: dict, row: Row, problems: Problems) -> tuple[float | None, float | None]:
    """Gold score and tolerance, as shares of the scale's range (0 to 1)."""
    result: dict[str, float | None] = {}
    for column in GOLD_COLUMNS:
        raw = values.get(column)
        result[column] = None
        if raw is None or _text(raw) == "":
            continue
        try:
            value = parse_number(raw)
        except ValueError as exc:
            problems.add(row.line, column, str(exc))
            continue
        if not 0 <= value <= 1:
            problems.add(
                row.line, column, f"{value:g} is not a share of the scale's range (0 to 1)"
            )
            continue
        result[column] = value
    given = [column for column in GOLD_COLUMNS if _text(values.get(column)) != ""]
    if len(given) == 1:
        problems.add(row.line, given[0], "give gold_score and gold_tolerance together")
    return result["gold_score"], result["gold_tolerance"]


# ------------------------------------------------------------ human ratings

RATING_COLUMNS = ("item_id", "rater", "scale", "score")


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


def import_ratings(
    session: Session, study: Study, path: str | Path, *, progress: bool = False
) -> ImportReport:
    """Import human ratings collected elsewhere: ``item_id,rater,scale,score``.

    Any further column is a demographic answer of the rater (``gender``...),
    which must be the same on all of that rater's rows.
    """
    problems = Problems(str(path))
    rows = read_rows(path, required=list(RATING_COLUMNS), problems=problems)
    items = _item_ids(session, study)
    scales = {s.name: s for s in study_scales(session, study)}
    questions = {q["key"]: q for q in study.demographics}
    parsed: dict[tuple[str, int, int], tuple[float, int]] = {}
    demographics: dict[str, dict[str, str]] = {}
    demographic_line: dict[str, int] = {}
    for row in rows:
        rater = _text(row.values["rater"])
        if not rater:
            problems.add(row.line, "rater", "the rater code is empty")
        item = _lookup_item(items, row, problems)
        scale = _lookup_scale(scales, row, problems)
        value = _lookup_score(row, scale, problems)
        answers = {key: _text(val) for key, val in row.values.items() if key not in RATING_COLUMNS}
        for key, answer in answers.items():
            question = questions.get(key)
            if question and question["type"] == "choice" and answer:
                allowed = question["choices"]
                if answer not in allowed:
                    problems.add(row.line, key, f"{answer!r} is not one of: {', '.join(allowed)}")
        if rater:
            if rater in demographics and demographics[rater] != answers:
                problems.add(
                    row.line,
                    None,
                    f"rater {rater!r} has other demographic answers than on line "
                    f"{demographic_line[rater]}",
                )
            demographics.setdefault(rater, answers)
            demographic_line.setdefault(rater, row.line)
        if not rater or item is None or scale is None or value is None:
            continue
        key = (rater, item, scale.id)
        if key in parsed:
            problems.add(
                row.line,
                None,
                f"rater {rater!r} rated item {_text(row.values['item_id'])!r} on scale "
                f"{scale.name} already on line {parsed[key][1]}",
            )
            continue
        parsed[key] = (value, row.line)

    raters = _resolve_raters(session, study, list(demographics), problems)
    problems.raise_if_any()

    report = ImportReport(rows=len(rows))
    created_at = now()
    new_users = [code for code, user in raters.items() if user is None]
    if new_users:
        result = session.execute(
            insert(User).returning(User.id, User.rater_code, sort_by_parameter_order=True),
            [
                {
                    "role": Role.RATER,
                    "rater_code": code,
                    "study_id": study.id,
                    "source": "import",
                    "created_at": created_at,
                }
                for code in new_users
            ],
        )
        rater_ids = {code: user_id for user_id, code in result.all()}
        report.raters_created = len(new_users)
    else:
        rater_ids = {}
    rater_ids.update({code: user.id for code, user in raters.items() if user is not None})
    _store_demographics(session, demographics, rater_ids, created_at)

    existing = _existing_ratings(session, list(rater_ids.values()))
    to_insert: list[dict] = []
    to_update: list[tuple[int, float, float]] = []
    for (rater, item, scale_id), (value, _line) in parsed.items():
        old = existing.get((rater_ids[rater], item, scale_id))
        if old is None:
            to_insert.append(
                {
                    "rater_id": rater_ids[rater],
                    "item_id": item,
                    "scale_id": scale_id,
                    "value": value,
                    "is_repeat": False,
                    "is_attention_check": False,
                    "submitted_at": created_at,
                    "source": "import",
                }
            )
        elif old[1] == value:
            report.unchanged += 1
        else:
            to_update.append((old[0], old[1], value))
    # No RETURNING: SQLite can only return ids in order one row at a time,
    # which made this ten times slower. The new ids are read back below for
    # the history rows.
    for chunk in _chunks(to_insert, progress, "ratings"):
        _insert_rows(session, Rating, chunk)
    if to_insert:
        stored = _existing_ratings(session, sorted({row["rater_id"] for row in to_insert}))
        history = [
            {
                "rating_id": stored[(row["rater_id"], row["item_id"], row["scale_id"])][0],
                "value": row["value"],
                "changed_at": created_at,
                "reason": "import",
            }
            for row in to_insert
        ]
        for chunk in _chunks(history, progress, "history"):
            _insert_rows(session, RatingChange, chunk)
    for rating_id, old_value, value in to_update:
        session.execute(
            update(Rating)
            .where(Rating.id == rating_id)
            .values(value=value, submitted_at=created_at)
        )
        session.add(
            RatingChange(
                rating_id=rating_id,
                value=value,
                previous_value=old_value,
                changed_at=created_at,
                reason="import",
            )
        )
    session.flush()
    report.created = len(to_insert)
    report.updated = len(to_update)
    return report


def _resolve_raters(
    session: Session, study: Study, codes: list[str], problems: Problems
) -> dict[str, User | None]:
    """Existing users for the given rater codes (None where a new one is needed)."""
    found: dict[str, User | None] = dict.fromkeys(codes)
    for batch in _batches(codes, 500):
        for user in session.exec(select(User).where(User.rater_code.in_(batch))):
            if user.study_id != study.id or user.role != Role.RATER:
                problems.add(
                    None,
                    "rater",
                    f"rater code {user.rater_code!r} belongs to another study; "
                    "rater codes are unique across studies",
                )
            found[user.rater_code] = user
    return found


def _batches(values: list, size: int) -> Iterable[list]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _existing_ratings(
    session: Session, rater_ids: list[int]
) -> dict[tuple[int, int, int], tuple[int, float]]:
    existing: dict[tuple[int, int, int], tuple[int, float]] = {}
    for batch in _batches(rater_ids, 500):
        query = select(Rating.id, Rating.rater_id, Rating.item_id, Rating.scale_id, Rating.value)
        query = query.where(Rating.rater_id.in_(batch), Rating.is_repeat.is_(False))
        for rid, rater, item, scale, value in session.exec(query):
            existing[(rater, item, scale)] = (rid, value)
    return existing


def _store_demographics(
    session: Session, answers: dict[str, dict[str, str]], rater_ids: dict[str, int], at
) -> None:
    """Keep the demographic columns of imported raters (non-empty answers)."""
    ids = {rater_ids[code]: {k: v for k, v in a.items() if v} for code, a in answers.items()}
    ids = {uid: a for uid, a in ids.items() if a}
    if not ids:
        return
    stored = {
        d.user_id: d
        for batch in _batches(list(ids), 500)
        for d in session.exec(select(Demographics).where(Demographics.user_id.in_(batch)))
    }
    for user_id, values in ids.items():
        if user_id in stored:
            merged = {**stored[user_id].answers, **values}
            if merged != stored[user_id].answers:
                stored[user_id].answers = merged
                session.add(stored[user_id])
        else:
            session.add(Demographics(user_id=user_id, answers=values, submitted_at=at))


# --------------------------------------------------------------- LLM scores

LLM_COLUMNS = ("item_id", "model", "scale", "score")


def import_llm_scores(
    session: Session, study: Study, path: str | Path, *, progress: bool = False
) -> ImportReport:
    """Import stored LLM scores: ``item_id,model,scale,score[,run,temperature]``."""
    problems = Problems(str(path))
    rows = read_rows(path, required=list(LLM_COLUMNS), problems=problems)
    items = _item_ids(session, study)
    scales = {s.name: s for s in study_scales(session, study)}
    parsed: dict[tuple[int, int, str, str], dict] = {}
    for row in rows:
        model = _text(row.values["model"])
        if not model:
            problems.add(row.line, "model", "the model name is empty")
        item = _lookup_item(items, row, problems)
        scale = _lookup_scale(scales, row, problems)
        # LLM scores keep any precision (means over samples or token
        # probabilities are not on the scale's step); the bounds still apply.
        value = _lookup_score(row, scale, problems, any_precision=True)
        run = _text(row.values.get("run"))
        temperature = None
        if _text(row.values.get("temperature")):
            try:
                temperature = parse_number(row.values["temperature"])
            except ValueError as exc:
                problems.add(row.line, "temperature", str(exc))
        if not model or item is None or scale is None or value is None:
            continue
        key = (item, scale.id, model, run)
        if key in parsed:
            problems.add(
                row.line,
                None,
                f"model {model!r} scored item {_text(row.values['item_id'])!r} on scale "
                f"{scale.name}{f' in run {run!r}' if run else ''} already on line "
                f"{parsed[key]['line']}; give repeated samples a run column",
            )
            continue
        parsed[key] = {"value": value, "temperature": temperature, "line": row.line}

    existing: dict[tuple[int, int, str, str], tuple[float, float | None]] = {}
    item_ids = sorted({key[0] for key in parsed})
    for batch in _batches(item_ids, 500):
        query = select(
            LLMScore.item_id,
            LLMScore.scale_id,
            LLMScore.model,
            LLMScore.run,
            LLMScore.value,
            LLMScore.temperature,
        ).where(LLMScore.item_id.in_(batch))
        for item, scale_id, model, run, value, temperature in session.exec(query):
            existing[(item, scale_id, model, run)] = (value, temperature)
    report = ImportReport(rows=len(rows))
    to_insert = []
    for key, new in parsed.items():
        old = existing.get(key)
        if old is None:
            to_insert.append(key)
        elif old == (new["value"], new["temperature"]):
            report.unchanged += 1
        else:
            problems.add(
                new["line"],
                "score",
                f"this score is already stored with value {old[0]:g}"
                f"{f' (temperature {old[1]:g})' if old[1] is not None else ''}; stored LLM "
                "scores are never overwritten (give a new sample another run)",
            )
    problems.raise_if_any()
    created_at = now()
    rows_to_insert = [
        {
            "item_id": item,
            "scale_id": scale_id,
            "model": model,
            "run": run,
            "value": parsed[(item, scale_id, model, run)]["value"],
            "temperature": parsed[(item, scale_id, model, run)]["temperature"],
            "created_at": created_at,
        }
        for item, scale_id, model, run in to_insert
    ]
    for chunk in _chunks(rows_to_insert, progress, "LLM scores"):
        _insert_rows(session, LLMScore, chunk)
    report.created = len(rows_to_insert)
    return report
