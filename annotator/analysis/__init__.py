"""The study's analysis: one :class:`StudyAnalysis` the dashboard, the report and the CLI render.

:func:`analyse` (in :mod:`.study_analysis`) computes it from a study's frames and
:class:`~.settings.AnalysisSettings`; ``dashboard.study_dashboard`` and
``live.live_dashboard`` (the lead's study page) render the parts the page shows,
``report.build_report`` the report's tables (:mod:`.tables`). Nothing here draws: the
report's HTML and plots and the dashboard's template take these results as they are.

``analyse`` and ``StudyAnalysis`` load on first use, so that importing the package
(the CLI does, for ``annotator --help``) does not import pandas.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StudyAnalysis", "analyse"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import study_analysis

        return getattr(study_analysis, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
