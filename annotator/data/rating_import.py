"""Importing human ratings collected elsewhere, with their raters' demographics.

A rating imported again with a new value is updated and the change is kept
in its history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import itemgetter
from pathlib import Path

from sqlalchemy import bindparam, func, insert, literal, update
from sqlmodel import Session, select

from ..clock import now
from ..models import (
    ChangeReason,
    Rating,
    RatingChange,
    RatingSource,
    Role,
    Study,
    User,
    UserSource,
    bump_revision,
)
from ..study.studies import study_scales
from ..study.studyfile import question_specs
from ._bulk import (
    ImportReport,
    RowChecker,
    _chunks,
    _insert_rows,
    _item_ids,
    _text,
    copy_rows,
    insert_tuples,
)
from .criterion_column import CRITERION_COLUMN, CriterionCells
from .foreign_keys import check_references, foreign_key_triggers_off
from .imported_raters import existing_ratings, resolve_raters, store_demographics
from .readers import Problems, Row, iter_records

__all__ = ["import_ratings", "RATING_COLUMNS"]

RATING_COLUMNS = ("item_id", "rater", "scale", "score")
# Columns that are no demographic answer: the required ones and the criterion.
_RATING_CELLS = (*RATING_COLUMNS, CRITERION_COLUMN)
# The columns an imported rating is given (the keys of its row).
_NEW_RATING_COLUMNS = (
    "rater_id",
    "item_id",
    "scale_id",
    "criterion",
    "value",
    "is_repeat",
    "is_attention_check",
    "submitted_at",
    "source",
    "study_version",
)


def import_ratings(
    session: Session, study: Study, path: str | Path, *, progress: bool = False
) -> ImportReport:
    """Import human ratings collected elsewhere: ``item_id,rater,scale,score``.

    A ``criterion`` column names each rating's criterion in a rubric study
    (optional when the study has one; :mod:`annotator.data.criterion_column`).
    Any further column is a demographic answer of the rater (``gender``...),
    which must be the same on all of that rater's rows.
    """
    problems = Problems(str(path))
    # Row by row as the file is parsed: a million rows are never all held. A CSV
    # file's rows come as their cells (JSONL's as rows), see the loop below.
    header, records = iter_records(path, required=list(RATING_COLUMNS), problems=problems)
    n_rows = 0
    check = RowChecker(_item_ids(session, study), {s.name: s for s in study_scales(session, study)})
    questions = {q.key: q for q in question_specs(study.demographics)}
    criteria = CriterionCells(session, study)
    parsed: dict[tuple[str, int, int, str], tuple[float, int]] = {}
    demographics: dict[str, dict[str, str]] = {}
    demographic_line: dict[str, int] = {}
    # (question, answer) pairs already found valid: checked once each.
    valid_answers: set[tuple[str, str]] = set()
    # The demographic cells (as read) of each rater whose answers were found
    # valid and the same as on the rater's first line: a row with the same
    # cells is not checked again (the check of every row's answers took a
    # fifth of the parse). Kept per set of columns (JSONL lines may differ).
    same_answers: dict[str, object] = {}
    columns: object = None
    extras = None
    if header:  # empty after a problem with it: no records follow
        at = {name: index for index, name in enumerate(header)}
        i_item, i_rater, i_scale, i_score = (at[name] for name in RATING_COLUMNS)
        i_criterion = at.get(CRITERION_COLUMN)
        record_extras = _cells_getter(
            [i for i, name in enumerate(header) if name not in _RATING_CELLS]
        )
    for entry in records:
        n_rows += 1
        if header is not None:
            line, record = entry
            # A row whose every cell was found valid on an earlier row (its
            # item, scale and score, its rater's demographic cells, its
            # criterion) is taken as it is, without a dict or a Row: most rows of
            # a file (a Row and the checks for each were 0.2 s of the 1.3 s of
            # CPU of 180,000 ratings). Any other row (a first cell, a problem, a
            # key seen already) makes its Row and goes through every check below;
            # tests/data/test_rating_import_paths.py checks both ways agree.
            rater = record[i_rater].strip()
            found = check.valid_text(record[i_item], record[i_scale], record[i_score])
            if rater and found is not None and same_answers.get(rater) == record_extras(record):
                criterion = criteria.valid_text(
                    None if i_criterion is None else record[i_criterion]
                )
                key = (rater, found[0], found[1].id, criterion)
                if criterion is not None and key not in parsed:
                    parsed[key] = (found[2], line)
                    continue
            row = Row(line, dict(zip(header, record, strict=True)))
        else:
            row = entry
        values = row.values
        rater = _text(values["rater"])
        if not rater:
            problems.add(row.line, "rater", "the rater code is empty")
        item, scale, value = check.cells(row, problems)
        if values.keys() != columns:
            columns = set(values)
            extras = _cells_getter([key for key in values if key not in _RATING_CELLS])
            same_answers.clear()
        cells = extras(values)
        # `is not None`: a rater seen first here has no cells to compare with.
        if rater and (seen := same_answers.get(rater)) is not None and seen == cells:
            pass
        else:
            answers = {key: _text(val) for key, val in values.items() if key not in _RATING_CELLS}
            n_problems = len(problems.items)
            for key, answer in answers.items():
                if answer and (key, answer) not in valid_answers:
                    question = questions.get(key)
                    if question and question.type == "choice" and answer not in question.choices:
                        problems.add(
                            row.line,
                            key,
                            f"{answer!r} is not one of: {', '.join(question.choices)}",
                        )
                    else:
                        valid_answers.add((key, answer))
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
                if len(problems.items) == n_problems and rater not in same_answers:
                    same_answers[rater] = cells
        criterion = criteria.cell(row, problems, item)
        if not rater or item is None or scale is None or value is None or criterion is None:
            continue
        key = (rater, item, scale.id, criterion)
        if key in parsed:
            problems.add(
                row.line,
                None,
                f"rater {rater!r} rated item {_text(row.values['item_id'])!r} on scale "
                f"{scale.name}{f' and criterion {criterion}' if criterion else ''} already on "
                f"line {parsed[key][1]}",
            )
            continue
        parsed[key] = (value, row.line)

    raters = resolve_raters(session, study, list(demographics), problems)
    problems.raise_if_any()

    report = ImportReport(rows=n_rows)
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
                    "source": UserSource.IMPORT.value,
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
    store_demographics(session, demographics, rater_ids, created_at)

    # Raters created just now have no ratings to compare with.
    known = [user.id for user in raters.values() if user is not None]
    existing = existing_ratings(session, known)
    to_update: list[tuple[int, float, float]] = []
    n_new = 0
    for (rater, item, scale_id, criterion), (value, _line) in parsed.items():
        old = existing.get((rater_ids[rater], item, scale_id, criterion))
        if old is None:
            n_new += 1
        elif old[1] == value:
            report.unchanged += 1
        else:
            to_update.append((old[0], old[1], value))
    source = RatingSource.IMPORT.value

    if n_new and session.connection().dialect.name == "postgresql":
        # The new ratings (on a first import, every one parsed).
        if existing:
            new = {
                key: found
                for key, found in parsed.items()
                if (rater_ids[key[0]], key[1], key[2], key[3]) not in existing
            }
        else:
            new = parsed
        version = study.version
        # Lists in _NEW_RATING_COLUMNS' order, as COPY takes them: no dict per row.
        copy_rows_ = (
            [
                rater_ids[rater],
                item,
                scale_id,
                criterion,
                value,
                False,
                False,
                created_at,
                source,
                version,
            ]
            for (rater, item, scale_id, criterion), (value, _line) in new.items()
        )

        def check_references_() -> None:
            codes = {key[0] for key in new}
            ids = {
                "user": {rater_ids[code] for code in codes},
                "item": {key[1] for key in new},
                "scale": {key[2] for key in new},
            }
            names = {
                "user": {rater_ids[code]: code for code in codes},
                "item": {item_id: external for external, item_id in check.items.items()},
                "scale": {scale.id: scale.name for scale in check.scales.values()},
            }

            def first_line(table: str, id_: int) -> int:
                # Only when an id is missing: the line of its first new rating.
                index = ("user", "item", "scale").index(table)
                return next(
                    line
                    for (rater, item, scale_id, _criterion), (_value, line) in new.items()
                    if (rater_ids[rater], item, scale_id)[index] == id_
                )

            check_references(
                session.connection().connection.driver_connection,
                problems,
                [
                    (table, column, ids[table], names[table])
                    for table, column in (
                        ("user", "rater"),
                        ("item", "item_id"),
                        ("scale", "scale"),
                    )
                ],
                first_line,
            )

        report.foreign_key_checks = _insert_new_ratings_postgresql(
            session, copy_rows_, n_new, created_at, progress, check_references_, problems
        )
    elif n_new:
        before = _last_rating_id(session)
        # Tuples in _NEW_RATING_COLUMNS' order, made as they are written (a list
        # of a million was a third of the import's memory), the same on every
        # row given once.
        insert_tuples(
            session,
            Rating,
            list(_NEW_RATING_COLUMNS[:5]),
            (
                (rater_id, item, scale_id, criterion, value)
                for (rater, item, scale_id, criterion), (value, _line) in parsed.items()
                if (rater_id := rater_ids[rater], item, scale_id, criterion) not in existing
            ),
            {
                "is_repeat": False,
                "is_attention_check": False,
                "submitted_at": created_at,
                "source": source,
                "study_version": study.version,  # the version it was given under
            },
            progress=progress,
            description="ratings",
            total=n_new,
        )
        _first_values(session, before, created_at, source)
    if to_update:
        session.connection().execute(
            update(Rating.__table__)
            .where(Rating.__table__.c.id == bindparam("rating_id"))
            .values(value=bindparam("new_value"), submitted_at=created_at),
            [{"rating_id": rid, "new_value": value} for rid, _old, value in to_update],
        )
        history = [
            {
                "rating_id": rid,
                "value": value,
                "previous_value": old,
                "changed_at": created_at,
                "reason": ChangeReason.IMPORT.value,
            }
            for rid, old, value in to_update
        ]
        for chunk in _chunks(history, progress, "history"):
            _insert_rows(session, RatingChange, chunk)
    session.flush()
    # Raters, answers, ratings and history may all be new: one bump for the import.
    bump_revision(session, study.id)
    report.created = n_new
    report.updated = len(to_update)
    return report


def _last_rating_id(session: Session) -> int:
    return session.execute(select(func.coalesce(func.max(Rating.id), 0))).scalar_one()


def _first_values(session: Session, before: int, at, source: str) -> int:
    """The first value of each new rating into its history, copied in the
    database; how many. The new rows are the ones after ``before`` with this
    import's time and source (reading 180,000 new ids back took longer than
    this whole statement)."""
    return session.execute(
        insert(RatingChange)
        .from_select(
            ["rating_id", "value", "changed_at", "reason"],
            select(
                Rating.id,
                Rating.value,
                literal(at, RatingChange.__table__.c.changed_at.type),
                literal(ChangeReason.IMPORT.value),
            ).where(
                Rating.id > before,
                Rating.source == source,
                Rating.submitted_at == at,
                Rating.is_repeat.is_(False),
            ),
        )
        # Else psycopg's cursor is closed before the count is read (-1).
        .execution_options(preserve_rowcount=True)
    ).rowcount


def _insert_new_ratings_postgresql(
    session: Session,
    rows: Iterator[list],
    n_new: int,
    at,
    progress: bool,
    check_references_: Callable[[], None],
    problems: Problems,
) -> str:
    """New ratings and their first history rows: one ``COPY`` and one
    statement; returns how their foreign keys were checked (see
    :func:`foreign_key_triggers_off`).

    First ``check_references_`` checks and locks the raters, items and
    scales the rows point to, one statement each; the ``COPY`` into
    ``rating`` and the history rows then go without the per-row foreign-key
    triggers where the database allows it (2.4 s of the 3.6 s insert of
    180,000 ratings). Without the triggers a ``COPY`` straight into
    ``rating`` (which writes its rows in batches) took 2.6 s with the
    history, against 3.3 s through a temporary table and one
    ``INSERT ... RETURNING`` (median of 5, load 2.4). The constraints are
    not dropped and added back around the insert instead: dropping a foreign
    key locks the table it points to, ``user`` among them, ACCESS EXCLUSIVE
    until the import commits, which would stall every signed-in request of
    every study, and adding it back re-checks every rating of the database,
    not just the new ones.
    """
    driver = session.connection().connection.driver_connection
    check_references_()
    before = _last_rating_id(session)
    # block_id is not among the columns (NULL: no reference), and the history
    # rows point to the ratings this transaction has just inserted: see
    # FOREIGN_KEYS.
    with foreign_key_triggers_off(driver, ["rating", "ratingchange"]) as way:
        copy_rows(
            driver,
            "rating",
            list(_NEW_RATING_COLUMNS),
            (row for chunk in _chunks(rows, progress, "ratings", total=n_new) for row in chunk),
        )
        first_values = _first_values(session, before, at, RatingSource.IMPORT.value)
    if first_values != n_new:
        # Only another import committed in between with the very same time
        # (to the microsecond) could do this: stop rather than mix histories,
        # with the import's own message (not a traceback); the caller rolls back.
        problems.add(
            None,
            None,
            f"{first_values} new ratings found after the copy of {n_new}: another import "
            "committed at the same moment; import the file again",
        )
        problems.raise_if_any()
    return way


def _cells_getter(keys: list[str]) -> Callable[[dict], tuple]:
    """The cells of ``keys`` of a row's values, as one tuple (hashable, comparable)."""
    if not keys:
        return lambda values: ()
    if len(keys) == 1:
        key = keys[0]
        return lambda values: (values[key],)
    return itemgetter(*keys)
