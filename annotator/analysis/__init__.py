"""The study's analysis: one :class:`StudyAnalysis` the dashboard, the report and the CLI render.

:func:`analyse` (in :mod:`.study_analysis`) computes it from a study's frames and
:class:`~.settings.AnalysisSettings`; :mod:`annotator.render` displays it
(the dashboard's view model, the report, the figures) and :mod:`annotator.services`
reads a stored study for it. Nothing here reads the database, caches, stores or
draws: frames and settings in, one result model out.

``analyse`` and ``StudyAnalysis`` (the result model, :mod:`.model`) load on first use, so that importing the package
(the CLI does, for ``annotator --help``) does not import pandas.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StudyAnalysis", "analyse"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import model, study_analysis

        return getattr(model if name == "StudyAnalysis" else study_analysis, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
