"""PostgreSQL imports with the foreign-key triggers off, and their fallback.

The ratings and LLM-score imports check and lock the rows their new rows
point to in one statement per key, then insert with
``session_replication_role = replica`` where the role may set it
(annotator/data/_bulk.py: foreign_key_triggers_off); a role that may not
takes the triggers' row-by-row checks. Both must store the same rows, and
the locks must hold a concurrent delete off as the triggers' locks do.
"""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, inspect, make_url, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, SQLModel, select

from annotator.data._bulk import ROW_BY_ROW_NOTE
from annotator.data.foreign_keys import FOREIGN_KEYS, _only_listed_triggers
from annotator.db import get_engine
from annotator.models import Study
from tests.conftest import DATA

pytestmark = pytest.mark.postgresql_only


@pytest.fixture(autouse=True)
def _postgresql(server_engine):
    # Per test, not for the module: each test's skip then carries the
    # postgresql_only mark that CI's SQLite pass accepts.
    if server_engine is None:
        pytest.skip("about PostgreSQL (ANNOTATOR_TEST_DATABASE_URL) alone")


# The rows the imports store, ids and times included: both schemas are built
# the same way, by the same frozen clock.
DUMPS = {
    "rating": 'SELECT r.*, u.rater_code FROM rating r JOIN "user" u ON u.id = r.rater_id '
    "ORDER BY r.id",
    "ratingchange": "SELECT * FROM ratingchange ORDER BY id",
    "llmscore": "SELECT * FROM llmscore ORDER BY id",
    "user": 'SELECT id, rater_code, role, source, study_id FROM "user" ORDER BY id',
    "demographics": "SELECT user_id, answers FROM demographics ORDER BY user_id",
}


@pytest.fixture
def schemas(server_engine):
    """``schemas()``: a new schema's URL (as the superuser of the test server),
    dropped after the test."""
    made = []

    def make() -> str:
        name = "t_" + uuid.uuid4().hex[:16]
        with server_engine.connect() as connection:
            connection.execute(text(f'CREATE SCHEMA "{name}"'))
        made.append(name)
        url = server_engine.url.update_query_dict({"options": f"-csearch_path={name}"})
        return url.render_as_string(hide_password=False)

    yield make
    with server_engine.connect() as connection:
        for name in made:
            connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))


@pytest.fixture
def restricted_role(server_engine):
    """``restricted_role(url)``: the URL of a new login role, not a superuser and
    without any grant on session_replication_role, given every right on the
    tables of ``url``'s schema (dropped after the test)."""
    roles = []

    def make(url: str) -> str:
        role = "r_" + uuid.uuid4().hex[:12]
        schema = make_url(url).query["options"].split("search_path=")[1]
        with server_engine.connect() as connection:
            connection.execute(text(f"CREATE ROLE {role} LOGIN"))
            roles.append(role)
            for grant in (
                f'GRANT USAGE ON SCHEMA "{schema}" TO {role}',
                f'GRANT ALL ON ALL TABLES IN SCHEMA "{schema}" TO {role}',
                f'GRANT ALL ON ALL SEQUENCES IN SCHEMA "{schema}" TO {role}',
            ):
                connection.execute(text(grant))
        return make_url(url).set(username=role, password=None).render_as_string(hide_password=False)

    yield make
    with server_engine.connect() as connection:
        for role in roles:
            connection.execute(text(f"DROP OWNED BY {role}"))
            connection.execute(text(f"DROP ROLE {role}"))


