"""The lead's live study dashboard: a study's analysis as display-ready numbers per scale.

:func:`study_dashboard` computes the parts of
:func:`annotator.analysis.study_analysis.analyse` the page shows and
:func:`dashboard_of` renders them as a :class:`Dashboard` whose fields a template
shows as they are (``Shown.text``, ``Shown.reason``): no statistic is computed here,
in a view or in a template. The numbers are the report's (the same panels, the study's
``confidence``). :mod:`annotator.services.dashboards` keeps the last dashboard of each study
and refreshes it when its data changes.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from ..analysis.model import DASHBOARD_PARTS, ScaleAnalysis, StudyAnalysis
from ..analysis.settings import AnalysisSettings
from ..analysis.study_analysis import analyse
from ..analysis.verdict import verdict_summary
from ..data.frames import StudyFrames
from ..metrics import TooFewItemsError
from ..words import plural
from .dashboard_consistency import consistency_rows_of
from .dashboard_judge_assisted import judge_assisted_rows_of
from .dashboard_types import (
    AgreementRow,
    AltTestRow,
    Dashboard,
    RaterProgress,
    RetestRow,
    ScaleDashboard,
    StatisticRow,
    missing,
    shown,
)
from .verdict import verdict_lines

__all__ = ["dashboard_of", "study_dashboard"]

# ---------------------------------------------------------------- pieces


def _progress(part: ScaleAnalysis) -> tuple[RaterProgress, ...]:
    progress = part.progress
    return tuple(
        RaterProgress(
            record=r,
            n_items=progress.n_items,
            median_seconds=shown(
                r.median_seconds, digits=1, reason="no item with a served time (imported ratings)"
            ),
        )
        for r in progress.raters
    )


def _reliability(part: ScaleAnalysis, confidence: float):
    panel = part.panel
    humans = panel.humans
    if humans.shape[0] < 2 or humans.shape[1] < 2:
        reason = (
            f"ICC needs every rater of at least 2 items to be the same 2 or more raters: "
            f"{plural(humans.shape[0], 'item')} rated by all of "
            f"{plural(humans.shape[1], 'rater')} so far"
        )
        icc_a1 = icc_ak = missing(reason)
    elif panel.human_icc is None:
        icc_a1 = icc_ak = missing(panel.reasons.get("human_icc", "not computable"))
    else:
        result = panel.human_icc
        icc_a1 = shown(result.icc_a1, ci=result.ci_a1, confidence=confidence)
        icc_ak = shown(result.icc_ak, ci=result.ci_ak, confidence=confidence)
    alpha = shown(part.alpha, reason=part.alpha_reason)
    return icc_a1, icc_ak, alpha


def _retest(part: ScaleAnalysis) -> tuple[tuple, RetestRow]:
    retest = part.retest
    if retest.result is None:
        why = retest.reason
        return (), RetestRow(None, retest.n_repeated, missing(why), missing(why))
    result = retest.result
    one = "needs 2 items rated twice by this rater"
    rows = tuple(
        RetestRow(
            rater=row.rater,
            n_items=row.n_items,
            alpha=shown(row.alpha, reason=one if row.n_items < 2 else None),
            icc_a1=shown(row.icc_a1, reason=one if row.n_items < 2 else None),
        )
        for row in result.raters
    )
    pooled = RetestRow(None, result.n_pairs, shown(result.alpha), shown(result.icc_a1))
    return rows, pooled


def _agreement(part: ScaleAnalysis, confidence: float) -> tuple[AgreementRow, tuple]:
    panel, llm = part.panel, part.llm
    if llm.shape[1] == 0:
        why = "no LLM scores on this scale at the main temperature"
        return AgreementRow("ensemble", missing(why), missing(why), 0), ()
    humans, complete = panel.humans, panel.llm_panel
    if panel.agreement is not None:
        e = panel.agreement.ensemble
        ensemble = AgreementRow(
            "ensemble", shown(e.icc_a1, ci=e.ci_a1, confidence=confidence), shown(e.nmae), e.n_items
        )
    elif "agreement" in panel.reasons:
        why = panel.reasons["agreement"]
        ensemble = AgreementRow("ensemble", missing(why), missing(why), 0)
    else:
        why = (
            f"needs 2 items with every human rating and the models' scores: "
            f"{complete.shape[0] if humans.shape[1] else 0} so far"
        )
        ensemble = AgreementRow("ensemble", missing(why), missing(why), 0)
    rows = []
    for model in llm.columns:
        found = panel.per_model.model(model) if panel.per_model is not None else None
        if found is None:
            why = "needs 2 items with every human rating and this model's score"
            rows.append(AgreementRow(model, missing(why), missing(why), 0))
        else:
            rows.append(
                AgreementRow(
                    model,
                    shown(found.icc_a1, ci=found.ci_a1, confidence=confidence),
                    shown(found.nmae),
                    found.n_items,
                )
            )
    return ensemble, tuple(rows)


def _alttest(part: ScaleAnalysis) -> tuple[AltTestRow, ...]:
    rows = []
    for model, both in part.alttest.items():
        result, exc = both.result, both.error
        if isinstance(exc, TooFewItemsError):
            reason = (
                f"{exc.most_items} of {exc.min_items_per_human} items per rater so far "
                "(the alt-test's t-test needs 30 per rater)"
            )
        elif exc is not None:
            reason = str(exc)
        sequential = decided = None
        if both.sequential is not None:
            sequential, decided = both.sequential.message, both.sequential.decided
        else:
            sequential = f"not available: {both.sequential_error}"
        if result is None:
            rows.append(
                AltTestRow(
                    model=model,
                    winning_rate=missing(reason),
                    advantage_probability=missing(reason),
                    passed=None,
                    verdict="cannot run yet",
                    sequential=sequential,
                    sequential_decided=decided,
                    n_items=0,
                    n_tested=0,
                    reason=reason,
                )
            )
            continue
        rows.append(
            AltTestRow(
                model=model,
                winning_rate=shown(result.winning_rate, digits=2),
                advantage_probability=shown(result.advantage_probability, digits=2),
                passed=bool(result.passed),
                verdict="passes" if result.passed else "does not pass",
                sequential=sequential,
                sequential_decided=decided,
                n_items=result.n_items,
                n_tested=result.n_tested,
                reason=None,
            )
        )
    return tuple(rows)


def _scale(part: ScaleAnalysis, confidence: float) -> ScaleDashboard:
    icc_a1, icc_ak, alpha = _reliability(part, confidence)
    retest, pooled = _retest(part)
    ensemble, models = _agreement(part, confidence)
    progress = part.progress
    return ScaleDashboard(
        scale=part.scale,
        scale_min=part.scale_min,
        scale_max=part.scale_max,
        progress=progress,
        raters=_progress(part),
        block_items=int(part.panel.humans.shape[0]),
        block_raters=int(part.panel.humans.shape[1]),
        icc_a1=icc_a1,
        icc_ak=icc_ak,
        alpha=alpha,
        retest=retest,
        retest_pooled=pooled,
        ensemble=ensemble,
        models=models,
        alttest=_alttest(part),
        notes=part.notes,
        consistency=consistency_rows_of(part.consistency, confidence=confidence),
        statistics=tuple(
            StatisticRow(
                s.key,
                s.label,
                s.model,
                shown(s.value, ci=s.ci, confidence=confidence, reason=s.reason),
                s.n_items,
            )
            for s in part.statistics
        ),
    )


# ---------------------------------------------------------------- public


def _temperature_text(analysis: StudyAnalysis) -> str:
    """The temperatures in a line (each judge's scores summed over the scales); the
    analysis's own sentence, scale by scale, runs to several lines on a wide screen."""
    brief = getattr(analysis.temperature, "brief", None)
    if brief is None or not getattr(analysis.temperature, "counts", ()):
        return analysis.temperature_note
    return brief()


def _temperature_detail(analysis: StudyAnalysis) -> str:
    """The analysis's sentence, each judge on each scale, when the study has several."""
    if len(analysis.scales) < 2 or not hasattr(analysis.temperature, "brief"):
        return ""
    return analysis.temperature_note


def dashboard_of(
    analysis: StudyAnalysis, *, computed_at: datetime | None = None, compute_seconds: float = 0.0
) -> Dashboard:
    """Render a study's analysis (with every part of ``DASHBOARD_PARTS``) as a dashboard."""
    missing_parts = [p for p in analysis.scales if p.progress is None or p.panel is None]
    if missing_parts:
        raise ValueError(
            f"analysis: scale {missing_parts[0].scale!r} lacks the dashboard's parts; "
            "analyse it with parts=DASHBOARD_PARTS"
        )
    confidence = analysis.settings.confidence
    return Dashboard(
        study=analysis.study,
        scales=tuple(_scale(part, confidence) for part in analysis.scales),
        n_raters=analysis.n_raters,
        n_items=analysis.n_items,
        temperature=analysis.temperature.single,
        temperature_text=_temperature_text(analysis),
        temperature_detail=_temperature_detail(analysis),
        settings=analysis.settings.to_dict(),
        computed_at=computed_at or datetime.now(UTC),
        compute_seconds=compute_seconds,
        statistics_note=analysis.settings.statistics_note(),
        judge_assisted=judge_assisted_rows_of(analysis.judge_assisted, confidence=confidence),
        criterion=analysis.criterion,
        criteria=analysis.criteria,
        verdicts=verdict_lines(verdict_summary(analysis)),
    )


def study_dashboard(
    frames: StudyFrames,
    *,
    settings: AnalysisSettings | None = None,
    criterion: str | None = None,
) -> Dashboard:
    """Compute the dashboard of a study from its frames.

    Parameters
    ----------
    frames : StudyFrames
        From :func:`annotator.data.frames.study_frames`.
    settings : AnalysisSettings, keyword-only
        Defaults to ``AnalysisSettings()``; a stored study's are
        :func:`annotator.analysis.settings.study_settings`.
    criterion : str, keyword-only
        In a study with ``[[criteria]]``, the criterion to show (default: the first);
        only it is computed.

    Returns
    -------
    Dashboard
    """
    started = time.perf_counter()
    if criterion is None:
        from ..analysis.criteria import criterion_names

        # One criterion at a time: the page shows one, and the others cost as much each.
        criterion = next(iter(criterion_names(frames)), None)
    analysis = analyse(frames, settings, parts=DASHBOARD_PARTS, criterion=criterion)
    return dashboard_of(analysis, compute_seconds=time.perf_counter() - started)
