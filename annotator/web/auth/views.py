"""Routes of logging in and out, and the front page that sends each role to its home."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_limiter.util import get_remote_address
from flask_login import current_user, login_user, logout_user
from sqlalchemy import func
from sqlmodel import select

from ...db import get_session
from ...extensions import limiter
from ...models import RaterStatus, Role, Study, User
from ..confirm import confirmed, render_confirm
from .access import withdrawn_page
from .blueprint import bp
from .forms import LoginForm
from .passwords import check_password


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
    return url_for("rate.dashboard")


@bp.route("/")
def index():
    if current_user.is_authenticated:
        return redirect(_home_for(current_user))
    return redirect(url_for("auth.login"))


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
    form = LoginForm()
    error = None
    if form.is_submitted():
        user = _find_account(form.username.data) if form.validate() else None
        # One hash check whether or not the account exists (passwords.py).
        if not check_password(user, form.password.data or ""):
            error = "Unknown user or wrong password."
        elif user.status == RaterStatus.WITHDRAWN:
            # Only to the rater themselves: the password was right.
            return withdrawn_page(get_session().get(Study, user.study_id))
        else:
            login_user(user)
            return redirect(_safe_next(request.args.get("next")) or _home_for(user))
    status = 401 if error else 200
    return render_template("auth/login.html", form=form, error=error), status


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
    if current_user.is_authenticated:
        # Every session and remember cookie of the account ends, not only
        # this browser's (a cookie copied before logging out stops working).
        user = current_user._get_current_object()
        user.end_sessions()
        session = get_session()
        session.add(user)
        session.commit()
    logout_user()
    flash("You are logged out.", "info")
    return redirect(url_for("auth.login"))
