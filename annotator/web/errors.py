"""The error pages of the whole app, one template for every status."""

from __future__ import annotations

from flask import Flask, current_app, render_template
from werkzeug.exceptions import HTTPException

__all__ = ["ERROR_PAGES", "init_app"]

ERROR_PAGES = {
    400: ("Something in that request was not right", "The page could not use what was sent."),
    403: ("You may not open this page", "It belongs to another role or another account."),
    404: ("Page not found", "The address may be mistyped, or the page no longer exists."),
    405: ("Not possible here", "This page cannot be used that way."),
    410: ("This link no longer works", "It has been used or replaced."),
    413: (
        "That was too much to send",
        "The form held more text than this site accepts, so nothing was saved. "
        "Please go back and shorten what you wrote.",
    ),
    429: (
        "Too many attempts",
        "Please wait a minute before you try again.",
    ),
    500: (
        "Something went wrong on our side",
        "Nothing you did caused this, and your saved ratings are safe. Please try again in a moment.",
    ),
}


def http_error(error: HTTPException):
    if error.code not in ERROR_PAGES:
        return error
    title, message = ERROR_PAGES[error.code]
    response = current_app.make_response(
        (
            render_template("errors/error.html", code=error.code, title=title, message=message),
            error.code,
        )
    )
    # Keep what the exception carries (Retry-After, Allow, ...).
    for name, value in error.get_headers():
        if name.lower() != "content-type":
            response.headers[name] = value
    return response


def server_error(error):
    title, message = ERROR_PAGES[500]
    return render_template("errors/error.html", code=500, title=title, message=message), 500


def init_app(app: Flask) -> None:
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(500, server_error)
