"""Importing items, earlier human ratings and stored LLM scores.

Each import reads and checks the whole file first; only a file without any
problem is written, in the caller's transaction. Importing the same file
again changes nothing. Rows that already exist with the same value are
counted as unchanged; a human rating imported again with a new value is
updated and the change is kept in its history.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import ARRAY, Integer, any_, bindparam
from sqlmodel import Session, select

from ..clock import now
from ..collect.scores import parse_score
from ..models import Item, LLMScore, Scale, Study, bump_revision
from ..study.studies import study_benchmarks, study_scales
from ..study.studyfile import template_fields
from ._bulk import (
    ImportReport,
    RowChecker,
    _batches,
    _chunks,
    _insert_rows,
    _item_ids,
    _remember,
    _text,
    copy_rows,
    insert_tuples,
)
from .criterion_column import CriterionCells
from .foreign_keys import check_references, foreign_key_triggers_off
from .rating_import import import_ratings
from .readers import InputError, Problems, Row, iter_rows, parse_number, read_rows
from .sql import fetch_rows

__all__ = [
    "ImportReport",
    "import_items",
    "import_ratings",
    "import_llm_scores",
    "store_llm_score",
    "InputError",
]


# --------------------------------------------------------------------- items

ITEM_COLUMNS = ("item_id", "benchmark")
GOLD_COLUMNS = ("gold_score", "gold_tolerance")
# ``gold_score.fluency``: an attention check's gold share on one criterion.
CRITERION_GOLD = "gold_score."


def import_items(
    session: Session, study: Study, path: str | Path, *, progress: bool = False
) -> ImportReport:
    """Import items from CSV or JSONL: ``item_id``, ``benchmark``, then fields.

    ``gold_score`` and ``gold_tolerance`` make an item an attention check; in a
    rubric study ``gold_score.CRITERION`` columns set another gold share for
    that criterion (:func:`_criterion_gold`).
    """
    problems = Problems(str(path))
    criteria = CriterionCells(session, study).names
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
            and not key.startswith(CRITERION_GOLD)
            and not (value == "" and key not in needed[bench_name])
        }
        for name in sorted(needed[bench_name]):
            if name not in fields:
                problems.add(row.line, name, f"missing (the {bench_name} template uses it)")
            elif _text(fields[name]) == "":
                problems.add(row.line, name, f"empty (the {bench_name} template uses it)")
        gold = _gold(values, row, problems)
        by_criterion = _criterion_gold(values, row, problems, criteria, gold[0])
        candidate = {
            "study_id": study.id,
            "external_id": item_id,
            "benchmark_id": bench.id,
            "fields": fields,
            "gold_score": gold[0],
            "gold_tolerance": gold[1],
            "criterion_gold": by_criterion,
        }
        old = existing.get(item_id)
        if old is None:
            new_items.append(candidate)
        elif (
            old.benchmark_id,
            old.fields,
            old.gold_score,
            old.gold_tolerance,
            old.criterion_gold,
        ) == (bench.id, fields, gold[0], gold[1], by_criterion):
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
    if new_items:
        bump_revision(session, study.id)
    report.created = len(new_items)
    return report


def _share(values: dict, column: str, row: Row, problems: Problems) -> float | None:
    """A gold cell: a share of the scale's range (0 to 1), None when empty."""
    raw = values.get(column)
    if raw is None or _text(raw) == "":
        return None
    try:
        value = parse_number(raw)
    except ValueError as exc:
        problems.add(row.line, column, str(exc))
        return None
    if not 0 <= value <= 1:
        problems.add(row.line, column, f"{value:g} is not a share of the scale's range (0 to 1)")
        return None
    return value


def _criterion_gold(
    values: dict, row: Row, problems: Problems, criteria: list[str], gold: float | None
) -> dict[str, float] | None:
    """The ``gold_score.CRITERION`` cells of an attention check: the gold share
    on that criterion in place of ``gold_score`` (which the item still needs)."""
    found: dict[str, float] = {}
    for column in values:
        if not column.startswith(CRITERION_GOLD):
            continue
        name = column[len(CRITERION_GOLD) :]
        if name not in criteria:
            known = ", ".join(criteria) or "none: the study has no [[criteria]]"
            problems.add(row.line, column, f"unknown criterion {name!r} (known: {known})")
            continue
        share = _share(values, column, row, problems)
        if share is None:
            continue
        if gold is None:
            problems.add(
                row.line, column, "give gold_score too (the item's gold on every other criterion)"
            )
            continue
        found[name] = share
    return found or None


