"""The agreement measures other tools report, on a study's frames: self-consistency of the
LLM runs, correlations, kappas, cross-group alpha and the alt-test curves.

One function per table, each turning :class:`~annotator.data.frames.StudyFrames` into a
tidy DataFrame through ``annotator.metrics``; :func:`agreement_tables` gathers them for
:func:`~annotator.analysis.tables.report_tables`, and ``annotator consistency`` and
``annotator agreement`` print the same frames.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd

from ..data.frames import StudyFrames
from ..metrics import (
    alt_test_curve,
    cohen_kappa,
    cross_alpha,
    fleiss_kappa,
    llm_correlations,
    percent_agreement,
    self_consistency_table,
)
from ..metrics.kappa import round_half_up
from .matrices import Notes, analysis_block, human_ratings, llm_matrix, rater_dicts
from .settings import AnalysisSettings

__all__ = [
    "AGREEMENT_TABLES",
    "CURVE_RESAMPLES",
    "agreement_tables",
    "alttest_curve_rows",
    "consistency_rows",
    "correlation_rows",
    "cross_alpha_rows",
    "integer_scale",
    "kappa_rows",
]

#: ReportTables attribute (and CSV stem) of each table built here.
AGREEMENT_TABLES = ("consistency", "correlations", "kappa", "cross_alpha", "alttest_curves")
#: Resamples per point of the report's alt-test curves (the paper uses 100; the CLI's
#: ``--resamples`` sets its own). Enough for a mean, and it keeps the report quick.
CURVE_RESAMPLES = 20
#: Items per resample of the report's epsilon curve (the alt-test paper's Table 3: 3
#: annotators and 100 items), and the largest item count of its items curve (the
#: paper's Figure 2 stops at 200, having annotated at most 300): beyond that the winning
#: rate has settled, and a study of 5,000 items would pay for nothing.
CURVE_ITEMS = 100
CURVE_MAX_ITEMS = 300

CONSISTENCY_KEYS = ["model", "scale", "temperature"]
CORRELATION_COLUMNS = ["scale", "model", "method", "estimate", "low", "high", "p_value"]
CORRELATION_COLUMNS += ["n_items", "interval"]
KAPPA_COLUMNS = ["scale", "statistic", "model", "value", "n_items", "n_raters", "note"]
CROSS_ALPHA_COLUMNS = ["scale", "comparison", "group_a", "group_b", "level", "alpha"]
CROSS_ALPHA_COLUMNS += ["n_items", "n_a", "n_b"]
CURVE_COLUMNS = ["scale", "model", "against", "x", "winning_rate", "winning_rate_low"]
CURVE_COLUMNS += ["winning_rate_high", "advantage_probability", "advantage_low"]
CURVE_COLUMNS += ["advantage_high", "pass_share", "n_resamples", "n_undefined", "n_annotators"]


def integer_scale(frames: StudyFrames, scale: str) -> bool:
    """Whether the scale takes only integers (step 1 from an integer minimum)."""
    row = frames.scales.set_index("scale").loc[scale]
    return float(row["step"]) == 1.0 and float(row["min"]).is_integer()


def consistency_rows(frames: StudyFrames, *, confidence: float = 0.95) -> pd.DataFrame:
    """Self-consistency of each model per scale and temperature across its runs.

    Attention-check items are left out; scores without a run name form one run.
    ``confidence``: the coverage of the ICC intervals (the study's setting).
    """
    items = frames.items
    checks = set(items.loc[items["is_attention_check"], "item"])
    llm = frames.llm[~frames.llm["item"].isin(checks)]
    table = self_consistency_table(llm, by=CONSISTENCY_KEYS, confidence=confidence)
    order = {s: i for i, s in enumerate(frames.scale_names)}
    table["_scale"] = table["scale"].map(order)
    table = table.sort_values(["model", "_scale", "temperature"], kind="stable")
    return table.drop(columns="_scale").reset_index(drop=True)


def correlation_rows(
    frames: StudyFrames,
    temperature: float | None,
    notes: Notes,
    *,
    confidence: float = 0.95,
    settings: AnalysisSettings | None = None,
) -> pd.DataFrame:
    """Pearson, Spearman and Kendall tau-b of the human mean with each LLM and the ensemble.

    The human mean is over the human block of the scale as Table 2's
    (:func:`~annotator.analysis.matrices.analysis_block`: an overlap design's anchor
    block with ``settings``); the LLM scores are at each judge's temperature, runs
    averaged.
    """
    rows = []
    for scale in frames.scale_names:
        humans = analysis_block(frames, scale, settings).matrix
        llm = llm_matrix(frames, scale, temperature=temperature)
        if humans.shape[0] < 2 or humans.shape[1] == 0 or llm.shape[1] == 0:
            notes.add(f"correlations, scale {scale}: needs human and LLM scores on 2 items")
            continue
        result = notes.attempt(
            f"correlations, scale {scale}",
            llm_correlations,
            humans,
            llm.reindex(humans.index),
            confidence=confidence,
        )
        for row in result or ():
            rows.append(
                {
                    "scale": scale,
                    "model": row.model,
                    "method": row.method,
                    "estimate": row.estimate,
                    "low": row.ci[0],
                    "high": row.ci[1],
                    "p_value": row.p_value,
                    "n_items": row.n_items,
                    "interval": "Fisher z",
                }
            )
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)


def kappa_rows(
    frames: StudyFrames,
    temperature: float | None,
    notes: Notes,
    *,
    settings: AnalysisSettings | None = None,
) -> pd.DataFrame:
    """On integer scales: Cohen's quadratic kappa of the rounded human consensus with each
    LLM (and the ensemble), Fleiss' kappa and percent agreement among the humans, on
    the human block of :func:`~annotator.analysis.matrices.analysis_block`."""
    rows = []
    for scale in frames.scale_names:
        if not integer_scale(frames, scale):
            continue
        low, high = frames.scale_bounds(scale)
        categories = np.arange(low, high + 1.0)
        humans = analysis_block(frames, scale, settings).matrix
        base = {"scale": scale, "n_raters": int(humans.shape[1]), "note": ""}
        if humans.shape[0] >= 1 and humans.shape[1] >= 2:
            value = notes.attempt(
                f"Fleiss' kappa, scale {scale}", fleiss_kappa, humans, categories=categories
            )
            rows.append(
                {
                    **base,
                    "statistic": "fleiss_kappa",
                    "model": None,
                    "value": math.nan if value is None else value,
                    "n_items": int(humans.shape[0]),
                }
            )
        wide = human_ratings(frames, scale)
        if (wide.notna().sum(axis=1) >= 2).any():
            agreement = percent_agreement(wide)
            for statistic in ("pairwise", "unanimous"):
                rows.append(
                    {
                        **base,
                        "statistic": f"percent_agreement_{statistic}",
                        "model": None,
                        "value": getattr(agreement, statistic),
                        "n_items": agreement.n_items,
                        "n_raters": int(wide.shape[1]),
                    }
                )
        llm = llm_matrix(frames, scale, temperature=temperature).reindex(humans.index)
        if humans.shape[1] == 0 or llm.shape[1] == 0:
            continue
        consensus = pd.Series(round_half_up(humans.mean(axis=1)), index=humans.index)
        columns = {"ensemble": llm.mean(axis=1, skipna=False), **dict(llm.items())}
        for model, scores in columns.items():
            scores = scores.dropna()
            fractional = bool((scores != np.round(scores)).any())
            rounded = round_half_up(scores.to_numpy())
            if len(scores) < 2:
                continue
            value = notes.attempt(
                f"Cohen's kappa, scale {scale}, model {model}",
                cohen_kappa,
                consensus[scores.index].to_numpy(),
                rounded,
                weights="quadratic",
                categories=categories,
            )
            rows.append(
                {
                    **base,
                    "statistic": "cohen_kappa_quadratic",
                    "model": model,
                    "value": math.nan if value is None else value,
                    "n_items": int(len(scores)),
                    "note": "LLM scores (run means) rounded half up" if fractional else "",
                }
            )
    return pd.DataFrame(rows, columns=KAPPA_COLUMNS)


def _alpha_row(scale, comparison, a_name, b_name, a, b, level, notes):
    value = notes.attempt(
        f"cross-group alpha {a_name} vs {b_name}, scale {scale}", cross_alpha, a, b, level=level
    )
    both = a.notna().any(axis=1) & b.notna().any(axis=1)
    return {
        "scale": scale,
        "comparison": comparison,
        "group_a": a_name,
        "group_b": b_name,
        "level": level,
        "alpha": math.nan if value is None else value,
        "n_items": int(both.sum()),
        "n_a": int(a.shape[1]),
        "n_b": int(b.shape[1]),
    }


def cross_alpha_rows(
    frames: StudyFrames, temperature: float | None, settings: AnalysisSettings, notes: Notes
) -> pd.DataFrame:
    """Krippendorff's alpha over cross-group pairs only: humans vs LLMs, and between
    each two groups of the ``group_by`` demographic answer (interval; also ordinal on
    integer scales)."""
    rows = []
    groups = {}
    key = settings.group_by
    if key and key in frames.demographics.columns:
        answers = frames.demographics.set_index("rater")[key]
        groups = {r: g for r, g in answers.items() if g not in (None, "")}
    for scale in frames.scale_names:
        levels = ["interval", "ordinal"] if integer_scale(frames, scale) else ["interval"]
        humans = human_ratings(frames, scale)
        llm = llm_matrix(frames, scale, temperature=temperature)
        index = humans.index.union(llm.index, sort=False)
        humans, llm = humans.reindex(index), llm.reindex(index)
        for level in levels:
            if humans.shape[1] and llm.shape[1]:
                rows.append(
                    _alpha_row(scale, "human-LLM", "humans", "LLMs", humans, llm, level, notes)
                )
            labels = sorted({groups[r] for r in humans.columns if r in groups}, key=str)
            for ga, gb in combinations(labels, 2):
                a = humans[[r for r in humans.columns if groups.get(r) == ga]]
                b = humans[[r for r in humans.columns if groups.get(r) == gb]]
                rows.append(
                    _alpha_row(scale, f"{key} groups", str(ga), str(gb), a, b, level, notes)
                )
    return pd.DataFrame(rows, columns=CROSS_ALPHA_COLUMNS)


def _curve_rows(scale, model, curve) -> list[dict]:
    return [
        {
            "scale": scale,
            "model": model,
            "against": curve.against,
            "n_annotators": curve.n_annotators,
            **{k: v for k, v in p.__dict__.items()},
        }
        for p in curve.points
    ]


def alttest_curve_rows(
    frames: StudyFrames,
    temperature: float | None,
    settings: AnalysisSettings,
    notes: Notes,
    *,
    n_resamples: int = CURVE_RESAMPLES,
) -> pd.DataFrame:
    """Alt-test curves (the alt-test paper's Figures 2 and 3) per scale.

    Against epsilon (0 to 0.3) for every model on resamples of 3 annotators and
    ``CURVE_ITEMS`` items (the paper's Table 3), and against the number of items (up to
    ``CURVE_MAX_ITEMS``, at the study's epsilon) for the model with the highest mean
    advantage probability on those resamples, as the paper's Figure 2 (its best model by
    rho).
    """
    rows = []
    options = {
        "scoring": settings.scoring,
        "q": settings.q,
        "n_resamples": n_resamples,
        "random_state": settings.seed,
    }
    for scale in frames.scale_names:
        humans = rater_dicts(human_ratings(frames, scale))
        if len(humans) < 2:
            notes.add(f"alt-test curves, scale {scale}: needs at least 2 raters")
            continue
        wide = llm_matrix(frames, scale, temperature=temperature)
        best, best_ap = None, -1.0
        for model in wide.columns:
            column = wide[model].dropna()
            scores = dict(zip(column.index.tolist(), column.tolist(), strict=True))
            where = f"alt-test curve against epsilon, scale {scale}, model {model}"
            curve = notes.attempt(
                where,
                alt_test_curve,
                humans=humans,
                llm=scores,
                against="epsilon",
                n_items=min(CURVE_ITEMS, len(scores)),
                **options,
            )
            if curve is None:
                continue
            rows += _curve_rows(scale, model, curve)
            # The advantage probability does not depend on epsilon: the curve's mean
            # ranks the models without another alt-test on all items.
            ap = curve.points[0].advantage_probability
            if not math.isnan(ap) and ap > best_ap:
                best, best_ap = (model, scores), ap
        if best is not None:
            total = min(len(best[1]), CURVE_MAX_ITEMS)
            grid = sorted({int(round(v)) for v in np.linspace(min(30, total), total, 8)})
            curve = notes.attempt(
                f"alt-test curve against items, scale {scale}, model {best[0]}",
                alt_test_curve,
                humans=humans,
                llm=best[1],
                against="items",
                values=grid,
                epsilon=settings.epsilon,
                **options,
            )
            if curve is not None:
                rows += _curve_rows(scale, best[0], curve)
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def agreement_tables(
    frames: StudyFrames,
    temperature: float | None,
    settings: AnalysisSettings,
    notes: Notes,
    *,
    curves: bool = True,
    consistency: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """Every table of this module, by its ``ReportTables`` attribute.

    ``curves=False`` leaves out the alt-test curves (:func:`alttest_curve_rows`), which
    :func:`~annotator.analysis.tables.report_tables` computes apart; ``consistency``:
    :func:`consistency_rows` when the caller has it already.
    """
    tables = {
        "consistency": (
            consistency_rows(frames, confidence=settings.confidence)
            if consistency is None
            else consistency
        ),
        "correlations": correlation_rows(
            frames, temperature, notes, confidence=settings.confidence, settings=settings
        ),
        "kappa": kappa_rows(frames, temperature, notes, settings=settings),
        "cross_alpha": cross_alpha_rows(frames, temperature, settings, notes),
    }
    if curves:
        tables["alttest_curves"] = alttest_curve_rows(frames, temperature, settings, notes)
    return tables
