"""The answer first: may each judge replace the human raters, per scale (and criterion)?

:func:`verdict_summary` reads a study's analysis (its alt-tests at the study's
epsilon, its judge-assisted means) and gives one :class:`Verdict` per judge x scale
(x criterion): the verdict in words, the winning rate with its interval, epsilon,
the raters and items it rests on, the judge-assisted human mean beside the
human-only one, and, while undecided, what it still needs in the lead's terms.
The dashboard, the report and ``annotator verdict`` show these rows as they are;
nothing here tests anything again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
from scipy.stats import binomtest

from ..metrics import TooFewItemsError
from ..words import plural
from .model import ScaleAnalysis, StudyAnalysis
from .reasons import reason_of

__all__ = [
    "DECISIONS",
    "VERDICT_COLUMNS",
    "WORDS",
    "AssistedMean",
    "Verdict",
    "VerdictSummary",
    "verdict_summary",
    "winning_rate_interval",
]

#: A verdict's decision, and its words as the lead reads them.
DECISIONS = ("replace", "not", "undecided")
WORDS = {
    "replace": "may replace the raters",
    "not": "may not replace the raters",
    "undecided": "not decided yet",
}
#: The alt-test's leave-one-out needs two raters besides the one compared.
MIN_RATERS = 2

#: The columns of :meth:`VerdictSummary.to_frame` (``annotator verdict --format csv``).
VERDICT_COLUMNS = [
    "criterion",
    "scale",
    "judge",
    "decision",
    "verdict",
    "winning_rate",
    "winning_rate_low",
    "winning_rate_high",
    "confidence",
    "epsilon",
    "advantage_probability",
    "n_raters",
    "n_items",
    "secured",
    "judge_assisted_mean",
    "human_only_mean",
    "needs",
    "reason",
]


@dataclass(frozen=True)
class AssistedMean:
    """The judge-assisted (PPI++) human mean of one benchmark beside the human-only one."""

    benchmark: str
    estimate: float
    estimate_low: float
    estimate_high: float
    human_mean: float
    human_mean_low: float
    human_mean_high: float
    n_rated: int
    n_unrated: int


@dataclass(frozen=True)
class Verdict:
    """May ``judge`` replace the human raters on ``scale`` (of ``criterion``)?

    Attributes
    ----------
    criterion, scale, judge : str
        ``criterion`` is "" in a study without ``[[criteria]]``.
    decision : {"replace", "not", "undecided"}
        The alt-test (t-test) passed, did not pass, or cannot run yet.
    words : str
        :data:`WORDS` of ``decision``.
    winning_rate, advantage_probability : float or None
        None while undecided.
    winning_rate_low, winning_rate_high : float or None
        The winning rate's interval of coverage ``confidence``
        (:func:`winning_rate_interval`).
    confidence, epsilon : float
        The study's interval coverage and alt-test margin.
    n_raters, n_items : int
        Raters tested and items kept by the alt-test (while undecided: raters with a
        rating on the scale, and the most items any of them has that the test keeps).
    secured : bool or None
        Whether the anytime-valid test already secures the pass against further items
        (:func:`annotator.metrics.alt_test_pair`); None when it could not run.
    assisted : tuple of AssistedMean
        Per benchmark the judge scored in full and humans in part.
    needs : tuple of str
        While undecided, what the test still needs ("about 18 more items per rater").
    reason : str or None
        Why the test cannot run yet: too few items, in the ratings still needed; else
        as the alt-test says it.
    """

    criterion: str
    scale: str
    judge: str
    decision: str
    words: str
    winning_rate: float | None
    winning_rate_low: float | None
    winning_rate_high: float | None
    advantage_probability: float | None
    confidence: float
    epsilon: float
    n_raters: int
    n_items: int
    secured: bool | None
    assisted: tuple[AssistedMean, ...]
    needs: tuple[str, ...]
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        """The row as plain Python types (JSON-ready)."""
        out = asdict(self)
        out["assisted"] = [asdict(a) for a in self.assisted]
        out["needs"] = list(self.needs)
        return out


@dataclass(frozen=True)
class VerdictSummary:
    """Every judge's verdict on every scale (and criterion) of a study.

    Attributes
    ----------
    rows : tuple of Verdict
        In the study's order of criteria, then scales, then judges.
    epsilon, confidence : float
    criteria : tuple of str
        The criteria the rows cover (empty without ``[[criteria]]``).
    all_criteria : tuple of str
        The study's criteria (more than ``criteria`` when one was analysed alone).
    """

    rows: tuple[Verdict, ...]
    epsilon: float
    confidence: float
    criteria: tuple[str, ...] = ()
    all_criteria: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per verdict, columns :data:`VERDICT_COLUMNS` (``needs`` joined by "; ",
        the judge-assisted means of each benchmark as ``benchmark: mean``)."""
        rows = []
        for v in self.rows:
            rows.append(
                {
                    "criterion": v.criterion,
                    "scale": v.scale,
                    "judge": v.judge,
                    "decision": v.decision,
                    "verdict": v.words,
                    "winning_rate": v.winning_rate,
                    "winning_rate_low": v.winning_rate_low,
                    "winning_rate_high": v.winning_rate_high,
                    "confidence": v.confidence,
                    "epsilon": v.epsilon,
                    "advantage_probability": v.advantage_probability,
                    "n_raters": v.n_raters,
                    "n_items": v.n_items,
                    "secured": v.secured,
                    "judge_assisted_mean": "; ".join(
                        f"{a.benchmark}: {a.estimate:.6g}" for a in v.assisted
                    ),
                    "human_only_mean": "; ".join(
                        f"{a.benchmark}: {a.human_mean:.6g}" for a in v.assisted
                    ),
                    "needs": "; ".join(v.needs),
                    "reason": v.reason or "",
                }
            )
        return pd.DataFrame(rows, columns=VERDICT_COLUMNS)

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "confidence": self.confidence,
            "criteria": list(self.criteria),
            "verdicts": [v.to_dict() for v in self.rows],
        }


