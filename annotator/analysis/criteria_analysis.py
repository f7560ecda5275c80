"""The analysis of a study with ``[[criteria]]``: each criterion on its own, then across.

:func:`~.study_analysis.analyse` hands a rubric study here. Every criterion is
analysed as a study of its own (:func:`~.criteria.criterion_frames`, the same
:func:`~.study_analysis.analyse_selected` a study without criteria goes through, at
the study's main temperature), so each criterion's dashboard and report tables are
those of a one-criterion study with its ratings. The report's tables of all criteria
are also put together, each with a leading ``criterion`` column
(:func:`combined_tables`), for ``annotator report --tables``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import fields, replace

import pandas as pd

from ..data.frames import StudyFrames
from .criteria import criterion_frames, criterion_names, rubric_tables
from .matrices import Notes, caching_frames
from .settings import AnalysisSettings
from .study_analysis import StudyAnalysis, analyse_selected
from .tables import ReportTables

__all__ = ["analyse_criteria", "combined_tables"]


def combined_tables(per_criterion: dict[str, ReportTables]) -> ReportTables:
    """Every criterion's report tables in one, each row with its ``criterion`` first.

    The notes are each criterion's, named by it; the settings are the study's.
    """
    first = next(iter(per_criterion.values()))
    values = {}
    for spec in fields(ReportTables):
        if spec.name == "notes":
            notes = Notes()
            for name, tables in per_criterion.items():
                for line in tables.notes:
                    notes.add(f"criterion {name}: {line}")
            values["notes"] = list(notes)
        elif spec.name == "settings":
            values["settings"] = first.settings
        else:
            parts = []
            for name, tables in per_criterion.items():
                frame = getattr(tables, spec.name)
                parts.append(frame.copy().assign(criterion=name)[["criterion", *frame.columns]])
            values[spec.name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return ReportTables(**values)


def analyse_criteria(
    frames: StudyFrames,
    settings: AnalysisSettings,
    parts: Collection[str],
    criterion: str | None,
    *,
    temperature: float | None,
    how: str,
) -> StudyAnalysis:
    """:func:`~.study_analysis.analyse` of a study with criteria (see its ``criterion``)."""
    names = criterion_names(frames)
    if criterion is not None and criterion not in names:
        known = ", ".join(map(repr, names)) or "none: the study has no [[criteria]]"
        raise ValueError(
            f"criterion: {criterion!r} is not a criterion of the study (known: {known})"
        )
    chosen = names if criterion is None else [criterion]
    per = {}
    for name in chosen:
        mine = caching_frames(criterion_frames(frames, name))
        one = analyse_selected(mine, settings, parts, temperature=temperature, how=how)
        per[name] = replace(one, criterion=name, criteria=tuple(names))
    rubric = None
    if criterion is None:
        alttest = bool({"alttest", "tables"} & set(parts))
        rubric = rubric_tables(frames, per, temperature, settings, alttest=alttest)
    tables = None
    if "tables" in parts:
        tables = combined_tables({name: a.tables for name, a in per.items()})
    return replace(per[chosen[0]], by_criterion=per, rubric=rubric, tables=tables)
