"""The ``matrix`` (items x raters of one scale) and ``alttest`` exports."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sqlmodel import Session, select

from ..metrics._names import RUNS
from ..metrics.matrix import LLM_PREFIX, largest_complete_block
from ..metrics.runs import aggregate_runs
from ..models import Item, LLMScore, Rating, Scale, Study, User
from ..study.raters import counted_rater
from ..study.studyfile import assignment_settings, validation_settings
from ..words import plural
from .export_scope import ExportError, export_criterion, export_scope, items_frame
from .matrix_rules import LEFT_OUT, MatrixSettings
from .prompt_versions import latest_prompt_version
from .selection import Where, describe_where, raters_where
from .sql import fetch_columns, fetch_rows
from .temperature_counts import study_judge_temperatures
from .temperatures import JudgeTemperatures

__all__ = [
    "MatrixExport",
    "matrix_export",
    "round_significant",
    "round_significant_array",
]

MEAN_DIGITS = 12


def round_significant(value: float, digits: int = MEAN_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits (NaN stays NaN)."""
    return float(f"{value:.{digits}g}")


def round_significant_array(values: np.ndarray) -> np.ndarray:
    """:func:`round_significant` (12 digits) of every value, in numpy.

    With v's decimal exponent e and k = 11 - e, ``rint(v * 10**k) / 10**k`` is
    that rounding: the product is off the exact one by at most 1e12 * 2**-53
    (1e-4), so its rint is the correctly rounded 12-digit integer n unless the
    product lies within 1e-3 of a half; and n / 10**k, both exact doubles
    (n < 2**53, k <= 22), is correctly rounded, as ``float()`` of the text is.
    The values outside those bounds (near a half, below 1e-11 or from 1e12,
    or where log10 misjudged the exponent) take the Python formatting; so do
    none of the stored scores, which a first test keeps as they are (the
    double nearest n / 10**6 with |v| < 1e6 has at most 12 digits already).
    Checked against :func:`round_significant` in tests/data/test_matrix_bytes.py.
    """
    values = np.array(values, dtype=float)
    out = values.reshape(-1)  # a view: any shape
    with np.errstate(all="ignore"):
        unchanged = ~np.isfinite(out) | ((np.abs(out) < 1e6) & (np.rint(out * 1e6) / 1e6 == out))
        rest = np.flatnonzero(~unchanged)
        value = out[rest]
        k = MEAN_DIGITS - 1 - np.floor(np.log10(np.abs(value)))
        scale = 10.0 ** np.clip(k, 0, 22)
        product = value * scale
        n = np.rint(product)
        safe = (
            (k >= 0)
            & (k <= 22)
            & (np.abs(n) >= 1e11)
            & (np.abs(n) < 1e12)
            & (np.abs(np.abs(product - np.trunc(product)) - 0.5) > 1e-3)
        )
    out[rest[safe]] = n[safe] / scale[safe]
    out[rest[~safe]] = [round_significant(v) for v in value[~safe].tolist()]
    return values


@dataclass
class MatrixExport:
    """A fully crossed items x raters matrix of one scale."""

    frame: pd.DataFrame
    scale: Scale
    raters: list[str]
    models: list[str]
    dropped_items: int = 0
    dropped_raters: int = 0
    # The temperature of the LLM scores when every judge is at one (None: several,
    # or none recorded); ``temperatures`` has each judge's and how it was chosen.
    temperature: float | None = None
    temperatures: JudgeTemperatures = field(default_factory=JudgeTemperatures)
    # LLM scores left out for having been asked under an older prompt.
    superseded: int = 0
    # How a model's runs were combined (metrics.runs.aggregate_runs).
    runs: str = "mean"
    # The demographic selection of raters, described ("all raters" when none).
    where: str = "all raters"
    # The rubric criterion ("": a study without criteria).
    criterion: str = ""

    def missing_summary(self) -> str:
        humans = self.frame[self.raters]
        cells = humans.size
        missing = int(humans.isna().sum().sum())
        share = missing / cells if cells else 0.0
        about = f"scale {self.scale.name}"
        if self.criterion:
            about += f", criterion {self.criterion}"
        lines = [
            f"{about}: {plural(len(self.frame), 'item')} x {plural(len(self.raters), 'rater')}, "
            f"{missing} of {plural(cells, 'human cell')} missing ({share:.1%})"
        ]
        if missing:
            per_rater = humans.isna().sum()
            worst = per_rater[per_rater > 0].sort_values(ascending=False)
            lines.append(
                "missing per rater: " + ", ".join(f"{code} {n}" for code, n in worst.items())
            )
        on = self.scale.name
        if self.temperatures.chosen:
            lines.append(
                f"LLM scores at temperature {self.temperatures.label(on)} "
                f"({self.temperatures.describe(on)})"
            )
        if self.superseded:
            lines.append(
                f"{plural(self.superseded, 'LLM score')} asked under an older prompt left out "
                "(the newest prompt of each model and benchmark is used)"
            )
        lines.append(f"runs aggregated by: {self.runs}")
        if self.where != "all raters":
            lines.append(f"raters: {self.where}")
        for model in self.models:
            gaps = int(self.frame[LLM_PREFIX + model].isna().sum())
            if gaps:
                lines.append(f"model {model}: {plural(gaps, 'item')} without a score")
        if self.dropped_items or self.dropped_raters:
            lines.append(
                "keeping a complete crossed block dropped "
                f"{plural(self.dropped_items, 'item')} and {plural(self.dropped_raters, 'rater')}"
            )
        return "\n".join(lines)


