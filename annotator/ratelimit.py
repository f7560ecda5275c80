"""Where the login rate limiter keeps its counts when no Redis is configured.

flask-limiter's default ``memory://`` storage counts in each process, so
under ``annotator serve --workers 4`` a guesser gets four times the allowed
attempts (one count per worker). The ``limits`` library ships shared
storages only for servers (Redis, Memcached, MongoDB); a lab running the
tool on one machine with its SQLite database has none of them. This module
adds the missing one: a ``limits`` storage in a small SQLite file in the
instance folder (``sqlite:///.../ratelimit.sqlite``), shared by every process
on the machine. It is a separate file, not a table of the app's database, so
that it needs no migration, works the same whatever database the studies
live in, and its writes (on every failed login) never wait on the studies'.

Several machines behind one proxy need a server-side store instead: set
``ANNOTATOR_RATELIMIT_STORAGE_URI=redis://host:6379`` (see docs/deploy.md).

Only flask-limiter's default strategy (fixed window) is supported: it needs
just ``incr``, ``get`` and ``get_expiry``.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from urllib.parse import urlsplit

from limits.storage import Storage

from .db import create_private_file, make_durable

__all__ = ["SQLiteStorage", "default_storage_uri"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS counters ("
    " key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires_at REAL NOT NULL)"
)


def default_storage_uri(instance_path: str) -> str:
    return "sqlite:///" + str(Path(instance_path).resolve() / "ratelimit.sqlite")


class SQLiteStorage(Storage):
    """A ``limits`` fixed-window storage in one SQLite file.

    Subclassing :class:`limits.storage.Storage` registers the ``sqlite``
    scheme, so ``storage_from_string("sqlite:///path")`` (and flask-limiter's
    ``RATELIMIT_STORAGE_URI``) finds it. Each call opens its own connection:
    the limiter is used only on login posts, a connection costs tens of
    microseconds, and nothing is then shared across threads or a fork.
    """

    STORAGE_SCHEME = ["sqlite"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        path = urlsplit(uri or "").path
        # sqlite:///relative/path -> "/relative/path"; sqlite:////abs -> "//abs".
        if path.startswith("//") or path.startswith("/"):
            path = path[1:]
        if not path:
            raise ValueError(f"RATELIMIT_STORAGE_URI {uri!r} names no file")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Its keys are the addresses of people who tried to log in: 0600.
        create_private_file(self.path)
        with self._connect() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(_SCHEMA)

    @property
    def base_exceptions(self) -> type[Exception]:
        return sqlite3.Error

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: transactions are the explicit BEGIN IMMEDIATE
        # below, which takes the write lock first so the busy timeout applies.
        connection = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        # Durable like every SQLite connection of the tool (annotator.db.make_durable):
        # only logins and crowd entries count here, so the fsync costs little.
        make_durable(connection)
        return connection

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        current = time.time()
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(
                "DELETE FROM counters WHERE key = ? AND expires_at <= ?", (key, current)
            )
            connection.execute(
                "INSERT INTO counters (key, count, expires_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET count = count + excluded.count",
                (key, amount, current + expiry),
            )
            (count,) = connection.execute(
                "SELECT count FROM counters WHERE key = ?", (key,)
            ).fetchone()
            connection.execute("COMMIT")
            return count
        finally:
            connection.close()

    def _row(self, key: str) -> tuple[int, float] | None:
        connection = self._connect()
        try:
            return connection.execute(
                "SELECT count, expires_at FROM counters WHERE key = ? AND expires_at > ?",
                (key, time.time()),
            ).fetchone()
        finally:
            connection.close()

    def get(self, key: str) -> int:
        row = self._row(key)
        return row[0] if row else 0

    def get_expiry(self, key: str) -> float:
        row = self._row(key)
        return row[1] if row else time.time()

    def check(self) -> bool:
        try:
            self._connect().close()
        except sqlite3.Error:
            return False
        return True

    def reset(self) -> int | None:
        connection = self._connect()
        try:
            return connection.execute("DELETE FROM counters").rowcount
        finally:
            connection.close()

    def clear(self, key: str) -> None:
        connection = self._connect()
        try:
            connection.execute("DELETE FROM counters WHERE key = ?", (key,))
        finally:
            connection.close()
