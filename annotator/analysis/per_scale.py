"""One scale's part of a study's analysis: progress, reliability, agreement, alt-test.

:func:`scale_analysis` computes the :class:`~.model.ScaleAnalysis` of one scale for
:func:`annotator.analysis.analyse`, only the ``parts`` asked for.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from ..data.frames import StudyFrames
from ..metrics import alt_test_pair, gwet_ac1, gwet_ac2, krippendorff_alpha, retest_reliability
from ..metrics.kappa import round_half_up
from ..words import plural
from .matrices import Notes, human_ratings, llm_matrix, rater_dicts, retest_pairs
from .model import BLOCK_STATES, RaterRecord, Retest, ScaleAnalysis, ScaleProgress, Statistic
from .panels import build_panel
from .settings import AnalysisSettings

__all__ = ["scale_analysis"]


def _time(value: Any) -> datetime | None:
    return None if value is None or pd.isna(value) else value.to_pydatetime()


def _progress(frames: StudyFrames, scale: str, n_items: int) -> ScaleProgress:
    r = frames.ratings[frames.ratings["scale"] == scale]
    first = r[~r["is_repeat"] & ~r["is_attention_check"]]
    checks = r[r["is_attention_check"]]
    blocks = frames.blocks[frames.blocks["scale"] == scale].set_index("rater")
    seconds = (first["submitted_at"] - first["served_at"]).dt.total_seconds()
    per_rater_seconds = seconds.groupby(first["rater"]).median()
    rated = first.groupby("rater").size()
    repeats = r[r["is_repeat"]].groupby("rater").size()
    passed = checks[checks["attention_passed"] == True].groupby("rater").size()  # noqa: E712
    failed = checks[checks["attention_passed"] == False].groupby("rater").size()  # noqa: E712
    rows = []
    for rater in sorted(set(blocks.index) | set(r["rater"])):
        block = blocks.loc[rater] if rater in blocks.index else None
        rows.append(
            RaterRecord(
                rater=rater,
                status=block["status"] if block is not None else "no block",
                block_position=int(block["position"]) if block is not None else None,
                n_rated=int(rated.get(rater, 0)),
                n_repeats=int(repeats.get(rater, 0)),
                median_seconds=float(per_rater_seconds.get(rater, float("nan"))),
                attention_passed=int(passed.get(rater, 0)),
                attention_failed=int(failed.get(rater, 0)),
                started_at=_time(block["started_at"]) if block is not None else None,
                completed_at=_time(block["completed_at"]) if block is not None else None,
            )
        )
    counts = {state: int((blocks["status"] == state).sum()) for state in BLOCK_STATES}
    last = blocks["completed_at"].max() if len(blocks) else None
    return ScaleProgress(tuple(rows), counts, _time(last), n_items, int(len(first)))


def _alpha(wide: pd.DataFrame, notes: Notes, scale: str) -> tuple[float | None, str | None]:
    if wide.shape[1] < 2 or (wide.notna().sum(axis=1) >= 2).sum() < 1:
        return None, "alpha needs an item rated by at least 2 raters"
    value = notes.attempt(
        f"scale {scale}, Krippendorff's alpha", krippendorff_alpha, wide, level="interval"
    )
    return value, notes.last_error if value is None else None


def _retest(frames: StudyFrames, scale: str, notes: Notes) -> Retest:
    pairs, n_repeated = retest_pairs(frames, scale)
    if n_repeated < 2:
        return Retest(
            n_repeated,
            None,
            f"{plural(n_repeated, 'item')} rated twice so far; test-retest needs 2",
        )
    result = notes.attempt(f"scale {scale}, test-retest", retest_reliability, pairs)
    return Retest(n_repeated, result, notes.last_error if result is None else None)


def _alttest(wide: pd.DataFrame, llm: pd.DataFrame, settings: AnalysisSettings) -> dict:
    humans = rater_dicts(wide)
    out = {}
    for model in llm.columns:
        column = llm[model].dropna()
        scores = dict(zip(column.index.tolist(), column.tolist(), strict=True))
        # One scoring pass for the t-test and the anytime-valid verdict.
        out[model] = alt_test_pair(
            humans=humans,
            llm=scores,
            scoring=settings.scoring,
            epsilon=settings.epsilon,
            q=settings.q,
        )
    return out


# What the report says each Gwet statistic is computed on (its ``about``).
_HUMANS_ABOUT = (
    "Gwet's AC1 (nominal; on scales of at most 11 points) and AC2 (quadratic weights) "
    "among the humans: every first rating, missing cells allowed, the scale's points as "
    "categories; Gwet's (2008) "
    "standard error over items, t interval."
)
_JUDGE_ABOUT = (
    "Gwet's AC2 (quadratic weights) of each model with the human consensus (the mean "
    "of the complete block, rounded half up to a scale point; the model's score too)."
)


def _scale_points(frames: StudyFrames, scale: str) -> np.ndarray:
    """The scale's points, from its ``min``, ``max`` and ``step`` (which divides the range)."""
    row = frames.scales.set_index("scale").loc[scale]
    low, high, step = float(row["min"]), float(row["max"]), float(row["step"])
    return low + step * np.arange(round((high - low) / step) + 1)


