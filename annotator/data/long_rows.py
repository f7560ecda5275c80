"""The long export: one row per human rating and per LLM score, read in chunks.

One joined query of plain columns per kind, turned into pandas frames of at
most ``LONG_CHUNK`` rows, so memory stays flat however large the study;
:func:`annotator.data.exporters.render_export` writes the chunks as CSV.
"""

from __future__ import annotations

import json
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
    Study,
    User,
)
from ..study.criteria import has_criteria
from ..study.long_columns import LONG_COLUMNS, long_columns
from ..study.raters import counted_rater
from .export_scope import export_scope
from .selection import Where, raters_where
from .sql import stream_rows
from .timestamps import raw_time as _raw_time
from .timestamps import utc_times as _utc

__all__ = ["LONG_CHUNK", "LONG_COLUMNS", "long_export", "long_export_chunks"]


def demographic_keys(study: Study, answers: list[dict]) -> list[str]:
    """The study's questions in order, then any other answered key, sorted."""
    keys = [q["key"] for q in study.demographics]
    extra = sorted({k for a in answers for k in a} - set(keys))
    return keys + extra


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
    # The file's columns: LONG_COLUMNS (with "criterion" after "scale" in a
    # rubric study), then the demographic keys.
    columns: list[str]
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
            Rating.criterion,
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
            Item.criterion_gold,
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
        .order_by(
            User.rater_code,
            Block.position,
            Rating.scale_id,
            Rating.position,
            Item.id,
            Rating.criterion,
        )
    )
    llm_query = (
        select(
            Item.external_id,
            Item.benchmark_id,
            LLMScore.scale_id,
            LLMScore.criterion,
            LLMScore.model,
            LLMScore.run,
            LLMScore.temperature,
            LLMScore.value,
            _raw_time(LLMScore.created_at, dialect),
            LLMScore.prompt_hash,
        )
        .join(Item, Item.id == LLMScore.item_id)
        .where(Item.study_id == study.id, LLMScore.scale_id.in_(scale_ids))
        .order_by(LLMScore.model, LLMScore.scale_id, LLMScore.run, Item.id, LLMScore.criterion)
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
    keys = demographic_keys(study, list(demographics.values()))
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
        columns=long_columns(has_criteria(session, study)) + keys,
        answers=answers,
        human_query=human_query,
        llm_query=llm_query,
    )


HUMAN_FIELDS = [
    "item_id",
    "benchmark_id",
    "scale_id",
    "criterion",
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
    "criterion_gold",
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
    "criterion",
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
    frame["criterion"] = raw["criterion"]
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
    gold = _criterion_gold(gold, raw)
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


def _criterion_gold(gold: pd.Series, raw: pd.DataFrame) -> pd.Series:
    """The gold shares with a rubric check's ``gold_score.CRITERION`` in place
    of its ``gold_score`` on that criterion (collect.scores.criterion_gold_share)."""
    present = raw["criterion_gold"].notna()
    if not present.any():
        return gold
    gold = gold.copy()
    for row in np.flatnonzero(present.to_numpy()).tolist():
        shares = raw["criterion_gold"].iat[row]
        # The driver's JSON: text on SQLite, already parsed on PostgreSQL.
        shares = json.loads(shares) if isinstance(shares, str) else shares
        gold.iat[row] = shares.get(raw["criterion"].iat[row], gold.iat[row])
    return gold


def _llm_chunk(rows: list[tuple], ctx: _LongContext) -> pd.DataFrame:
    raw = pd.DataFrame.from_records(rows, columns=LLM_FIELDS, coerce_float=False)
    frame = pd.DataFrame(index=raw.index, columns=ctx.columns)
    frame["kind"] = "llm"
    frame["study"] = ctx.study.slug
    frame["item_id"] = raw["item_id"]
    frame["benchmark"] = raw["benchmark_id"].map(ctx.bench_names)
    frame["scale"] = raw["scale_id"].map(ctx.scale_names)
    frame["criterion"] = raw["criterion"]
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
    columns = ctx.columns
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
        return pd.DataFrame(columns=ctx.columns)
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
