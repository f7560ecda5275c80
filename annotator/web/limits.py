"""Requests the app refuses before a view reads them: a whole body above
``MAX_CONTENT_LENGTH``, one field above ``MAX_FIELD_LENGTH`` characters, a NUL
character in a field or an address.

Flask refuses a body above ``MAX_CONTENT_LENGTH`` before reading it (a 413,
styled by :mod:`annotator.web.errors`). Within that, no field of this app's
forms or query strings needs more than a few hundred characters (scores 40,
questionnaire answers 500, e-mail addresses 320), while a 200 kB password
would still be hashed: any field longer than ``MAX_FIELD_LENGTH`` is refused
with the same page, before a view reads it.
"""

from __future__ import annotations

from flask import Flask, abort, current_app, request

__all__ = ["MAX_FIELD_LENGTH", "init_app"]

#: The default of the ``MAX_FIELD_LENGTH`` setting, in characters.
MAX_FIELD_LENGTH = 2000


def _refuse_overlong_fields() -> None:
    limit = current_app.config["MAX_FIELD_LENGTH"]
    # A NUL character: no address, token or field of the app holds one, and
    # PostgreSQL refuses it in any text (an error, not a miss, in every query).
    if any(
        "\x00" in value for value in (request.view_args or {}).values() if isinstance(value, str)
    ):
        abort(404)
    for values in (request.args, request.form if request.method == "POST" else None):
        if not values:
            continue
        if any(len(value) > limit for _, value in values.items(multi=True)):
            abort(413, f"A field holds more than {limit} characters.")
        if any("\x00" in value for _, value in values.items(multi=True)):
            abort(400, "A field holds a NUL character.")


def init_app(app: Flask) -> None:
    app.config.setdefault("MAX_FIELD_LENGTH", MAX_FIELD_LENGTH)
    app.before_request(_refuse_overlong_fields)
