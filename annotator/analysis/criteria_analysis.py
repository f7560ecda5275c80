"""The analysis of a study with ``[[criteria]]``: each criterion on its own, then across.

:func:`~.study_analysis.analyse` hands a rubric study here. Every criterion is
analysed as a study of its own (:func:`~.criteria.criterion_frames`, the same
:func:`~.selected.analyse_selected` a study without criteria goes through, at
the study's main temperature), so each criterion's dashboard and report tables are
those of a one-criterion study with its ratings. The report's tables of all criteria
are also put together, each with a leading ``criterion`` column
(:func:`combined_tables`), for ``annotator report --tables``, and so are the agreement
and self-consistency tables (``annotator agreement`` and ``consistency`` print every
criterion's rows).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import fields, replace

import pandas as pd

from ..data.frames import StudyFrames
from .criteria import criterion_frames, criterion_names, rubric_tables
from .matrices import Notes, caching_frames
from .model import ReportTables, StudyAnalysis
from .selected import analyse_selected
from .settings import AnalysisSettings

__all__ = ["analyse_criteria", "combined_tables"]


def _stacked(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each criterion's frame (by name), its rows named by a leading ``criterion`` column."""
    parts = [
        frame.copy().assign(criterion=name)[["criterion", *frame.columns]]
        for name, frame in frames.items()
    ]
    return pd.concat(parts, ignore_index=True)


def _named_notes(notes: dict[str, Collection[str]]) -> list[str]:
    out = Notes()
    for name, lines in notes.items():
        for line in lines:
            out.add(f"criterion {name}: {line}")
    return list(out)


def combined_tables(per_criterion: dict[str, ReportTables]) -> ReportTables:
    """Every criterion's report tables in one, each row with its ``criterion`` first.

    The notes are each criterion's, named by it; the settings are the study's.
    """
    first = next(iter(per_criterion.values()))
    values = {}
    for spec in fields(ReportTables):
        if spec.name == "notes":
            values["notes"] = _named_notes({n: t.notes for n, t in per_criterion.items()})
        elif spec.name == "settings":
            values["settings"] = first.settings
        else:
            values[spec.name] = _stacked(
                {name: getattr(t, spec.name) for name, t in per_criterion.items()}
            )
    return ReportTables(**values)


def _combined_agreement(per: dict[str, StudyAnalysis]) -> dict:
    """The study-wide fields of every criterion's analysis, stacked (what was computed)."""
    first = next(iter(per.values()))
    out: dict = {}
    if first.consistency is not None:
        out["consistency"] = _stacked({n: a.consistency for n, a in per.items()})
    if first.agreement is not None:
        out["agreement"] = {
            key: _stacked({n: a.agreement[key] for n, a in per.items()}) for key in first.agreement
        }
        out["agreement_notes"] = tuple(_named_notes({n: a.agreement_notes for n, a in per.items()}))
    return out


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
        rubric = rubric_tables(frames, per, settings, alttest=alttest)
    tables = None
    if "tables" in parts:
        tables = combined_tables({name: a.tables for name, a in per.items()})
    combined = _combined_agreement(per) if criterion is None else {}
    return replace(per[chosen[0]], by_criterion=per, rubric=rubric, tables=tables, **combined)
