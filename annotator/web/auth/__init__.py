"""Logging in and out, and the front page that sends each role to its home."""

from __future__ import annotations

from .blueprint import bp

__all__ = ["bp"]

from . import views  # noqa: F401  (registers the routes on bp)
