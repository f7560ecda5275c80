"""The lead's live study dashboard: display-ready numbers per scale, and why some are missing.

:func:`study_dashboard` turns a study's frames into a :class:`Dashboard` whose
fields a template shows as they are (``Shown.text``, ``Shown.reason``): no
statistic is computed in a view or a template. :mod:`annotator.analysis.live`
keeps the last dashboard of each study and refreshes it when its data changes.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from ..data.frames import (
    StudyFrames,
)
from ..data.selection import select_frames
from ..metrics import (
    TooFewItemsError,
    alt_test_pair,
    human_llm_agreement,
    icc,
    krippendorff_alpha,
    retest_reliability,
)
from .dashboard_consistency import consistency_by_scale
from .dashboard_types import (
    BLOCK_STATES,
    AgreementRow,
    AltTestRow,
    Dashboard,
    RaterProgress,
    RetestRow,
    ScaleDashboard,
    missing,
    shown,
)
from .matrices import (
    Notes,
    caching_frames,
    human_block,
    human_ratings,
    llm_matrix,
    llm_panel,
    main_temperature,
    rater_dicts,
    retest_pairs,
)
from .settings import AnalysisSettings

__all__ = ["study_dashboard"]

# ---------------------------------------------------------------- pieces


def _time(value: Any) -> datetime | None:
    return None if value is None or pd.isna(value) else value.to_pydatetime()


def _progress(frames: StudyFrames, scale: str, n_items: int) -> tuple[tuple, dict, Any]:
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
    raters = sorted(set(blocks.index) | set(r["rater"]))
    rows = []
    for rater in raters:
        block = blocks.loc[rater] if rater in blocks.index else None
        median = per_rater_seconds.get(rater)
        rows.append(
            RaterProgress(
                rater=rater,
                status=block["status"] if block is not None else "no block",
                block_position=int(block["position"]) if block is not None else None,
                n_rated=int(rated.get(rater, 0)),
                n_items=n_items,
                n_repeats=int(repeats.get(rater, 0)),
                median_seconds=shown(
                    median, digits=1, reason="no item with a served time (imported ratings)"
                ),
                attention_passed=int(passed.get(rater, 0)),
                attention_failed=int(failed.get(rater, 0)),
                started_at=_time(block["started_at"]) if block is not None else None,
                completed_at=_time(block["completed_at"]) if block is not None else None,
            )
        )
    counts = {state: int((blocks["status"] == state).sum()) for state in BLOCK_STATES}
    last = blocks["completed_at"].max() if len(blocks) else None
    return tuple(rows), counts, _time(last)


def _reliability(
    frames: StudyFrames, scale: str, wide: pd.DataFrame, settings: AnalysisSettings, notes: Notes
):
    block = human_block(frames, scale, wide=wide)
    humans = block.matrix
    cut = block.describe_cut()
    if cut:
        notes.add(f"ICC on {cut}")
    conf = settings.confidence
    if humans.shape[0] < 2 or humans.shape[1] < 2:
        reason = (
            f"ICC needs every rater of at least 2 items to be the same 2 or more raters: "
            f"{humans.shape[0]} item(s) rated by all of {humans.shape[1]} rater(s) so far"
        )
        icc_a1 = icc_ak = missing(reason)
    else:
        result = notes.attempt("ICC", icc, humans, confidence=conf)
        if result is None:
            icc_a1 = icc_ak = missing(notes.last_error)
        else:
            icc_a1 = shown(result.icc_a1, ci=result.ci_a1)
            icc_ak = shown(result.icc_ak, ci=result.ci_ak)
    if wide.shape[1] < 2 or (wide.notna().sum(axis=1) >= 2).sum() < 1:
        alpha = missing("alpha needs an item rated by at least 2 raters")
    else:
        value = notes.attempt("Krippendorff's alpha", krippendorff_alpha, wide, level="interval")
        alpha = shown(value, reason=notes.last_error if value is None else None)
    return block, icc_a1, icc_ak, alpha


def _retest(frames: StudyFrames, scale: str, notes: Notes) -> tuple[tuple, RetestRow]:
    pairs, n_repeated = retest_pairs(frames, scale)
    if n_repeated < 2:
        why = f"{n_repeated} item(s) rated twice so far; test-retest needs 2"
        return (), RetestRow(None, n_repeated, missing(why), missing(why))
    result = notes.attempt("test-retest", retest_reliability, pairs)
    if result is None:
        why = notes.last_error
        return (), RetestRow(None, n_repeated, missing(why), missing(why))
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


def _agreement(
    frames: StudyFrames,
    scale: str,
    humans: pd.DataFrame,
    temperature: float | None,
    notes: Notes,
    runs: str = "mean",
) -> tuple[AgreementRow, tuple, pd.DataFrame]:
    low, high = frames.scale_bounds(scale)
    llm = llm_matrix(frames, scale, temperature=temperature, runs=runs)
    superseded = frames.llm_superseded.get(scale, 0)
    if superseded:
        notes.add(
            f"{superseded} LLM score(s) asked under an older prompt are left out "
            "(each model's newest prompt is used)"
        )
    if llm.shape[1] == 0:
        why = "no LLM scores on this scale at the main temperature"
        return AgreementRow("ensemble", missing(why), missing(why), 0), (), llm
    common, complete = llm_panel(llm, humans.index)
    if complete.shape[1] < llm.shape[1] and complete.shape[1]:
        notes.add(
            f"the LLM ensemble is the complete block of {complete.shape[1]} of "
            f"{llm.shape[1]} models on {complete.shape[0]} items"
        )
    if humans.shape[1] == 0 or complete.shape[0] < 2 or complete.shape[1] == 0:
        why = (
            f"needs 2 items with every human rating and the models' scores: "
            f"{complete.shape[0] if humans.shape[1] else 0} so far"
        )
        ensemble = AgreementRow("ensemble", missing(why), missing(why), 0)
    else:
        res = notes.attempt(
            "human-LLM agreement",
            human_llm_agreement,
            humans.loc[complete.index],
            complete,
            scale_min=low,
            scale_max=high,
        )
        if res is None:
            ensemble = AgreementRow(
                "ensemble", missing(notes.last_error), missing(notes.last_error), 0
            )
        else:
            e = res.ensemble
            ensemble = AgreementRow(
                "ensemble", shown(e.icc_a1, ci=e.ci_a1), shown(e.nmae), e.n_items
            )
    rows = []
    per_model = None
    if humans.shape[1] and humans.shape[0] >= 2:
        per_model = notes.attempt(
            "per-model agreement",
            human_llm_agreement,
            humans,
            common,
            scale_min=low,
            scale_max=high,
            nan_policy="omit",
        )
    for model in llm.columns:
        found = per_model.model(model) if per_model is not None else None
        if found is None:
            why = "needs 2 items with every human rating and this model's score"
            rows.append(AgreementRow(model, missing(why), missing(why), 0))
        else:
            rows.append(
                AgreementRow(
                    model,
                    shown(found.icc_a1, ci=found.ci_a1),
                    shown(found.nmae),
                    found.n_items,
                )
            )
    return ensemble, tuple(rows), llm


def _alttest(
    wide: pd.DataFrame, llm: pd.DataFrame, settings: AnalysisSettings
) -> tuple[AltTestRow, ...]:
    humans = rater_dicts(wide)
    rows = []
    for model in llm.columns:
        column = llm[model].dropna()
        scores = dict(zip(column.index.tolist(), column.tolist(), strict=True))
        options = {"scoring": settings.scoring, "epsilon": settings.epsilon, "q": settings.q}
        # One scoring pass for both tests: the leave-one-out scores were most of the
        # dashboard's time, computed twice when the two tests ran separately.
        both = alt_test_pair(humans=humans, llm=scores, **options)
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


# ---------------------------------------------------------------- public


def study_dashboard(frames: StudyFrames, *, settings: AnalysisSettings | None = None) -> Dashboard:
    """Compute the dashboard of a study from its frames.

    Parameters
    ----------
    frames : StudyFrames
        From :func:`annotator.data.frames.study_frames`.
    settings : AnalysisSettings, keyword-only
        Defaults to ``AnalysisSettings()``; a stored study's are
        :func:`annotator.analysis.settings.study_settings`.

    Returns
    -------
    Dashboard
    """
    settings = settings or AnalysisSettings()
    started = time.perf_counter()
    frames = caching_frames(select_frames(frames, settings.where_mapping))
    temperature, how = main_temperature(frames, settings.temperature)
    n_items = int((~frames.items["is_attention_check"]).sum())
    consistency = consistency_by_scale(frames)
    parts = []
    for scale in frames.scale_names:
        notes = Notes()
        low, high = frames.scale_bounds(scale)
        raters, counts, last = _progress(frames, scale, n_items)
        # Items x raters of first ratings, built once for the block, alpha and alt-test.
        wide = human_ratings(frames, scale)
        block, icc_a1, icc_ak, alpha = _reliability(frames, scale, wide, settings, notes)
        retest, pooled = _retest(frames, scale, notes)
        ensemble, models, llm = _agreement(
            frames, scale, block.matrix, temperature, notes, settings.runs
        )
        first = frames.ratings
        n_ratings = int(
            ((first["scale"] == scale) & ~first["is_repeat"] & ~first["is_attention_check"]).sum()
        )
        parts.append(
            ScaleDashboard(
                scale=scale,
                scale_min=low,
                scale_max=high,
                block_counts=counts,
                raters=raters,
                n_items=n_items,
                n_ratings=n_ratings,
                last_completed_at=last,
                block_items=int(block.matrix.shape[0]),
                block_raters=int(block.matrix.shape[1]),
                icc_a1=icc_a1,
                icc_ak=icc_ak,
                alpha=alpha,
                retest=retest,
                retest_pooled=pooled,
                ensemble=ensemble,
                models=models,
                alttest=_alttest(wide, llm, settings),
                notes=tuple(notes),
                consistency=consistency.get(scale, ()),
            )
        )
    return Dashboard(
        study=frames.study,
        scales=tuple(parts),
        n_raters=int(len(frames.demographics)),
        n_items=n_items,
        temperature=temperature,
        temperature_text=how,
        settings=settings.to_dict(),
        computed_at=datetime.now(UTC),
        compute_seconds=time.perf_counter() - started,
    )
