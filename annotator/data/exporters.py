"""Exports of a study's data: long, matrix, alt-test JSON and demographics.

All exports identify raters by their pseudonymous code only. The matrix and
alt-test exports are in :mod:`annotator.data.matrix_export`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
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
    Study,
    User,
)
from ..study.raters import counted_rater
from .export_scope import ExportError, export_scope
from .frames import _raw_time, _utc
from .matrix_export import MatrixExport, alttest_export, matrix_export
from .selection import Where, raters_where
from .sql import stream_rows

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
        .where(counted_rater(User.id))  # whose ratings count
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
    "prompt_hash",
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
    "study_version",
    # The crowd platform's study and session the block was done under
    # (Prolific STUDY_ID and SESSION_ID, MTurk hitId and assignmentId).
    "platform_study_id",
    "platform_session_id",
]


# Rows per chunk of the long export: each chunk is read, converted and written
# before the next is fetched, so memory stays flat however large the study.
LONG_CHUNK = 50_000


@dataclass(frozen=True)
class _LongContext:
    """What every chunk of a long export needs, looked up once."""

    study: Study
    scale_names: dict[int, str]
    scale_bounds: dict[int, tuple[float, float]]
    bench_names: dict[int, str]
    demographic_keys: list[str]
    # Per demographic key: rater id -> answer.
    answers: dict[str, dict[int, str]]
    human_query: object
    llm_query: object


def _long_context(
    session: Session,
    study: Study,
    *,
    scale: str | None,
    benchmark: str | None,
    where: Where | None = None,
) -> _LongContext:
    """Resolve the export's scope (raising ExportError at once) and build its queries."""
    scope = export_scope(session, study, scale=scale, benchmark=benchmark, one_scale=False)
    bench = scope.benchmark
    scale_ids = [s.id for s in scope.scales]
    dialect = session.get_bind().dialect.name
    changes = (
        select(RatingChange.rating_id, func.count(RatingChange.id).label("n"))
        .group_by(RatingChange.rating_id)
        .subquery()
    )
    # One joined query of plain columns; a further filter (on the rater, say)
    # is one more .where() here.
    human_query = (
        select(
            Item.external_id,
            Item.benchmark_id,
            Rating.scale_id,
            User.rater_code,
            Rating.rater_id,
            Rating.value,
            Block.position,
            Rating.position,
            _raw_time(Rating.served_at, dialect),
            _raw_time(Rating.submitted_at, dialect),
            Rating.is_repeat,
            Rating.is_attention_check,
            Item.gold_score,
            Item.gold_tolerance,
            changes.c.n,
            Rating.source,
            Rating.study_version,
            Block.platform_study_id,
            Block.platform_session_id,
        )
        .join(Item, Item.id == Rating.item_id)
        .join(User, User.id == Rating.rater_id)
        .join(Block, Block.id == Rating.block_id, isouter=True)
        .join(changes, changes.c.rating_id == Rating.id, isouter=True)
        .where(Item.study_id == study.id, Rating.scale_id.in_(scale_ids))
        .where(counted_rater(Rating.rater_id))  # whose ratings count
        .order_by(User.rater_code, Block.position, Rating.scale_id, Rating.position, Item.id)
    )
    llm_query = (
        select(
            Item.external_id,
            Item.benchmark_id,
            LLMScore.scale_id,
            LLMScore.model,
            LLMScore.run,
            LLMScore.temperature,
            LLMScore.value,
            _raw_time(LLMScore.created_at, dialect),
            LLMScore.prompt_hash,
        )
        .join(Item, Item.id == LLMScore.item_id)
        .where(Item.study_id == study.id, LLMScore.scale_id.in_(scale_ids))
        .order_by(LLMScore.model, LLMScore.scale_id, LLMScore.run, Item.id)
    )
    if bench is not None:
        human_query = human_query.where(Item.benchmark_id == bench.id)
        llm_query = llm_query.where(Item.benchmark_id == bench.id)
    chosen = raters_where(session, study, where or {})
    if chosen is not None:
        # LLM rows have no rater and stay.
        human_query = human_query.where(User.rater_code.in_(sorted(chosen)))
    demographics = dict(
        session.exec(
            select(Demographics.user_id, Demographics.answers)
            .join(User, User.id == Demographics.user_id)
            .where(User.study_id == study.id)
            .where(counted_rater(User.id))  # whose ratings count
        ).all()
    )
    keys = _demographic_keys(study, list(demographics.values()))
    answers = {
        key: {uid: given[key] for uid, given in demographics.items() if key in given}
        for key in keys
    }
    return _LongContext(
        study=study,
        scale_names={s.id: s.name for s in scope.scales},
        scale_bounds={s.id: (s.min, s.max) for s in scope.scales},
        bench_names=scope.benchmark_names,
        demographic_keys=keys,
        answers=answers,
        human_query=human_query,
        llm_query=llm_query,
    )


