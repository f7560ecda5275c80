"""The rater's side: invite, consent, demographics, blocks and scoring."""

from __future__ import annotations

from flask import Blueprint

__all__ = ["bp"]

bp = Blueprint("rate", __name__)

from . import crowd, entry, unshown, views  # noqa: E402,F401  (registers the routes on bp)
