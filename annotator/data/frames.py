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
from sqlmodel import Session, select

from ..models import (
    Benchmark,
    Block,
    Criterion,
    Demographics,
    Item,
    LLMScore,
    Rating,
    Role,
    Scale,
    Study,
    User,
)
from ..study.raters import counted_rater
from .data_version import data_version
from .prompt_versions import latest_prompt_version
from .sql import fetch_rows
from .timestamps import raw_time, utc_times

__all__ = [
    "BLOCK_DONE",
    "BLOCK_IN_PROGRESS",
    "BLOCK_NOT_STARTED",
    "StudyFrames",
    "study_demographics",
    "study_frames",
    "study_llm_scores",
    "data_version",
]

BLOCK_DONE = "done"
BLOCK_IN_PROGRESS = "in progress"
BLOCK_NOT_STARTED = "not started"

RATING_COLUMNS = [
    "item",
    "benchmark",
    "scale",
    "criterion",
    "rater",
    "value",
    "is_repeat",
    "is_attention_check",
    "position",
    "served_at",
    "submitted_at",
    "source",
]
LLM_COLUMNS = [
    "item",
    "benchmark",
    "scale",
    "criterion",
    "model",
    "run",
    "temperature",
    "value",
    "prompt",
]
CRITERION_COLUMNS = ["criterion", "definition", "benchmarks"]
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
        ``criterion`` (its name, "" for a study without criteria), ``rater`` (code), ``value``, ``is_repeat`` (a test-retest repeat),
        ``is_attention_check``, ``position`` (1-based place in the block, NaN when
        imported), ``served_at``, ``submitted_at`` (UTC timestamps; ``served_at`` NaT
        when unknown), ``source`` ("app" or "import"), and ``attention_passed``
        (True/False for attention checks: the score's share of the scale range lies
        within ``gold_tolerance`` of ``gold_score``; NaN otherwise).
    llm : pandas.DataFrame
        One row per LLM score: ``item``, ``benchmark``, ``scale``, ``criterion``, ``model``,
        ``run``
        ("" when the file gave none), ``temperature`` (NaN when unknown), ``value``,
        ``prompt`` (the judge prompt's hash, "" for imported scores). Only the newest
        prompt version of each model, scale, criterion, temperature and benchmark
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
    criteria : pandas.DataFrame
        The study's rubric criteria in the study file's order: ``criterion`` (name),
        ``definition`` (Markdown), ``benchmarks`` (the benchmark names it applies to,
        None for all); no rows for a study without ``[[criteria]]``.
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
    criteria: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=CRITERION_COLUMNS))

    @property
    def has_criteria(self) -> bool:
        """Whether the study has named rubric criteria (``[[criteria]]``)."""
        return not self.criteria.empty

    @property
    def criterion_names(self) -> list[str]:
        """Criterion names in the study's order; ``[""]`` without ``[[criteria]]``."""
        return list(self.criteria["criterion"]) or [""]

    def criteria_of(self, benchmark: str) -> list[str]:
        """The criteria that apply to items of ``benchmark`` (``[""]`` without criteria)."""
        if not self.has_criteria:
            return [""]
        return [
            row.criterion
            for row in self.criteria.itertuples()
            if row.benchmarks is None or benchmark in row.benchmarks
        ]

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


def _ratings(session: Session, study: Study) -> pd.DataFrame:
    dialect = session.get_bind().dialect.name
    query = (
        select(
            Item.external_id,
            Benchmark.name,
            Scale.name,
            Rating.criterion,
            User.rater_code,
            Rating.value,
            Rating.is_repeat,
            Rating.is_attention_check,
            Rating.position,
            raw_time(Rating.served_at, dialect),
            raw_time(Rating.submitted_at, dialect),
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
        frame[column] = utc_times(frame[column])
    return frame


def _attention(
    ratings: pd.DataFrame,
    items: pd.DataFrame,
    scales: pd.DataFrame,
    criterion_gold: dict[str, dict[str, float]],
) -> pd.Series:
    # The rule of collect.scores.attention_passed, on whole columns;
    # ``criterion_gold``: the gold shares per criterion by item id (rubric studies).
    gold = items.set_index("item")
    bounds = scales.set_index("scale")
    low = ratings["scale"].map(bounds["min"]).to_numpy(dtype=float)
    high = ratings["scale"].map(bounds["max"]).to_numpy(dtype=float)
    target = ratings["item"].map(gold["gold_score"]).to_numpy(dtype=float, copy=True)
    if criterion_gold:
        rows = np.flatnonzero(ratings["item"].isin(list(criterion_gold)).to_numpy())
        for row in rows.tolist():
            by_criterion = criterion_gold[ratings["item"].iat[row]]
            target[row] = by_criterion.get(ratings["criterion"].iat[row], target[row])
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
            LLMScore.criterion,
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
        frame, keys=["model", "scale", "criterion", "temperature", "benchmark"]
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


def _items(session: Session, study: Study) -> tuple[pd.DataFrame, dict[str, dict[str, float]]]:
    """The items frame, and the gold shares per criterion of the attention
    checks that set some (``gold_score.CRITERION``), by item id."""
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
    criterion_gold = dict(
        session.exec(
            select(Item.external_id, Item.criterion_gold).where(
                Item.study_id == study.id, Item.criterion_gold.is_not(None)
            )
        ).all()
    )
    return frame, criterion_gold


def _criteria(session: Session, study: Study) -> pd.DataFrame:
    rows = session.exec(
        select(Criterion.name, Criterion.definition, Criterion.benchmarks)
        .where(Criterion.study_id == study.id)
        .order_by(Criterion.position)
    ).all()
    return pd.DataFrame([tuple(row) for row in rows], columns=CRITERION_COLUMNS, dtype=object)


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


def study_llm_scores(session: Session, study: Study) -> pd.DataFrame:
    """:attr:`StudyFrames.llm` alone (the newest prompt's scores), for the exports."""
    return _llm(session, study)[0]


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
        frame[column] = utc_times(frame[column])
    frame["position"] = frame["position"].astype(int)
    frame["status"] = np.where(
        frame["completed_at"].notna(),
        BLOCK_DONE,
        np.where(frame["started_at"].notna(), BLOCK_IN_PROGRESS, BLOCK_NOT_STARTED),
    )
    frame["n_entries"] = [len(row[5] or []) for row in rows]
    return frame


def study_frames(session: Session, study: Study) -> StudyFrames:
    """Read one study into :class:`StudyFrames` (seven queries, no statistics).

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
    items, criterion_gold = _items(session, study)
    ratings = _ratings(session, study)
    ratings["attention_passed"] = _attention(ratings, items, scales, criterion_gold)
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
        criteria=_criteria(session, study),
    )