HUMAN_FIELDS = [
    "item_id",
    "benchmark_id",
    "scale_id",
    "rater",
    "rater_id",
    "score",
    "block_position",
    "presentation_position",
    "served_at",
    "submitted_at",
    "is_repeat",
    "is_attention_check",
    "gold_score",
    "gold_tolerance",
    "changes",
    "source",
    "study_version",
    "platform_study_id",
    "platform_session_id",
]
LLM_FIELDS = [
    "item_id",
    "benchmark_id",
    "scale_id",
    "model",
    "run",
    "temperature",
    "score",
    "submitted_at",
    "prompt_hash",
]


def _floats(column: pd.Series) -> pd.Series:
    return pd.to_numeric(column, errors="coerce").astype(float)


def _human_chunk(rows: list[tuple], ctx: _LongContext) -> pd.DataFrame:
    raw = pd.DataFrame.from_records(rows, columns=HUMAN_FIELDS, coerce_float=False)
    frame = pd.DataFrame(index=raw.index)
    frame["kind"] = "human"
    frame["study"] = ctx.study.slug
    frame["item_id"] = raw["item_id"]
    frame["benchmark"] = raw["benchmark_id"].map(ctx.bench_names)
    frame["scale"] = raw["scale_id"].map(ctx.scale_names)
    frame["rater"] = raw["rater"]
    frame["model"] = None
    frame["run"] = None
    frame["temperature"] = float("nan")
    frame["prompt_hash"] = None
    score = _floats(raw["score"])
    frame["score"] = score
    frame["block_position"] = _floats(raw["block_position"])
    frame["presentation_position"] = _floats(raw["presentation_position"])
    frame["served_at"] = _utc(raw["served_at"])
    frame["submitted_at"] = _utc(raw["submitted_at"])
    # Whole microseconds over 10**6, as timedelta.total_seconds() computes it
    # (pandas' total_seconds differs in the last bit).
    elapsed = (frame["submitted_at"] - frame["served_at"]).to_numpy("timedelta64[us]")
    duration = elapsed.astype("int64") / 1e6
    frame["duration_seconds"] = np.where(np.isnat(elapsed), np.nan, duration)
    frame["is_repeat"] = raw["is_repeat"].astype(bool)
    check = raw["is_attention_check"].astype(bool)
    frame["is_attention_check"] = check
    # As a share of the scale's range, the gold score's unit (same operations
    # in the same order as the rater-facing check).
    low = raw["scale_id"].map({k: v[0] for k, v in ctx.scale_bounds.items()}).astype(float)
    high = raw["scale_id"].map({k: v[1] for k, v in ctx.scale_bounds.items()}).astype(float)
    gold, tolerance = _floats(raw["gold_score"]), _floats(raw["gold_tolerance"])
    share = (score - low) / (high - low)
    passed = ((share - gold).abs() <= tolerance + 1e-9).astype(object)
    known = check & gold.notna() & tolerance.notna()
    frame["attention_passed"] = passed.where(known, None)
    # Revisions after the first value (a rating without history has none).
    frame["revisions"] = (_floats(raw["changes"]).fillna(1) - 1).clip(lower=0).astype(int)
    frame["source"] = raw["source"]
    frame["study_version"] = raw["study_version"]
    frame["platform_study_id"] = raw["platform_study_id"]
    frame["platform_session_id"] = raw["platform_session_id"]
    for key in ctx.demographic_keys:
        # Through the distinct raters, so a numeric answer keeps its type and a
        # missing one is empty (a NaN would turn the column to float).
        given = ctx.answers[key]
        frame[key] = raw["rater_id"].map({r: given.get(r, "") for r in raw["rater_id"].unique()})
    return frame