def _cli(app, *args) -> str:
    result = app.test_cli_runner().invoke(args=[str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _study(make_app, url: str):
    """A schema with the small study and its items, made as the superuser."""
    app = make_app(DATABASE_URL=url)
    _cli(app, "study", "create", DATA / "small-study.toml")
    _cli(app, "items", "import", "small", DATA / "items.csv")
    return app


def _changed_ratings(tmp_path):
    """The small study's ratings with every other score changed (a re-import)."""
    lines = (DATA / "ratings.csv").read_text().splitlines()
    out = [lines[0]]
    for number, line in enumerate(lines[1:]):
        cells = line.split(",")
        if number % 2 == 0:
            cells[3] = "1" if cells[3] != "1" else "2"
        out.append(",".join(cells))
    path = tmp_path / "ratings-changed.csv"
    path.write_text("\n".join(out) + "\n")
    return path


def _import_all(app, tmp_path) -> list[str]:
    """Import ratings, the changed ratings and LLM scores; the CLI's outputs."""
    return [
        _cli(app, "ratings", "import", "small", DATA / "ratings.csv"),
        _cli(app, "ratings", "import", "small", _changed_ratings(tmp_path)),
        _cli(app, "llm-scores", "import", "small", DATA / "llm_scores.csv"),
        _cli(app, "llm-scores", "import", "small", DATA / "llm_scores.csv"),
    ]


def _dump(app) -> dict[str, list]:
    with get_engine(app).connect() as connection:
        return {name: connection.execute(text(sql)).all() for name, sql in DUMPS.items()}


def test_both_paths_store_the_same_rows(make_app, schemas, restricted_role, tmp_path):
    fast_app = _study(make_app, schemas())
    slow_url = schemas()
    _study(make_app, slow_url)
    slow_app = make_app(create_schema=False, DATABASE_URL=restricted_role(slow_url))

    fast_outputs = _import_all(fast_app, tmp_path)
    slow_outputs = _import_all(slow_app, tmp_path)

    # The superuser took the fast path; the role without the grant the fallback,
    # and the CLI says so.
    assert not any(ROW_BY_ROW_NOTE in output for output in fast_outputs)
    assert ROW_BY_ROW_NOTE in slow_outputs[0] and ROW_BY_ROW_NOTE in slow_outputs[2]
    for outputs in (fast_outputs, slow_outputs):
        assert "12 ratings added" in outputs[0] and "6 updated, 6 already present" in outputs[1]
        assert "7 LLM scores added" in outputs[2] and "0 LLM scores added" in outputs[3]
        assert "7 already present" in outputs[3]
    fast, slow = _dump(fast_app), _dump(slow_app)
    assert fast == slow
    assert len(fast["rating"]) == 12
    # A first value for each rating, then one row per changed value.
    changed = [row for row in fast["ratingchange"] if row.previous_value is not None]
    assert len(fast["ratingchange"]) == 12 + len(changed) and len(changed) == 6
    assert len(fast["llmscore"]) == 7


def _server_version(app) -> int:
    with get_engine(app).connect() as connection:
        return connection.execute(text("SHOW server_version_num")).scalar_one()


def test_a_role_granted_the_setting_takes_the_fast_path(
    make_app, schemas, restricted_role, server_engine
):
    url = schemas()
    owner_app = _study(make_app, url)
    if int(_server_version(owner_app)) < 150000:
        pytest.fail("GRANT SET ON PARAMETER needs PostgreSQL 15 (the CI server's version)")
    role_url = restricted_role(url)
    role = make_url(role_url).username
    with server_engine.connect() as connection:
        connection.execute(text(f"GRANT SET ON PARAMETER session_replication_role TO {role}"))
    try:
        app = make_app(create_schema=False, DATABASE_URL=role_url)
        output = _cli(app, "ratings", "import", "small", DATA / "ratings.csv")
        assert ROW_BY_ROW_NOTE not in output and "12 ratings added" in output
        output = _cli(app, "llm-scores", "import", "small", DATA / "llm_scores.csv")
        assert ROW_BY_ROW_NOTE not in output and "7 LLM scores added" in output
    finally:
        with server_engine.connect() as connection:
            connection.execute(
                text(f"REVOKE SET ON PARAMETER session_replication_role FROM {role}")
            )


@pytest.mark.parametrize(
    ("command", "module", "path"),
    [
        ("ratings", "rating_import", "ratings.csv"),
        ("llm-scores", "importers", "llm_scores.csv"),
    ],
)
def test_an_item_gone_before_the_insert_stores_nothing(
    app, runner, db_session, monkeypatch, tmp_path, command, module, path
):
    """An id found by name but no longer in the table (deleted by another
    transaction in between, here faked) stops the import before the insert."""
    import importlib

    _cli(app, "study", "create", DATA / "small-study.toml")
    _cli(app, "items", "import", "small", DATA / "items.csv")
    imported = importlib.import_module(f"annotator.data.{module}")
    real = imported._item_ids
    monkeypatch.setattr(imported, "_item_ids", lambda s, study: {**real(s, study), "gone": 10**9})
    lines = (DATA / path).read_text().splitlines()
    file = tmp_path / path
    file.write_text("\n".join([*lines, lines[1].replace("s1,", "gone,", 1)]) + "\n")

    result = runner.invoke(args=[command, "import", "small", str(file)])

    assert result.exit_code != 0
    assert (
        f"{file}: line {len(lines) + 1}, column 'item_id': 'gone' (id 1000000000 of table item) "
        "is no longer in the database" in result.output
    )
    with get_engine(app).connect() as connection:
        for table in ("rating", "ratingchange", "llmscore", "demographics"):
            assert connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == 0
        assert (
            connection.execute(
                text("SELECT count(*) FROM \"user\" WHERE role = 'rater'")
            ).scalar_one()
            == 0
        )


@pytest.mark.parametrize("restricted", [False, True], ids=["fast path", "fallback"])
@pytest.mark.parametrize(
    ("kind", "path", "table", "where"),
    [
        ("ratings", "ratings.csv", "item", "external_id = 't1'"),
        ("ratings", "ratings.csv", '"user"', "rater_code = 'ann'"),
        ("ratings", "ratings.csv", "scale", "name = '0-100'"),
        ("llm-scores", "llm_scores.csv", "item", "external_id = 's3'"),
        ("llm-scores", "llm_scores.csv", "scale", "name = '0-5'"),
    ],
)
def test_a_referenced_row_cannot_be_deleted_before_the_commit(
    make_app, schemas, restricted_role, tmp_path, restricted, kind, path, table, where
):
    """While the import's transaction is open, another one's DELETE of a row a new
    row points to waits for it (here: runs into its lock_timeout), as it does
    for the lock the foreign-key trigger takes; without the lock it would go
    through and leave the new rows pointing nowhere once both commit."""
    from annotator.data.importers import import_llm_scores, import_ratings

    url = schemas()
    owner_app = _study(make_app, url)
    if table == '"user"':
        # The rater must be there before the import (one it creates is not
        # visible to the other transaction): a first file of ann's ratings.
        first = tmp_path / "first.csv"
        first.write_text("\n".join((DATA / path).read_text().splitlines()[:2]) + "\n")
        _cli(owner_app, "ratings", "import", "small", first)
    app = (
        make_app(create_schema=False, DATABASE_URL=restricted_role(url))
        if restricted
        else owner_app
    )
    importer = import_ratings if kind == "ratings" else import_llm_scores
    deleter = create_engine(url)
    try:
        with app.app_context(), Session(get_engine(app)) as session:
            study = session.exec(select(Study).where(Study.slug == "small")).one()
            report = importer(session, study, DATA / path)
            assert report.created > 0
            assert report.foreign_key_checks == ("row-by-row" if restricted else "set-based")
            with deleter.connect() as other:
                other.execute(text("SET lock_timeout = '500ms'"))
                with pytest.raises(OperationalError, match="lock timeout"):
                    other.execute(text(f"DELETE FROM {table} WHERE {where}"))
            session.commit()
        # Committed, the new rows hold the row: its delete fails on a foreign key.
        with deleter.connect() as other, pytest.raises(IntegrityError, match="foreign key"):
            other.execute(text(f"DELETE FROM {table} WHERE {where}"))
    finally:
        deleter.dispose()


def test_the_migrated_schema_has_only_the_listed_foreign_key_triggers(make_app):
    """A trigger, rule or foreign key added to ``rating``, ``ratingchange`` or
    ``llmscore`` would turn the fast path off (or, unlisted, be skipped by it):
    this fails until FOREIGN_KEYS in annotator/data/_bulk.py says how the
    import checks it."""
    from annotator import migrate

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine)
    with engine.connect() as connection:
        cursor = connection.connection.driver_connection.cursor()
        assert _only_listed_triggers(cursor, list(FOREIGN_KEYS))
        found = {
            table: {
                column
                for key in inspect(connection).get_foreign_keys(table)
                for column in key["constrained_columns"]
            }
            for table in FOREIGN_KEYS
        }
    assert found == {table: set(columns) for table, columns in FOREIGN_KEYS.items()}
    models = {
        table: {c.parent.name for c in SQLModel.metadata.tables[table].foreign_keys}
        for table in FOREIGN_KEYS
    }
    assert models == found


def test_a_trigger_of_its_own_turns_the_fast_path_off(app, db_session):
    """An unlisted trigger on ``rating`` still fires: the import takes the
    row-by-row path instead of skipping it."""
    _cli(app, "study", "create", DATA / "small-study.toml")
    _cli(app, "items", "import", "small", DATA / "items.csv")
    with get_engine(app).begin() as connection:
        for statement in (
            "CREATE TABLE seen (n integer)",
            "CREATE FUNCTION count_rating() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN INSERT INTO seen VALUES (1); RETURN NEW; END $$",
            "CREATE TRIGGER count_rating AFTER INSERT ON rating "
            "FOR EACH ROW EXECUTE FUNCTION count_rating()",
        ):
            connection.execute(text(statement))
    output = _cli(app, "ratings", "import", "small", DATA / "ratings.csv")
    assert ROW_BY_ROW_NOTE in output
    with get_engine(app).connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM seen")).scalar_one() == 12


def test_a_failed_block_leaves_the_triggers_on(app):
    """The setting is set back when the block fails, so the transaction's next
    statements are checked by the triggers again; a failed statement's own
    error is the one raised."""
    import psycopg

    from annotator.data.foreign_keys import foreign_key_triggers_off

    with get_engine(app).connect() as connection:
        driver = connection.connection.driver_connection
        with (  # noqa: PT012
            pytest.raises(RuntimeError, match="in the block"),
            foreign_key_triggers_off(driver, ["rating"]) as way,
        ):
            assert way == "set-based"
            assert _setting(driver) == "replica"
            raise RuntimeError("in the block")
        assert _setting(driver) == "origin"
        # The foreign key is checked again: a rating of a user that is not there fails.
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            driver.execute(
                "INSERT INTO rating (rater_id, item_id, scale_id, value, is_repeat, "
                "is_attention_check, submitted_at, source, study_version) "
                "VALUES (999, 999, 999, 1, false, false, now(), 'import', 1)"
            )
        driver.rollback()
        with (  # noqa: PT012
            pytest.raises(psycopg.errors.DivisionByZero),
            foreign_key_triggers_off(driver, ["rating"]),
        ):
            driver.execute("SELECT 1 / 0")
        driver.rollback()
        assert _setting(driver) == "origin"


def _setting(driver) -> str:
    return driver.execute("SHOW session_replication_role").fetchone()[0]


def test_an_import_committed_at_the_same_moment_stops_this_one_cleanly(app, runner, monkeypatch):
    """Another import committed between the copy and the history with the very same
    time (faked: one more rating found) stops this one with a message, storing
    nothing, rather than a traceback or mixed histories."""
    import annotator.data.rating_import as rating_import

    _cli(app, "study", "create", DATA / "small-study.toml")
    _cli(app, "items", "import", "small", DATA / "items.csv")
    real = rating_import._first_values
    monkeypatch.setattr(rating_import, "_first_values", lambda *a: real(*a) + 1)

    result = runner.invoke(args=["ratings", "import", "small", str(DATA / "ratings.csv")])

    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "another import committed at the same moment; import the file again" in result.output
    assert f"{DATA / 'ratings.csv'}:" in result.output
    with get_engine(app).connect() as connection:
        for table in ("rating", "ratingchange"):
            assert connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == 0
