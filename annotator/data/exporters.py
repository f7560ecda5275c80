"""Exports of a study's data: long, matrix, alt-test JSON and demographics.

All exports identify raters by their pseudonymous code only. The matrix and
alt-test exports are in :mod:`annotator.data.matrix_export`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pandas as pd
from sqlalchemy import func
from sqlmodel import Session, select

from ..models import (
    Block,
    Demographics,
    Item,
    LLMScore,
    Rating,
    RatingChange,
    RatingSource,
    Role,
    Scale,
    Study,
    User,
)
from .export_scope import ExportError, export_scope
from .matrix_export import MatrixExport, alttest_export, matrix_export
from .selection import Where, raters_where

__all__ = [
    "ExportError",
    "MatrixExport",
    "long_export",
    "matrix_export",
    "alttest_export",
    "demographics_export",
    "FORMATS",
    "RenderedExport",
    "render_export",
]


# ----------------------------------------------------------- demographics


def _demographic_keys(study: Study, answers: list[dict]) -> list[str]:
    keys = [q["key"] for q in study.demographics]
    extra = sorted({k for a in answers for k in a} - set(keys))
    return keys + extra


def demographics_export(session: Session, study: Study) -> pd.DataFrame:
    """One row per rater, keyed by rater code."""
    rows = session.exec(
        select(User, Demographics)
        .join(Demographics, Demographics.user_id == User.id, isouter=True)
        .where(User.study_id == study.id, User.role == Role.RATER)
        .order_by(User.rater_code)
    ).all()
    answers = [d.answers if d else {} for _, d in rows]
    keys = _demographic_keys(study, answers)
    records = []
    for (user, _), given in zip(rows, answers, strict=True):
        record = {
            "rater": user.rater_code,
            "source": user.source,
            "consented_at": user.consented_at,
            "declined_at": user.declined_at,
        }
        record.update({key: given.get(key, "") for key in keys})
        records.append(record)
    return pd.DataFrame(records, columns=["rater", "source", "consented_at", "declined_at", *keys])


# --------------------------------------------------------------------- long

LONG_COLUMNS = [
    "kind",
    "study",
    "item_id",
    "benchmark",
    "scale",
    "rater",
    "model",
    "run",
    "temperature",
    "score",
    "block_position",
    "presentation_position",
    "served_at",
    "submitted_at",
    "duration_seconds",
    "is_repeat",
    "is_attention_check",
    "attention_passed",
    "revisions",
    "source",
]


def _attention_passed(value: float, scale: Scale, gold: float | None, tol: float | None):
    if gold is None or tol is None:
        return None
    share = (value - scale.min) / (scale.max - scale.min)
    return abs(share - gold) <= tol + 1e-9


def long_export(
    session: Session, study: Study, *, scale: str | None = None, benchmark: str | None = None
) -> pd.DataFrame:
    """One row per human rating (kind ``human``) and per LLM score (``llm``)."""
    scope = export_scope(session, study, scale=scale, benchmark=benchmark, one_scale=False)
    bench = scope.benchmark
    scale_by_id = {s.id: s for s in scope.scales}
    bench_names = scope.benchmark_names
    changes = (
        select(RatingChange.rating_id, func.count(RatingChange.id).label("n"))
        .group_by(RatingChange.rating_id)
        .subquery()
    )
    query = (
        select(Rating, Item, User.rater_code, Block.position, changes.c.n)
        .join(Item, Item.id == Rating.item_id)
        .join(User, User.id == Rating.rater_id)
        .join(Block, Block.id == Rating.block_id, isouter=True)
        .join(changes, changes.c.rating_id == Rating.id, isouter=True)
        .where(Item.study_id == study.id, Rating.scale_id.in_(list(scale_by_id)))
        .order_by(User.rater_code, Block.position, Rating.scale_id, Rating.position, Item.id)
    )
    if bench is not None:
        query = query.where(Item.benchmark_id == bench.id)
    demographics = {
        user_id: answers
        for user_id, answers in session.exec(
            select(Demographics.user_id, Demographics.answers)
            .join(User, User.id == Demographics.user_id)
            .where(User.study_id == study.id)
        ).all()
    }
    keys = _demographic_keys(study, list(demographics.values()))
    records = []
    for rating, item, code, block, n_changes in session.exec(query).all():
        the_scale = scale_by_id[rating.scale_id]
        duration = None
        if rating.served_at is not None:
            duration = (rating.submitted_at - rating.served_at).total_seconds()
        record = {
            "kind": "human",
            "study": study.slug,
            "item_id": item.external_id,
            "benchmark": bench_names[item.benchmark_id],
            "scale": the_scale.name,
            "rater": code,
            "score": rating.value,
            "block_position": block,
            "presentation_position": rating.position,
            "served_at": rating.served_at,
            "submitted_at": rating.submitted_at,
            "duration_seconds": duration,
            "is_repeat": rating.is_repeat,
            "is_attention_check": rating.is_attention_check,
            "attention_passed": _attention_passed(
                rating.value, the_scale, item.gold_score, item.gold_tolerance
            )
            if rating.is_attention_check
            else None,
            # Revisions after the first value.
            "revisions": max((n_changes or 1) - 1, 0),
            "source": rating.source,
        }
        answers = demographics.get(rating.rater_id, {})
        record.update({key: answers.get(key, "") for key in keys})
        records.append(record)
    llm_query = (
        select(LLMScore, Item)
        .join(Item, Item.id == LLMScore.item_id)
        .where(Item.study_id == study.id, LLMScore.scale_id.in_(list(scale_by_id)))
        .order_by(LLMScore.model, LLMScore.scale_id, LLMScore.run, Item.id)
    )
    if bench is not None:
        llm_query = llm_query.where(Item.benchmark_id == bench.id)
    for score, item in session.exec(llm_query).all():
        records.append(
            {
                "kind": "llm",
                "study": study.slug,
                "item_id": item.external_id,
                "benchmark": bench_names[item.benchmark_id],
                "scale": scale_by_id[score.scale_id].name,
                "model": score.model,
                "run": score.run,
                "temperature": score.temperature,
                "score": score.value,
                "submitted_at": score.created_at,
                "source": RatingSource.IMPORT.value,
            }
        )
    frame = pd.DataFrame(records, columns=LONG_COLUMNS + keys)
    return frame


# -------------------------------------------------------------- rendering

FORMATS = ("long", "matrix", "alttest", "demographics")


@dataclass
class RenderedExport:
    text: str
    rows: int
    mimetype: str
    filename: str
    # For the matrix: the summary of missing cells.
    notes: str = ""


def number_text(value: object) -> str:
    """A number as people write it: ``4`` not ``4.0``, empty for a missing one.

    Other floats are written as Python's shortest repr, which reads back as the
    same float: a stored score appears exactly as it was typed or imported.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def _csv(frame: pd.DataFrame) -> str:
    # pandas writes a float column with ".0" on whole numbers (and an integer
    # column holding a gap becomes float: block_position, revisions), so float
    # columns are written as text by number_text.
    frame = frame.copy()
    for column in frame.columns[frame.dtypes == "float64"]:
        frame[column] = frame[column].map(number_text)
    return frame.to_csv(index=False, lineterminator="\n")