def _llm_chunk(rows: list[tuple], ctx: _LongContext) -> pd.DataFrame:
    raw = pd.DataFrame.from_records(rows, columns=LLM_FIELDS, coerce_float=False)
    frame = pd.DataFrame(index=raw.index, columns=LONG_COLUMNS + ctx.demographic_keys)
    frame["kind"] = "llm"
    frame["study"] = ctx.study.slug
    frame["item_id"] = raw["item_id"]
    frame["benchmark"] = raw["benchmark_id"].map(ctx.bench_names)
    frame["scale"] = raw["scale_id"].map(ctx.scale_names)
    frame["model"] = raw["model"]
    frame["run"] = raw["run"]
    frame["temperature"] = _floats(raw["temperature"])
    frame["score"] = _floats(raw["score"])
    frame["submitted_at"] = _utc(raw["submitted_at"])
    frame["prompt_hash"] = raw["prompt_hash"]
    # A score with a prompt hash came from ``annotator judge``.
    frame["source"] = np.where(raw["prompt_hash"].notna(), "judge", RatingSource.IMPORT.value)
    return frame


def _long_chunks(session: Session, ctx: _LongContext) -> Iterator[pd.DataFrame]:
    columns = LONG_COLUMNS + ctx.demographic_keys
    for rows in stream_rows(session, ctx.human_query, size=LONG_CHUNK):
        yield _human_chunk(rows, ctx)[columns]
    for rows in stream_rows(session, ctx.llm_query, size=LONG_CHUNK):
        yield _llm_chunk(rows, ctx)[columns]


def long_export(
    session: Session, study: Study, *, scale: str | None = None, benchmark: str | None = None
) -> pd.DataFrame:
    """One row per human rating (kind ``human``) and per LLM score (``llm``).

    The rows are read in chunks of plain columns from one joined query per
    kind (see :func:`long_export_chunks`, which the file export streams).
    """
    chunks = list(long_export_chunks(session, study, scale=scale, benchmark=benchmark))
    ctx_columns = chunks[0].columns if chunks else None
    if not chunks:
        ctx = _long_context(session, study, scale=scale, benchmark=benchmark)
        return pd.DataFrame(columns=LONG_COLUMNS + ctx.demographic_keys)
    return pd.concat(chunks, ignore_index=True)[ctx_columns]


def long_export_chunks(
    session: Session, study: Study, *, scale: str | None = None, benchmark: str | None = None
) -> Iterator[pd.DataFrame]:
    """The long export's rows, a frame of at most ``LONG_CHUNK`` rows at a time.

    ``ExportError`` (an unknown scale or benchmark) is raised at the call, before
    any row is read.
    """
    ctx = _long_context(session, study, scale=scale, benchmark=benchmark)
    return _long_chunks(session, ctx)


# -------------------------------------------------------------- rendering

FORMATS = ("long", "matrix", "alttest", "demographics")


@dataclass
class RenderedExport:
    """An export's file: its text, or for a streamed export the pieces of it.

    ``parts()`` gives the pieces to write one after another (the long export
    is written chunk by chunk, never held whole); ``text`` joins them. For a
    streamed export ``rows`` is counted as the pieces are produced.
    """

    body: str | Iterator[str]
    rows: int
    mimetype: str
    filename: str
    # For the matrix: the summary of missing cells.
    notes: str = ""

    def parts(self) -> Iterator[str]:
        if isinstance(self.body, str):
            yield self.body
        else:
            yield from self.body

    @property
    def text(self) -> str:
        if not isinstance(self.body, str):
            self.body = "".join(self.body)
        return self.body


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


