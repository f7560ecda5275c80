"""The ``matrix`` (items x raters of one scale) and ``alttest`` exports."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlmodel import Session, select

from ..metrics._names import RUNS
from ..metrics.matrix import LLM_PREFIX, largest_complete_block
from ..metrics.runs import aggregate_runs
from ..models import LLMScore, Rating, Scale, Study, User
from ..study.raters import counted_rater
from .export_scope import ExportError, export_scope, items_frame, query_frame
from .prompt_versions import latest_prompt_version
from .selection import Where, describe_where, raters_where

__all__ = ["MatrixExport", "matrix_export", "alttest_export", "round_significant"]

MEAN_DIGITS = 12


def round_significant(value: float, digits: int = MEAN_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits (NaN stays NaN)."""
    return float(f"{value:.{digits}g}")


@dataclass
class MatrixExport:
    """A fully crossed items x raters matrix of one scale."""

    frame: pd.DataFrame
    scale: Scale
    raters: list[str]
    models: list[str]
    dropped_items: int = 0
    dropped_raters: int = 0
    # The temperature of the LLM scores; None: every model's one temperature.
    temperature: float | None = None
    # LLM scores left out for having been asked under an older prompt.
    superseded: int = 0
    # How a model's runs were combined (metrics.runs.aggregate_runs).
    runs: str = "mean"
    # The demographic selection of raters, described ("all raters" when none).
    where: str = "all raters"

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
        if self.temperature is not None:
            lines.append(f"LLM scores at temperature {self.temperature:g}")
        if self.superseded:
            lines.append(
                f"{self.superseded} LLM score(s) asked under an older prompt left out "
                "(the newest prompt of each model and benchmark is used)"
            )
        lines.append(f"runs aggregated by: {self.runs}")
        if self.where != "all raters":
            lines.append(f"raters: {self.where}")
        for model in self.models:
            gaps = int(self.frame[LLM_PREFIX + model].isna().sum())
            if gaps:
                lines.append(f"model {model}: {gaps} item(s) without a score")
        if self.dropped_items or self.dropped_raters:
            lines.append(
                f"keeping a complete crossed block dropped {self.dropped_items} item(s) and "
                f"{self.dropped_raters} rater(s)"
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
) -> MatrixExport:
    """Items x raters of one scale, then one column per model (its runs combined).

    Repeats (test-retest) and attention checks are left out: the matrix holds
    each rater's first rating of each item the study is about.

    The LLM columns hold the scores of each model's newest prompt version
    (:mod:`annotator.data.prompt_versions`) at ``temperature``, by default the study's
    main temperature (:func:`annotator.analysis.settings.study_settings`, the
    one the dashboard and the report use): a model's runs at different
    temperatures are never averaged together. Without a main temperature every
    model must have scores at one temperature only, else :class:`ExportError`
    (``field="temperature"``) lists them.

    ``runs`` combines a model's runs (:func:`annotator.metrics.runs.aggregate_runs`:
    mean, median, majority, first; ``each`` gives a ``llm:MODEL#RUN`` column per
    run). ``where`` keeps the raters whose demographic answers match
    (:func:`annotator.data.selection.parse_where`).
    """
    from ..analysis.settings import study_settings

    if temperature is None:
        temperature = study_settings(study).temperature
    scope = export_scope(session, study, scale=scale, benchmark=benchmark, one_scale=True)
    the_scale = scope.scale
    items = items_frame(session, study, scope.benchmark)
    ratings = query_frame(
        session,
        # The scale belongs to the study, so its ratings need no join.
        select(Rating.item_id, Rating.rater_id, Rating.value).where(
            Rating.scale_id == the_scale.id,
            Rating.is_repeat.is_(False),
            Rating.is_attention_check.is_(False),
            counted_rater(Rating.rater_id),  # whose ratings count
        ),
        ["item_pk", "rater", "value"],
    )
    codes = dict(
        session.exec(
            select(User.id, User.rater_code).where(User.id.in_(ratings["rater"].unique().tolist()))
        ).all()
    )
    ratings["rater"] = ratings["rater"].map(codes)
    chosen = raters_where(session, study, where or {})
    if chosen is not None:
        ratings = ratings[ratings["rater"].isin(chosen)]
    ratings = ratings[ratings["item_pk"].isin(items["item_pk"])]
    humans = ratings.pivot(index="item_pk", columns="rater", values="value")
    raters = sorted(humans.columns)
    llm = query_frame(
        session,
        select(
            LLMScore.item_id,
            LLMScore.model,
            LLMScore.run,
            LLMScore.value,
            LLMScore.temperature,
            LLMScore.prompt_hash,
            LLMScore.id,
        )
        .where(LLMScore.scale_id == the_scale.id)
        # Import order: ``runs="first"`` takes each item's earliest score.
        .order_by(LLMScore.id),
        ["item_pk", "model", "run", "value", "temperature", "prompt", "order"],
    )
    llm = _at_temperature(llm[llm["item_pk"].isin(items["item_pk"])], temperature)
    # Never two prompt versions of one judge in a column (see prompt_versions).
    llm = llm.assign(benchmark=llm["item_pk"].map(items.set_index("item_pk")["benchmark"]))
    llm, left_out = latest_prompt_version(llm, keys=["model", "temperature", "benchmark"])
    llm = llm.assign(run=llm["run"].fillna("").astype(str))
    try:
        models_frame = aggregate_runs(llm, how=runs, item="item_pk")
    except ValueError as exc:
        raise ExportError(str(exc), field="runs", choices=list(RUNS)) from exc
    # A mean carries binary noise ((3.86 + 4.0) / 2 is 3.9299999999999997);
    # 12 significant digits keep every digit a stored score can have.
    if runs not in ("each", "first"):
        # Stored scores are written as stored; only a computed one is rounded.
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
        temperature=temperature,
        superseded=len(left_out),
        runs=runs,
        where=describe_where(where or {}),
    )