def _gold(values: dict, row: Row, problems: Problems) -> tuple[float | None, float | None]:
    """Gold score and tolerance, as shares of the scale's range (0 to 1)."""
    result: dict[str, float | None] = {}
    for column in GOLD_COLUMNS:
        result[column] = _share(values, column, row, problems)
    given = [column for column in GOLD_COLUMNS if _text(values.get(column)) != ""]
    if len(given) == 1:
        problems.add(row.line, given[0], "give gold_score and gold_tolerance together")
    return result["gold_score"], result["gold_tolerance"]


# --------------------------------------------------------------- LLM scores

LLM_COLUMNS = ("item_id", "model", "scale", "score")
# The columns an imported score is given: its key, then its values.
_LLM_SCORE_COLUMNS = (
    "item_id",
    "scale_id",
    "criterion",
    "model",
    "run",
    "value",
    "temperature",
    "created_at",
)


def import_llm_scores(
    session: Session, study: Study, path: str | Path, *, progress: bool = False
) -> ImportReport:
    """Import stored LLM scores: ``item_id,model,scale,score[,run,temperature,criterion]``.

    A score's key is (item, scale, criterion, model, temperature, run): run 1 at
    temperature 0.1 and run 1 at 1.0 are two scores. A key given twice in the
    file, or stored already with another value, is refused (stored scores are
    never overwritten); stored with the same value, it counts as unchanged.
    ``criterion`` names the score's criterion in a rubric study (optional when
    the study has one; :mod:`annotator.data.criterion_column`).
    """
    problems = Problems(str(path))
    rows = iter_rows(path, required=list(LLM_COLUMNS), problems=problems)
    n_rows = 0
    check = RowChecker(_item_ids(session, study), {s.name: s for s in study_scales(session, study)})
    criteria = CriterionCells(session, study)
    # (value, line) by key (item, scale, criterion, model, temperature, run):
    # tuples, not a dict per row.
    parsed: dict[tuple[int, int, str, str, float | None, str], tuple[float, int]] = {}
    # Each distinct temperature cell parsed once, as the checker does scores.
    temperatures: dict[object, tuple[float | None, str]] = {}
    for row in rows:
        n_rows += 1
        values = row.values
        model = _text(values["model"])
        if not model:
            problems.add(row.line, "model", "the model name is empty")
        # LLM scores keep any precision (means over samples or token
        # probabilities are not on the scale's step); the bounds still apply.
        item, scale, value = check.cells(row, problems, any_precision=True)
        run = _text(values.get("run"))
        temperature = None
        raw = values.get("temperature")
        if raw is not None and raw != "":
            try:
                temperature, problem = temperatures[(raw, type(raw))]
            except (KeyError, TypeError):
                temperature, problem = _parse_temperature(raw)
                _remember(temperatures, (raw, type(raw)), (temperature, problem))
            if problem:
                problems.add(row.line, "temperature", problem)
        criterion = criteria.cell(row, problems, item)
        if not model or item is None or scale is None or value is None or criterion is None:
            continue
        key = (item, scale.id, criterion, model, temperature, run)
        if key in parsed:
            problems.add(
                row.line,
                None,
                f"model {model!r} scored item {_text(values['item_id'])!r} on scale "
                f"{scale.name}{f' and criterion {criterion}' if criterion else ''}"
                f"{f' in run {run!r}' if run else ''}"
                f"{f' at temperature {temperature:g}' if temperature is not None else ''} "
                f"already on line {parsed[key][1]}; give repeated samples a run column",
            )
            continue
        parsed[key] = (value, row.line)

    existing: dict[tuple[int, int, str, str, float | None, str], float] = {}
    item_ids = sorted({key[0] for key in parsed})
    # PostgreSQL takes the ids as one array parameter: one statement instead of
    # one per 500 items (10 for 5,000). SQLite has a limit on parameters.
    postgresql = session.connection().dialect.name == "postgresql"
    for batch in _batches(item_ids, (len(item_ids) or 1) if postgresql else 500):
        query = select(
            LLMScore.item_id,
            LLMScore.scale_id,
            LLMScore.criterion,
            LLMScore.model,
            LLMScore.run,
            LLMScore.value,
            LLMScore.temperature,
        ).where(
            LLMScore.item_id == any_(bindparam("ids", batch, type_=ARRAY(Integer)))
            if postgresql
            else LLMScore.item_id.in_(batch)
        )
        for item, scale_id, criterion, model, run, value, temperature in fetch_rows(session, query):
            existing[(item, scale_id, criterion, model, temperature, run)] = value
    report = ImportReport(rows=n_rows)
    to_insert = []
    for key, (value, line) in parsed.items():
        old = existing.get(key)
        if old is None:
            to_insert.append(key)
        elif old == value:
            report.unchanged += 1
        else:
            problems.add(
                line,
                "score",
                f"this score is already stored with value {old:g}"
                f"{f' (temperature {key[4]:g})' if key[4] is not None else ''}; stored LLM "
                "scores are never overwritten (give a new sample another run)",
            )
    problems.raise_if_any()
    created_at = now()
    connection = session.connection()
    if to_insert and connection.dialect.name == "postgresql":
        driver = connection.connection.driver_connection
        ids = {"item": {key[0] for key in to_insert}, "scale": {key[1] for key in to_insert}}
        names = {
            "item": {item_id: external for external, item_id in check.items.items()},
            "scale": {scale.id: scale.name for scale in check.scales.values()},
        }

        def first_line(table: str, id_: int) -> int:
            # Only when an id is missing: the line of its first new score.
            index = ("item", "scale").index(table)
            return next(parsed[key][1] for key in to_insert if key[index] == id_)

        check_references(
            driver,
            problems,
            [
                (table, column, ids[table], names[table])
                for table, column in (("item", "item_id"), ("scale", "scale"))
            ],
            first_line,
        )
        # One COPY for the whole file: a COPY per chunk cost a catalogue
        # query and two round trips each. The items and scales are locked
        # above, so the COPY can skip the per-row foreign-key triggers (0.18 s
        # of its 0.28 s for 30,000 scores) where the database allows it.
        # Lists in _LLM_SCORE_COLUMNS' order, as COPY takes them: no dict per row.
        rows = (
            [key[0], key[1], key[2], key[3], key[5], parsed[key][0], key[4], created_at]
            for chunk in _chunks(to_insert, progress, "LLM scores")
            for key in chunk
        )
        with foreign_key_triggers_off(driver, ["llmscore"]) as report.foreign_key_checks:
            copy_rows(driver, "llmscore", list(_LLM_SCORE_COLUMNS), rows)
    elif to_insert:
        # Tuples in _LLM_SCORE_COLUMNS' order but the time, given once.
        insert_tuples(
            session,
            LLMScore,
            list(_LLM_SCORE_COLUMNS[:-1]),
            ((key[0], key[1], key[2], key[3], key[5], parsed[key][0], key[4]) for key in to_insert),
            {"created_at": created_at},
            progress=progress,
            description="LLM scores",
            total=len(to_insert),
        )
    if to_insert:
        bump_revision(session, study.id)
    report.created = len(to_insert)
    return report


