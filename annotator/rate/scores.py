"""The score parser, shared with the imports: see :mod:`annotator.collect.scores`."""

from __future__ import annotations

from ..collect.scores import ScoreError, format_number, parse_score, scale_hint

__all__ = ["ScoreError", "parse_score", "format_number", "scale_hint"]
