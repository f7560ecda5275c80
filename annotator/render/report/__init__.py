"""The study report: the paper's tables, figures and notes as one self-contained HTML file.

:func:`report_of` lays out a study's analysis; :func:`annotator.services.report.build_report`
is the one path from a study in the database to it, shared by ``annotator report`` and
the lead's "Download report" link, so both give the same file. The numbers come from the study's analysis
(:func:`annotator.analysis.study_analysis.analyse`); this package lays them out
(:mod:`.html`) with the figures of :mod:`annotator.render.figures` (:mod:`.figures`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["Report", "report_of"]


@dataclass(frozen=True)
class Report:
    """A rendered report with the tables it shows (for ``--tables`` and ``--latex``)."""

    html: str
    tables: Any
    frames: Any
    #: The figures as files of the format asked for, by key (``build_report``'s
    #: ``figure_format``).
    figure_files: dict[str, bytes] = field(default_factory=dict)
    #: The tables across criteria (:class:`~annotator.analysis.criteria.RubricTables`)
    #: of a study with ``[[criteria]]``; None without.
    rubric: Any = None


def report_of(
    analysis: Any,
    *,
    title: str,
    study: str,
    generated_at: datetime | None = None,
    figure_format: str | None = None,
    frames: Any = None,
    progress: Callable[[int, str], None] | None = None,
) -> Report:
    """The report of a study's analysis (``analyse(..., parts=REPORT_PARTS)``).

    A study with ``[[criteria]]`` gets the tables across criteria and then each
    criterion's sections and figures; its figure files are named ``CRITERION-KEY``.
    ``progress(done, message)``: told as the figures (each criterion's) and then the
    page are begun, ``done`` counting from 0.
    """
    from ...analysis.verdict import verdict_summary
    from ..verdict import verdict_lines
    from .figures import draw_figures
    from .html import render_report

    tables = analysis.tables
    # The answer first: the same lines as the dashboard's and `annotator verdict`'s.
    verdicts = verdict_lines(verdict_summary(analysis))
    frames = analysis.frames if frames is None else frames

    def step(done: int, message: str) -> None:
        if progress is not None:
            progress(done, message)

    if analysis.rubric is None:
        step(0, "Drawing the figures")
        drawn, files = draw_figures(tables, fmt=figure_format)
        step(1, "Writing the page")
        html = render_report(
            tables,
            title=title,
            study=study,
            generated_at=generated_at,
            drawn=drawn,
            verdicts=verdicts,
            confidence=analysis.settings.confidence,
        )
        return Report(html=html, tables=tables, frames=frames, figure_files=files)
    parts, files = [], {}
    # Each criterion's figures are drawn alike: the panels of the first of each kind
    # are placed by constrained layout, the others' where theirs fit (figures.png_once).
    layouts: dict = {}
    criteria = analysis.by_criterion
    for done, (name, one) in enumerate(criteria.items()):
        step(done, f"Drawing the figures of criterion {name}")
        drawn, mine = draw_figures(
            one.tables, fmt=figure_format, layouts=layouts, last=done == len(criteria) - 1
        )
        parts.append((name, one.tables, drawn))
        files.update({f"{name}-{key}": data for key, data in mine.items()})
    step(len(parts), "Writing the page")
    html = render_report(
        tables,
        title=title,
        study=study,
        generated_at=generated_at,
        rubric=analysis.rubric,
        criteria=parts,
        verdicts=verdicts,
        confidence=analysis.settings.confidence,
    )
    return Report(
        html=html, tables=tables, frames=frames, figure_files=files, rubric=analysis.rubric
    )