def winning_rate_interval(n_won: int, n_tested: int, *, confidence: float) -> tuple[float, float]:
    r"""Clopper-Pearson interval of a winning rate ``n_won / n_tested``.

    The winning rate :math:`\omega` is the share of tested raters the judge beats;
    taking the raters as drawn from a pool of raters like them, the number beaten is
    binomial and its exact interval (Clopper and Pearson 1934, as
    ``scipy.stats.binomtest(...).proportion_ci(method="exact")``) says how far
    :math:`\omega` may move with other raters: with 5 raters, 4 beaten gives
    [0.28, 0.99] at 95%. It ignores the dependence between raters' tests (they share
    the judge's scores), so it is a guide to how few raters the verdict rests on, not
    a test.

    Parameters
    ----------
    n_won, n_tested : int
        Raters whose null hypothesis was rejected, of those tested (``n_tested >= 1``).
    confidence : float, keyword-only
        Coverage in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)``.
    """
    if n_tested < 1:
        raise ValueError(f"n_tested must be at least 1, got {n_tested}")
    if not 0 <= n_won <= n_tested:
        raise ValueError(f"n_won must be in [0, n_tested={n_tested}], got {n_won}")
    ci = binomtest(n_won, n_tested).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def _assisted(frame: pd.DataFrame | None, scale: str, judge: str) -> tuple[AssistedMean, ...]:
    if frame is None or frame.empty:
        return ()
    mine = frame[(frame["scale"] == scale) & (frame["judge"] == judge)]
    return tuple(
        AssistedMean(
            benchmark=str(r.benchmark),
            estimate=float(r.estimate),
            estimate_low=float(r.estimate_low),
            estimate_high=float(r.estimate_high),
            human_mean=float(r.human_mean),
            human_mean_low=float(r.human_mean_low),
            human_mean_high=float(r.human_mean_high),
            n_rated=int(r.n_rated),
            n_unrated=int(r.n_unrated),
        )
        for r in mine.itertuples(index=False)
    )


def _undecided_needs(part: ScaleAnalysis, error: ValueError) -> tuple[tuple[str, ...], int, int]:
    """What the alt-test still needs, the raters it would test and the most items kept."""
    n_raters = int(part.ratings.notna().any(axis=0).sum()) if part.ratings.size else 0
    needs = []
    if n_raters < MIN_RATERS:
        needs.append(f"{plural(MIN_RATERS - n_raters, 'more rater')} on this scale")
    most = 0
    if isinstance(error, TooFewItemsError):
        most = error.most_items
        short = error.min_items_per_human - error.most_items
        needs.append(
            f"about {plural(short, 'more item')} per rater ({error.min_items_per_human} "
            f"each, shared with another rater and the judge; at most {error.most_items} so far)"
        )
    return tuple(needs), n_raters, most


def _verdict(
    part: ScaleAnalysis, judge: str, pair: Any, analysis: StudyAnalysis, criterion: str
) -> Verdict:
    settings = analysis.settings
    result = pair.result
    common = {
        "criterion": criterion,
        "scale": part.scale,
        "judge": judge,
        "confidence": float(settings.confidence),
        "epsilon": float(settings.epsilon),
        "secured": None if pair.sequential is None else bool(pair.sequential.decided),
        "assisted": _assisted(analysis.judge_assisted, part.scale, judge),
    }
    if result is None:
        needs, n_raters, most = _undecided_needs(part, pair.error)
        error = pair.error
        reason = reason_of(error)
        return Verdict(
            decision="undecided",
            words=WORDS["undecided"],
            winning_rate=None,
            winning_rate_low=None,
            winning_rate_high=None,
            advantage_probability=None,
            n_raters=n_raters,
            n_items=most,
            needs=needs,
            reason=reason,
            **common,
        )
    won = sum(1 for row in result.annotators if row.tested and row.rejected)
    low, high = winning_rate_interval(won, result.n_tested, confidence=settings.confidence)
    decision = "replace" if result.passed else "not"
    return Verdict(
        decision=decision,
        words=WORDS[decision],
        winning_rate=float(result.winning_rate),
        winning_rate_low=low,
        winning_rate_high=high,
        advantage_probability=float(result.advantage_probability),
        n_raters=int(result.n_tested),
        n_items=int(result.n_items),
        needs=(),
        reason=None,
        **common,
    )


def verdict_summary(analysis: StudyAnalysis) -> VerdictSummary:
    """One :class:`Verdict` per judge x scale (x criterion) of a study's analysis.

    ``analysis`` must hold the ``"alttest"`` part (and ``"judge_assisted"`` for the
    judge-assisted means); in a rubric study every criterion analysed
    (``by_criterion``) gives its rows, in the study's order.
    """
    per = analysis.by_criterion or {analysis.criterion: analysis}
    rows = []
    for criterion, one in per.items():
        for part in one.scales:
            for judge, pair in (part.alttest or {}).items():
                rows.append(_verdict(part, judge, pair, one, criterion))
    return VerdictSummary(
        rows=tuple(rows),
        epsilon=float(analysis.settings.epsilon),
        confidence=float(analysis.settings.confidence),
        criteria=tuple(c for c in per if c),
        all_criteria=tuple(analysis.criteria),
    )
