"""Judge-assisted estimates of the human mean score per benchmark, scale and judge.

A benchmark whose items are all scored by a judge (an LLM at the main temperature) but
only some by humans: :func:`annotator.metrics.ppi_mean` estimates the mean human score
over the benchmark's items from the human scores of the rated items and the judge's
scores of all of them (PPI++), beside the mean of the rated items alone. The study's
analysis (:func:`annotator.analysis.study_analysis.analyse`, part
``"judge_assisted"``) computes the table; the dashboard and the report render it.
"""

from __future__ import annotations

import pandas as pd

from ..data.frames import StudyFrames
from ..metrics import ppi_mean
from .matrices import human_ratings, llm_matrix
from .settings import AnalysisSettings

__all__ = ["JUDGE_ASSISTED_COLUMNS", "MIN_RATED_ITEMS", "judge_assisted_rows"]

JUDGE_ASSISTED_COLUMNS = [
    "benchmark",
    "scale",
    "judge",
    "n_rated",
    "n_unrated",
    "estimate",
    "estimate_low",
    "estimate_high",
    "human_mean",
    "human_mean_low",
    "human_mean_high",
    "effective_n",
    "lam",
    "confidence",
]

#: Human-rated items a benchmark needs: the coverage of the interval is checked from
#: 30 on (validation/ppi_coverage.py, docs/metrics.md).
MIN_RATED_ITEMS = 30
#: Items scored by the judge alone: with fewer the judge adds nothing to estimate.
MIN_UNRATED_ITEMS = 2


def _benchmark_items(frames: StudyFrames, benchmark: str) -> pd.Index:
    items = frames.items
    keep = (items["benchmark"] == benchmark) & ~items["is_attention_check"]
    return pd.Index(items.loc[keep, "item"])


def judge_assisted_rows(
    frames: StudyFrames, temperature: float | None, settings: AnalysisSettings
) -> pd.DataFrame:
    """One row per (benchmark, scale, judge) that qualifies; columns
    :data:`JUDGE_ASSISTED_COLUMNS`.

    A benchmark qualifies for a judge when the judge scored every one of its items at
    the main ``temperature`` (runs combined by ``settings.runs``), at least
    :data:`MIN_RATED_ITEMS` items have a human rating and at least
    :data:`MIN_UNRATED_ITEMS` have none. An item's human score is the mean of its first
    ratings. Intervals have the study's ``settings.confidence``.
    """
    rows = []
    for scale in frames.scale_names:
        for benchmark in frames.benchmark_names:
            items = _benchmark_items(frames, benchmark)
            human = human_ratings(frames, scale, benchmark=benchmark).mean(axis=1)
            rated = items[items.isin(human.index)]
            unrated = items[~items.isin(human.index)]
            if len(rated) < MIN_RATED_ITEMS or len(unrated) < MIN_UNRATED_ITEMS:
                continue
            llm = llm_matrix(
                frames, scale, temperature=temperature, benchmark=benchmark, runs=settings.runs
            )
            for judge in llm.columns:
                scores = llm[judge].reindex(items)
                if scores.isna().any():
                    continue
                result = ppi_mean(
                    human.reindex(rated).to_numpy(),
                    scores.reindex(rated).to_numpy(),
                    scores.reindex(unrated).to_numpy(),
                    confidence=settings.confidence,
                )
                rows.append(
                    [
                        benchmark,
                        scale,
                        judge,
                        result.n,
                        result.n_unrated,
                        result.estimate,
                        *result.interval,
                        result.human_estimate,
                        *result.human_interval,
                        result.effective_n,
                        result.lam,
                        result.confidence,
                    ]
                )
    return pd.DataFrame(rows, columns=JUDGE_ASSISTED_COLUMNS)
