"""The human and LLM panels of one scale (and benchmark) and the table rows built on them.

Shared by :mod:`.tables` and :mod:`.study_tables`: each row of Tables 2-4 and of the
Figure 2 data comes from one :class:`Panel`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..data.frames import StudyFrames
from ..data.temperatures import JudgeTemperatures
from ..metrics import (
    human_llm_agreement,
    icc,
)
from ..words import plural
from .columns import BENCHMARKS_COLUMNS, NAN
from .matrices import (
    Notes,
    analysis_block,
    llm_matrix,
    llm_panel,
)
from .settings import AnalysisSettings

# ------------------------------------------------------------------ pieces


__all__ = [
    "rows_frame",
    "interval_of",
    "Panel",
    "build_panel",
    "value_of",
    "scales_row",
    "benchmark_row",
    "models_rows",
    "figure2_rows",
]


def rows_frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def interval_of(result: Any, attr: str) -> tuple[float, float]:
    return getattr(result, attr) if result is not None else (NAN, NAN)


@dataclass
class Panel:
    """One scale's (and benchmark's) human block, LLM panel and their agreement."""

    humans: pd.DataFrame  # complete items x raters
    llm_all: pd.DataFrame  # humans' items x every model (NaN where missing)
    llm_panel: pd.DataFrame  # complete items x models, items within humans'
    human_icc: Any
    llm_icc: Any
    agreement: Any  # HumanLLMAgreement on the panel's items (ensemble)
    per_model: Any  # HumanLLMAgreement with every model, each on its items
    # Why a result above is None, by its name ("human_icc", "agreement", "per_model").
    reasons: dict[str, str] = field(default_factory=dict)


def build_panel(
    frames: StudyFrames,
    scale: str,
    *,
    benchmark: str | None,
    temperature: float | None,
    settings: AnalysisSettings,
    notes: Notes,
) -> Panel:

    where = f"scale {scale}" + (f", benchmark {benchmark}" if benchmark else "")
    # An overlap design: ICC on the anchor block (every rater rated those items).
    block = analysis_block(frames, scale, settings, benchmark=benchmark)
    cut = block.describe_cut()
    if cut:
        notes.add(f"{where}: {cut}")
    humans = block.matrix
    low, high = frames.scale_bounds(scale)
    conf = settings.confidence
    reasons: dict[str, str] = {}
    human_icc = None
    if humans.shape[0] < 2 or humans.shape[1] < 2:
        notes.add(
            f"{where}: human ICC needs a complete block of at least 2 items x 2 raters, "
            f"have {humans.shape[0]} x {humans.shape[1]}"
        )
    else:
        human_icc = notes.attempt(f"{where}, human ICC", icc, humans, confidence=conf)
        if human_icc is None:
            reasons["human_icc"] = notes.last_error
        else:
            _note_degenerate(f"{where}, human", human_icc, notes)
    llm = llm_matrix(
        frames, scale, temperature=temperature, benchmark=benchmark, runs=settings.runs
    )
    llm_all, panel = llm_panel(llm, humans.index)
    _note_unscored(where, llm_all, notes)
    if llm.shape[1] == 0:
        notes.add(f"{where}: no LLM scores at the main temperature")
    elif panel.shape != llm_all.shape:
        notes.add(
            f"{where}: the complete items x models block keeps {panel.shape[0]} of "
            f"{llm_all.shape[0]} human-rated items and {panel.shape[1]} of "
            f"{llm_all.shape[1]} models"
        )
    llm_icc = None
    if panel.shape[1] >= 2 and panel.shape[0] >= 2:
        llm_icc = notes.attempt(f"{where}, LLM panel ICC", icc, panel, confidence=conf)
        if llm_icc is not None:
            _note_degenerate(f"{where}, LLM panel", llm_icc, notes)
    elif llm.shape[1]:
        notes.add(f"{where}: LLM panel ICC needs 2 models on 2 common items")
    agreement = per_model = None
    if panel.shape[1] >= 1 and humans.shape[1] >= 1 and panel.shape[0] >= 2:
        agreement = notes.attempt(
            f"{where}, human-LLM agreement",
            human_llm_agreement,
            humans.loc[panel.index],
            panel,
            scale_min=low,
            scale_max=high,
            confidence=conf,
        )
        if agreement is None:
            reasons["agreement"] = notes.last_error
    elif llm.shape[1] and humans.shape[1]:
        notes.add(f"{where}: human-LLM agreement needs 2 items rated by humans and the LLMs")
    if llm_all.shape[1] and humans.shape[1] and humans.shape[0] >= 2:
        per_model = notes.attempt(
            f"{where}, per-model agreement",
            human_llm_agreement,
            humans,
            llm_all,
            scale_min=low,
            scale_max=high,
            confidence=conf,
            nan_policy="omit",
        )
        if per_model is None:
            reasons["per_model"] = notes.last_error
    return Panel(humans, llm_all, panel, human_icc, llm_icc, agreement, per_model, reasons)


def _note_unscored(where: str, llm_all: pd.DataFrame, notes: Notes) -> None:
    """A note per judge without a score on some human-rated items (a partial run):
    they are left out of that judge's statistics, not counted as zero."""
    for model in llm_all.columns:
        missing = int(llm_all[model].isna().sum())
        if missing:
            notes.add(
                f"{where}: {model} has no score on {missing} of "
                f"{plural(len(llm_all), 'human-rated item')} at its temperature; "
                f"{'it is' if missing == 1 else 'they are'} left out of its statistics"
            )


