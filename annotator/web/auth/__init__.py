"""Logging in and out, and the front page that sends each role to its home."""

from __future__ import annotations

from flask import Blueprint

__all__ = ["bp"]

bp = Blueprint("auth", __name__)

from . import views  # noqa: E402,F401  (registers the routes on bp)
