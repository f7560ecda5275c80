"""The rate limiter's SQLite storage, against limits' own in-memory storage."""

from __future__ import annotations

import time

import pytest
from limits import RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import FixedWindowRateLimiter

from annotator.ratelimit import SQLiteStorage, default_storage_uri


@pytest.fixture
def uri(tmp_path):
    return default_storage_uri(str(tmp_path / "instance"))


def test_the_sqlite_scheme_is_registered(uri):
    storage = storage_from_string(uri)
    assert isinstance(storage, SQLiteStorage) and storage.check()
    assert uri.startswith("sqlite:////") and storage.path.name == "ratelimit.sqlite"


def test_it_limits_as_the_memory_storage_does(uri):
    # The same hits through limits' fixed-window limiter: the same answers.
    limit = RateLimitItemPerMinute(3)
    ours = FixedWindowRateLimiter(storage_from_string(uri))
    reference = FixedWindowRateLimiter(MemoryStorage())
    keys = ["a", "a", "b", "a", "a", "b", "c", "b", "b", "a"]
    assert [ours.hit(limit, k) for k in keys] == [reference.hit(limit, k) for k in keys]
    for key in "abc":
        assert ours.get_window_stats(limit, key).remaining == (
            reference.get_window_stats(limit, key).remaining
        )
    ours.clear(limit, "a")
    reference.clear(limit, "a")
    assert ours.hit(limit, "a") == reference.hit(limit, "a") is True


def test_two_storages_on_one_file_share_the_count(uri):
    # As two server processes do.
    first, second = SQLiteStorage(uri), SQLiteStorage(uri)
    assert [first.incr("k", 60), second.incr("k", 60), first.incr("k", 60)] == [1, 2, 3]
    assert second.get("k") == 3
    assert time.time() < second.get_expiry("k") <= time.time() + 60


def test_a_window_ends(uri):
    limiter = FixedWindowRateLimiter(storage_from_string(uri))
    limit = RateLimitItemPerSecond(1)
    assert limiter.hit(limit, "k") and not limiter.hit(limit, "k")
    time.sleep(1.1)
    assert limiter.hit(limit, "k")
    storage = storage_from_string(uri)
    assert storage.reset() >= 1 and storage.get("k") == 0


def test_a_uri_without_a_file_is_refused():
    with pytest.raises(ValueError, match="names no file"):
        SQLiteStorage("sqlite://")


def _limited_app(**limiter_options):
    from flask import Flask
    from flask_limiter import Limiter

    from annotator.extensions import skip_the_limiter_before_every_request

    app = Flask("limited")
    limiter = Limiter(key_func=lambda: "client", storage_uri="memory://", **limiter_options)

    @app.route("/open")
    def open_page():
        return "open"

    @app.route("/login", methods=["POST"])
    @limiter.limit("2 per minute")
    def login():
        return "tried"

    limiter.init_app(app)
    skip_the_limiter_before_every_request(app, limiter)
    return app, limiter


def test_without_default_limits_only_the_limited_views_are_checked():
    app, limiter = _limited_app()
    assert limiter._check_request_limit not in app.before_request_funcs.get(None, [])
    client = app.test_client()
    assert [client.post("/login").status_code for _ in range(3)] == [200, 200, 429]
    assert [client.get("/open").status_code for _ in range(5)] == [200] * 5


def test_default_limits_keep_the_check_before_every_request():
    app, limiter = _limited_app(default_limits=["3 per minute"])
    assert limiter._check_request_limit in app.before_request_funcs[None]
    client = app.test_client()
    assert [client.get("/open").status_code for _ in range(4)] == [200, 200, 200, 429]
    assert [client.post("/login").status_code for _ in range(3)] == [200, 200, 429]


def test_the_app_resolves_no_limits_before_every_request(app):
    from annotator.extensions import limiter

    assert limiter._check_request_limit not in app.before_request_funcs.get(None, [])
