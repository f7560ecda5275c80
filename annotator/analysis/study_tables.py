"""The tables that need more than one panel: inter-scale agreement (Table 1), groups
(Table 5), temperatures (Table 6), the alt-test against epsilon, per-item
disagreement, bootstrap intervals and score distributions.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import pandas as pd

from ..data.frames import StudyFrames
from ..metrics import (
    bootstrap_icc_difference,
    bootstrap_nmae,
    grouped_agreement,
    human_llm_agreement,
    inter_scale_agreement,
)
from ..metrics.alttest._curves import _alt_tests_by_epsilon
from .columns import (
    ALL_BENCHMARKS,
    ALTTEST_COLUMNS,
    BOOTSTRAP_COLUMNS,
    DISTRIBUTION_COLUMNS,
    GROUPS_COLUMNS,
    INTER_SCALE_AVERAGE_COLUMNS,
    INTER_SCALE_COLUMNS,
    ITEMS_COLUMNS,
    NAN,
    TEMPERATURES_COLUMNS,
)
from .matrices import (
    Notes,
    human_ratings,
    llm_matrix,
    rater_dicts,
)
from .panels import Panel, rows_frame, value_of
from .settings import AnalysisSettings

__all__ = [
    "inter_scale_rows",
    "group_rows",
    "temperature_rows",
    "alttest_rows",
    "item_rows",
    "bootstrap_rows",
    "interval_row",
    "distribution_rows",
]


def inter_scale_rows(
    frames: StudyFrames, temperature: float | None, notes: Notes, *, runs: str = "mean"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    scales = frames.scale_names
    bounds = {s: frames.scale_bounds(s) for s in scales}
    if len(scales) < 2:
        notes.add("inter-scale agreement (Table 1) needs at least 2 scales")
        return rows_frame([], INTER_SCALE_COLUMNS), rows_frame([], INTER_SCALE_AVERAGE_COLUMNS)
    per_scale = {s: llm_matrix(frames, s, temperature=temperature, runs=runs) for s in scales}
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
                    "icc_a1": value_of(result, "icc_a1"),
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
    long = rows_frame(rows, INTER_SCALE_COLUMNS)
    if long.empty:
        return long, rows_frame([], INTER_SCALE_AVERAGE_COLUMNS)
    average = (
        long.groupby(["benchmark", "comparison"], sort=False)["icc_a1"]
        .agg(icc_a1_mean="mean", n_models="count")
        .reset_index()
    )
    # mean() skips NaN: a model whose ICC is missing is not averaged in (n_models says
    # how many were).
    return long, average[INTER_SCALE_AVERAGE_COLUMNS]


def group_rows(
    frames: StudyFrames, panels: dict[str, Panel], settings: AnalysisSettings, notes: Notes
) -> pd.DataFrame:
    key = settings.group_by
    if key is None:
        return rows_frame([], GROUPS_COLUMNS)
    if key not in frames.demographics.columns:
        notes.add(f"Table 5: no rater answered a demographic question {key!r}")
        return rows_frame([], GROUPS_COLUMNS)
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
                    "icc_a1_within": value_of(g.within, "icc_a1"),
                    "icc_ak_within": value_of(g.within, "icc_ak"),
                }
            )
    return rows_frame(rows, GROUPS_COLUMNS)


def temperature_rows(
    frames: StudyFrames, panels: dict[str, Panel], settings: AnalysisSettings, notes: Notes
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
            wide = llm_matrix(frames, scale, temperature=t, runs=settings.runs).reindex(
                p.humans.index
            )
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
                        "icc_human_llm": value_of(ens, "icc_a1"),
                        "nmae": value_of(ens, "nmae"),
                    }
                )
    frame = rows_frame(rows, TEMPERATURES_COLUMNS)
    order = {s: i for i, s in enumerate(frames.scale_names)}
    frame["_scale"] = frame["scale"].map(order)
    frame = frame.sort_values(["model", "_scale", "temperature"], kind="stable")
    return frame.drop(columns="_scale").reset_index(drop=True)


def alttest_rows(
    frames: StudyFrames, temperature: float | None, settings: AnalysisSettings, notes: Notes
) -> pd.DataFrame:
    # The grid and the study's own epsilon (the one the dashboard shows).
    epsilons = tuple(sorted({*settings.epsilons, float(settings.epsilon)}))
    rows = []
    for scale in frames.scale_names:
        humans = rater_dicts(human_ratings(frames, scale))
        wide = llm_matrix(frames, scale, temperature=temperature, runs=settings.runs)
        for model in wide.columns:
            column = wide[model].dropna()
            scores = dict(zip(column.index.tolist(), column.tolist(), strict=True))
            # alt_test at each epsilon, the items scored once (about 6x faster).
            tests = _alt_tests_by_epsilon(
                humans, scores, epsilons, {"scoring": settings.scoring, "q": settings.q}
            )
            for epsilon, test in zip(epsilons, tests, strict=True):
                result = notes.attempt(f"alt-test, scale {scale}, model {model}", test)
                rows.append(
                    {
                        "scale": scale,
                        "model": model,
                        "epsilon": epsilon,
                        "winning_rate": value_of(result, "winning_rate"),
                        "advantage_probability": value_of(result, "advantage_probability"),
                        "passed": result.passed if result is not None else None,
                        "n_items": result.n_items if result is not None else 0,
                        "n_tested": result.n_tested if result is not None else 0,
                    }
                )
    return rows_frame(rows, ALTTEST_COLUMNS)


def item_rows(frames: StudyFrames, panels: dict[str, Panel], settings: AnalysisSettings):
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
    items = pd.concat(parts, ignore_index=True) if parts else rows_frame([], ITEMS_COLUMNS)
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


def bootstrap_rows(
    frames: StudyFrames, panels: dict[str, Panel], settings: AnalysisSettings, notes: Notes
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
            rows.append(
                {"statistic": "nmae", "scale_a": scale, "scale_b": None, **interval_row(result)}
            )
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
                    **interval_row(result),
                }
            )
    return rows_frame(rows, BOOTSTRAP_COLUMNS)


def interval_row(result: Any) -> dict:
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


def distribution_rows(
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
        wide = llm_matrix(frames, scale, temperature=temperature, runs=settings.runs)
        # A judge without a score on an item (a partial run) has no point there.
        stacked = wide.stack().dropna().rename("value").reset_index()
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
