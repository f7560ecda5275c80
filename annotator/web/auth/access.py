"""Who may open a page: decorators for the blueprints."""

from __future__ import annotations

from functools import wraps

from flask import abort
from flask_login import current_user, login_required

from ...models import Role

__all__ = ["lead_required", "rater_required"]


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
    """Only raters who consented may pass; leads get 403, anonymous users the login."""

    @wraps(view)
    @login_required
    def wrapped(*args, **kwargs):
        if (
            current_user.role != Role.RATER
            or current_user.study_id is None
            or current_user.consented_at is None
        ):
            abort(403)
        return view(*args, **kwargs)

    return wrapped
