"""The analysis of a study's frames already selected, at its main temperature.

:func:`analyse_selected` is what :func:`~.study_analysis.analyse` computes for a study
without criteria, and for each criterion of a rubric study
(:mod:`.criteria_analysis`): the parts asked for, per scale (:mod:`.per_scale`), then
the agreement tables and the report's tables built on the same panels.
"""

from __future__ import annotations

from collections.abc import Collection

from ..data.frames import StudyFrames
from .agreement_tables import agreement_tables, consistency_rows
from .judge_assisted import judge_assisted_rows
from .matrices import Notes
from .model import StudyAnalysis
from .per_scale import scale_analysis
from .settings import AnalysisSettings
from .tables import tables_of

__all__ = ["analyse_selected"]


def analyse_selected(
    frames: StudyFrames,
    settings: AnalysisSettings,
    parts: Collection[str],
    *,
    temperature: float | None,
    how: str,
) -> StudyAnalysis:
    """:func:`analyse` of frames already selected (and caching), at the main temperature."""
    n_items = int((~frames.items["is_attention_check"]).sum())
    consistency = None
    if {"consistency", "agreement_tables", "tables"} & set(parts):
        consistency = consistency_rows(frames, confidence=settings.confidence)
    scales = tuple(
        scale_analysis(frames, s, temperature, settings, parts, consistency, n_items)
        for s in frames.scale_names
    )
    agreement, agreement_notes = None, Notes()
    if {"agreement_tables", "tables"} & set(parts):
        agreement = agreement_tables(
            frames, temperature, settings, agreement_notes, curves=False, consistency=consistency
        )
    tables = None
    if "tables" in parts:
        tables = tables_of(frames, settings, temperature, how, scales, agreement, agreement_notes)
    judge_assisted = None
    if "judge_assisted" in parts:
        judge_assisted = judge_assisted_rows(frames, temperature, settings)
        if tables is not None:
            tables.judge_assisted = judge_assisted
    return StudyAnalysis(
        study=frames.study,
        settings=settings,
        temperature=temperature,
        temperature_note=how,
        n_raters=int(len(frames.demographics)),
        n_items=n_items,
        scales=scales,
        consistency=consistency,
        agreement=agreement,
        agreement_notes=tuple(agreement_notes),
        tables=tables,
        frames=frames,
        judge_assisted=judge_assisted,
    )