def matrix_export(
    session: Session,
    study: Study,
    *,
    scale: str | None = None,
    benchmark: str | None = None,
    complete: bool = False,
    temperature: float | None = None,
    runs: str = "mean",
    where: Where | None = None,
    criterion: str | None = None,
    judge_temperatures: tuple[tuple[str, float], ...] | None = None,
) -> MatrixExport:
    """Items x raters of one scale, then one column per model (its runs combined).

    Repeats (test-retest) and attention checks are left out: the matrix holds
    each rater's first rating of each item the study is about (the rules of
    :mod:`annotator.data.matrix_rules`).

    The LLM columns hold the scores of each model's newest prompt version
    (:mod:`annotator.data.prompt_versions`) at its temperature by the rule the
    dashboard and the report use (:func:`annotator.data.temperatures.judge_temperatures`):
    the one chosen for the judge (``judge_temperatures``, by default the study's
    ``[validation.temperatures]``), else ``temperature`` (by default the study's
    ``[validation] temperature``), else the judge's own main temperature. A
    model's runs at different temperatures are never averaged together.

    ``runs`` combines a model's runs (:func:`annotator.metrics.runs.aggregate_runs`:
    mean, median, majority, first; ``each`` gives a ``llm:MODEL#RUN`` column per
    run). ``where`` keeps the raters whose demographic answers match
    (:func:`annotator.data.selection.parse_where`). ``criterion``: the rubric
    criterion, required when the study has several (its items are those of the
    benchmarks it applies to; :func:`~annotator.data.export_scope.export_criterion`).
    """
    source = study.source_toml or ""
    settings = MatrixSettings.of(validation_settings(source), assignment_settings(source))
    chosen = study_judge_temperatures(
        session,
        study,
        requested=settings.temperature if temperature is None else temperature,
        per_judge=settings.judge_temperatures if judge_temperatures is None else judge_temperatures,
    )
    scope = export_scope(session, study, scale=scale, benchmark=benchmark, one_scale=True)
    the_scale = scope.scale
    criterion, applies_to = export_criterion(session, study, criterion)
    items = items_frame(session, study, scope.benchmark)
    if applies_to is not None:
        items = items[items["benchmark"].isin(applies_to)].reset_index(drop=True)
    humans, raters = _human_matrix(session, study, the_scale.id, criterion, items["item_pk"], where)
    llm = _llm_scores(session, the_scale.id, criterion)
    llm = llm[llm["item_pk"].isin(items["item_pk"])]
    temps = pd.to_numeric(llm["temperature"], errors="coerce").astype(float)
    llm = llm[chosen.keep(llm["model"], pd.Series(the_scale.name, index=llm.index), temps)]
    # Never two prompt versions of one judge in a column (see prompt_versions).
    # Benchmarks by number: grouping by their names cost more than the rest of the rule.
    benchmarks = pd.Series(pd.factorize(items["benchmark"])[0], index=items["item_pk"])
    llm = llm.assign(benchmark=llm["item_pk"].map(benchmarks))
    llm, left_out = latest_prompt_version(llm, keys=["model", "temperature", "benchmark"])
    llm = llm.assign(run=llm["run"].fillna("").astype(str))
    try:
        models_frame = aggregate_runs(llm, how=runs, item="item_pk")
    except ValueError as exc:
        raise ExportError(str(exc), field="runs", choices=list(RUNS)) from exc
    models = sorted(models_frame.columns)
    # The judges' columns on the items' rows (NaN where a model has no score).
    judged = models_frame[models].reindex(index=pd.Index(items["item_pk"])).to_numpy(float)
    # A mean carries binary noise ((3.86 + 4.0) / 2 is 3.9299999999999997);
    # 12 significant digits keep every digit a stored score can have.
    if runs not in ("each", "first"):
        # Stored scores are written as stored; only a computed one is rounded.
        judged = round_significant_array(judged)
    frame = pd.concat(
        [
            items[["item_id", "benchmark"]].reset_index(drop=True),
            pd.DataFrame(humans, columns=pd.Index(raters, dtype=object)),
            pd.DataFrame(judged, columns=pd.Index([LLM_PREFIX + m for m in models], dtype=object)),
        ],
        axis=1,
    )
    dropped_items = dropped_raters = 0
    if complete:
        present = frame[raters].notna().to_numpy()
        anchors = settings.anchor_rows(study.slug, _regular_item_ids(session, study))
        if anchors is not None:
            # An overlap design: the anchor block (the anchor items, and the
            # raters who rated every one of them), as the analysis's ICC.
            rows = np.flatnonzero(frame["item_id"].isin(anchors).to_numpy())
            columns = [j for j in range(len(raters)) if len(rows) and present[rows, j].all()]
        else:
            rows, columns = largest_complete_block(present)
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
        temperature=chosen.single,
        temperatures=chosen,
        superseded=len(left_out),
        runs=runs,
        where=describe_where(where or {}),
        criterion=criterion,
    )