def _temperature_label(value: float) -> str:
    return "unknown" if np.isnan(value) else f"{value:g}"


def _at_temperature(llm: pd.DataFrame, temperature: float | None) -> pd.DataFrame:
    """The LLM scores at ``temperature``; with None, refuse a model with several."""
    temps = pd.to_numeric(llm["temperature"], errors="coerce").astype(float)
    if temperature is not None:
        return llm[np.isclose(temps.to_numpy(), temperature)]
    # NaN (a score without a temperature) counts as one temperature of its own.
    labels = temps.map(_temperature_label)
    per_model = labels.groupby(llm["model"]).unique()
    for model, found in per_model.items():
        if len(found) > 1:
            ordered = sorted(
                found, key=lambda t: (t == "unknown", float(t) if t != "unknown" else 0)
            )
            raise ExportError(
                f"model {model!r} has LLM scores at several temperatures "
                f"({', '.join(ordered)}) and the study sets no main temperature "
                "([validation] temperature)",
                field="temperature",
                choices=[t for t in ordered if t != "unknown"],
            )
    return llm


def alttest_export(
    session: Session,
    study: Study,
    *,
    scale: str | None = None,
    benchmark: str | None = None,
    temperature: float | None = None,
    runs: str = "mean",
    where: Where | None = None,
) -> dict:
    """``{"humans": {rater: {item: score}}, "llm": {model: {item: score}}}``.

    LLM scores at ``temperature``, runs and raters chosen as in :func:`matrix_export`
    (``runs="each"``: one ``MODEL#RUN`` key per run).
    """
    matrix = matrix_export(
        session,
        study,
        scale=scale,
        benchmark=benchmark,
        temperature=temperature,
        runs=runs,
        where=where,
    )
    frame = matrix.frame.set_index("item_id")

    def column_dict(column: str) -> dict[str, float]:
        series = frame[column].dropna()
        return {str(item): float(value) for item, value in series.items()}

    return {
        "humans": {code: column_dict(code) for code in matrix.raters},
        "llm": {model: column_dict(LLM_PREFIX + model) for model in matrix.models},
    }