def _note_degenerate(where: str, result: Any, notes: Notes) -> None:
    """A note when an ICC or its interval is infinite, undefined or inverted.

    McGraw and Wong (1996), "Forming inferences about some intraclass correlation
    coefficients": ICC(A,k) = k ICC(A,1) / (1 + (k - 1) ICC(A,1)) diverges as ICC(A,1)
    nears -1/(k - 1), when raters disagree more than chance; its F-based bounds then
    come out in reverse order. The values are kept as computed; the note says why
    they are not an interval a reader can use.
    """
    for name, value, bounds in (
        ("ICC(A,1)", result.icc_a1, result.ci_a1),
        ("ICC(A,k)", result.icc_ak, result.ci_ak),
    ):
        low, high = (float(b) for b in bounds)
        if not math.isfinite(float(value)):
            notes.add(
                f"{where} {name} is {'undefined' if math.isnan(value) else 'infinite'}: the "
                "raters disagree more than chance, or the scores do not vary"
            )
        elif not (math.isfinite(low) and math.isfinite(high) and low <= high):
            notes.add(
                f"{where} {name}: its interval ({low:.3g}, {high:.3g}) is not usable (the "
                "raters disagree more than chance); the figures leave it out"
            )


def value_of(result: Any, attr: str) -> float:
    return float(getattr(result, attr)) if result is not None else NAN


def scales_row(scale: str, p: Panel) -> dict:
    ens = p.agreement.ensemble if p.agreement is not None else None
    return {
        "scale": scale,
        "n_items": p.humans.shape[0],
        "icc_a1_human": value_of(p.human_icc, "icc_a1"),
        "icc_ak_human": value_of(p.human_icc, "icc_ak"),
        "icc_a1_llm": value_of(p.llm_icc, "icc_a1"),
        "icc_ak_llm": value_of(p.llm_icc, "icc_ak"),
        "icc_human_llm": value_of(ens, "icc_a1"),
        "nmae": value_of(ens, "nmae"),
        "n_raters": p.humans.shape[1],
        "n_models": p.llm_panel.shape[1],
        "n_items_llm": p.llm_panel.shape[0],
        "icc_a1_human_low": interval_of(p.human_icc, "ci_a1")[0],
        "icc_a1_human_high": interval_of(p.human_icc, "ci_a1")[1],
        "icc_ak_human_low": interval_of(p.human_icc, "ci_ak")[0],
        "icc_ak_human_high": interval_of(p.human_icc, "ci_ak")[1],
        "icc_a1_llm_low": interval_of(p.llm_icc, "ci_a1")[0],
        "icc_a1_llm_high": interval_of(p.llm_icc, "ci_a1")[1],
        "icc_human_llm_low": interval_of(ens, "ci_a1")[0],
        "icc_human_llm_high": interval_of(ens, "ci_a1")[1],
        "pearson_r": value_of(ens, "pearson_r"),
    }


def benchmark_row(benchmark: str, scale: str, p: Panel) -> dict:
    row = scales_row(scale, p)
    row["benchmark"] = benchmark
    row["delta_a1"] = row["icc_a1_human"] - row["icc_a1_llm"]
    row["delta_ak"] = row["icc_ak_human"] - row["icc_ak_llm"]
    return {key: row[key] for key in BENCHMARKS_COLUMNS}


def _temperature_of(temperature: JudgeTemperatures | float | None, model: str, scale: str) -> float:
    """The temperature of ``model``'s scores in the tables (NaN: not recorded)."""
    if isinstance(temperature, JudgeTemperatures):
        temperature = temperature.of(model.split("#", 1)[0], scale)
    return NAN if temperature is None else float(temperature)


def models_rows(scale: str, temperature: JudgeTemperatures | float | None, p: Panel) -> list[dict]:
    if p.per_model is None:
        return [
            {
                "scale": scale,
                "model": model,
                "temperature": _temperature_of(temperature, model, scale),
                "n_items": 0,
            }
            for model in p.llm_all.columns
        ]
    return [
        {
            "scale": scale,
            "model": row.model,
            "temperature": _temperature_of(temperature, row.model, scale),
            "icc_human_llm": row.icc_a1,
            "nmae": row.nmae,
            "n_items": row.n_items,
            "icc_human_llm_low": row.ci_a1[0],
            "icc_human_llm_high": row.ci_a1[1],
            "pearson_r": row.pearson_r,
        }
        for row in p.per_model.models
    ]


def figure2_rows(benchmark: str, scale: str, p: Panel) -> list[dict]:
    rows = []
    if p.agreement is not None:
        e = p.agreement.ensemble
        rows.append(
            {
                "benchmark": benchmark,
                "scale": scale,
                "model": "ensemble",
                "icc_human_llm": e.icc_a1,
                "nmae": e.nmae,
                "pearson_r": e.pearson_r,
                "n_items": e.n_items,
            }
        )
    if p.per_model is not None:
        rows += [
            {
                "benchmark": benchmark,
                "scale": scale,
                "model": m.model,
                "icc_human_llm": m.icc_a1,
                "nmae": m.nmae,
                "pearson_r": m.pearson_r,
                "n_items": m.n_items,
            }
            for m in p.per_model.models
        ]
    return rows
