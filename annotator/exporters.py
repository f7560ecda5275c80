"""Exports of a study's data: long, matrix, alt-test JSON and demographics.

All exports identify raters by their pseudonymous code only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import func
from sqlmodel import Session, select

from .models import (
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
from .studies import study_benchmarks, study_scales

__all__ = [
    "ExportError",
    "MatrixExport",
    "long_export",
    "matrix_export",
    "alttest_export",
    "demographics_export",
    "largest_complete_block",
    "LLM_PREFIX",
    "FORMATS",
    "RenderedExport",
    "render_export",
]

LLM_PREFIX = "llm:"


class ExportError(ValueError):
    """An export that cannot be made as asked.

    The message names no command-line option or form field: ``field`` says
    which choice is missing or wrong (``scale``, ``benchmark`` or ``format``)
    and ``choices`` what it may be, and each face adds its own words (the CLI
    its ``--scale`` option, the study page its Scale list).
    """

    def __init__(self, message: str, *, field: str, choices: Sequence[str]) -> None:
        super().__init__(message)
        self.field = field
        self.choices = list(choices)


def _pick_scale(session: Session, study: Study, name: str | None) -> Scale:
    scales = study_scales(session, study)
    names = [s.name for s in scales]
    if name is None:
        if len(scales) == 1:
            return scales[0]
        raise ExportError("this export is for one scale", field="scale", choices=names)
    for scale in scales:
        if scale.name == name:
            return scale
    raise ExportError(f"unknown scale {name!r}", field="scale", choices=names)


def _pick_benchmark(session: Session, study: Study, name: str | None) -> Benchmark | None:
    if name is None:
        return None
    benchmarks = study_benchmarks(session, study)
    for bench in benchmarks:
        if bench.name == name:
            return bench
    raise ExportError(
        f"unknown benchmark {name!r}",
        field="benchmark",
        choices=[b.name for b in benchmarks],
    )


def _frame(session: Session, query, columns: list[str]) -> pd.DataFrame:
    """A DataFrame from a query of plain columns, built column by column.

    The query runs on the DBAPI cursor: building SQLAlchemy ``Row`` objects
    (and pandas frames from them) took most of the matrix export's time. The
    queries here bind only integers and booleans, so literal binds are safe.
    """
    connection = session.connection()
    sql = str(query.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True}))
    cursor = connection.connection.cursor()
    try:
        cursor.execute(sql)
        rows = cursor.fetchall()
    finally:
        cursor.close()
    data = list(zip(*rows, strict=True)) if rows else [()] * len(columns)
    return pd.DataFrame({name: list(values) for name, values in zip(columns, data, strict=True)})


def _items_frame(session: Session, study: Study, benchmark: Benchmark | None) -> pd.DataFrame:
    """The items the metrics are about: attention checks (items with a gold
    score) are left out, as they are only shown to check the raters."""
    query = (
        select(Item.id, Item.external_id, Benchmark.name)
        .join(Benchmark, Benchmark.id == Item.benchmark_id)
        .where(Item.study_id == study.id, Item.gold_score.is_(None))
        .order_by(Item.id)
    )
    if benchmark is not None:
        query = query.where(Item.benchmark_id == benchmark.id)
    return _frame(session, query, ["item_pk", "item_id", "benchmark"])


# -------------------------------------------------------------------- matrix


@dataclass
class MatrixExport:
    """A fully crossed items x raters matrix of one scale."""

    frame: pd.DataFrame
    scale: Scale
    raters: list[str]
    models: list[str]
    dropped_items: int = 0
    dropped_raters: int = 0

    def missing_summary(self) -> str:
        humans = self.frame[self.raters]
        cells = humans.size
        missing = int(humans.isna().sum().sum())
        share = missing / cells if cells else 0.0
        lines = [
            f"scale {self.scale.name}: {len(self.frame)} item(s) x {len(self.raters)} rater(s), "
            f"{missing} of {cells} human cell(s) missing ({share:.1%})"
        ]
        if missing:
            per_rater = humans.isna().sum()
            worst = per_rater[per_rater > 0].sort_values(ascending=False)
            lines.append(
                "missing per rater: " + ", ".join(f"{code} {n}" for code, n in worst.items())
            )
        for model in self.models:
            gaps = int(self.frame[LLM_PREFIX + model].isna().sum())
            if gaps:
                lines.append(f"model {model}: {gaps} item(s) without a score")
        if self.dropped_items or self.dropped_raters:
            lines.append(
                f"--complete dropped {self.dropped_items} item(s) and "
                f"{self.dropped_raters} rater(s) to keep a complete crossed block"
            )
        return "\n".join(lines)


def matrix_export(
    session: Session,
    study: Study,
    *,
    scale: str | None = None,
    benchmark: str | None = None,
    complete: bool = False,
) -> MatrixExport:
    """Items x raters of one scale, then one mean-over-runs column per model.

    Repeats (test-retest) and attention checks are left out: the matrix holds
    each rater's first rating of each item the study is about.
    """
    the_scale = _pick_scale(session, study, scale)
    bench = _pick_benchmark(session, study, benchmark)
    items = _items_frame(session, study, bench)
    ratings = _frame(
        session,
        # The scale belongs to the study, so its ratings need no join.
        select(Rating.item_id, Rating.rater_id, Rating.value).where(
            Rating.scale_id == the_scale.id,
            Rating.is_repeat.is_(False),
            Rating.is_attention_check.is_(False),
        ),
        ["item_pk", "rater", "value"],
    )
    codes = dict(
        session.exec(
            select(User.id, User.rater_code).where(User.id.in_(ratings["rater"].unique().tolist()))
        ).all()
    )
    ratings["rater"] = ratings["rater"].map(codes)
    ratings = ratings[ratings["item_pk"].isin(items["item_pk"])]
    humans = ratings.pivot(index="item_pk", columns="rater", values="value")
    raters = sorted(humans.columns)
    llm = _frame(
        session,
        select(LLMScore.item_id, LLMScore.model, LLMScore.value).where(
            LLMScore.scale_id == the_scale.id
        ),
        ["item_pk", "model", "value"],
    )
    llm = llm[llm["item_pk"].isin(items["item_pk"])]
    # Several runs of one model are averaged: the mean of sampled scores is
    # the estimate that agrees best with humans (paper 002 in shared/papers).
    models_frame = llm.pivot_table(index="item_pk", columns="model", values="value", aggfunc="mean")
    # A mean carries binary noise ((3.86 + 4.0) / 2 is 3.9299999999999997);
    # 12 significant digits keep every digit a stored score can have.
    models_frame = models_frame.map(round_significant)
    models = sorted(models_frame.columns)
    frame = items.set_index("item_pk")
    frame = frame.join(humans[raters]).join(
        models_frame[models].rename(columns=lambda m: LLM_PREFIX + m)
    )
    dropped_items = dropped_raters = 0
    if complete:
        rows, columns = largest_complete_block(frame[raters].notna().to_numpy())
        kept_raters = [raters[i] for i in columns]
        dropped_items = len(frame) - len(rows)
        dropped_raters = len(raters) - len(kept_raters)
        frame = frame.iloc[rows]
        frame = frame.drop(columns=[r for r in raters if r not in kept_raters])
        raters = kept_raters
    return MatrixExport(
        frame=frame.reset_index(drop=True),
        scale=the_scale,
        raters=raters,
        models=models,
        dropped_items=dropped_items,
        dropped_raters=dropped_raters,
    )


# Exact search over rater subsets up to this many raters (2**k subsets);
# above it a greedy search is used.
EXACT_COMPLETE_MAX_RATERS = 20


def largest_complete_block(present: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Rows and columns of the largest complete submatrix of ``present``.

    The largest block is the set of raters ``R`` maximising ``|R| * n(R)``,
    where ``n(R)`` counts the items every rater of ``R`` rated (ties: more
    raters). Finding it is the maximum edge biclique problem, NP-hard in
    general; with up to 20 raters every subset is tried, counting ``n(R)``
    for all subsets at once with a superset-sum (zeta) transform over the
    items' rater bitmasks. With more raters, raters are dropped greedily, the
    one whose removal keeps the most cells first.
    """
    n_items, n_raters = present.shape
    if n_items == 0 or n_raters == 0:
        return np.arange(0), []
    if n_raters <= EXACT_COMPLETE_MAX_RATERS:
        weights = np.left_shift(1, np.arange(n_raters, dtype=np.int64))
        masks = present.astype(np.int64) @ weights
        counts = np.bincount(masks, minlength=1 << n_raters).astype(np.int64)
        # counts[S] becomes the number of items whose rater set contains S.
        for bit in range(n_raters):
            step = 1 << bit
            view = counts.reshape(-1, 2 * step)
            view[:, :step] += view[:, step:]
        sizes = np.array([bin(s).count("1") for s in range(1 << n_raters)])
        cells = counts * sizes
        best = max(range(1 << n_raters), key=lambda s: (cells[s], sizes[s]))
        columns = [j for j in range(n_raters) if best >> j & 1]
    else:
        columns = list(range(n_raters))
        best_cells = int(present.all(axis=1).sum()) * n_raters
        while len(columns) > 1:
            options = [
                (
                    int(present[:, [c for c in columns if c != drop]].all(axis=1).sum())
                    * (len(columns) - 1),
                    drop,
                )
                for drop in columns
            ]
            cells, drop = max(options)
            if cells <= best_cells:
                break
            best_cells = cells
            columns.remove(drop)
    rows = np.flatnonzero(present[:, columns].all(axis=1)) if columns else np.arange(0)
    return rows, columns


