"""Fixtures: an app on an isolated database per test, its client and CLI runner.

Tests run on SQLite by default. With ANNOTATOR_TEST_DATABASE_URL set to a
PostgreSQL URL, each test gets its own schema in that database instead.
"""

from __future__ import annotations

import os
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

from annotator import create_app
from annotator.clock import FrozenClock
from annotator.db import get_engine, normalise_url
from annotator.words import plural

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# The study files and import files the tests share.
DATA = Path(__file__).resolve().parent / "data"
LEAD_EMAIL = "lead@example.org"
LEAD_PASSWORD = "lead-password-1"
SERVER_URL = os.environ.get("ANNOTATOR_TEST_DATABASE_URL")
# One iteration of PBKDF2 instead of scrypt (annotator/passwords.py): the tests create
# hundreds of leads, and scrypt costs some 0.6 s a hash. The production default is
# tested in tests/test_passwords.py.
CHEAP_PASSWORD_HASH = "pbkdf2:sha256:1"


def pytest_report_header(config):
    return f"annotator test database: {SERVER_URL or 'SQLite (a file per test)'}"


@pytest.fixture(autouse=True, scope="session")
def cheap_password_hash():
    """The cheap hash for every app a test starts in a process of its own (``annotator``
    commands and servers read ANNOTATOR_PASSWORD_HASH_METHOD); ``make_app`` sets it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANNOTATOR_PASSWORD_HASH_METHOD", CHEAP_PASSWORD_HASH)
        yield


@pytest.fixture(scope="session")
def server_engine():
    if not SERVER_URL:
        yield None
        return
    engine = create_engine(normalise_url(SERVER_URL), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.execute(text("select 1"))
    except Exception as exc:  # a configured server that cannot be reached is a failure
        pytest.exit(f"ANNOTATOR_TEST_DATABASE_URL={SERVER_URL} cannot be reached: {exc}", 3)
    yield engine
    engine.dispose()


@pytest.fixture
def database_url(tmp_path, server_engine):
    if server_engine is None:
        yield f"sqlite:///{tmp_path / 'annotator.sqlite'}"
        return
    schema = "t_" + uuid.uuid4().hex[:16]
    with server_engine.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = server_engine.url.update_query_dict({"options": f"-csearch_path={schema}"})
    yield url.render_as_string(hide_password=False)
    with server_engine.connect() as connection:
        connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def clock():
    return FrozenClock(datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC))


@pytest.fixture
def make_app(database_url, tmp_path, clock, monkeypatch):
    """Build an app; tests that need other settings pass them."""
    apps = []
    # monkeypatch puts back whatever the variable was once the test is over.
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path / "instance"))

    def factory(create_schema: bool = True, **config):
        settings = {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "SECRET_KEY": "test-secret",
            "WTF_CSRF_ENABLED": False,
            "RATELIMIT_ENABLED": False,
            "CLOCK": clock,
            # Jobs (annotator/jobs: reports, exports, the dashboard's recomputation)
            # run at once in the request that asks for them, in the test's thread; no
            # worker outlives its test. tests/jobs/ run them through real workers too.
            "JOBS_IMMEDIATE": True,
            "PASSWORD_HASH_METHOD": CHEAP_PASSWORD_HASH,
        }
        settings.update(config)
        app = create_app(settings)
        if create_schema:
            SQLModel.metadata.create_all(get_engine(app))
        apps.append(app)
        return app

    yield factory
    for app in apps:
        get_engine(app).dispose()


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def db_session(app):
    """A session for checking what the app stored (the test commits nothing)."""
    from sqlmodel import Session

    with Session(get_engine(app)) as session:
        yield session


@pytest.fixture
def lead_client(app):
    """A client logged in as a lead (its own client: ``client`` stays free for a rater)."""
    from annotator.db import session_scope
    from annotator.study.studies import create_lead

    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    client = app.test_client()
    response = client.post("/login", data={"username": LEAD_EMAIL, "password": LEAD_PASSWORD})
    assert response.status_code == 302 and response.headers["Location"].endswith("/lead/")
    return client


@pytest.fixture
def small_study(runner) -> str:
    """The study of tests/data/small-study.toml with its items and human ratings."""
    for args in (
        ["study", "create", DATA / "small-study.toml"],
        ["items", "import", "small", DATA / "items.csv"],
        ["ratings", "import", "small", DATA / "ratings.csv"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return "small"


@pytest.fixture
def rubric_study(runner, tmp_path) -> str:
    """The small study with the criteria of tests/data/studies.py's CRITERIA_TOML
    (fluency, coherence; relevance on sts-b only), slug ``rubric``, its items imported."""
    from tests.data.studies import CRITERIA_TOML

    toml = (DATA / "small-study.toml").read_text(encoding="utf-8") + CRITERIA_TOML
    path = tmp_path / "rubric.toml"
    path.write_text(toml.replace('slug = "small"', 'slug = "rubric"'), encoding="utf-8")
    for args in (["study", "create", path], ["items", "import", "rubric", DATA / "items.csv"]):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return "rubric"


@pytest.fixture
def fake_endpoint(monkeypatch):
    """``fake_endpoint(reply=..., delay=...)``: a fake OpenAI-compatible endpoint on
    127.0.0.1 (tests/fake_openai.py), stopped after the test."""
    from tests.fake_openai import start_endpoint

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    servers = []

    def start(*args, **kwargs):
        endpoint, server, thread = start_endpoint(*args, **kwargs)
        servers.append((server, thread))
        return endpoint

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def session(app):
    """A session for tests that build data themselves and commit it."""
    from sqlmodel import Session

    with Session(get_engine(app)) as session:
        yield session


@pytest.fixture
def make_study(session):
    """``make_study(**spec)``: a committed generated study (see SyntheticSpec)."""
    from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
    from annotator.services.dashboards import clear_dashboard_cache

    clear_dashboard_cache()

    def factory(**spec):
        study = build_synthetic_study(session, SyntheticSpec(**spec))
        session.commit()
        return study

    yield factory
    clear_dashboard_cache()


# The PostgreSQL pass runs the tests that use the database, chosen by their fixtures.
# ``server_engine`` is the one fixture that reads ANNOTATOR_TEST_DATABASE_URL:
# ``database_url`` and so ``make_app``, ``app``, ``client``, ``runner``, ``session``...
# depend on it, and ``item.fixturenames`` is a test's whole fixture closure, so a new
# database test (or fixture) is in by construction. A test must not read the URL
# otherwise (the check below catches a module that holds it); a test that starts a
# server or a subprocess gives it ``database_url``. The SQLite pass runs every test.
DATABASE_FIXTURE = "server_engine"


def uses_database(item) -> bool:
    """Whether ``item`` reaches the test database (through its fixtures)."""
    return DATABASE_FIXTURE in getattr(item, "fixturenames", ()) or bool(
        item.get_closest_marker("postgresql_only")
    )


def _holds_the_url(module) -> bool:
    return any(isinstance(value, str) and value == SERVER_URL for value in vars(module).values())


def pytest_collection_modifyitems(config, items):
    if not SERVER_URL:
        return
    selected, deselected = [], []
    for item in items:
        (selected if uses_database(item) else deselected).append(item)
    holders = [i.nodeid for i in deselected if _holds_the_url(getattr(i, "module", None) or i)]
    if holders:
        raise pytest.UsageError(
            "these tests hold ANNOTATOR_TEST_DATABASE_URL but use no database fixture, so "
            f"the PostgreSQL pass would leave them out: {', '.join(holders[:5])}; take the "
            f"database from the {DATABASE_FIXTURE} or database_url fixture"
        )
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
    counts = (len(selected), len(deselected))
    if hasattr(config, "workeroutput"):  # a pytest-xdist worker: its controller reports
        config.workeroutput["database_selection"] = counts
    else:
        config.stash[_SELECTION] = counts


_SELECTION = pytest.StashKey[tuple[int, int]]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist's controller: every worker collected the same tests; keep one's count."""
    counts = getattr(node, "workeroutput", {}).get("database_selection")
    if counts:
        node.config.stash[_SELECTION] = tuple(counts)


