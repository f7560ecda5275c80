"""A stored study's analysis settings with a choice of raters checked against its data."""

from __future__ import annotations

from typing import Any

from ..analysis.settings import AnalysisSettings, study_settings
from ..data.selection import parse_where, raters_where

__all__ = ["study_settings_where"]


def study_settings_where(
    session: Any, study: Any, where: Any = None, **overrides: Any
) -> AnalysisSettings:
    """:func:`~annotator.analysis.settings.study_settings` with the raters ``where``
    selects, checked against the study.

    ``where``: ``--where`` clauses or the form's text (:func:`parse_where`). An unknown
    key or value raises ``ValueError`` listing the study's keys or that key's values.
    """
    chosen = parse_where(where)
    raters_where(session, study, chosen)
    return study_settings(study, where=tuple(chosen.items()), **overrides)