# ------------------------------------------------------------------ alt-test


def alttest_export(
    session: Session, study: Study, *, scale: str | None = None, benchmark: str | None = None
) -> dict:
    """``{"humans": {rater: {item: score}}, "llm": {model: {item: score}}}``."""
    matrix = matrix_export(session, study, scale=scale, benchmark=benchmark)
    frame = matrix.frame.set_index("item_id")

    def column_dict(column: str) -> dict[str, float]:
        series = frame[column].dropna()
        return {str(item): float(value) for item, value in series.items()}

    return {
        "humans": {code: column_dict(code) for code in matrix.raters},
        "llm": {model: column_dict(LLM_PREFIX + model) for model in matrix.models},
    }


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
    scales = study_scales(session, study)
    if scale is not None:
        scales = [_pick_scale(session, study, scale)]
    bench = _pick_benchmark(session, study, benchmark)
    scale_by_id = {s.id: s for s in scales}
    bench_names = {b.id: b.name for b in study_benchmarks(session, study)}
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
                "source": "import",
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


MEAN_DIGITS = 12


def round_significant(value: float, digits: int = MEAN_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits (NaN stays NaN)."""
    return float(f"{value:.{digits}g}")


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
) -> RenderedExport:
    """One export as the text of its file; the CLI and the lead's pages share it."""
    parts = [study.slug, fmt] + [p for p in (scale, benchmark) if p]
    stem = "-".join(parts)
    if fmt == "matrix":
        matrix = matrix_export(session, study, scale=scale, benchmark=benchmark, complete=complete)
        return RenderedExport(
            _csv(matrix.frame),
            len(matrix.frame),
            "text/csv",
            f"{stem}-{matrix.scale.name}.csv" if scale is None else f"{stem}.csv",
            matrix.missing_summary(),
        )
    if fmt == "alttest":
        data = alttest_export(session, study, scale=scale, benchmark=benchmark)
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
    return RenderedExport(_csv(frame), len(frame), "text/csv", f"{stem}.csv")