def _regular_item_ids(session: Session, study: Study) -> list[str]:
    """The ids of the study's items that are not attention checks."""
    return list(
        session.exec(
            select(Item.external_id).where(Item.study_id == study.id, Item.gold_score.is_(None))
        ).all()
    )


def _human_matrix(
    session: Session,
    study: Study,
    scale_id: int,
    criterion: str,
    item_pks: pd.Series,
    where: Where | None,
) -> tuple[np.ndarray, list[str]]:
    """Items (the rows of ``item_pks``) x raters (sorted codes) of one scale's
    ratings on ``criterion``.

    Read straight into numpy arrays (:func:`~annotator.data.sql.fetch_columns`:
    on PostgreSQL one packed ``bytea``, no Python object per value) and placed
    by index arithmetic: the pandas pivot of a frame built from the rows, with
    the codes mapped row by row, took most of the export's time.
    """
    item_of, rater_id, value = fetch_columns(
        session,
        # The scale belongs to the study, so its ratings need no join.
        select(Rating.item_id, Rating.rater_id, Rating.value).where(
            Rating.scale_id == scale_id,
            Rating.criterion == criterion,
            *(getattr(Rating, flag).is_(False) for flag in LEFT_OUT),
        ),
        ["int32", "int32", "float64"],
    )
    items = item_pks.to_numpy(dtype=np.int64)  # ascending: items_frame orders by id
    row = np.searchsorted(items, item_of).clip(max=max(len(items) - 1, 0))
    keep = (items[row] == item_of) if len(items) else np.zeros(len(item_of), bool)
    rater_ids, rater_of = np.unique(rater_id, return_inverse=True)
    # Whose ratings count, asked of the few raters rather than of every rating:
    # SQLite checked the NOT IN for each of 60,000 ratings in 40% of the query's time.
    codes = dict(
        session.exec(
            select(User.id, User.rater_code).where(
                User.id.in_(rater_ids.tolist()), counted_rater(User.id)
            )
        ).all()
    )
    rater_codes = [codes.get(i) for i in rater_ids.tolist()]
    chosen = raters_where(session, study, where or {})
    keep &= np.isin(
        rater_of,
        [
            i
            for i, code in enumerate(rater_codes)
            if code is not None and (chosen is None or code in chosen)
        ],
    )
    present = np.unique(rater_of[keep])
    order = sorted(present.tolist(), key=rater_codes.__getitem__)
    column = np.full(len(rater_codes), -1)
    column[order] = np.arange(len(order))
    matrix = np.full((len(items), len(order)), np.nan)
    matrix[row[keep], column[rater_of[keep]]] = value[keep]
    return matrix, [rater_codes[i] for i in order]


def _llm_scores(session: Session, scale_id: int, criterion: str) -> pd.DataFrame:
    """One row per LLM score of the scale and criterion, in the order they were stored."""
    rows = fetch_rows(
        session,
        select(
            LLMScore.item_id,
            LLMScore.model,
            LLMScore.run,
            LLMScore.value,
            LLMScore.temperature,
            LLMScore.prompt_hash,
        )
        .where(LLMScore.scale_id == scale_id, LLMScore.criterion == criterion)
        # Import order: ``runs="first"`` takes each item's earliest score.
        .order_by(LLMScore.id),
    )
    columns = ["item_pk", "model", "run", "value", "temperature", "prompt"]
    scores = pd.DataFrame.from_records(rows, columns=columns)
    # The rows come in the order of their ids: their position stands for the id.
    return scores.assign(order=np.arange(len(scores)))
