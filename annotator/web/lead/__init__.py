"""The project lead's pages: studies, invites, exports and raters."""

from __future__ import annotations

from flask import Blueprint

__all__ = ["bp"]

bp = Blueprint("lead", __name__, url_prefix="/lead")


from . import crowd, jobs, judge_runs, rater_status, raters, versions, views  # noqa: E402,F401  (registers the routes on bp)
