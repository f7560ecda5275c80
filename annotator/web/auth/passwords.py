"""Checking a password so that the time taken does not tell whether the account exists.

An unknown account, or one without a password, is checked against a dummy
hash made by the same hasher with the same cost as real passwords (the
app's ``PASSWORD_HASH_METHOD``, annotator/passwords.py, which every password
of the app uses), so every login attempt costs one hash check.
"""

from __future__ import annotations

import secrets
from functools import cache

from werkzeug import security

from ...models import User
from ...passwords import hash_password, password_hash_method

__all__ = ["check_password", "dummy_hash", "make_dummy_hash"]


def dummy_hash() -> str:
    """A hash of a random password nobody knows, made once per process and method."""
    return _dummy_hash(password_hash_method())


def make_dummy_hash(app) -> None:
    """Make ``app``'s dummy hash now, before its first login, so that login is not
    the slower one; by the app's ``PASSWORD_HASH_METHOD``, which only its context tells.

    Called by :func:`annotator.prepare_to_serve`, for an app that serves requests,
    not by the command-line commands' apps, which serve none: a scrypt hash was a
    tenth of a second of every import and export (docs/performance.md).
    """
    with app.app_context():
        dummy_hash()


@cache
def _dummy_hash(method: str | None) -> str:
    # ``method`` keys the cache: the app in context chose it for hash_password.
    return hash_password(secrets.token_urlsafe(24))


def check_password(user: User | None, password: str) -> bool:
    """Whether ``password`` is ``user``'s; always exactly one hash check."""
    if user is None or not user.password_hash:
        security.check_password_hash(dummy_hash(), password)
        return False
    return security.check_password_hash(user.password_hash, password)
