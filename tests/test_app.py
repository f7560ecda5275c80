"""The app factory and its configuration."""

import pytest

from annotator import create_app
from annotator.db import get_engine


def test_secret_key_is_generated_once_into_the_instance_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path / "inst"))
    monkeypatch.delenv("ANNOTATOR_SECRET_KEY", raising=False)
    monkeypatch.delenv("ANNOTATOR_DATABASE_URL", raising=False)
    first = create_app()
    second = create_app()
    key_file = tmp_path / "inst" / "secret_key"
    assert key_file.read_text().strip() == first.config["SECRET_KEY"]
    assert first.config["SECRET_KEY"] == second.config["SECRET_KEY"]
    assert len(first.config["SECRET_KEY"]) >= 32
    assert first.config["DATABASE_URL"] == f"sqlite:///{tmp_path / 'inst' / 'annotator.sqlite'}"
    for app in (first, second):
        get_engine(app).dispose()


def test_environment_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("ANNOTATOR_SECRET_KEY", "from-env")
    monkeypatch.setenv("ANNOTATOR_DATABASE_URL", f"sqlite:///{tmp_path / 'other.sqlite'}")
    app = create_app()
    assert app.config["SECRET_KEY"] == "from-env"
    assert app.config["DATABASE_URL"].endswith("other.sqlite")
    assert not (tmp_path / "secret_key").exists()
    get_engine(app).dispose()


def test_database_settings(app):
    engine = get_engine(app)
    if engine.dialect.name == "postgresql":
        assert engine.driver == "psycopg"
        return
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_front_page_sends_anonymous_users_to_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/login")


def test_instance_path_from_the_environment_reads_its_config_file(tmp_path, monkeypatch):
    instance = tmp_path / "elsewhere"
    instance.mkdir()
    (instance / "config.py").write_text(
        "BASE_URL = 'https://rate.example.org'\nSECRET_KEY = 'from-config-file'\n"
    )
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(instance))
    for name in ("ANNOTATOR_SECRET_KEY", "ANNOTATOR_DATABASE_URL", "ANNOTATOR_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    app = create_app()
    assert app.instance_path == str(instance)
    assert app.config["BASE_URL"] == "https://rate.example.org"
    assert app.config["SECRET_KEY"] == "from-config-file"
    assert app.config["DATABASE_URL"] == f"sqlite:///{instance / 'annotator.sqlite'}"
    get_engine(app).dispose()


def test_environment_wins_over_the_config_file(tmp_path, monkeypatch):
    (tmp_path / "config.py").write_text("BASE_URL = 'https://from-file.example.org'\n")
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("ANNOTATOR_BASE_URL", "https://from-env.example.org")
    monkeypatch.setenv("ANNOTATOR_SECRET_KEY", "12345")
    monkeypatch.delenv("ANNOTATOR_DATABASE_URL", raising=False)
    app = create_app()
    assert app.config["BASE_URL"] == "https://from-env.example.org"
    # A key that looks like a number stays the string it was given.
    assert app.config["SECRET_KEY"] == "12345"
    get_engine(app).dispose()


def test_building_an_app_leaves_the_environment_alone(make_app):
    import os

    before = dict(os.environ)
    make_app()
    assert dict(os.environ) == before


@pytest.mark.postgresql_only
def test_a_postgresql_connection_the_server_ended_is_replaced_without_a_ping_per_request(
    lead_client, app, server_engine, monkeypatch
):
    # pool_pre_ping cost a round trip per request; its replacement pings only a
    # connection the server has spoken on (annotator.db._check_on_checkout).
    if server_engine is None:
        pytest.skip("PostgreSQL only (ANNOTATOR_TEST_DATABASE_URL)")
    import time

    from sqlalchemy import event, text

    engine = get_engine(app)
    pings: list[int] = []
    ping = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping", lambda c: pings.append(1) or ping(c))
    pids: set[int] = set()
    event.listen(engine, "checkout", lambda c, record, proxy: pids.add(c.info.backend_pid))
    for _ in range(3):
        assert lead_client.get("/lead/").status_code == 200
    assert pids and pings == []
    # What a PostgreSQL restart does to the pool's connections.
    with server_engine.connect() as admin:
        for pid in pids:
            assert admin.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
        deadline = time.monotonic() + 10
        while admin.execute(
            text("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(:p)"), {"p": list(pids)}
        ).scalar():
            assert time.monotonic() < deadline
            time.sleep(0.05)
    ended = set(pids)
    pids.clear()
    assert lead_client.get("/lead/").status_code == 200
    assert pings and pids and not pids & ended