def _gwet_statistic(key, label, result, notes, **fields) -> Statistic:
    if result is None:
        return Statistic(key, label, None, reason=notes.last_error, **fields)
    return Statistic(key, label, result.coefficient, ci=result.ci, n_items=result.n_items, **fields)


# AC1 (identity weights) counts only exact matches. On a scale of many points two
# raters who differ by one step count as disagreeing as much as raters at opposite
# ends, so AC1 falls towards 0 however close the ratings are (the demo's 0-5 scale in
# steps of 0.1: AC1 0.05 beside an ICC of 0.94). It is computed up to 11 points, the
# 0-10 scale in whole steps and the usual Likert scales; above that the report says
# why not, and AC2 with quadratic weights, which credits near misses, stands for it.
AC1_MOST_POINTS = 11


def _gwet(frames, scale, wide, panel, llm, settings, notes) -> tuple[Statistic, ...]:
    """Gwet's AC1 and AC2 among the humans; AC2 of each model with the human consensus."""
    points = _scale_points(frames, scale)
    options = {"categories": points, "confidence": settings.confidence}
    out = []
    pairable = wide.shape[1] >= 2 and bool((wide.notna().sum(axis=1) >= 2).any())
    for key, label, function, weights in (
        ("gwet_ac1", "Gwet's AC1", gwet_ac1, {}),
        ("gwet_ac2_quadratic", "Gwet's AC2 (quadratic)", gwet_ac2, {"weights": "quadratic"}),
    ):
        if key == "gwet_ac1" and len(points) > AC1_MOST_POINTS:
            why = (
                f"counts only exact matches, which say little on a scale of {len(points)} "
                f"points (it is computed up to {AC1_MOST_POINTS}); see AC2 (quadratic)"
            )
            out.append(Statistic(key, label, None, reason=why, about=_HUMANS_ABOUT))
            continue
        if not pairable:
            why = "needs an item rated by at least 2 raters"
            out.append(Statistic(key, label, None, reason=why, about=_HUMANS_ABOUT))
            continue
        where = f"scale {scale}, {label}"
        result = notes.attempt(where, function, wide, **options, **weights)
        out.append(_gwet_statistic(key, label, result, notes, about=_HUMANS_ABOUT))
    if panel is None or llm is None or panel.humans.shape[1] == 0:
        return tuple(out)
    humans = panel.humans
    low, step = points[0], points[1] - points[0] if len(points) > 1 else 1.0

    def snapped(values) -> np.ndarray:
        return low + step * round_half_up((np.asarray(values, dtype=float) - low) / step)

    consensus = pd.Series(snapped(humans.mean(axis=1)), index=humans.index)
    label = "Gwet's AC2 (quadratic) with the humans"
    for model in llm.columns:
        scores = llm[model].reindex(humans.index).dropna()
        if len(scores) < 2:
            why = "needs 2 items with every human rating and this model's score"
            out.append(
                Statistic(
                    "gwet_ac2_quadratic", label, None, reason=why, model=model, about=_JUDGE_ABOUT
                )
            )
            continue
        pair = np.column_stack([consensus[scores.index].to_numpy(), snapped(scores)])
        where = f"scale {scale}, model {model}, {label}"
        result = notes.attempt(where, gwet_ac2, pair, weights="quadratic", **options)
        out.append(
            _gwet_statistic(
                "gwet_ac2_quadratic", label, result, notes, model=model, about=_JUDGE_ABOUT
            )
        )
    return tuple(out)


def scale_analysis(
    frames: StudyFrames,
    scale: str,
    temperature: float | None,
    settings: AnalysisSettings,
    parts: Collection[str],
    consistency: pd.DataFrame | None,
    n_items: int,
) -> ScaleAnalysis:
    notes = Notes()
    low, high = frames.scale_bounds(scale)
    wide = human_ratings(frames, scale)
    panel = None
    if {"reliability", "agreement", "tables"} & set(parts):
        panel = build_panel(
            frames, scale, benchmark=None, temperature=temperature, settings=settings, notes=notes
        )
    alpha = alpha_reason = retest = None
    if {"reliability", "tables"} & set(parts):
        alpha, alpha_reason = _alpha(wide, notes, scale)
        retest = _retest(frames, scale, notes)
    llm = None
    if {"agreement", "alttest"} & set(parts):
        llm = llm_matrix(frames, scale, temperature=temperature, runs=settings.runs)
        superseded = frames.llm_superseded.get(scale, 0)
        if superseded:
            notes.add(
                f"scale {scale}: {plural(superseded, 'LLM score')} asked under an older "
                f"prompt {'is' if superseded == 1 else 'are'} left out (each model's newest "
                "prompt is used)"
            )
    alttest = _alttest(wide, llm, settings) if "alttest" in parts else {}
    statistics = ()
    if {"reliability", "tables"} & set(parts):
        statistics = _gwet(frames, scale, wide, panel, llm, settings, notes)
    mine = None
    if consistency is not None:
        mine = consistency[consistency["scale"] == scale].reset_index(drop=True)
    return ScaleAnalysis(
        scale=scale,
        scale_min=low,
        scale_max=high,
        progress=_progress(frames, scale, n_items) if "progress" in parts else None,
        ratings=wide,
        panel=panel,
        alpha=alpha,
        alpha_reason=alpha_reason,
        retest=retest,
        llm=llm,
        alttest=alttest,
        consistency=mine,
        notes=tuple(notes),
        statistics=statistics,
    )
