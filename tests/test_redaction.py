"""Cutting the configured secrets out of text (annotator/redaction.py)."""

from __future__ import annotations

import json

import pytest

from annotator.redaction import REDACTED, configured_secrets, redact

CANARY = "sk-canary-7f3a9c1e5b2d4f60a8e1"
CANARY_VARIABLE = "ANNOTATOR_TEST_CANARY_KEY"


@pytest.mark.parametrize(
    ("setting", "value", "secret"),
    [
        ("SECRET_KEY", "a-session-key-0123", "a-session-key-0123"),
        ("DATABASE_URL", "postgresql://app:pg-pass%2Fword@db/annotator", "pg-pass/word"),
        ("REDIS_URL", "rediss://:redis-passw0rd@cache:6380/0", "redis-passw0rd"),
        ("RATELIMIT_STORAGE_URI", "redis://user:limit-passw0rd@cache/1", "limit-passw0rd"),
    ],
)
def test_every_configured_secret_is_cut(setting, value, secret):
    config = {setting: value}
    assert secret in configured_secrets(config)
    text = f"connecting with {secret} failed; {value}"
    cut = redact(text, config=config)
    assert secret not in cut and REDACTED in cut
    assert redact(None, config=config) is None


def test_an_endpoints_key_is_cut_from_what_it_names(monkeypatch):
    monkeypatch.setenv(CANARY_VARIABLE, CANARY)
    config = {"JUDGE_ENDPOINTS": {"x": {"base_url": "http://h/v1", "api_key_env": CANARY_VARIABLE}}}
    assert redact(json.dumps({"key": CANARY}), config=config) == json.dumps({"key": REDACTED})


def test_a_log_line_loses_the_apps_secrets(make_app, caplog, monkeypatch):
    # Any library's line (here the openai client's logger, as its debug lines print
    # the headers an endpoint sent back), while the app is at work.
    import logging

    monkeypatch.setenv(CANARY_VARIABLE, CANARY)
    endpoints = {"x": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": CANARY_VARIABLE}}
    url = "redis://:redis-canary-4411@127.0.0.1:6379/0"
    app = make_app(REDIS_URL=url, JUDGE_ENDPOINTS=endpoints)
    logger = logging.getLogger("openai._base_client")
    with caplog.at_level(logging.DEBUG, logger="openai"), app.app_context():
        logger.debug("headers %s, queue %s", {"x-echo": CANARY}, url)
        try:
            raise RuntimeError(f"lost {url}")
        except RuntimeError:
            logger.exception("request failed")
    assert "headers {'x-echo': '[redacted]'}, queue redis://:[redacted]@127.0.0.1" in caplog.text
    assert CANARY not in caplog.text and "redis-canary-4411" not in caplog.text
    assert "RuntimeError: lost redis://:[redacted]@" in caplog.text
