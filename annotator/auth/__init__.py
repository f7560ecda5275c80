"""Logging in and out, and the front page that sends each role to its home."""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlsplit

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user
from sqlmodel import select
from werkzeug.security import check_password_hash

from ..db import get_session
from ..extensions import limiter
from ..models import ROLE_LEAD, User

__all__ = ["bp", "lead_required"]

bp = Blueprint("auth", __name__)


def lead_required(view):
    """Only leads may pass; raters get 403, anonymous users the login page."""

    @wraps(view)
    @login_required
    def wrapped(*args, **kwargs):
        if current_user.role != ROLE_LEAD:
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
    if user.role == ROLE_LEAD:
        return url_for("lead.index")
    if "rate" in current_app.blueprints:
        return url_for("rate.dashboard")
    return url_for("auth.login")


@bp.route("/")
def index():
    if current_user.is_authenticated:
        return redirect(_home_for(current_user))
    return redirect(url_for("auth.login"))


def _login_limit() -> str:
    return current_app.config["LOGIN_RATE_LIMIT"]


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(_login_limit, methods=["POST"])
def login():
    error = None
    if request.method == "POST":
        identifier = request.form.get("username", "").strip()
        password = request.form.get("password", "")
        session = get_session()
        user = session.exec(
            select(User).where((User.email == identifier.lower()) | (User.rater_code == identifier))
        ).first()
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
    logout_user()
    flash("You are logged out.", "info")
    return redirect(url_for("auth.login"))
