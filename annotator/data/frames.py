"""A study as pandas frames: the one way from the database to the statistics.

:func:`study_frames` reads a study with a handful of SQL queries into long
frames keyed by the names people see (item ids, rater codes, scale, benchmark
and model names), so that the dashboard, the report and any script compute
from the same rows. Nothing here computes a statistic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sqlalchemy import Float, String, cast, func, type_coerce
from sqlmodel import Session, select

from ..models import (
    Benchmark,
    Block,
    Demographics,
    Item,
    LLMScore,
    Rating,
    RatingChange,
    Role,
    Scale,
    Study,
    User,
)
from ..study.raters import counted_rater
from .prompt_versions import latest_prompt_version
from .sql import fetch_rows

__all__ = [
    "BLOCK_DONE",
    "BLOCK_IN_PROGRESS",
    "BLOCK_NOT_STARTED",
    "StudyFrames",
    "study_demographics",
    "study_frames",
    "data_version",
]

BLOCK_DONE = "done"
BLOCK_IN_PROGRESS = "in progress"
BLOCK_NOT_STARTED = "not started"

RATING_COLUMNS = [
    "item",
    "benchmark",
    "scale",
    "rater",
    "value",
    "is_repeat",
    "is_attention_check",
    "position",
    "served_at",
    "submitted_at",
    "source",
]
LLM_COLUMNS = ["item", "benchmark", "scale", "model", "run", "temperature", "value", "prompt"]
SCALE_COLUMNS = ["scale", "min", "max", "step"]
ITEM_COLUMNS = ["item", "benchmark", "gold_score", "gold_tolerance", "is_attention_check"]
BLOCK_COLUMNS = [
    "rater",
    "scale",
    "position",
    "started_at",
    "completed_at",
    "status",
    "n_entries",
]


@dataclass(frozen=True)
class StudyFrames:
    """One study's data as long pandas frames (one row per observation).

    Attributes
    ----------
    study : str
        The study's slug.
    ratings : pandas.DataFrame
        One row per human rating: ``item`` (item id), ``benchmark``, ``scale`` (name),
        ``rater`` (code), ``value``, ``is_repeat`` (a test-retest repeat),
        ``is_attention_check``, ``position`` (1-based place in the block, NaN when
        imported), ``served_at``, ``submitted_at`` (UTC timestamps; ``served_at`` NaT
        when unknown), ``source`` ("app" or "import"), and ``attention_passed``
        (True/False for attention checks: the score's share of the scale range lies
        within ``gold_tolerance`` of ``gold_score``; NaN otherwise).
    llm : pandas.DataFrame
        One row per LLM score: ``item``, ``benchmark``, ``scale``, ``model``, ``run``
        ("" when the file gave none), ``temperature`` (NaN when unknown), ``value``,
        ``prompt`` (the judge prompt's hash, "" for imported scores). Only the newest
        prompt version of each model, scale, temperature and benchmark
        (:mod:`annotator.data.prompt_versions`); ``llm_superseded`` counts the others
        per scale.
    scales : pandas.DataFrame
        ``scale``, ``min``, ``max``, ``step``, in the study's order.
    items : pandas.DataFrame
        ``item``, ``benchmark``, ``gold_score``, ``gold_tolerance``,
        ``is_attention_check`` (the item has a gold score, and is only shown to check
        the raters), in import order.
    demographics : pandas.DataFrame
        One row per rater who consented (or was imported): ``rater``, then one column
        per answer key (the study's questions first, then any other key found), None
        where the rater gave no answer.
    blocks : pandas.DataFrame
        One row per block: ``rater``, ``scale``, ``position`` (1-based in the
        rater's order), ``started_at``, ``completed_at``, ``status`` (``"done"``,
        ``"in progress"``, ``"not started"``) and ``n_entries`` (entries in the
        block's presentation order, repeats and attention checks included).
    demographic_keys : list of str
        The study's demographic question keys, in the study file's order.
    """

    study: str
    ratings: pd.DataFrame
    llm: pd.DataFrame
    scales: pd.DataFrame
    items: pd.DataFrame
    demographics: pd.DataFrame
    blocks: pd.DataFrame
    demographic_keys: list[str] = field(default_factory=list)
    # LLM scores left out for having been asked under an older prompt, per scale.
    llm_superseded: dict[str, int] = field(default_factory=dict)

    def scale_bounds(self, scale: str) -> tuple[float, float]:
        """``(min, max)`` of a scale; ``ValueError`` naming the known scales."""
        row = self.scales[self.scales["scale"] == scale]
        if row.empty:
            known = ", ".join(self.scales["scale"])
            raise ValueError(f"scale {scale!r} is not in the study (known: {known})")
        return float(row["min"].iloc[0]), float(row["max"].iloc[0])

    @property
    def scale_names(self) -> list[str]:
        """Scale names in the study's order."""
        return list(self.scales["scale"])

    @property
    def benchmark_names(self) -> list[str]:
        """Benchmarks of the non-attention-check items, in import order."""
        items = self.items[~self.items["is_attention_check"]]
        return list(pd.unique(items["benchmark"]))


def _read(session: Session, query, columns: list[str]) -> pd.DataFrame:
    """A DataFrame of a query's rows (see :func:`~annotator.data.sql.fetch_rows`)."""
    rows = fetch_rows(session, query)
    # Plain Python strings (object columns): pandas' own string dtype without
    # pyarrow compares element by element in Python, ten times slower.
    return pd.DataFrame.from_records(rows, columns=columns, coerce_float=False).astype(
        {c: object for c in columns}
    )


def _raw_time(column, dialect: str):
    """The timestamp in a form pandas converts in one vectorised pass.

    Converting 180,000 values one by one through the column type (or, on
    PostgreSQL, parsing the driver's datetime objects) took most of study_frames'
    time. SQLite stores ISO text, read as it is; PostgreSQL gives seconds since
    the epoch as a double (microseconds survive: 2e9 s needs 31 of its 52 bits).
    """
    if dialect == "postgresql":
        return cast(func.extract("epoch", column), Float)
    return type_coerce(column, String)


def _utc(series: pd.Series) -> pd.Series:
    """UTC timestamps from ISO text (SQLite), epoch seconds (PostgreSQL) or datetimes."""
    if series.empty:
        return pd.Series(pd.DatetimeIndex([], tz="UTC"), index=series.index)
    present = series.dropna()
    if len(present) and isinstance(present.iloc[0], float | int):
        seconds = pd.to_numeric(series, errors="raise").astype(float)
        return pd.to_datetime(seconds, unit="s", utc=True).dt.round("us")
    if len(present) and isinstance(present.iloc[0], str):
        return pd.to_datetime(series, utc=True, format="ISO8601")
    return pd.to_datetime(series, utc=True)


def _ratings(session: Session, study: Study) -> pd.DataFrame:
    dialect = session.get_bind().dialect.name
    query = (
        select(
            Item.external_id,
            Benchmark.name,
            Scale.name,
            User.rater_code,
            Rating.value,
            Rating.is_repeat,
            Rating.is_attention_check,
            Rating.position,
            _raw_time(Rating.served_at, dialect),
            _raw_time(Rating.submitted_at, dialect),
            Rating.source,
        )
        .join(Item, Item.id == Rating.item_id)
        .join(Benchmark, Benchmark.id == Item.benchmark_id)
        .join(Scale, Scale.id == Rating.scale_id)
        .join(User, User.id == Rating.rater_id)
        .where(Scale.study_id == study.id)
        .where(counted_rater(Rating.rater_id))  # whose ratings count
        .order_by(Rating.id)
    )
    frame = _read(session, query, RATING_COLUMNS)
    frame["value"] = frame["value"].astype(float)
    frame["position"] = frame["position"].astype(float)
    for column in ("is_repeat", "is_attention_check"):
        frame[column] = frame[column].astype(bool)
    for column in ("served_at", "submitted_at"):
        frame[column] = _utc(frame[column])
    return frame


def _attention(ratings: pd.DataFrame, items: pd.DataFrame, scales: pd.DataFrame) -> pd.Series:
    # The rule of collect.scores.attention_passed, on whole columns.
    gold = items.set_index("item")
    bounds = scales.set_index("scale")
    low = ratings["scale"].map(bounds["min"]).to_numpy(dtype=float)
    high = ratings["scale"].map(bounds["max"]).to_numpy(dtype=float)
    target = ratings["item"].map(gold["gold_score"]).to_numpy(dtype=float)
    tolerance = ratings["item"].map(gold["gold_tolerance"]).to_numpy(dtype=float)
    share = (ratings["value"].to_numpy(dtype=float) - low) / (high - low)
    passed = np.abs(share - target) <= tolerance + 1e-9
    known = ratings["is_attention_check"].to_numpy() & ~np.isnan(target) & ~np.isnan(tolerance)
    return pd.Series(
        np.where(known, passed, None), index=ratings.index, dtype=object, name="attention_passed"
    )


def _llm(session: Session, study: Study) -> tuple[pd.DataFrame, dict[str, int]]:
    query = (
        select(
            Item.external_id,
            Benchmark.name,
            Scale.name,
            LLMScore.model,
            LLMScore.run,
            LLMScore.temperature,
            LLMScore.value,
            LLMScore.prompt_hash,
            LLMScore.id,
        )
        .join(Item, Item.id == LLMScore.item_id)
        .join(Benchmark, Benchmark.id == Item.benchmark_id)
        .join(Scale, Scale.id == LLMScore.scale_id)
        .where(Scale.study_id == study.id)
        .order_by(LLMScore.id)
    )
    frame = _read(session, query, [*LLM_COLUMNS, "order"])
    frame["value"] = frame["value"].astype(float)
    frame["temperature"] = frame["temperature"].astype(float)
    frame["run"] = frame["run"].fillna("").astype(str)
    frame["prompt"] = frame["prompt"].fillna("").astype(str)
    frame, left_out = latest_prompt_version(
        frame, keys=["model", "scale", "temperature", "benchmark"]
    )
    superseded = {str(k): int(n) for k, n in left_out["scale"].value_counts().items()}
    return frame.drop(columns="order").reset_index(drop=True), superseded


def _scales(session: Session, study: Study) -> pd.DataFrame:
    query = (
        select(Scale.name, Scale.min, Scale.max, Scale.step)
        .where(Scale.study_id == study.id)
        .order_by(Scale.position, Scale.id)
    )
    frame = _read(session, query, SCALE_COLUMNS)
    for column in ("min", "max", "step"):
        frame[column] = frame[column].astype(float)
    return frame


def _items(session: Session, study: Study) -> pd.DataFrame:
    query = (
        select(Item.external_id, Benchmark.name, Item.gold_score, Item.gold_tolerance)
        .join(Benchmark, Benchmark.id == Item.benchmark_id)
        .where(Item.study_id == study.id)
        .order_by(Item.id)
    )
    frame = _read(session, query, ITEM_COLUMNS[:4])
    for column in ("gold_score", "gold_tolerance"):
        frame[column] = frame[column].astype(float)
    frame["is_attention_check"] = frame["gold_score"].notna()
    return frame


def _demographics(session: Session, study: Study) -> tuple[pd.DataFrame, list[str]]:
    rows = session.exec(
        select(User.rater_code, Demographics.answers)
        .join(Demographics, Demographics.user_id == User.id, isouter=True)
        .where(
            User.study_id == study.id,
            User.role == Role.RATER,
            User.declined_at.is_(None),
            counted_rater(User.id),  # whose ratings count
        )
        .order_by(User.rater_code)
    ).all()
    asked = [q["key"] for q in study.demographics]
    answers = [dict(given or {}) for _, given in rows]
    extra = sorted({key for given in answers for key in given} - set(asked))
    keys = asked + extra
    frame = pd.DataFrame(
        [
            [code, *(given.get(key) for key in keys)]
            for (code, _), given in zip(rows, answers, strict=True)
        ],
        columns=["rater", *keys],
        dtype=object,
    )
    return frame, asked


def study_demographics(session: Session, study: Study) -> pd.DataFrame:
    """:attr:`StudyFrames.demographics` alone (one query), for choosing raters."""
    return _demographics(session, study)[0]


def _blocks(session: Session, study: Study) -> pd.DataFrame:
    query = (
        select(
            User.rater_code,
            Scale.name,
            Block.position,
            Block.started_at,
            Block.completed_at,
            Block.item_order,
        )
        .join(Scale, Scale.id == Block.scale_id)
        .join(User, User.id == Block.rater_id)
        .where(Scale.study_id == study.id)
        .where(counted_rater(Block.rater_id))  # whose ratings count
        .order_by(User.rater_code, Block.position)
    )
    rows = session.exec(query).all()
    frame = pd.DataFrame([row[:5] for row in rows], columns=BLOCK_COLUMNS[:5], dtype=object)
    for column in ("started_at", "completed_at"):
        frame[column] = _utc(frame[column])
    frame["position"] = frame["position"].astype(int)
    frame["status"] = np.where(
        frame["completed_at"].notna(),
        BLOCK_DONE,
        np.where(frame["started_at"].notna(), BLOCK_IN_PROGRESS, BLOCK_NOT_STARTED),
    )
    frame["n_entries"] = [len(row[5] or []) for row in rows]
    return frame


def study_frames(session: Session, study: Study) -> StudyFrames:
    """Read one study into :class:`StudyFrames` (six queries, no statistics).

    Withdrawn and excluded raters' ratings, answers and blocks are left out
    (:func:`annotator.study.raters.counted_rater`), as in every export.

    Parameters
    ----------
    session : sqlmodel.Session
        An open session; nothing is written.
    study : Study
        The study to read.

    Returns
    -------
    StudyFrames
    """
    scales = _scales(session, study)
    items = _items(session, study)
    ratings = _ratings(session, study)
    ratings["attention_passed"] = _attention(ratings, items, scales)
    demographics, keys = _demographics(session, study)
    llm, superseded = _llm(session, study)
    return StudyFrames(
        study=study.slug,
        ratings=ratings,
        llm=llm,
        scales=scales,
        items=items,
        demographics=demographics,
        blocks=_blocks(session, study),
        demographic_keys=keys,
        llm_superseded=superseded,
    )


def data_version(session: Session, study: Study) -> tuple:
    """Cheap aggregates that change whenever the study's data changes.

    Used as the key of cached results: the highest and the number of rating,
    LLM score ids, the highest rating change id, the number of items and of started and
    completed blocks, the number of demographic answers, and the number and
    latest time of rater status changes (withdrawn, excluded, included).
    """
    scale_ids = select(Scale.id).where(Scale.study_id == study.id).scalar_subquery()
    ratings = session.exec(
        select(func.max(Rating.id), func.count(Rating.id)).where(Rating.scale_id.in_(scale_ids))
    ).one()
    # Any study's revision invalidates: the primary key's maximum is one
    # index lookup, where counting this study's changes would scan them.
    changes = session.exec(select(func.max(RatingChange.id))).one()
    llm = session.exec(
        select(func.max(LLMScore.id), func.count(LLMScore.id)).where(
            LLMScore.scale_id.in_(scale_ids)
        )
    ).one()
    items = session.exec(
        select(func.max(Item.id), func.count(Item.id)).where(Item.study_id == study.id)
    ).one()
    blocks = session.exec(
        select(
            func.count(Block.id),
            func.count(Block.started_at),
            func.count(Block.completed_at),
        ).where(Block.scale_id.in_(scale_ids))
    ).one()
    answers = session.exec(
        select(func.max(Demographics.id), func.count(Demographics.id))
        .join(User, User.id == Demographics.user_id)
        .where(User.study_id == study.id)
    ).one()
    # Withdrawing, excluding or including a rater changes what counts.
    statuses = session.exec(
        select(func.count(User.id), func.max(User.status_changed_at)).where(
            User.study_id == study.id, User.status_changed_at.is_not(None)
        )
    ).one()
    return (
        study.id,
        tuple(ratings),
        tuple(statuses),
        changes,
        tuple(llm),
        tuple(items),
        tuple(blocks),
        tuple(answers),
        study.source_toml,
    )
