"""The project lead's pages: studies, invites and exports."""

from __future__ import annotations

from flask import Blueprint, abort, render_template

from ..auth import lead_required
from ..db import get_session
from ..studies import get_study

__all__ = ["bp"]

bp = Blueprint("lead", __name__, url_prefix="/lead")


def get_study_or_404(slug: str):
    study = get_study(get_session(), slug)
    if study is None:
        abort(404)
    return study


@bp.route("/")
@lead_required
def index():
    from .views import study_overviews

    return render_template("lead/index.html", studies=study_overviews(get_session()))
