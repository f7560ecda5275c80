"""Cutting the instance's secrets out of text before it is stored, shown or logged.

A judge endpoint may quote the key it was sent in any reply (OpenAI's
"Incorrect API key provided: sk-...", a proxy echoing the request's headers
in a 400, a server's traceback in a 500), and an exception's message may
carry a connection URL. Such text reaches judge-failure rows, job rows, the
pages that show them (which every member of a study may open) and the log.
Every such message goes through :func:`redact` first, with every secret the
instance is configured with (:func:`configured_secrets`): the session key,
the passwords of the database, Redis and rate-limit URLs, and the keys of
the judge endpoints (``JUDGE_ENDPOINTS``' ``api_key_env`` variables).
"""

from __future__ import annotations

import logging
import os
import traceback
from collections.abc import Iterable, Mapping
from urllib.parse import unquote, urlsplit

__all__ = ["REDACTED", "configured_secrets", "install_log_redaction", "redact"]

REDACTED = "[redacted]"
# Shorter values are not cut: "1" or "dev" would mangle every message
# (and would not be secrets worth the name).
_MIN_LENGTH = 6
_URL_SETTINGS = ("DATABASE_URL", "REDIS_URL", "RATELIMIT_STORAGE_URI")


def _url_secrets(url: object) -> list[str]:
    if not isinstance(url, str) or "@" not in url:
        return []
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    if not password:
        return []
    # The URL's own spelling (percent-encoded) and the decoded password both.
    return [password, unquote(password)]


def configured_secrets(config: Mapping | None = None) -> list[str]:
    """The secrets of ``config`` (default: the current app's), longest first.

    Read each time: a key set in the environment after start (a worker's)
    is cut too.
    """
    if config is None:
        from flask import current_app, has_app_context

        config = current_app.config if has_app_context() else {}
    found: list[str] = []
    key = config.get("SECRET_KEY")
    if isinstance(key, (str, bytes)):
        found.append(key.decode("utf-8", "replace") if isinstance(key, bytes) else key)
    for setting in _URL_SETTINGS:
        found += _url_secrets(config.get(setting))
    endpoints = config.get("JUDGE_ENDPOINTS")
    if isinstance(endpoints, Mapping):
        for spec in endpoints.values():
            variable = spec.get("api_key_env") if isinstance(spec, Mapping) else None
            if isinstance(variable, str) and os.environ.get(variable):
                found.append(os.environ[variable])
    unique = {s for s in found if len(s) >= _MIN_LENGTH}
    return sorted(unique, key=len, reverse=True)


def redact(text: str | None, extra: Iterable[str | None] = (), *, config=None) -> str | None:
    """``text`` with every configured secret (and each of ``extra``) replaced by
    ``[redacted]``; None stays None."""
    if not text:
        return text
    secrets = set(configured_secrets(config))
    secrets.update(s for s in extra if s and len(s) >= _MIN_LENGTH)
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _redacting_factory(make_record):
    def factory(*args, **kwargs):
        record = make_record(*args, **kwargs)
        secrets = configured_secrets()
        if not secrets:
            return record
        try:
            message = record.getMessage()
        except Exception:  # a malformed log call: the handler reports it as usual
            return record
        cut = redact(message)
        if cut != message:
            record.msg, record.args = cut, ()
        if record.exc_info and record.exc_info[1] is not None:
            # Formatted now, so the handler prints this text rather than its own.
            trace = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            record.exc_text = redact(trace)
        return record

    factory.redacts = True
    return factory


def install_log_redaction() -> None:
    """Cut the current app's secrets from every log record made from now on.

    A record factory rather than a filter: a logger's filters see only the
    records of that very logger, and the lines that quote a key come from
    libraries' loggers (``openai``'s and ``httpcore``'s debug lines print the
    response headers an endpoint sent, and an endpoint may echo the key).
    """
    current = logging.getLogRecordFactory()
    if not getattr(current, "redacts", False):
        logging.setLogRecordFactory(_redacting_factory(current))