def _parse_temperature(raw: object) -> tuple[float | None, str]:
    if not _text(raw):
        return None, ""
    try:
        temperature = parse_number(raw)
    except ValueError as exc:
        return None, str(exc)
    # Below 0 is no sampling temperature, and -1 keys "none" (models.NO_TEMPERATURE_KEY).
    if not temperature >= 0:
        return None, f"{_text(raw)} is not a temperature (0 or more)"
    return temperature, ""


def store_llm_score(
    session: Session,
    *,
    item_id: int,
    scale: Scale,
    model: str,
    run: str,
    temperature: float | None,
    score: str,
    prompt_hash: str | None = None,
    criterion: str = "",
) -> LLMScore:
    """Add one LLM score given as text, checked as ``import_llm_scores`` checks a cell.

    The judge runner stores its scores here, so a judged and an imported score
    pass the same check (:func:`~annotator.collect.scores.parse_score` with any
    precision, within the scale's bounds); a score it refuses raises
    :class:`~annotator.collect.scores.ScoreError` and stores nothing.
    """
    value = parse_score(score, scale, any_precision=True)
    row = LLMScore(
        item_id=item_id,
        scale_id=scale.id,
        criterion=criterion,
        model=model,
        run=run,
        temperature=temperature,
        value=value,
        prompt_hash=prompt_hash,
    )
    session.add(row)
    return row
