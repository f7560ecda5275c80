"""annotator: rating studies with humans and LLM judges."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from flask import Flask

__all__ = ["create_app"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def _resource_dir(name: str) -> str:
    """Return the folder of templates or static files.

    In a wheel they are copied into the package; in a source checkout (and an
    editable install) they stay at the top level of the repository.
    """
    inside = _PACKAGE_DIR / name
    if inside.is_dir():
        return str(inside)
    return str(_PACKAGE_DIR.parent / name)


def _secret_key(instance_path: str) -> str:
    """Read the secret key from the instance folder, generating it once."""
    path = Path(instance_path) / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


def create_app(test_config: dict | None = None) -> Flask:
    """Create and configure the annotator application.

    Settings come, later ones winning, from the defaults below, the instance
    folder's ``config.py`` and ``ANNOTATOR_``-prefixed environment variables
    (``ANNOTATOR_DATABASE_URL`` sets ``DATABASE_URL``); ``test_config``
    replaces the last two. The instance folder is ``ANNOTATOR_INSTANCE_PATH``
    when set: it must be known before ``Flask()`` is built, because Flask
    reads ``config.py`` from the folder it was given.
    """
    instance_path = os.environ.get("ANNOTATOR_INSTANCE_PATH")
    app = Flask(
        __name__,
        instance_path=os.path.abspath(instance_path) if instance_path else None,
        instance_relative_config=True,
        template_folder=_resource_dir("templates"),
        static_folder=_resource_dir("static"),
    )
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)

    app.config.from_mapping(
        DATABASE_URL="sqlite:///" + str(Path(app.instance_path) / "annotator.sqlite"),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SAMESITE="Lax",
        WTF_CSRF_TIME_LIMIT=None,
        RATELIMIT_STORAGE_URI="memory://",
        RATELIMIT_HEADERS_ENABLED=True,
        # Failed logins only: per account and address, and per address alone.
        LOGIN_RATE_LIMIT="10 per minute",
        LOGIN_ADDRESS_RATE_LIMIT="100 per minute",
        BASE_URL=None,
    )
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
        app.config.from_prefixed_env("ANNOTATOR")
    else:
        app.config.from_mapping(test_config)
    if app.config.get("SECRET_KEY"):
        # from_prefixed_env parses values as JSON: a numeric key arrives as int.
        app.config["SECRET_KEY"] = str(app.config["SECRET_KEY"])
    else:
        app.config["SECRET_KEY"] = _secret_key(app.instance_path)

    from . import db

    db.init_app(app)

    from . import clock

    clock.init_app(app)

    from .extensions import init_extensions

    init_extensions(app)

    from .lead import bp as lead_bp
    from .web import errors, templating
    from .web.auth import bp as auth_bp
    from .web.rate import bp as rate_bp

    app.register_blueprint(auth_bp)
    app.register_blueprint(lead_bp)
    app.register_blueprint(rate_bp)
    errors.init_app(app)
    templating.init_app(app)

    from .cli import register_commands

    register_commands(app)
    return app
