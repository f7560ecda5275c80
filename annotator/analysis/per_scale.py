"""One scale's part of a study's analysis: progress, reliability, agreement, alt-test.

:func:`scale_analysis` computes the :class:`~.model.ScaleAnalysis` of one scale for
:func:`annotator.analysis.analyse`, only the ``parts`` asked for.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

import pandas as pd

from ..data.frames import StudyFrames
from ..metrics import alt_test_pair, krippendorff_alpha, retest_reliability
from ..words import plural
from .matrices import Notes, human_ratings, llm_matrix, rater_dicts, retest_pairs
from .model import BLOCK_STATES, RaterRecord, Retest, ScaleAnalysis, ScaleProgress
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
    )