def _number_column(column: pd.Series) -> pd.Series:
    """``number_text`` of every value of a float column, in numpy.

    numpy's ``astype(str)`` writes a float64 as Python's shortest ``repr`` does
    (checked against ``repr`` in tests/data/test_long_export.py); whole numbers
    go through int64 as ``str(int(value))``. Values beyond int64 take the
    Python path.
    """
    values = column.to_numpy(dtype=float)
    text = values.astype(str).astype(object)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(values) & (values == np.trunc(values))
    small = whole & (np.abs(values) < 2**62)
    text[small] = values[small].astype(np.int64).astype(str)
    large = whole & ~small
    text[large] = [number_text(float(v)) for v in values[large]]
    text[np.isnan(values)] = ""
    return pd.Series(text, index=column.index)


def _csv(frame: pd.DataFrame, *, header: bool = True) -> str:
    # pandas writes a float column with ".0" on whole numbers (and an integer
    # column holding a gap becomes float: block_position, revisions), so float
    # columns are written as text by number_text.
    frame = frame.copy()
    for column in frame.columns[frame.dtypes == "float64"]:
        frame[column] = _number_column(frame[column])
    return frame.to_csv(index=False, header=header, lineterminator="\n")


def _time_text(column: pd.Series) -> pd.Series:
    """UTC times as ``2026-01-05 09:00:27.351650+00:00``, empty where missing.

    One format for every row (pandas would drop the microseconds from a
    column whose times all fall on whole seconds), so the file does not depend
    on how it was cut into chunks. Built in numpy: the ISO text with its "T"
    turned into a space in place, then the offset appended.
    """
    values = column.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy("datetime64[us]")
    iso = np.datetime_as_string(values, unit="us")
    if len(iso) and iso.dtype.itemsize // 4 >= 26:
        # Each row is 26 UCS-4 characters "YYYY-MM-DDTHH:MM:SS.ffffff"; the
        # 11th is the "T" (NaT rows are masked below).
        chars = iso.view(np.uint32).reshape(len(iso), -1)
        chars[:, 10] = np.where(chars[:, 10] == ord("T"), ord(" "), chars[:, 10])
    text = np.strings.add(iso, "+00:00").astype(object)
    text[np.isnat(values)] = ""
    return pd.Series(text, index=column.index)


def _long_csv(
    chunks: Iterator[pd.DataFrame], export: RenderedExport, columns: list[str]
) -> Iterator[str]:
    header = True
    for frame in chunks:
        frame = frame.copy()
        for column in ("served_at", "submitted_at"):
            if isinstance(frame[column].dtype, pd.DatetimeTZDtype):
                frame[column] = _time_text(frame[column])
        yield _csv(frame, header=header)
        header = False
        export.rows += len(frame)
    if header:
        # No rows: the header alone.
        yield pd.DataFrame(columns=columns).to_csv(index=False, lineterminator="\n")


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
        ctx = _long_context(session, study, scale=scale, benchmark=benchmark, where=where)
        export = RenderedExport("", 0, "text/csv", f"{stem}.csv")
        columns = LONG_COLUMNS + ctx.demographic_keys
        export.body = _long_csv(_long_chunks(session, ctx), export, columns)
        return export
    if fmt == "demographics":
        frame = demographics_export(session, study)
    else:
        raise ExportError(f"unknown format {fmt!r}", field="format", choices=FORMATS)
    chosen = raters_where(session, study, where or {})
    if chosen is not None:
        frame = frame[frame["rater"].isin(chosen)]
    return RenderedExport(_csv(frame), len(frame), "text/csv", f"{stem}.csv")
