"""annotator: rating studies with humans and LLM judges."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from flask import Flask

__all__ = ["create_app", "prepare_to_serve"]

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


_PROXY_HEADERS = ("x_for", "x_proto", "x_host", "x_port", "x_prefix")


def _proxy_fix(app: Flask) -> None:
    """Mark cookies Secure over HTTPS; trust the proxy's ``X-Forwarded-*`` when told to.

    Only with ``PROXY_FIX`` are the client's address (the login rate limit's key), the
    scheme (secure cookies, https invite links) and the host the proxy's
    view rather than the proxy itself. ``PROXY_FIX = 1`` (or
    ``ANNOTATOR_PROXY_FIX=1``) trusts one proxy's ``X-Forwarded-For``,
    ``-Proto`` and ``-Host``; ``-Port`` and ``-Prefix`` only when named in a
    mapping (``{"x_for": 1, "x_proto": 1, "x_host": 1, "x_prefix": 1}``),
    since a proxy that does not set a header passes a client's forged one on.
    Never set it without a proxy in front: clients could then pick their own
    address and dodge the rate limit.
    """
    app.wsgi_app = _SecureCookiesOverHttps(app.wsgi_app)
    setting = app.config.get("PROXY_FIX")
    if setting in (None, False, 0, "", "0"):
        return
    if setting is True:
        setting = 1
    if isinstance(setting, str) and setting.isdigit():
        setting = int(setting)
    if isinstance(setting, int):
        options = {"x_for": setting, "x_proto": setting, "x_host": setting}
    elif isinstance(setting, dict) and setting:
        unknown = sorted(set(setting) - set(_PROXY_HEADERS))
        if unknown or not all(isinstance(v, int) and v >= 0 for v in setting.values()):
            raise ValueError(
                f"PROXY_FIX: {setting!r} is not a number of proxies nor a mapping of "
                f"{', '.join(_PROXY_HEADERS)} to numbers of proxies"
                + (f" (unknown: {', '.join(unknown)})" if unknown else "")
            )
        options = {name: setting.get(name, 0) for name in _PROXY_HEADERS}
    else:
        raise ValueError(
            f"PROXY_FIX: {setting!r} is not a number of proxies (e.g. 1) nor a mapping "
            f"of {', '.join(_PROXY_HEADERS)} to numbers of proxies"
        )
    from werkzeug.middleware.proxy_fix import ProxyFix

    app.wsgi_app = ProxyFix(app.wsgi_app, **options)


class _SecureCookiesOverHttps:
    """WSGI middleware: every cookie of a response to an HTTPS request is ``Secure``.

    Flask's ``SESSION_COOKIE_SECURE`` and flask-login's
    ``REMEMBER_COOKIE_SECURE`` are fixed settings; this follows the request
    instead, so one configuration serves plain ``http://127.0.0.1`` on a
    laptop (where a Secure cookie would never come back) and HTTPS behind a
    proxy (inside ``ProxyFix``, the scheme is the client's). It works on the
    final headers because Flask writes the session cookie after every
    ``after_request`` hook has run.
    """

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        if environ.get("wsgi.url_scheme") != "https":
            return self.wsgi_app(environ, start_response)

        def secure_start_response(status, headers, exc_info=None):
            headers = [
                (name, value + "; Secure")
                if name.lower() == "set-cookie" and "; secure" not in value.lower()
                else (name, value)
                for name, value in headers
            ]
            return start_response(status, headers, exc_info)

        return self.wsgi_app(environ, secure_start_response)


def create_app(test_config: dict | None = None, *, serving: bool = True, web: bool = True) -> Flask:
    """Create and configure the annotator application.

    Settings come, later ones winning, from the defaults below, the instance
    folder's ``config.py`` and ``ANNOTATOR_``-prefixed environment variables
    (``ANNOTATOR_DATABASE_URL`` sets ``DATABASE_URL``); ``test_config``
    replaces the last two. The instance folder is ``ANNOTATOR_INSTANCE_PATH``
    when set: it must be known before ``Flask()`` is built, because Flask
    reads ``config.py`` from the folder it was given.

    ``serving=False``: an app for a command-line command, which serves no
    request, so it skips :func:`prepare_to_serve` (a command that serves calls it).

    ``web=False``: an app for a command that neither serves pages nor runs jobs
    (an export, an import, a report): its settings, database, clock and commands,
    without the pages (blueprints, login, CSRF, rate limits, security headers),
    whose imports were a tenth of such a command's start-up. It cannot serve.
    """
    if serving and not web:
        raise ValueError("web: an app that serves (serving=True) needs its pages (web=True)")
    instance_path = os.environ.get("ANNOTATOR_INSTANCE_PATH")
    app = Flask(
        __name__,
        instance_path=os.path.abspath(instance_path) if instance_path else None,
        instance_relative_config=True,
        template_folder=_resource_dir("templates"),
        static_folder=_resource_dir("static"),
    )
    # Owner only: it holds the secret key and, by default, the database.
    Path(app.instance_path).mkdir(mode=0o700, parents=True, exist_ok=True)

    app.config.from_mapping(
        DATABASE_URL="sqlite:///" + str(Path(app.instance_path) / "annotator.sqlite"),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SAMESITE="Lax",
        WTF_CSRF_TIME_LIMIT=None,
        # None: a SQLite file in the instance folder, shared by every worker
        # (annotator/ratelimit.py); or e.g. redis://127.0.0.1:6379.
        RATELIMIT_STORAGE_URI=None,
        RATELIMIT_HEADERS_ENABLED=True,
        # Failed logins only: per account and address, and per address alone.
        LOGIN_RATE_LIMIT="10 per minute",
        LOGIN_ADDRESS_RATE_LIMIT="100 per minute",
        BASE_URL=None,
        # Behind a reverse proxy: how many proxies to trust (1 for one nginx or
        # Caddy), or ProxyFix's own options as a mapping; see _proxy_fix.
        PROXY_FIX=None,
        # The largest request body: every form of the app is a few kB (the
        # web has no uploads; imports go through the CLI). Larger bodies get
        # a 413 before they are read; so does a longer field (web/limits.py).
        MAX_CONTENT_LENGTH=256 * 1024,
        # The job queue (annotator/jobs): None keeps it in a SQLite file in the
        # instance folder, consumed by `annotator serve`'s own worker; a Redis URL
        # (ANNOTATOR_REDIS_URL) serves `annotator worker`s on any machine.
        REDIS_URL=None,
        JOBS_QUEUE_NAME="annotator",
        # Jobs run at once where they are asked (tests; no worker needed).
        JOBS_IMMEDIATE=False,
        # A running job's worker writes a heartbeat this often; after six missed
        # beats (JOBS_STALE_SECONDS) another worker takes the job again.
        JOBS_HEARTBEAT_SECONDS=5,
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

    if web and not app.config.get("RATELIMIT_STORAGE_URI"):
        from .ratelimit import default_storage_uri

        app.config["RATELIMIT_STORAGE_URI"] = default_storage_uri(app.instance_path)
    _proxy_fix(app)
    from .redaction import install_log_redaction

    # No log line carries a configured secret (annotator/redaction.py).
    install_log_redaction()
    from .judge.endpoints import judge_endpoints

    # A malformed JUDGE_ENDPOINTS stops the app here, named, not a page later.
    judge_endpoints(app.config)

    from . import db

    db.init_app(app)

    from . import clock

    clock.init_app(app)
    if web:
        _init_web(app)

    from .cli import register_commands

    register_commands(app)
    if serving:
        prepare_to_serve(app)
    return app


def _init_web(app: Flask) -> None:
    """The pages of the app: extensions, blueprints, error pages, templates, headers."""
    from .extensions import init_extensions

    init_extensions(app)

    from .web import converters, errors, limits, security_headers, templating

    # Before the blueprints: their routes use the id converter.
    converters.init_app(app)
    limits.init_app(app)
    from .web.auth import bp as auth_bp
    from .web.lead import bp as lead_bp
    from .web.rate import bp as rate_bp

    app.register_blueprint(auth_bp)
    app.register_blueprint(lead_bp)
    app.register_blueprint(rate_bp)
    errors.init_app(app)
    templating.init_app(app)
    security_headers.init_app(app)


def prepare_to_serve(app: Flask) -> None:
    """What an app does once before its first request: make the dummy password hash
    of a login to an unknown account (web/auth/passwords.py), so that login is not
    the slower one. A scrypt hash, a tenth of a second: the command-line commands'
    apps, which serve no login, skip it (``create_app(serving=False)``)."""
    from .web.auth.passwords import make_dummy_hash

    make_dummy_hash(app)
