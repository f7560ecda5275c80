"""What the lead's dashboard shows: display-ready dataclasses a template reads as they are.

:func:`annotator.render.dashboard.study_dashboard` fills them; each number is a
:class:`Shown` whose ``text`` is what to print and whose ``reason`` says why a
value is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..analysis.model import BLOCK_STATES, RaterRecord, ScaleProgress
from .verdict import VerdictLine

__all__ = [
    "BLOCK_STATES",
    "AgreementRow",
    "AltTestRow",
    "Dashboard",
    "Shown",
    "RaterProgress",
    "RetestRow",
    "ScaleDashboard",
    "StatisticRow",
    "shown",
    "missing",
    "number_text",
]


@dataclass(frozen=True)
class Shown:
    """One number as the page shows it, or why there is none.

    Attributes
    ----------
    value : float or None
        The number; None when it cannot be computed.
    low, high : float or None
        Its confidence interval, when it has one.
    confidence : float or None
        The interval's coverage (the study's ``confidence``); None: 0.95.
    text : str
        What to print: ``"0.853"``, ``"0.853 [0.801, 0.890]"``, or ``"n/a"``.
    reason : str or None
        Why ``value`` is None; None when there is a value.
    """

    value: float | None
    text: str
    low: float | None = None
    high: float | None = None
    reason: str | None = None
    confidence: float | None = None

    @property
    def weak(self) -> bool:
        """Whether its interval is wider than 1, half the range of an ICC or a
        correlation: too few items or raters to read (:mod:`.report.caution`), so the
        page greys it."""
        from .report.caution import MAX_WIDTH

        if self.value is None or self.low is None or self.high is None:
            return False
        return self.high - self.low > MAX_WIDTH

    @property
    def ci_label(self) -> str:
        """``"90% CI"``: the interval's coverage as the page names it."""
        return f"{100 * (self.confidence or 0.95):g}% CI"


def number_text(value: float | None, digits: int) -> str:
    return f"{value:.{digits}f}"


