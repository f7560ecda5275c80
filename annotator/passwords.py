"""The app's one way of hashing a password.

Every stored password (leads' and raters' own) and the dummy hash of a login
to an unknown account (web/auth/passwords.py) is made here, with the hasher
of the ``PASSWORD_HASH_METHOD`` setting: None, the default, is werkzeug's
``generate_password_hash`` default (scrypt), a deliberately slow hash. The
setting exists for the tests, which create hundreds of leads and set a cheap
method (``"pbkdf2:sha256:1"``); a deployment has no reason to change it.
Checking needs no setting: a werkzeug hash names its own method.
"""

from __future__ import annotations

from flask import current_app, has_app_context
from werkzeug.security import generate_password_hash

__all__ = ["hash_password", "password_hash_method"]


def password_hash_method() -> str | None:
    """The app's ``PASSWORD_HASH_METHOD`` (None: werkzeug's default), as in
    :func:`annotator.clock.now` read from the app in context, else the default."""
    if has_app_context():
        return current_app.config.get("PASSWORD_HASH_METHOD")
    return None


def hash_password(password: str) -> str:
    """``password``'s hash by the app's method, with werkzeug's salt."""
    method = password_hash_method()
    if method is None:
        return generate_password_hash(password)
    return generate_password_hash(password, method=method)
