"""Column names of the report's tables, the pooled-benchmark label and the CSV file names."""

from __future__ import annotations

import math

__all__ = ["ALL_BENCHMARKS", "CSV_FILES"]

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
    "alpha_human",
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
# The rater label of the test-retest row pooled over every rater.
POOLED = "(pooled)"
RETEST_COLUMNS = ["scale", "rater", "n_items", "alpha", "icc_a1"]
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
    # annotator.analysis.agreement_tables.AGREEMENT_TABLES
    **{t: t for t in ("consistency", "correlations", "kappa", "cross_alpha", "alttest_curves")},
    "rater_quality": "rater_quality",
    "retest": "retest",
    "judge_assisted": "judge_assisted",
    "statistics": "statistics",
}
