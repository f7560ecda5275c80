"""PostgreSQL imports without the per-row foreign-key triggers: the references checked
and locked in one statement per table, then the inserts with the triggers off where the
database role may turn them off (:func:`foreign_key_triggers_off`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress

from ._bulk import ROW_BY_ROW, SET_BASED
from .readers import Problems

__all__ = ["FOREIGN_KEYS", "check_references", "foreign_key_triggers_off", "lock_referenced"]


# The foreign keys of the tables the PostgreSQL imports insert into with the
# foreign-key triggers off, and what stands for each trigger's check there:
# every new row's id exists and is locked FOR KEY SHARE by
# :func:`lock_referenced` (as the trigger's own query does), or the column is
# never given (NULL, which the trigger does not check), or the row it points
# to was inserted by the import's own transaction just before (no other
# transaction sees it, so none can delete it). A trigger on one of these tables that
# is not listed here turns the fast path off (:func:`_only_listed_triggers`),
# and tests/data/test_pg_import_paths.py fails until it is added here.
FOREIGN_KEYS: dict[str, dict[str, str]] = {
    "rating": {
        "rater_id": "locked",
        "item_id": "locked",
        "scale_id": "locked",
        "block_id": "null",
    },
    "ratingchange": {"rating_id": "inserted by the import", "actor_id": "null"},
    "llmscore": {"item_id": "locked", "scale_id": "locked"},
}


def lock_referenced(driver, table: str, ids: Iterable[int]) -> set[int]:
    """PostgreSQL: lock the rows of ``table`` with these ids FOR KEY SHARE; the ids not found.

    One statement for all the ids, taking the lock the foreign-key trigger
    takes row by row (``SELECT 1 FROM ONLY t WHERE id = $1 FOR KEY SHARE``):
    until the transaction ends no other one can delete these rows or change
    their id, so rows inserted pointing to them stay valid.
    """
    from psycopg.sql import SQL, Identifier  # only on PostgreSQL

    wanted = sorted(set(ids))
    if not wanted:
        return set()
    with driver.cursor() as cursor:
        # In id order, as concurrent imports then lock in the same order.
        cursor.execute(
            SQL("SELECT id FROM ONLY {} WHERE id = ANY(%s) ORDER BY id FOR KEY SHARE").format(
                Identifier(table)
            ),
            (wanted,),
        )
        found = {row[0] for row in cursor.fetchall()}
    return set(wanted) - found


def check_references(
    driver,
    problems: Problems,
    references: Iterable[tuple[str, str, set[int], dict[int, str]]],
    first_line: Callable[[str, int], int],
) -> None:
    """PostgreSQL: lock the rows the new rows point to; raise if one is gone.

    ``references``: (table, column, ids, name by id) per foreign key;
    ``first_line(table, id)``: the first line of the file holding the id.
    The importer found every id by its name in this transaction, so a missing
    one was deleted by another since; nothing is stored then
    (:class:`~annotator.data.readers.InputError`, the caller rolls back).
    """
    for table, column, ids, names in references:
        for missing in sorted(lock_referenced(driver, table, ids)):
            problems.add(
                first_line(table, missing),
                column,
                f"{names.get(missing, missing)!r} (id {missing} of table {table}) is no longer "
                "in the database: deleted while the file was imported? Nothing was imported",
            )
    problems.raise_if_any()


def _only_listed_triggers(cursor, tables: list[str]) -> bool:
    """Whether every trigger or rule that an INSERT into ``tables`` fires is the
    internal check of a foreign key listed in :data:`FOREIGN_KEYS`."""
    cursor.execute(
        "SELECT c.relname, t.tgisinternal AND k.contype = 'f' AND k.conrelid = t.tgrelid, "
        "  (SELECT array_agg(a.attname::text) FROM pg_attribute a "
        "   WHERE a.attrelid = k.conrelid AND a.attnum = ANY(k.conkey)) "
        "FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "LEFT JOIN pg_constraint k ON k.oid = t.tgconstraint "
        # Triggers on INSERT (bit 2 of tgtype); a referenced table's own
        # triggers (ON DELETE, ON UPDATE) do not fire on inserts.
        "WHERE t.tgrelid = ANY(%s::regclass[]) AND t.tgtype & 4 <> 0 "
        "UNION ALL SELECT c.relname, false, NULL FROM pg_rewrite r "
        "JOIN pg_class c ON c.oid = r.ev_class WHERE r.ev_class = ANY(%s::regclass[])",
        (tables, tables),
    )
    for table, is_foreign_key, columns in cursor.fetchall():
        if not is_foreign_key or len(columns) != 1:
            return False
        if columns[0] not in FOREIGN_KEYS.get(table, {}):
            return False
    return True


@contextmanager
def foreign_key_triggers_off(driver, tables: list[str]) -> Iterator[str]:
    """PostgreSQL: run the block's inserts into ``tables`` without the per-row
    foreign-key triggers, where the database allows it; yields which way the
    block's rows are checked: ``SET_BASED`` or ``ROW_BY_ROW``.

    A foreign key's trigger runs a lookup per inserted row (2.4 s of the
    3.6 s insert of 180,000 ratings). ``session_replication_role = replica``
    skips the triggers, as ``pg_restore --disable-triggers`` does; the caller
    has then already done each check in one statement per key
    (:func:`lock_referenced`, see :data:`FOREIGN_KEYS`). The setting is
    ``SET LOCAL`` and set back to ``origin`` right after the block, also when
    it fails: nothing else in the transaction runs without the triggers. Setting it needs a superuser or, on
    PostgreSQL 15 and later, ``GRANT SET ON PARAMETER
    session_replication_role`` (docs/deploy.md); without it the block runs
    with the triggers on, as before. The fast path is also not taken if one
    of ``tables`` has a trigger or rule that is not a listed foreign key's
    (replica mode would silently skip it), or if the session is not in the
    ``origin`` role already.
    """
    from psycopg import errors  # only on PostgreSQL

    with driver.cursor() as cursor:
        # The savepoint is around the SET alone: the block runs in the
        # transaction itself. (In a subtransaction, each foreign-key trigger's
        # lock of a row already locked by lock_referenced made a MultiXact:
        # the fallback took 12 s instead of 9 s for 180,000 ratings.)
        cursor.execute("SAVEPOINT annotator_replica_role")
        way = ROW_BY_ROW
        try:
            cursor.execute("SELECT current_setting('session_replication_role')")
            if cursor.fetchone()[0] == "origin" and _only_listed_triggers(cursor, tables):
                cursor.execute("SET LOCAL session_replication_role = replica")
                way = SET_BASED
        except errors.InsufficientPrivilege:
            cursor.execute("ROLLBACK TO SAVEPOINT annotator_replica_role")
        # A SET LOCAL lasts past the release, to the end of the transaction.
        cursor.execute("RELEASE SAVEPOINT annotator_replica_role")
        try:
            yield way
        finally:
            if way == SET_BASED:
                # After a failed statement the transaction takes no more: it
                # can only be rolled back, which undoes the setting as well
                # (or rolled back to a savepoint from before it, which does too).
                with suppress(errors.InFailedSqlTransaction):
                    cursor.execute("SET LOCAL session_replication_role = origin")
