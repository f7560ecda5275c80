"""A rubric study's analysis across its criteria (``[[criteria]]`` in the study file).

Each criterion is analysed on its own, as a study of its own
(:func:`criterion_frames` keeps its ratings and LLM scores; :func:`~.study_analysis.analyse`
does the rest). This module adds what needs several criteria at once:

- the summary of criteria x scales (human ICC and alpha, Fleiss' kappa, the
  ensemble's agreement), as GER-Eval reports agreement per criterion (Siro,
  Aliannejadi and Aliannejadi, 2025, "Learning to Judge: LLMs Designing and
  Applying Evaluation Rubrics");
- the alt-test of each judge per criterion, across criteria pooled as items (each
  (item, criterion) pair an instance, the alt-test paper's treatment of SummEval:
  Calderon, Reichart and Dror, 2025, "The Alternative Annotator Test for
  LLM-as-a-Judge", Table 2) and across criteria as domains (one Benjamini-Yekutieli
  family, "passes in X of N domains": the same paper, Appendix A);
- the correlations between criteria, for the human mean and for each judge: a rater
  or judge who does not separate the criteria scores them alike (correlations near 1).
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.frames import StudyFrames
from ..metrics import alt_test_domains, alt_test_pair, correlation, fleiss_kappa
from ..words import plural
from .agreement_tables import integer_scale
from .columns import NAN
from .matrices import Notes, analysis_block, rater_dicts
from .model import RubricTables
from .panels import scales_row, value_of
from .settings import AnalysisSettings

if TYPE_CHECKING:
    from .model import StudyAnalysis

__all__ = [
    "CRITERIA_ALTTEST_COLUMNS",
    "CRITERIA_CORRELATION_COLUMNS",
    "CRITERIA_SUMMARY_COLUMNS",
    "DOMAINS",
    "HUMANS",
    "POOLED_CRITERIA",
    "RubricTables",
    "criterion_frames",
    "criterion_names",
    "pooled_alttest_input",
    "rubric_tables",
]

#: The ``criterion`` of the alt-test row over every criterion's items pooled.
POOLED_CRITERIA = "(pooled)"
#: The ``criterion`` of the alt-test row with the criteria as domains.
DOMAINS = "(domains)"
#: The ``who`` of the human mean in the correlations between criteria.
HUMANS = "humans"

CRITERIA_SUMMARY_COLUMNS = [
    "criterion",
    "scale",
    "n_items",
    "n_raters",
    "icc_a1_human",
    "icc_ak_human",
    "alpha_human",
    "fleiss_kappa",
    "icc_human_llm",
    "nmae",
    "pearson_r",
]
CRITERIA_ALTTEST_COLUMNS = [
    "scale",
    "model",
    "criterion",
    "epsilon",
    "winning_rate",
    "advantage_probability",
    "passed",
    "n_items",
    "n_tested",
    "n_passed",
    "n_domains",
]
CRITERIA_CORRELATION_COLUMNS = [
    "scale",
    "who",
    "criterion_a",
    "criterion_b",
    "spearman",
    "low",
    "high",
    "n_items",
]


def criterion_names(frames: StudyFrames) -> list[str]:
    """The study's named criteria in the study file's order; empty without ``[[criteria]]``."""
    criteria = getattr(frames, "criteria", None)
    if criteria is None or len(criteria) == 0:
        return []
    return [str(name) for name in criteria["criterion"]]


def _benchmarks(frames: StudyFrames, criterion: str) -> list[str] | None:
    """The benchmarks a criterion applies to; None: all of them."""
    rows = frames.criteria[frames.criteria["criterion"] == criterion]
    if rows.empty or "benchmarks" not in rows.columns:
        return None
    value = rows["benchmarks"].iloc[0]
    if value is None or (isinstance(value, float) and math.isnan(value)) or len(value) == 0:
        return None
    return list(value)


def criterion_frames(frames: StudyFrames, criterion: str) -> StudyFrames:
    """The frames of one criterion: its ratings and LLM scores, and the items it applies to.

    ``ValueError`` naming the study's criteria when it has none by that name.
    """
    names = criterion_names(frames)
    if criterion not in names:
        known = ", ".join(names) or "none: the study has no [[criteria]]"
        raise ValueError(f"criterion {criterion!r} is not in the study (known: {known})")
    items = frames.items
    benchmarks = _benchmarks(frames, criterion)
    if benchmarks is not None:
        # Attention checks stay: they may carry a gold value for any criterion.
        items = items[items["benchmark"].isin(benchmarks) | items["is_attention_check"]]
    # Compared as NumPy arrays: pandas' string-column == costs three times as much, and
    # picking a criterion should cost no more than a study of it (criteria_analysis.py).
    ratings = frames.ratings[frames.ratings["criterion"].to_numpy() == criterion]
    llm = frames.llm[frames.llm["criterion"].to_numpy() == criterion]
    return replace(
        frames,
        ratings=ratings.reset_index(drop=True),
        llm=llm.reset_index(drop=True),
        items=items.reset_index(drop=True),
    )


def _llm_dict(column: pd.Series, criterion: str) -> dict[tuple[Any, str], float]:
    column = column.dropna()
    return {(item, criterion): value for item, value in zip(column.index, column, strict=True)}


def pooled_alttest_input(
    analyses: dict[str, StudyAnalysis], scale: str, model: str
) -> tuple[dict, dict]:
    """``(humans, llm)`` of the alt-test with every (item, criterion) pair an instance.

    Each criterion's matrices are those of its own analysis (``analyses`` by name:
    first ratings, the model's runs combined as the settings say); an instance is
    keyed ``(item, criterion)``.
    """
    humans: dict[str, dict] = {}
    llm: dict = {}
    for criterion, analysis in analyses.items():
        part = analysis.scale(scale)
        for rater, scores in rater_dicts(part.ratings).items():
            into = humans.setdefault(rater, {})
            into.update({(item, criterion): v for item, v in scores.items()})
        if part.llm is not None and model in part.llm.columns:
            llm.update(_llm_dict(part.llm[model], criterion))
    return humans, llm


def _summary_rows(
    frames: StudyFrames, analyses: dict[str, StudyAnalysis], notes: Notes
) -> list[dict]:
    rows = []
    for criterion, analysis in analyses.items():
        mine = analysis.frames
        for part in analysis.scales:
            row = {"criterion": criterion}
            if part.panel is not None:
                row.update(scales_row(part.scale, part.panel))
            else:
                row["scale"] = part.scale
            row["alpha_human"] = NAN if part.alpha is None else float(part.alpha)
            row["fleiss_kappa"] = _fleiss(mine, part.scale, criterion, notes, analysis.settings)
            rows.append(row)
    return rows


def _fleiss(
    frames: StudyFrames, scale: str, criterion: str, notes: Notes, settings: AnalysisSettings
) -> float:
    """Fleiss' kappa of the human block (an overlap design's anchor block) on an
    integer scale, else NaN."""
    if not integer_scale(frames, scale):
        return NAN
    humans = analysis_block(frames, scale, settings).matrix
    if humans.shape[0] < 1 or humans.shape[1] < 2:
        return NAN
    low, high = frames.scale_bounds(scale)
    value = notes.attempt(
        f"Fleiss' kappa, criterion {criterion}, scale {scale}",
        fleiss_kappa,
        humans,
        categories=np.arange(low, high + 1.0),
    )
    return NAN if value is None else float(value)


def _models(analyses: dict[str, StudyAnalysis], scale: str) -> list[str]:
    """The models scored on ``scale`` for any criterion, sorted."""
    found = set()
    for analysis in analyses.values():
        llm = analysis.scale(scale).llm
        if llm is not None:
            found.update(llm.columns)
    return sorted(found)


def _alttest_row(scale, model, criterion, settings, result, **extra) -> dict:
    return {
        "scale": scale,
        "model": model,
        "criterion": criterion,
        "epsilon": float(settings.epsilon),
        "winning_rate": value_of(result, "winning_rate"),
        "advantage_probability": value_of(result, "advantage_probability"),
        "passed": result.passed if result is not None else None,
        "n_items": result.n_items if result is not None else 0,
        "n_tested": result.n_tested if result is not None else 0,
        "n_passed": extra.get("n_passed", NAN),
        "n_domains": extra.get("n_domains", NAN),
    }


def _alttest_rows(
    frames: StudyFrames,
    analyses: dict[str, StudyAnalysis],
    settings: AnalysisSettings,
    notes: Notes,
) -> list[dict]:
    options = {"scoring": settings.scoring, "epsilon": settings.epsilon, "q": settings.q}
    rows = []
    for scale in frames.scale_names:
        for model in _models(analyses, scale):
            domains = {}
            for criterion, analysis in analyses.items():
                part = analysis.scale(scale)
                if part.llm is None or model not in part.llm.columns:
                    continue
                humans = rater_dicts(part.ratings)
                llm = part.llm[model].dropna().to_dict()
                # The dashboard's analysis has it; the report's does not ask for it.
                pair = (part.alttest or {}).get(model) or alt_test_pair(
                    humans=humans, llm=llm, **options
                )
                if pair.error is not None:
                    notes.add_error(
                        f"alt-test, criterion {criterion}, scale {scale}, model {model}",
                        pair.error,
                    )
                rows.append(_alttest_row(scale, model, criterion, settings, pair.result))
                if pair.result is not None:
                    domains[criterion] = {"humans": humans, "llm": llm}
            humans, llm = pooled_alttest_input(analyses, scale, model)
            pair = alt_test_pair(humans=humans, llm=llm, **options)
            if pair.error is not None:
                notes.add_error(
                    f"alt-test, criteria pooled, scale {scale}, model {model}", pair.error
                )
            rows.append(_alttest_row(scale, model, POOLED_CRITERIA, settings, pair.result))
            if len(domains) >= 2:
                multi = notes.attempt(
                    f"alt-test, criteria as domains, scale {scale}, model {model}",
                    alt_test_domains,
                    domains,
                    **options,
                )
                if multi is not None:
                    rows.append(
                        {
                            **_alttest_row(scale, model, DOMAINS, settings, None),
                            "passed": multi.n_passed == multi.n_domains,
                            "n_items": sum(r.n_items for r in multi.domains.values()),
                            "n_tested": sum(r.n_tested for r in multi.domains.values()),
                            "n_passed": multi.n_passed,
                            "n_domains": multi.n_domains,
                        }
                    )
    return rows


def _series_by_criterion(analyses, scale, who) -> dict[str, pd.Series]:
    out = {}
    for criterion, analysis in analyses.items():
        part = analysis.scale(scale)
        if who == HUMANS:
            # The mean of every first rating of the item (as the alt-test's humans).
            out[criterion] = part.ratings.mean(axis=1).dropna()
        elif part.llm is not None and who in part.llm.columns:
            out[criterion] = part.llm[who].dropna()
    return out


def _correlation_rows(analyses, scales, settings: AnalysisSettings, notes: Notes) -> list[dict]:
    rows = []
    for scale in scales:
        for who in (HUMANS, *_models(analyses, scale)):
            series = _series_by_criterion(analyses, scale, who)
            for a, b in combinations(series, 2):
                joint = pd.concat([series[a], series[b]], axis=1, join="inner")
                base = {"scale": scale, "who": who, "criterion_a": a, "criterion_b": b}
                if len(joint) < 3:
                    notes.add(
                        f"correlation of criteria {a} and {b}, scale {scale}, {who}: "
                        f"{plural(len(joint), 'item')} with both; needs 3"
                    )
                    continue
                result = notes.attempt(
                    f"correlation of criteria {a} and {b}, scale {scale}, {who}",
                    correlation,
                    joint.iloc[:, 0].to_numpy(),
                    joint.iloc[:, 1].to_numpy(),
                    method="spearman",
                    confidence=settings.confidence,
                )
                rows.append(
                    {
                        **base,
                        "spearman": value_of(result, "estimate"),
                        "low": result.ci[0] if result is not None else NAN,
                        "high": result.ci[1] if result is not None else NAN,
                        "n_items": len(joint),
                    }
                )
    return rows


def rubric_tables(
    frames: StudyFrames,
    analyses: dict[str, StudyAnalysis],
    settings: AnalysisSettings,
    *,
    alttest: bool = True,
) -> RubricTables:
    """The tables across criteria from each criterion's analysis (``analyses``, by name,
    each at the study's main temperature).

    ``alttest=False`` leaves the alt-test table empty (the dashboard without its
    alt-test part).
    """
    notes = Notes()
    summary = pd.DataFrame(_summary_rows(frames, analyses, notes), columns=CRITERIA_SUMMARY_COLUMNS)
    alt = _alttest_rows(frames, analyses, settings, notes) if alttest else []
    correlations = _correlation_rows(analyses, frames.scale_names, settings, notes)
    return RubricTables(
        summary=summary,
        alttest=pd.DataFrame(alt, columns=CRITERIA_ALTTEST_COLUMNS),
        correlations=pd.DataFrame(correlations, columns=CRITERIA_CORRELATION_COLUMNS),
        notes=tuple(notes),
    )