def _selection_line(config) -> str | None:
    if _SELECTION not in config.stash:
        return None
    selected, deselected = config.stash[_SELECTION]
    return (
        f"PostgreSQL pass: {selected} tests use the database (their fixtures include "
        f"{DATABASE_FIXTURE}); {deselected} that do not were deselected (the SQLite pass "
        "runs them)"
    )


# In CI (ANNOTATOR_REQUIRE_ALL_TESTS=1) a skipped test fails the run: the
# PostgreSQL and browser tests must really run there.
_skipped: list[str] = []


def pytest_runtest_logreport(report):
    # A PostgreSQL-only test skips on the SQLite pass; CI's PostgreSQL pass
    # (ANNOTATOR_TEST_DATABASE_URL set) must run it, and a skip there counts.
    if report.skipped and not ("postgresql_only" in report.keywords and not SERVER_URL):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("ANNOTATOR_REQUIRE_ALL_TESTS") and _skipped and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    line = _selection_line(terminalreporter.config)
    if line:
        terminalreporter.write_line(line)
    if os.environ.get("ANNOTATOR_REQUIRE_ALL_TESTS") and _skipped:
        terminalreporter.write_line(
            f"FAILED: {plural(len(_skipped), 'test')} skipped where all must run: "
            + ", ".join(_skipped[:10]),
            red=True,
        )


def download_report(client, slug: str, query: str = ""):
    """The report of study ``slug`` as a lead downloads it: "Download report" (a POST
    that starts or joins the report job), the job's page, then its file. Test apps run
    jobs at once (JOBS_IMMEDIATE), so the job is done when its page is shown."""
    url = f"/lead/studies/{slug}/report" + (f"?{query}" if query else "")
    started = client.post(url)
    assert started.status_code == 302, started.get_data(as_text=True)
    job_page = started.headers["Location"]
    assert "/jobs/" in job_page and "done" in client.get(job_page).get_data(as_text=True)
    return client.get(f"{job_page}/file")


@pytest.fixture
def fresh_instance(tmp_path, monkeypatch, database_url):
    """(folder, load): a working folder holding a copy of examples/, with a new instance
    folder and database in the environment; ``load()`` builds the app from them."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path / "instance"))
    monkeypatch.setenv("ANNOTATOR_DATABASE_URL", database_url)
    apps = []

    def load():
        apps.append(create_app())
        return apps[-1]

    yield tmp_path, load
    for app in apps:
        get_engine(app).dispose()
