"""Logging in and out, the front page that sends each role to its home,
confirmation pages and the error pages of the whole app."""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlsplit

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask_limiter.util import get_remote_address
from flask_login import current_user, login_required, login_user, logout_user
from sqlalchemy import func
from sqlmodel import select
from werkzeug.exceptions import HTTPException
from werkzeug.security import check_password_hash

from ..db import get_session
from ..extensions import limiter
from ..models import Role, User

__all__ = ["bp", "lead_required", "confirmed", "render_confirm"]

bp = Blueprint("auth", __name__)


def lead_required(view):
    """Only leads may pass; raters get 403, anonymous users the login page."""

    @wraps(view)
    @login_required
    def wrapped(*args, **kwargs):
        if not current_user.is_lead:
            abort(403)
        return view(*args, **kwargs)

    return wrapped


def _safe_next(target: str | None) -> str | None:
    """Only follow ``next`` to a path on this site."""
    if not target:
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/"):
        return None
    return target


def _home_for(user: User) -> str:
    if user.is_lead:
        return url_for("lead.index")
    if "rate" in current_app.blueprints:
        return url_for("rate.dashboard")
    return url_for("auth.login")


@bp.route("/")
def index():
    if current_user.is_authenticated:
        return redirect(_home_for(current_user))
    return redirect(url_for("auth.login"))


def confirmed() -> bool:
    """Whether the form was sent from a confirmation page (see :func:`render_confirm`)."""
    return request.form.get("confirmed") == "yes"


def render_confirm(*, status: int = 200, template: str = "confirm.html", **context):
    """Ask before an irreversible action: a page whose form posts again with ``confirmed``.

    Two steps in plain HTML, so the question is asked without JavaScript too.
    """
    return render_template(template, **context), status


# Failed logins are counted per account and address, so that one person
# mistyping (or someone guessing) cannot lock out a lab whose raters all
# share one public address; successful logins are not counted at all. A
# looser limit per address alone still slows guessing across many accounts.


def _login_limit() -> str:
    return current_app.config["LOGIN_RATE_LIMIT"]


def _login_address_limit() -> str:
    return current_app.config["LOGIN_ADDRESS_RATE_LIMIT"]


def _account_and_address() -> str:
    account = request.form.get("username", "").strip().casefold()
    return f"{get_remote_address()}|{account}"


def _failed(response) -> bool:
    return response.status_code == 401


def _find_account(identifier: str) -> User | None:
    """The lead with this email or the rater with this code (in any case)."""
    session = get_session()
    candidates = session.exec(
        select(User).where(
            (User.email == identifier.lower()) | (func.upper(User.rater_code) == identifier.upper())
        )
    ).all()
    # Codes are unique as written; imported codes may differ only in case,
    # so the exact spelling wins, then the one account that can log in.
    exact = [u for u in candidates if identifier in (u.email, u.rater_code)]
    with_password = [u for u in candidates if u.password_hash]
    if exact:
        return exact[0]
    return with_password[0] if len(with_password) == 1 else None


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(_login_limit, key_func=_account_and_address, methods=["POST"], deduct_when=_failed)
@limiter.limit(
    _login_address_limit, key_func=get_remote_address, methods=["POST"], deduct_when=_failed
)
def login():
    error = None
    if request.method == "POST":
        identifier = request.form.get("username", "").strip()
        password = request.form.get("password", "")
        user = _find_account(identifier)
        if (
            user is None
            or not user.password_hash
            or not check_password_hash(user.password_hash, password)
        ):
            error = "Unknown user or wrong password."
        else:
            login_user(user)
            return redirect(_safe_next(request.args.get("next")) or _home_for(user))
    status = 401 if error else 200
    return render_template("auth/login.html", error=error), status


@bp.route("/logout", methods=["POST"])
def logout():
    # A rater without a password comes back only through the return link:
    # show it before they leave.
    if (
        current_user.is_authenticated
        and current_user.role == Role.RATER
        and not current_user.password_hash
        and not confirmed()
    ):
        return render_confirm(
            template="auth/logout_confirm.html",
            title="Log out?",
            action=url_for("auth.logout"),
            confirm_label="Log out",
            cancel_url=url_for("auth.index"),
            cancel_label="Stay logged in",
        )
    logout_user()
    flash("You are logged out.", "info")
    return redirect(url_for("auth.login"))


# ------------------------------------------------------------------ errors

ERROR_PAGES = {
    400: ("Something in that request was not right", "The page could not use what was sent."),
    403: ("You may not open this page", "It belongs to another role or another account."),
    404: ("Page not found", "The address may be mistyped, or the page no longer exists."),
    405: ("Not possible here", "This page cannot be used that way."),
    410: ("This link no longer works", "It has been used or replaced."),
    429: (
        "Too many attempts",
        "Please wait a minute before you try again.",
    ),
    500: (
        "Something went wrong on our side",
        "Nothing you did caused this, and your saved ratings are safe. Please try again in a moment.",
    ),
}


@bp.app_errorhandler(HTTPException)
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


@bp.app_errorhandler(500)
def server_error(error):
    title, message = ERROR_PAGES[500]
    return render_template("errors/error.html", code=500, title=title, message=message), 500
