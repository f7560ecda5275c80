"""The rater's side: invite, consent, demographics, blocks and scoring."""

from __future__ import annotations

from .blueprint import bp

__all__ = ["bp"]

from . import crowd, entry, unshown, views  # noqa: F401  (registers the routes on bp)