def shown(
    value: float | None,
    *,
    digits: int = 3,
    ci: tuple[float, float] | None = None,
    confidence: float | None = None,
    reason: str | None = None,
) -> Shown:
    """``value`` as shown (``digits`` decimals), with its interval ``ci`` of coverage
    ``confidence``; ``reason`` says why a missing (None or NaN) value is missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Shown(value=None, text="n/a", reason=reason or "undefined for these data")
    value = float(value)
    text = number_text(value, digits)
    low = high = None
    if ci is not None and not any(math.isnan(c) for c in ci):
        low, high = float(ci[0]), float(ci[1])
        if math.isfinite(low) and math.isfinite(high) and low <= high:
            text += f" [{number_text(low, digits)}, {number_text(high, digits)}]"
        else:
            # An ICC(A,k) of raters who disagree more than chance: its F-based bounds
            # come out infinite or swapped, no interval a reader can use.
            low = high = None
            text += " (no usable interval: the raters disagree more than chance)"
    return Shown(value=value, text=text, low=low, high=high, confidence=confidence)


def missing(reason: str) -> Shown:
    return Shown(value=None, text="n/a", reason=reason)


@dataclass(frozen=True)
class RaterProgress:
    """One rater's progress on one scale: the analysis's record and what the page adds.

    The record's fields (``rater``, ``status``, ``block_position``, ``n_rated``,
    ``n_repeats``, ``attention_passed``, ``attention_failed``, ``started_at``,
    ``completed_at``) are read through from it, not copied.

    Attributes
    ----------
    record : RaterRecord
        :class:`annotator.analysis.model.RaterRecord`.
    n_items : int
        The study's items, what ``n_rated`` counts out of.
    median_seconds : Shown
        Median time from showing an item to its score, as shown.
    """

    record: RaterRecord
    n_items: int
    median_seconds: Shown

    rater = property(lambda self: self.record.rater)
    status = property(lambda self: self.record.status)
    block_position = property(lambda self: self.record.block_position)
    n_rated = property(lambda self: self.record.n_rated)
    n_repeats = property(lambda self: self.record.n_repeats)
    attention_passed = property(lambda self: self.record.attention_passed)
    attention_failed = property(lambda self: self.record.attention_failed)
    started_at = property(lambda self: self.record.started_at)
    completed_at = property(lambda self: self.record.completed_at)


@dataclass(frozen=True)
class RetestRow:
    """Test-retest agreement of one rater (``rater`` None: pooled over raters)."""

    rater: str | None
    n_items: int
    alpha: Shown
    icc_a1: Shown


@dataclass(frozen=True)
class AgreementRow:
    """Human-LLM agreement of the ensemble (``model == "ensemble"``) or one model."""

    model: str
    icc_a1: Shown
    nmae: Shown
    n_items: int


@dataclass(frozen=True)
class AltTestRow:
    """The alt-test verdict of one model at the study's epsilon, scoring and q.

    Attributes
    ----------
    model : str
    winning_rate, advantage_probability : Shown
    passed : bool or None
        None when the test cannot run yet (``reason`` says why).
    verdict : str
        "passes", "does not pass" or "cannot run yet".
    sequential : str or None
        The anytime-valid verdict (:func:`annotator.metrics.alt_test_sequential`):
        whether the pass is already secured against further items.
    sequential_decided : bool or None
    n_items, n_tested : int
    reason : str or None
    """

    model: str
    winning_rate: Shown
    advantage_probability: Shown
    passed: bool | None
    verdict: str
    sequential: str | None
    sequential_decided: bool | None
    n_items: int
    n_tested: int
    reason: str | None


@dataclass(frozen=True)
class StatisticRow:
    """One :class:`annotator.analysis.model.Statistic` as shown: its ``key`` (the
    report's name) and ``label``, its ``model`` (None: among the humans), the number
    as :class:`Shown`, its items."""

    key: str
    label: str
    model: str | None
    number: Shown
    n_items: int


@dataclass(frozen=True)
class ScaleDashboard:
    """Everything the dashboard shows for one scale.

    Attributes
    ----------
    scale : str
    scale_min, scale_max : float
    progress : ScaleProgress
        :class:`annotator.analysis.model.ScaleProgress`, read through as
        ``block_counts`` (raters per block state), ``n_items`` (the study's items,
        attention checks excluded), ``n_ratings`` (first ratings of those items on this
        scale) and ``last_completed_at`` (the latest block completion on this scale).
    raters : tuple of RaterProgress
    block_items, block_raters : int
        Size of the complete items x raters block the ICCs use.
    icc_a1, icc_ak : Shown
        Human ICC(A,1) and ICC(A,k) with intervals of coverage ``settings.confidence``.
    alpha : Shown
        Krippendorff's interval alpha over every first rating (missing cells allowed).
    retest : tuple of RetestRow
        Per rater; ``retest_pooled`` pools them.
    retest_pooled : RetestRow
    ensemble : AgreementRow
        Human mean against the LLM ensemble mean (main temperature).
    models : tuple of AgreementRow
    alttest : tuple of AltTestRow
    notes : tuple of str
        What could not be computed on this scale, and why.
    consistency : tuple of ConsistencyRow
        Each model's self-consistency across its runs
        (:mod:`annotator.render.dashboard_consistency`).
    statistics : tuple of StatisticRow
        The analysis's further statistics of the scale, in its order (no field each).
    """

    scale: str
    scale_min: float
    scale_max: float
    progress: ScaleProgress
    raters: tuple[RaterProgress, ...]
    block_items: int
    block_raters: int
    icc_a1: Shown
    icc_ak: Shown
    alpha: Shown
    retest: tuple[RetestRow, ...]
    retest_pooled: RetestRow
    ensemble: AgreementRow
    models: tuple[AgreementRow, ...]
    alttest: tuple[AltTestRow, ...]
    notes: tuple[str, ...]
    consistency: tuple = ()
    statistics: tuple[StatisticRow, ...] = ()

    @property
    def human_statistics(self) -> tuple[StatisticRow, ...]:
        """The further statistics of the humans among themselves."""
        return tuple(row for row in self.statistics if row.model is None)

    @property
    def judge_statistics(self) -> tuple[StatisticRow, ...]:
        """The further statistics of each judge with the humans."""
        return tuple(row for row in self.statistics if row.model is not None)

    block_counts = property(lambda self: self.progress.block_counts)
    n_items = property(lambda self: self.progress.n_items)
    n_ratings = property(lambda self: self.progress.n_ratings)
    last_completed_at = property(lambda self: self.progress.last_completed_at)


@dataclass(frozen=True)
class Dashboard:
    """The study dashboard.

    Attributes
    ----------
    study : str
        The study's slug.
    scales : tuple of ScaleDashboard
        In the study's scale order.
    n_raters : int
        Raters who consented (or were imported).
    n_items : int
        Items, attention checks excluded.
    temperature : float or None
        The LLM temperature used; ``temperature_text`` says how it was chosen.
    temperature_text : str
        In a line or two: the temperatures, how chosen, each judge's scores at its own.
    temperature_detail : str
        Each judge's temperature on each scale (a study of several scales; else empty:
        ``temperature_text`` says it all).
    settings : dict
        :meth:`AnalysisSettings.to_dict`.
    computed_at : datetime
        When these numbers were computed (UTC).
    compute_seconds : float
        How long computing them took (frames excluded).
    notes : tuple of str
        Study-wide notes.
    statistics_note : str or None
        An overlap design's caption: which statistics allow missing cells
        (:func:`annotator.analysis.settings.statistics_note`).
    judge_assisted : tuple of JudgeAssistedRow
        Judge-assisted estimates of the human mean per benchmark, scale and judge
        (:mod:`annotator.render.dashboard_judge_assisted`); empty when no benchmark
        is judged in full and rated in part.
    criterion : str
        The criterion shown ("" in a study without ``[[criteria]]``).
    criteria : tuple of str
        The study's criteria, for the lead to pick one (empty without them).
    verdicts : tuple of VerdictLine
        The answer first: each judge's verdict on each scale (of ``criterion``), as
        :func:`annotator.render.verdict.verdict_lines` words it for every face.
    """

    study: str
    scales: tuple[ScaleDashboard, ...]
    n_raters: int
    n_items: int
    temperature: float | None
    temperature_text: str
    settings: dict[str, Any]
    computed_at: datetime
    compute_seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)
    statistics_note: str | None = None
    judge_assisted: tuple[Any, ...] = field(default_factory=tuple)
    criterion: str = ""
    criteria: tuple[str, ...] = ()
    verdicts: tuple[VerdictLine, ...] = ()
    temperature_detail: str = ""

    @property
    def ci_label(self) -> str:
        """``"90% CI"``: the coverage of the page's intervals (the study's ``confidence``)."""
        return f"{100 * float(self.settings.get('confidence', 0.95)):g}% CI"

    def scale(self, name: str) -> ScaleDashboard:
        """The part of one scale; ``KeyError`` if the study has none by that name."""
        for part in self.scales:
            if part.scale == name:
                return part
        raise KeyError(name)
