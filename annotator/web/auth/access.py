"""Who may open a page: decorators for the blueprints."""

from __future__ import annotations

from functools import wraps

from flask import abort, g, render_template
from flask_login import current_user, login_required, logout_user

from ...models import RaterStatus, Role

__all__ = ["lead_required", "rater_required", "withdrawn_page"]


def withdrawn_page(study=None):
    """The page (403) for a rater who withdrew, at every way in and on every post."""
    return render_template("rate/withdrawn.html", study=study), 403


def lead_required(view):
    """Only leads may pass; raters get 403, anonymous users the login page."""

    @wraps(view)
    @login_required
    def wrapped(*args, **kwargs):
        if not current_user.is_lead:
            abort(403)
        return view(*args, **kwargs)

    return wrapped


def rater_required(view):
    """Only raters who consented may pass; leads get 403, anonymous users the login.

    A withdrawn rater is logged out with the page that says so (their
    sessions ended at the withdrawal; this also covers a request already
    under way then), so no post after a withdrawal stores anything.
    """

    @wraps(view)
    @login_required
    def wrapped(*args, **kwargs):
        if current_user.status == RaterStatus.WITHDRAWN:
            # The user loader loaded the rater's study with them.
            study = g.get("user_study")
            logout_user()
            return withdrawn_page(study)
        if (
            current_user.role != Role.RATER
            or current_user.study_id is None
            or current_user.consented_at is None
        ):
            abort(403)
        return view(*args, **kwargs)

    return wrapped