def render_export(
    session: Session,
    study: Study,
    fmt: str,
    *,
    scale: str | None = None,
    benchmark: str | None = None,
    complete: bool = False,
    temperature: float | None = None,
    runs: str = "mean",
    where: Where | None = None,
) -> RenderedExport:
    """One export as the text of its file; the CLI and the lead's pages share it.

    ``temperature`` (matrix and alttest): the LLM scores' temperature, by default
    the study's main temperature (see :func:`matrix_export`); ``runs`` how a model's
    runs are combined. ``where`` (every format) keeps the raters whose demographic
    answers match (:mod:`annotator.data.selection`); LLM rows stay.
    """
    parts = [study.slug, fmt] + [p for p in (scale, benchmark) if p]
    stem = "-".join(parts)
    llm_options = {
        "scale": scale,
        "benchmark": benchmark,
        "temperature": temperature,
        "runs": runs,
        "where": where,
    }
    if fmt == "matrix":
        matrix = matrix_export(session, study, complete=complete, **llm_options)
        return RenderedExport(
            _csv(matrix.frame),
            len(matrix.frame),
            "text/csv",
            f"{stem}-{matrix.scale.name}.csv" if scale is None else f"{stem}.csv",
            matrix.missing_summary(),
        )
    if fmt == "alttest":
        data = alttest_export(session, study, **llm_options)
        rows = sum(len(v) for v in data["humans"].values())
        return RenderedExport(
            json.dumps(data, indent=1, sort_keys=True) + "\n",
            rows,
            "application/json",
            f"{stem}.json",
        )
    if fmt == "long":
        frame = long_export(session, study, scale=scale, benchmark=benchmark)
    elif fmt == "demographics":
        frame = demographics_export(session, study)
    else:
        raise ExportError(f"unknown format {fmt!r}", field="format", choices=FORMATS)
    chosen = raters_where(session, study, where or {})
    if chosen is not None:
        # LLM rows of the long export have no rater and stay.
        frame = frame[frame["rater"].isin(chosen) | (frame.get("kind", "human") == "llm")]
    return RenderedExport(_csv(frame), len(frame), "text/csv", f"{stem}.csv")
