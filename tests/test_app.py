"""The app factory and its configuration."""

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
