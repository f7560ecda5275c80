"""The paper's tables (grading-scale paper, Tables 1-6) on a study's own data.

:func:`report_tables` turns :class:`~annotator.data.frames.StudyFrames` into
:class:`ReportTables`, one tidy DataFrame per table, through the functions of
``annotator.metrics``; :func:`write_csv_tables` and :func:`write_latex_tables`
write them. A cell that cannot be computed (too few items, a missing cell, a
degenerate matrix) is NaN and ``ReportTables.notes`` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.frames import StudyFrames
from ..metrics import (
    alt_test,
    bootstrap_icc_difference,
    bootstrap_nmae,
    grouped_agreement,
    human_llm_agreement,
    icc,
    inter_scale_agreement,
)
from .matrices import (
    Notes,
    human_block,
    human_ratings,
    llm_matrix,
    llm_panel,
    main_temperature,
    rater_dicts,
)
from .settings import AnalysisSettings

__all__ = [
    "ALL_BENCHMARKS",
    "BEST_RULES",
    "BestRule",
    "CSV_FILES",
    "ReportTables",
    "mark_best",
    "report_tables",
    "write_csv_tables",
    "write_latex_tables",
]

# The benchmark label of rows pooled over every benchmark.
ALL_BENCHMARKS = "(all)"

NAN = math.nan

SCALES_COLUMNS = [
    "scale",
    "n_items",
    "icc_a1_human",
    "icc_ak_human",
    "icc_a1_llm",
    "icc_ak_llm",
    "icc_human_llm",
    "nmae",
    "n_raters",
    "n_models",
    "n_items_llm",
    "icc_a1_human_low",
    "icc_a1_human_high",
    "icc_ak_human_low",
    "icc_ak_human_high",
    "icc_a1_llm_low",
    "icc_a1_llm_high",
    "icc_human_llm_low",
    "icc_human_llm_high",
    "pearson_r",
]
BENCHMARKS_COLUMNS = [
    "benchmark",
    "scale",
    "n_items",
    "n_raters",
    "n_models",
    "icc_a1_human",
    "icc_ak_human",
    "icc_a1_llm",
    "icc_ak_llm",
    "delta_a1",
    "delta_ak",
    "icc_human_llm",
    "nmae",
    "pearson_r",
]
MODELS_COLUMNS = [
    "scale",
    "model",
    "temperature",
    "icc_human_llm",
    "nmae",
    "n_items",
    "icc_human_llm_low",
    "icc_human_llm_high",
    "pearson_r",
]
INTER_SCALE_COLUMNS = ["benchmark", "model", "comparison", "icc_a1", "n_items"]
INTER_SCALE_AVERAGE_COLUMNS = ["benchmark", "comparison", "icc_a1_mean", "n_models"]
GROUPS_COLUMNS = [
    "group_by",
    "group",
    "scale",
    "n_raters",
    "n_items",
    "icc_group_llm",
    "nmae",
    "icc_a1_within",
    "icc_ak_within",
]
TEMPERATURES_COLUMNS = ["model", "scale", "temperature", "n_items", "icc_human_llm", "nmae"]
ALTTEST_COLUMNS = [
    "scale",
    "model",
    "epsilon",
    "winning_rate",
    "advantage_probability",
    "passed",
    "n_items",
    "n_tested",
]
ITEMS_COLUMNS = [
    "scale",
    "item",
    "benchmark",
    "human_mean",
    "llm_mean",
    "nmae",
    "poorly_aligned",
]
BOOTSTRAP_COLUMNS = [
    "statistic",
    "scale_a",
    "scale_b",
    "estimate",
    "low",
    "high",
    "confidence",
    "n_items",
    "n_resamples",
    "n_undefined",
    "seed",
]
FIGURE2_COLUMNS = ["benchmark", "scale", "model", "icc_human_llm", "nmae", "pearson_r", "n_items"]
DISTRIBUTION_COLUMNS = ["scale", "kind", "who", "group", "item", "value", "share"]

# File stem -> ReportTables attribute.
CSV_FILES = {
    "scales": "scales",
    "benchmarks": "benchmarks",
    "models": "models",
    "inter_scale": "inter_scale",
    "inter_scale_average": "inter_scale_average",
    "groups": "groups",
    "temperatures": "temperatures",
    "alttest": "alttest",
    "items": "items",
    "worst_items": "worst_items",
    "bootstrap": "bootstrap",
    "figure2": "figure2",
}


@dataclass
class ReportTables:
    """The report's tables, one tidy DataFrame each (NaN where not computable).

    Attributes
    ----------
    scales : pandas.DataFrame
        Table 2, one row per scale: ``scale, n_items`` (items of the complete human
        block), ``icc_a1_human, icc_ak_human`` (human panel), ``icc_a1_llm,
        icc_ak_llm`` (LLM panel on the same items), ``icc_human_llm`` (ICC(A,1) of
        [human mean, LLM ensemble mean]), ``nmae``, then ``n_raters, n_models,
        n_items_llm``, the ``*_low``/``*_high`` confidence bounds, ``pearson_r``.
    benchmarks : pandas.DataFrame
        Tables 3 and 4a, one row per benchmark and scale: the panels' ICCs, their
        differences ``delta_a1 = icc_a1_human - icc_a1_llm`` and ``delta_ak``, and
        ``icc_human_llm, nmae, pearson_r`` of the ensemble.
    models : pandas.DataFrame
        Table 4b, one row per scale and model at the main temperature:
        ``scale, model, temperature, icc_human_llm, nmae, n_items``, bounds,
        ``pearson_r``.
    inter_scale : pandas.DataFrame
        Table 1, long: ``benchmark`` (``"(all)"`` pools them), ``model``,
        ``comparison`` ("0-5, 0-10, 0-100" jointly or "0-5 vs 0-10"), ``icc_a1`` (of
        scores mapped to [0, 1]), ``n_items``. LLM scores of every item, not only the
        human-rated ones.
    inter_scale_average : pandas.DataFrame
        Table 1's Avg. column: ``benchmark, comparison, icc_a1_mean, n_models``.
    groups : pandas.DataFrame
        Table 5: ``group_by, group, scale, n_raters, n_items, icc_group_llm, nmae,
        icc_a1_within, icc_ak_within``.
    temperatures : pandas.DataFrame
        Table 6: ``model, scale, temperature, n_items, icc_human_llm, nmae`` for every
        temperature of every model (``temperature`` NaN: scores without one).
    alttest : pandas.DataFrame
        ``scale, model, epsilon, winning_rate, advantage_probability, passed, n_items,
        n_tested`` for each epsilon of the grid.
    items : pandas.DataFrame
        Per-item disagreement: ``scale, item, benchmark, human_mean, llm_mean, nmae``
        (|human mean - ensemble| over the range), ``poorly_aligned`` (nMAE above the
        paper's 0.1 threshold).
    worst_items : pandas.DataFrame
        The ``settings.worst_items`` largest per-item nMAEs of each scale.
    bootstrap : pandas.DataFrame
        ``statistic`` ("nmae" per scale, "icc_human_llm_difference" per pair of
        scales: ``scale_a`` minus ``scale_b``), ``estimate, low, high, confidence,
        n_items, n_resamples, n_undefined, seed``.
    figure2 : pandas.DataFrame
        The ICC-vs-nMAE diagnostic: ``benchmark, scale, model`` ("ensemble" or a
        model), ``icc_human_llm, nmae, pearson_r, n_items``.
    distributions : pandas.DataFrame
        Scores for the distribution plots: ``scale, kind`` ("human"/"llm"), ``who``
        (rater or model), ``group`` (the rater's ``group_by`` answer), ``item, value,
        share`` (value mapped to [0, 1]).
    notes : list of str
        Everything that could not be computed, and why.
    settings : dict
        The settings used (:meth:`AnalysisSettings.to_dict`) plus ``temperature`` as
        resolved and ``temperature_note`` saying how.
    """

    scales: pd.DataFrame
    benchmarks: pd.DataFrame
    models: pd.DataFrame
    inter_scale: pd.DataFrame
    inter_scale_average: pd.DataFrame
    groups: pd.DataFrame
    temperatures: pd.DataFrame
    alttest: pd.DataFrame
    items: pd.DataFrame
    worst_items: pd.DataFrame
    bootstrap: pd.DataFrame
    figure2: pd.DataFrame
    distributions: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ pieces


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def _ci(result: Any, attr: str) -> tuple[float, float]:
    return getattr(result, attr) if result is not None else (NAN, NAN)


@dataclass
class _Panel:
    """One scale's (and benchmark's) human block, LLM panel and their agreement."""

    humans: pd.DataFrame  # complete items x raters
    llm_all: pd.DataFrame  # humans' items x every model (NaN where missing)
    llm_panel: pd.DataFrame  # complete items x models, items within humans'
    human_icc: Any
    llm_icc: Any
    agreement: Any  # HumanLLMAgreement on the panel's items (ensemble)
    per_model: Any  # HumanLLMAgreement with every model, each on its items


def _panel(
    frames: StudyFrames,
    scale: str,
    *,
    benchmark: str | None,
    temperature: float | None,
    settings: AnalysisSettings,
    notes: Notes,
) -> _Panel:
    where = f"scale {scale}" + (f", benchmark {benchmark}" if benchmark else "")
    block = human_block(frames, scale, benchmark=benchmark)
    cut = block.describe_cut()
    if cut:
        notes.add(f"{where}: {cut}")
    humans = block.matrix
    low, high = frames.scale_bounds(scale)
    conf = settings.confidence
    human_icc = None
    if humans.shape[0] < 2 or humans.shape[1] < 2:
        notes.add(
            f"{where}: human ICC needs a complete block of at least 2 items x 2 raters, "
            f"have {humans.shape[0]} x {humans.shape[1]}"
        )
    else:
        human_icc = notes.attempt(f"{where}, human ICC", icc, humans, confidence=conf)
    llm = llm_matrix(frames, scale, temperature=temperature, benchmark=benchmark)
    llm_all, panel = llm_panel(llm, humans.index)
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
    return _Panel(humans, llm_all, panel, human_icc, llm_icc, agreement, per_model)


def _get(result: Any, attr: str) -> float:
    return float(getattr(result, attr)) if result is not None else NAN


def _scales_row(scale: str, p: _Panel) -> dict:
    ens = p.agreement.ensemble if p.agreement is not None else None
    return {
        "scale": scale,
        "n_items": p.humans.shape[0],
        "icc_a1_human": _get(p.human_icc, "icc_a1"),
        "icc_ak_human": _get(p.human_icc, "icc_ak"),
        "icc_a1_llm": _get(p.llm_icc, "icc_a1"),
        "icc_ak_llm": _get(p.llm_icc, "icc_ak"),
        "icc_human_llm": _get(ens, "icc_a1"),
        "nmae": _get(ens, "nmae"),
        "n_raters": p.humans.shape[1],
        "n_models": p.llm_panel.shape[1],
        "n_items_llm": p.llm_panel.shape[0],
        "icc_a1_human_low": _ci(p.human_icc, "ci_a1")[0],
        "icc_a1_human_high": _ci(p.human_icc, "ci_a1")[1],
        "icc_ak_human_low": _ci(p.human_icc, "ci_ak")[0],
        "icc_ak_human_high": _ci(p.human_icc, "ci_ak")[1],
        "icc_a1_llm_low": _ci(p.llm_icc, "ci_a1")[0],
        "icc_a1_llm_high": _ci(p.llm_icc, "ci_a1")[1],
        "icc_human_llm_low": _ci(ens, "ci_a1")[0],
        "icc_human_llm_high": _ci(ens, "ci_a1")[1],
        "pearson_r": _get(ens, "pearson_r"),
    }


def _benchmark_row(benchmark: str, scale: str, p: _Panel) -> dict:
    row = _scales_row(scale, p)
    row["benchmark"] = benchmark
    row["delta_a1"] = row["icc_a1_human"] - row["icc_a1_llm"]
    row["delta_ak"] = row["icc_ak_human"] - row["icc_ak_llm"]
    return {key: row[key] for key in BENCHMARKS_COLUMNS}


def _inter_scale(
    frames: StudyFrames, temperature: float | None, notes: Notes
) -> tuple[pd.DataFrame, pd.DataFrame]:
    scales = frames.scale_names
    bounds = {s: frames.scale_bounds(s) for s in scales}
    if len(scales) < 2:
        notes.add("inter-scale agreement (Table 1) needs at least 2 scales")
        return _frame([], INTER_SCALE_COLUMNS), _frame([], INTER_SCALE_AVERAGE_COLUMNS)
    per_scale = {s: llm_matrix(frames, s, temperature=temperature) for s in scales}
    models = sorted({m for wide in per_scale.values() for m in wide.columns})
    benchmarks = frames.benchmark_names
    rows = []
    for benchmark in [*benchmarks, ALL_BENCHMARKS]:
        if benchmark == ALL_BENCHMARKS and len(benchmarks) < 2:
            continue
        items = frames.items
        keep = items.loc[~items["is_attention_check"], ["item", "benchmark"]]
        if benchmark != ALL_BENCHMARKS:
            keep = keep[keep["benchmark"] == benchmark]
        index = pd.Index(keep["item"])
        for model in models:
            scores = pd.DataFrame(
                {
                    s: per_scale[s][model].reindex(index)
                    if model in per_scale[s].columns
                    else pd.Series(NAN, index=index)
                    for s in scales
                }
            )
            scores = scores.dropna(how="all")
            result = notes.attempt(
                f"Table 1, benchmark {benchmark}, model {model}",
                inter_scale_agreement,
                scores,
                bounds=bounds,
                nan_policy="omit",
            )
            joint = ", ".join(scales)
            rows.append(
                {
                    "benchmark": benchmark,
                    "model": model,
                    "comparison": joint,
                    "icc_a1": _get(result, "icc_a1"),
                    "n_items": result.n_items if result is not None else 0,
                }
            )
            if len(scales) > 2:
                pairs = {(p.scale_a, p.scale_b): p for p in result.pairs} if result else {}
                for a, b in combinations(scales, 2):
                    pair = pairs.get((a, b))
                    rows.append(
                        {
                            "benchmark": benchmark,
                            "model": model,
                            "comparison": f"{a} vs {b}",
                            "icc_a1": pair.icc_a1 if pair else NAN,
                            "n_items": pair.n_items if pair else 0,
                        }
                    )
    long = _frame(rows, INTER_SCALE_COLUMNS)
    if long.empty:
        return long, _frame([], INTER_SCALE_AVERAGE_COLUMNS)
    average = (
        long.groupby(["benchmark", "comparison"], sort=False)["icc_a1"]
        .agg(icc_a1_mean="mean", n_models="count")
        .reset_index()
    )
    # mean() skips NaN: a model whose ICC is missing is not averaged in (n_models says
    # how many were).
    return long, average[INTER_SCALE_AVERAGE_COLUMNS]


def _models_rows(scale: str, temperature: float | None, p: _Panel) -> list[dict]:
    if p.per_model is None:
        return [
            {"scale": scale, "model": model, "temperature": temperature, "n_items": 0}
            for model in p.llm_all.columns
        ]
    return [
        {
            "scale": scale,
            "model": row.model,
            "temperature": temperature,
            "icc_human_llm": row.icc_a1,
            "nmae": row.nmae,
            "n_items": row.n_items,
            "icc_human_llm_low": row.ci_a1[0],
            "icc_human_llm_high": row.ci_a1[1],
            "pearson_r": row.pearson_r,
        }
        for row in p.per_model.models
    ]


def _figure2_rows(benchmark: str, scale: str, p: _Panel) -> list[dict]:
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


def _groups(
    frames: StudyFrames, panels: dict[str, _Panel], settings: AnalysisSettings, notes: Notes
) -> pd.DataFrame:
    key = settings.group_by
    if key is None:
        return _frame([], GROUPS_COLUMNS)
    if key not in frames.demographics.columns:
        notes.add(f"Table 5: no rater answered a demographic question {key!r}")
        return _frame([], GROUPS_COLUMNS)
    answers = frames.demographics.set_index("rater")[key]
    groups = {rater: value for rater, value in answers.items() if value not in (None, "")}
    rows = []
    for scale, p in panels.items():
        if p.llm_panel.shape[1] == 0 or p.llm_panel.shape[0] < 2:
            notes.add(f"Table 5, scale {scale}: no complete human and LLM scores to split")
            continue
        low, high = frames.scale_bounds(scale)
        result = notes.attempt(
            f"Table 5, scale {scale}",
            grouped_agreement,
            p.humans.loc[p.llm_panel.index],
            p.llm_panel,
            groups=groups,
            scale_min=low,
            scale_max=high,
            confidence=settings.confidence,
        )
        for g in result or ():
            if g.reason:
                notes.add(f"Table 5, scale {scale}: {g.reason}")
            rows.append(
                {
                    "group_by": key,
                    "group": g.group,
                    "scale": scale,
                    "n_raters": len(g.raters),
                    "n_items": g.agreement.ensemble.n_items,
                    "icc_group_llm": g.agreement.ensemble.icc_a1,
                    "nmae": g.agreement.ensemble.nmae,
                    "icc_a1_within": _get(g.within, "icc_a1"),
                    "icc_ak_within": _get(g.within, "icc_ak"),
                }
            )
    return _frame(rows, GROUPS_COLUMNS)


def _temperatures(
    frames: StudyFrames, panels: dict[str, _Panel], settings: AnalysisSettings, notes: Notes
) -> pd.DataFrame:
    temps = frames.llm["temperature"]
    values = sorted({float(t) for t in temps.dropna()})
    if temps.isna().any():
        values.append(None)
    rows = []
    for scale, p in panels.items():
        low, high = frames.scale_bounds(scale)
        if p.humans.shape[0] < 2 or p.humans.shape[1] < 1:
            continue
        human_mean = p.humans.mean(axis=1)
        for t in values:
            wide = llm_matrix(frames, scale, temperature=t).reindex(p.humans.index)
            for model in wide.columns:
                present = wide[model].notna()
                where = f"Table 6, scale {scale}, model {model}, temperature {t}"
                result = notes.attempt(
                    where,
                    human_llm_agreement,
                    human_mean[present],
                    wide.loc[present, [model]],
                    scale_min=low,
                    scale_max=high,
                    confidence=settings.confidence,
                )
                ens = result.models[0] if result is not None else None
                rows.append(
                    {
                        "model": model,
                        "scale": scale,
                        "temperature": NAN if t is None else t,
                        "n_items": int(present.sum()),
                        "icc_human_llm": _get(ens, "icc_a1"),
                        "nmae": _get(ens, "nmae"),
                    }
                )
    frame = _frame(rows, TEMPERATURES_COLUMNS)
    order = {s: i for i, s in enumerate(frames.scale_names)}
    frame["_scale"] = frame["scale"].map(order)
    frame = frame.sort_values(["model", "_scale", "temperature"], kind="stable")
    return frame.drop(columns="_scale").reset_index(drop=True)


def _alttest(
    frames: StudyFrames, temperature: float | None, settings: AnalysisSettings, notes: Notes
) -> pd.DataFrame:
    rows = []
    for scale in frames.scale_names:
        humans = rater_dicts(human_ratings(frames, scale))
        wide = llm_matrix(frames, scale, temperature=temperature)
        for model in wide.columns:
            column = wide[model].dropna()
            scores = dict(zip(column.index.tolist(), column.tolist(), strict=True))
            for epsilon in settings.epsilons:
                result = notes.attempt(
                    f"alt-test, scale {scale}, model {model}",
                    alt_test,
                    humans=humans,
                    llm=scores,
                    scoring=settings.scoring,
                    epsilon=epsilon,
                    q=settings.q,
                )
                rows.append(
                    {
                        "scale": scale,
                        "model": model,
                        "epsilon": epsilon,
                        "winning_rate": _get(result, "winning_rate"),
                        "advantage_probability": _get(result, "advantage_probability"),
                        "passed": result.passed if result is not None else None,
                        "n_items": result.n_items if result is not None else 0,
                        "n_tested": result.n_tested if result is not None else 0,
                    }
                )
    return _frame(rows, ALTTEST_COLUMNS)


def _items(frames: StudyFrames, panels: dict[str, _Panel], settings: AnalysisSettings):
    parts = []
    bench = frames.items.set_index("item")["benchmark"]
    for scale, p in panels.items():
        if p.llm_panel.shape[1] == 0 or p.llm_panel.shape[0] == 0:
            continue
        low, high = frames.scale_bounds(scale)
        human_mean = p.humans.loc[p.llm_panel.index].mean(axis=1)
        llm_mean = p.llm_panel.mean(axis=1)
        error = (human_mean - llm_mean).abs() / (high - low)
        parts.append(
            pd.DataFrame(
                {
                    "scale": scale,
                    "item": human_mean.index,
                    "benchmark": bench.reindex(human_mean.index).to_numpy(),
                    "human_mean": human_mean.to_numpy(),
                    "llm_mean": llm_mean.to_numpy(),
                    "nmae": error.to_numpy(),
                    "poorly_aligned": (error > settings.item_threshold).to_numpy(),
                }
            )
        )
    items = pd.concat(parts, ignore_index=True) if parts else _frame([], ITEMS_COLUMNS)
    worst = (
        items.sort_values(["scale", "nmae"], ascending=[True, False], kind="stable")
        .groupby("scale", sort=False)
        .head(settings.worst_items)
    )
    order = {s: i for i, s in enumerate(frames.scale_names)}
    worst = worst.sort_values(
        ["scale", "nmae"], key=lambda c: c.map(order) if c.name == "scale" else -c, kind="stable"
    )
    return items[ITEMS_COLUMNS], worst[ITEMS_COLUMNS].reset_index(drop=True)


def _bootstrap(
    frames: StudyFrames, panels: dict[str, _Panel], settings: AnalysisSettings, notes: Notes
) -> pd.DataFrame:
    options = {
        "n_resamples": settings.n_resamples,
        "confidence": settings.confidence,
        "seed": settings.seed,
    }
    consensus = {}
    for scale, p in panels.items():
        if p.llm_panel.shape[1] and p.llm_panel.shape[0] >= 2:
            consensus[scale] = pd.DataFrame(
                {
                    "human": p.humans.loc[p.llm_panel.index].mean(axis=1),
                    "llm": p.llm_panel.mean(axis=1),
                }
            )
    rows = []
    for scale, pair in consensus.items():
        low, high = frames.scale_bounds(scale)
        result = notes.attempt(
            f"bootstrap nMAE, scale {scale}",
            bootstrap_nmae,
            pair["human"],
            pair["llm"],
            scale_min=low,
            scale_max=high,
            **options,
        )
        if result is not None:
            rows.append({"statistic": "nmae", "scale_a": scale, "scale_b": None, **_boot(result)})
    for a, b in combinations(list(consensus), 2):
        common = consensus[a].index.intersection(consensus[b].index)
        if len(common) < 2:
            notes.add(f"bootstrap ICC difference {a} - {b}: fewer than 2 items on both scales")
            continue
        ca, cb = consensus[a].loc[common], consensus[b].loc[common]
        result = notes.attempt(
            f"bootstrap ICC difference {a} - {b}",
            bootstrap_icc_difference,
            ca["human"],
            ca["llm"],
            cb["human"],
            cb["llm"],
            **options,
        )
        if result is not None:
            rows.append(
                {
                    "statistic": "icc_human_llm_difference",
                    "scale_a": a,
                    "scale_b": b,
                    **_boot(result),
                }
            )
    return _frame(rows, BOOTSTRAP_COLUMNS)


def _boot(result: Any) -> dict:
    return {
        "estimate": result.estimate,
        "low": result.low,
        "high": result.high,
        "confidence": result.confidence,
        "n_items": result.n_items,
        "n_resamples": result.n_resamples,
        "n_undefined": result.n_undefined,
        "seed": result.seed,
    }


def _distributions(
    frames: StudyFrames, temperature: float | None, settings: AnalysisSettings
) -> pd.DataFrame:
    bounds = frames.scales.set_index("scale")
    r = frames.ratings
    r = r[~r["is_repeat"] & ~r["is_attention_check"]]
    groups = {}
    if settings.group_by and settings.group_by in frames.demographics.columns:
        groups = frames.demographics.set_index("rater")[settings.group_by].to_dict()
    humans = pd.DataFrame(
        {
            "scale": r["scale"].to_numpy(),
            "kind": "human",
            "who": r["rater"].to_numpy(),
            "group": r["rater"].map(groups).to_numpy() if groups else None,
            "item": r["item"].to_numpy(),
            "value": r["value"].to_numpy(),
        }
    )
    parts = [humans]
    for scale in frames.scale_names:
        wide = llm_matrix(frames, scale, temperature=temperature)
        stacked = wide.stack().rename("value").reset_index()
        parts.append(
            pd.DataFrame(
                {
                    "scale": scale,
                    "kind": "llm",
                    "who": stacked["model"].to_numpy(),
                    "group": None,
                    "item": stacked["item"].to_numpy(),
                    "value": stacked["value"].to_numpy(),
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    low = out["scale"].map(bounds["min"]).astype(float)
    high = out["scale"].map(bounds["max"]).astype(float)
    out["share"] = (out["value"].astype(float) - low) / (high - low)
    return out[DISTRIBUTION_COLUMNS]


# ------------------------------------------------------------------ public


def report_tables(frames: StudyFrames, *, settings: AnalysisSettings | None = None) -> ReportTables:
    """Compute every table of the report from a study's frames.

    Parameters
    ----------
    frames : StudyFrames
        The study, from :func:`annotator.data.frames.study_frames`.
    settings : AnalysisSettings, keyword-only
        Defaults to ``AnalysisSettings()``; for a stored study use
        :func:`annotator.analysis.settings.study_settings`.

    Returns
    -------
    ReportTables
    """
    settings = settings or AnalysisSettings()
    notes = Notes()
    temperature, how = main_temperature(frames, settings.temperature)
    scales = frames.scale_names
    benchmarks = frames.benchmark_names
    options = {"temperature": temperature, "settings": settings, "notes": notes}
    pooled = {s: _panel(frames, s, benchmark=None, **options) for s in scales}
    scales_rows = [_scales_row(s, p) for s, p in pooled.items()]
    bench_rows, figure_rows = [], []
    for benchmark in benchmarks:
        for s in scales:
            p = _panel(frames, s, benchmark=benchmark, **options)
            bench_rows.append(_benchmark_row(benchmark, s, p))
            figure_rows += _figure2_rows(benchmark, s, p)
    for s, p in pooled.items():
        figure_rows += _figure2_rows(ALL_BENCHMARKS, s, p)
    models_rows = [row for s, p in pooled.items() for row in _models_rows(s, temperature, p)]
    inter, inter_avg = _inter_scale(frames, temperature, notes)
    items, worst = _items(frames, pooled, settings)
    used = settings.to_dict()
    used.update({"temperature": temperature, "temperature_note": how})
    return ReportTables(
        scales=_frame(scales_rows, SCALES_COLUMNS),
        benchmarks=_frame(bench_rows, BENCHMARKS_COLUMNS),
        models=_frame(models_rows, MODELS_COLUMNS),
        inter_scale=inter,
        inter_scale_average=inter_avg,
        groups=_groups(frames, pooled, settings, notes),
        temperatures=_temperatures(frames, pooled, settings, notes),
        alttest=_alttest(frames, temperature, settings, notes),
        items=items,
        worst_items=worst,
        bootstrap=_bootstrap(frames, pooled, settings, notes),
        figure2=_frame(figure_rows, FIGURE2_COLUMNS),
        distributions=_distributions(frames, temperature, settings),
        notes=list(notes),
        settings=used,
    )


def mark_best(
    frame: pd.DataFrame,
    *,
    higher: list[str] = (),
    lower: list[str] = (),
    within: str | None = None,
) -> pd.DataFrame:
    """Booleans marking the best value of each column (ties all marked), as the paper bolds.

    Parameters
    ----------
    frame : pandas.DataFrame
        A table.
    higher, lower : list of str, keyword-only
        Columns where the highest (ICC) or the lowest (nMAE) value is best.
    within : str, optional, keyword-only
        Compare within groups of this column (e.g. ``"benchmark"``: the best scale of
        each benchmark); otherwise over the whole column.

    Returns
    -------
    pandas.DataFrame
        Same index as ``frame``, one boolean column per column of ``higher`` and
        ``lower``; NaN cells are never best.
    """
    out = pd.DataFrame(index=frame.index)
    keys = frame[within] if within else pd.Series(0, index=frame.index)
    for column, best in [*((c, "max") for c in higher), *((c, "min") for c in lower)]:
        values = pd.to_numeric(frame[column], errors="coerce")
        target = values.groupby(keys).transform(best)
        out[column] = np.isclose(values, target, rtol=0, atol=1e-12) & values.notna()
    return out


def write_csv_tables(tables: ReportTables, directory: str | Path) -> list[Path]:
    """Write each table as ``DIR/<name>.csv`` (see ``CSV_FILES``) plus ``notes.txt``.

    Floats are written with Python's shortest round-trip repr; NaN as an empty cell.
    Returns the paths written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, attr in CSV_FILES.items():
        path = directory / f"{stem}.csv"
        getattr(tables, attr).to_csv(path, index=False, lineterminator="\n")
        written.append(path)
    notes = directory / "notes.txt"
    notes.write_text("".join(f"{line}\n" for line in tables.notes), encoding="utf-8")
    written.append(notes)
    return written


@dataclass(frozen=True)
class BestRule:
    """Which cells of a table the paper bolds: the highest of ``higher`` (ICCs), the
    lowest of ``lower`` (nMAE), compared within each value of ``within`` (or the
    whole column when None)."""

    higher: tuple[str, ...]
    lower: tuple[str, ...] = ("nmae",)
    within: str | None = None

    def mark(self, frame: pd.DataFrame) -> pd.DataFrame:
        """:func:`mark_best` of ``frame`` under this rule."""
        return mark_best(
            frame, higher=list(self.higher), lower=list(self.lower), within=self.within
        )


# The best-value rule of each table (by its CSV name), shared by the LaTeX tables
# and the HTML report so that both bold the same cells.
BEST_RULES = {
    "scales": BestRule(
        ("icc_a1_human", "icc_ak_human", "icc_a1_llm", "icc_ak_llm", "icc_human_llm")
    ),
    "benchmarks": BestRule(("icc_human_llm",), within="benchmark"),
    "models": BestRule(("icc_human_llm",), within="model"),
    "groups": BestRule(("icc_group_llm", "icc_a1_within", "icc_ak_within"), within="group"),
}


def write_latex_tables(tables: ReportTables, directory: str | Path) -> list[Path]:
    """Write each table as ``DIR/<name>.tex`` (pandas ``Styler.to_latex``, booktabs).

    Numbers have 3 decimals; in the scale, benchmark, model and group tables the best
    value of each column (within each benchmark, model or group) is bold, as in the
    paper. Returns the paths written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, attr in CSV_FILES.items():
        frame = getattr(tables, attr).reset_index(drop=True)
        styler = frame.style.format(precision=3, na_rep="").hide(axis="index")
        if stem in BEST_RULES:
            best = BEST_RULES[stem].mark(frame)
            styler = styler.apply(
                lambda column, best=best: (
                    ["font-weight: bold" if flag else "" for flag in best[column.name]]
                    if column.name in best.columns
                    else [""] * len(column)
                ),
                axis=0,
            )
        path = directory / f"{stem}.tex"
        path.write_text(styler.to_latex(hrules=True, convert_css=True), encoding="utf-8")
        written.append(path)
    return written
