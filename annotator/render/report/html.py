"""The study report as one self-contained HTML file: the paper's tables, the figures, the notes.

Layout only: every number comes from :class:`annotator.analysis.tables.ReportTables`
(computed through ``annotator.metrics``); :mod:`.sections` picks and orders them,
:mod:`.cells` formats them and this module renders the page.
The page has no external reference: the style is inline and the figures are PNG data
URIs, so the file opens offline and can be mailed or archived as it is.

The template is rendered with a plain Jinja environment (not Flask's), so the command
line and the web download produce the same bytes without a request context.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from ..verdict import VERDICT_HEADERS
from .caution import WEAK_NOTE
from .sections import report_figures, report_sections
from .words import column_glossary

__all__ = ["render_report"]

TEMPLATES = Path(__file__).with_name("templates")


def _settings(settings: Any) -> list[tuple[str, str]]:
    if settings is None:
        return []
    if dataclasses.is_dataclass(settings):
        settings = dataclasses.asdict(settings)
    if isinstance(settings, Mapping):
        return [(str(k).replace("_", " "), _plain(v)) for k, v in settings.items()]
    return [("settings", str(settings))]


def _plain(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_plain(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    if value is None:
        return "not set"
    return str(value)


@cache
def _environment():
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_report(
    tables,
    *,
    title: str | None = None,
    study: str = "",
    generated_at: datetime | None = None,
    drawn: Mapping[str, Any] | None = None,
    rubric: Any = None,
    criteria: list | None = None,
    verdicts: tuple = (),
    confidence: float = 0.95,
) -> str:
    """Render the report of one study as a self-contained HTML page.

    Parameters
    ----------
    tables : annotator.analysis.tables.ReportTables
        The tables, notes and settings to lay out.
    title : str, optional
        The page's title; by default "Report: <study>".
    study : str
        The study's slug, shown in the header.
    generated_at : datetime, optional
        Shown in the header; by default now (UTC).
    drawn : mapping, optional
        Figures already drawn (:class:`.figures.Drawn` by key); the others are drawn here.
    rubric : annotator.analysis.criteria.RubricTables, optional
        In a study with ``[[criteria]]``: the tables across criteria, shown first.
    criteria : list, optional
        With ``rubric``: each criterion's ``(name, tables, drawn)``
        (:data:`.criteria_sections.CriterionPart`), laid out one after the other;
        ``tables`` then holds them all with a ``criterion`` column (only its notes and
        settings are shown).
    verdicts : tuple of annotator.render.verdict.VerdictLine
        The verdict table the report opens with (the dashboard's and ``annotator
        verdict``'s lines); ``confidence`` is its intervals' coverage.
    """
    from .figures import FIGURES
    from .omitted import left_out, not_computed, shown_sections

    stamp = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    notes = list(tables.notes or [])
    # The figures that belong to no single table.
    loose = [k for k in FIGURES if k in ("distributions", "icc", "figure2")]
    parts = []
    if rubric is not None:
        from .criteria_sections import criterion_part, rubric_sections

        sections, left = shown_sections(rubric_sections(rubric, tables.settings or {}), tables)
        for index, (name, one, one_drawn) in enumerate(criteria or []):
            part, part_left = criterion_part(index, name, one, one_drawn)
            parts.append(part)
            left += part_left + left_out(one, loose, where=name)
        figures: list = []
        notes += [note for note in rubric.notes if note not in notes]
    else:
        sections, left = shown_sections(report_sections(tables, drawn), tables)
        figures = report_figures(tables, drawn)
        left += left_out(tables, loose)
    shown = sections + [s for part in parts for s in part.sections]
    glossary = column_glossary(c for s in shown for c in s.frame.columns)
    return (
        _environment()
        .get_template("report.html")
        .render(
            title=title or f"Report: {study}",
            study=study,
            generated_at=stamp,
            settings=_settings(tables.settings),
            not_computed=not_computed(notes, left),
            sections=sections,
            parts=parts,
            figures=figures,
            verdicts=verdicts,
            verdict_headers=[h.format(ci=f"{100 * confidence:g}% CI") for h in VERDICT_HEADERS],
            glossary=glossary,
            weak_note=WEAK_NOTE,
        )
    )
