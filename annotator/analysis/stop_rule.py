r"""Stop when decided: has the anytime-valid alt-test settled a judge, either way?

A judge *passes* when :func:`annotator.metrics.alt_test_sequential` is decided: the
annotators whose betting capital reached :math:`m/q` hold half of the weight, so no
later item can lower the winning rate below 0.5. Ville's inequality makes that verdict
valid however often it is looked at, so stopping the collection at that moment keeps
the false discovery rate at ``q`` (``validation/stop_when_decided.py`` checks it by
simulation).

A judge *cannot pass within the budget* when, even if the judge won every remaining
comparison, too few annotators could still reach :math:`m/q`. Each future factor of
the capital :math:`K_t = \prod_i (1 + \lambda_i (m_0 - x_i))` is at most

.. math::

    F = 1 + \lambda_{\max} m_0, \qquad \lambda_{\max} = \frac{c}{1 - m_0},
    \quad m_0 = \frac{1 + \varepsilon}{2},

(the stake is capped at :math:`\lambda_{\max}` and :math:`x_i \ge 0`), so annotator
:math:`j`, with capital :math:`K_j` and :math:`r_j` items of the budget left, can reach
the threshold only if :math:`\log K_j + r_j \log F \ge \log(m/q)`. The judge cannot
pass when the annotators secured or still able to reach it, together with the raters
still to come (each could rate every item), hold less than half of the weight. The
bound uses the current :math:`m` (the threshold only rises with more annotators) and
the cap, not the stake the test would really use, so it declares futility only when
passing is impossible, never when it is merely unlikely. Stopping for futility rejects
nothing, so it cannot raise the error rate.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from ..metrics.alttest import alt_test_sequential
from ..metrics.alttest._betting import BET_CAP

__all__ = ["JudgeVerdict", "Outcome", "judge_verdict", "most_log_gain_per_item"]


class Outcome(StrEnum):
    PASSES = "passes"
    CANNOT_PASS = "cannot pass"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class JudgeVerdict:
    """Where one judge stands on one scale."""

    scale: str
    judge: str
    outcome: Outcome
    # One sentence: the numbers behind the outcome.
    why: str

    @property
    def decided(self) -> bool:
        return self.outcome != Outcome.UNDECIDED

    def line(self) -> str:
        return f"scale {self.scale}, judge {self.judge}: {self.outcome}; {self.why}"


def most_log_gain_per_item(epsilon: float, *, cap: float = BET_CAP) -> float:
    r""":math:`\log F`: the most one item can raise an annotator's log capital."""
    m0 = (1.0 + epsilon) / 2.0
    if m0 >= 1.0:
        return math.inf
    return math.log1p(cap / (1.0 - m0) * m0)


def judge_verdict(
    *,
    scale: str,
    judge: str,
    humans: Mapping[Hashable, Mapping[Hashable, float]],
    llm: Mapping[Hashable, float],
    budget_items: int,
    raters_to_come: float,
    epsilon: float = 0.2,
    q: float = 0.05,
    scoring: str = "neg_rmse",
) -> JudgeVerdict:
    """Whether the judge passes, cannot pass within the budget, or is undecided.

    Parameters
    ----------
    scale, judge : str
        Names for the verdict's sentence.
    humans : mapping
        ``{rater: {item: score}}`` on the scale.
    llm : mapping
        ``{item: score}`` of the judge, items in the order their ratings arrived
        (the order the test by betting takes them in).
    budget_items : int, keyword-only
        The most items a rater can rate on the scale (the study's items the judge
        scored): a rater with ``n`` of them has ``budget_items - n`` left.
    raters_to_come : float, keyword-only
        Raters who may still join and rate the scale (``math.inf``: no limit, so the
        judge is never declared unable to pass).
    epsilon, q, scoring
        As in :func:`annotator.metrics.alt_test`, keyword-only.

    Returns
    -------
    JudgeVerdict
    """
    if budget_items < 0 or raters_to_come < 0:
        raise ValueError("budget_items and raters_to_come must be 0 or more")
    try:
        verdict = alt_test_sequential(humans=humans, llm=llm, scoring=scoring, epsilon=epsilon, q=q)
    except ValueError as exc:
        # Too few ratings to test anyone yet: nothing is decided.
        return JudgeVerdict(scale, judge, Outcome.UNDECIDED, f"not testable yet ({exc})")
    result = verdict.result
    if verdict.decided:
        return JudgeVerdict(
            scale,
            judge,
            Outcome.PASSES,
            f"{sum(r.secured for r in result.annotators)} of {len(result.annotators)} "
            f"raters secured (winning rate {result.winning_rate:.2f}, at least "
            f"{verdict.secured_winning_rate:.2f} whatever comes), epsilon {epsilon:g}, "
            f"q {q:g}, {result.n_items} items",
        )
    log_threshold = math.log(len(result.annotators) / q)
    gain = most_log_gain_per_item(epsilon)
    total = sum(row.weight for row in result.annotators)
    reachable = 0.0
    for row in result.annotators:
        log_e = math.log(row.statistic) if row.tested and row.statistic > 0 else 0.0
        left = max(budget_items - row.n_items, 0)
        if row.secured or log_e + left * gain >= log_threshold:
            reachable += row.weight
    # The best case for the judge: raters to come who could be secured do come,
    # those who could not (too few items in the budget) stay away.
    if raters_to_come and budget_items * gain >= log_threshold:
        if math.isinf(raters_to_come):
            return JudgeVerdict(
                scale, judge, Outcome.UNDECIDED, f"{verdict.message}; raters may still join"
            )
        reachable += raters_to_come
        total += raters_to_come
    if total > 0 and reachable / total < 0.5:
        return JudgeVerdict(
            scale,
            judge,
            Outcome.CANNOT_PASS,
            f"at most {reachable:g} of {total:g} raters can still be secured within "
            f"{budget_items} items each (half are needed; winning rate now "
            f"{result.winning_rate:.2f}), epsilon {epsilon:g}, q {q:g}",
        )
    return JudgeVerdict(scale, judge, Outcome.UNDECIDED, verdict.message)
