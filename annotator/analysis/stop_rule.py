r"""Stop when decided: has the anytime-valid alt-test settled a judge, either way?

A judge *passes* when :func:`annotator.metrics.alt_test_sequential` is decided: the
annotators whose betting capital reached :math:`m / (q \lceil m/2 \rceil)` are half
of the family, so no
later item can lower the winning rate below 0.5. Ville's inequality makes that verdict
valid however often it is looked at, so stopping the collection at that moment keeps
the false discovery rate at ``q`` (``validation/stop_when_decided.py`` checks it by
simulation).

A judge *cannot pass within the budget* when, even if the judge won every remaining
comparison, too few annotators could still reach the threshold :math:`m / (q
\lceil m/2 \rceil)` (:func:`annotator.metrics.alttest._sequential.secure_threshold`). Each future factor of
the capital :math:`K_t = \prod_i (1 + \lambda_i (m_0 - x_i))` is at most

.. math::

    F = 1 + \lambda_{\max} m_0, \qquad \lambda_{\max} = \frac{c}{1 - m_0},
    \quad m_0 = \frac{1 + \varepsilon}{2},

(the stake is capped at :math:`\lambda_{\max}` and :math:`x_i \ge 0`), so annotator
:math:`j`, with capital :math:`K_j` and :math:`r` items not complete yet (items enter
the test complete and fixed, :func:`complete_items`), can reach the threshold only if
:math:`\log K_j + r \log F` reaches the threshold's log (the factor bound holds
for every betting strategy of the library: each stake is capped at
:math:`\lambda_{\max}`). The judge cannot pass when the
annotators secured or still able to reach it, together with the raters still to come
(each could rate every item left), hold less than half of the weight. ``m`` is the
family fixed by the design: the raters who rated and those still to come. The bound
uses the cap, not the stake the test would really use, so it declares futility only when
passing is impossible, never when it is merely unlikely. Stopping for futility rejects
nothing, so it cannot raise the error rate.

A judge also *cannot pass within the budget* when the chance that it still passes,
bounded over every distribution of the raters' results the data so far allow, is at
most ``FUTILITY_CHANCE`` (0.025; :mod:`annotator.metrics.alttest._futility`): a judge
that would pass within the budget is stopped so with probability at most 0.05
(``validation/stop_futility.py``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

# The rule of what the test sees is a matrix rule (data.matrix_rules), named here
# too: the stop rule's callers take both from one place.
from ..data.matrix_rules import complete_items
from ..metrics.alttest import alt_test_sequential
from ..metrics.alttest._betting import BET_CAP
from ..metrics.alttest._futility import FUTILITY_CHANCE
from ..metrics.alttest._sequential import secure_threshold
from .reasons import reason_of

# The futility bet's margin on d: a judge that beats every rater by this much is
# stopped for futility with probability at most 0.05 (alt_test_sequential).
FUTILITY_MARGIN = 0.1

__all__ = [
    "FUTILITY_MARGIN",
    "JudgeVerdict",
    "Outcome",
    "complete_items",
    "judge_verdict",
    "most_log_gain_per_item",
    "rater_items_left",
]


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
    # The rubric criterion the verdict is on (None: a study without criteria).
    criterion: str | None = None

    @property
    def decided(self) -> bool:
        return self.outcome != Outcome.UNDECIDED

    def line(self) -> str:
        on = f"scale {self.scale}" + (f", criterion {self.criterion}" if self.criterion else "")
        return f"{on}, judge {self.judge}: {self.outcome}; {self.why}"


def most_log_gain_per_item(epsilon: float, *, cap: float = BET_CAP) -> float:
    r""":math:`\log F`: the most one item can raise an annotator's log capital."""
    m0 = (1.0 + epsilon) / 2.0
    if m0 >= 1.0:
        return math.inf
    return math.log1p(cap / (1.0 - m0) * m0)


def rater_items_left(
    rated: Mapping[Hashable, Iterable[Hashable]],
    order: Iterable[Hashable],
    judged: Iterable[Hashable],
    still_to_rate: Mapping[Hashable, Iterable[Hashable] | None],
) -> dict[Hashable, int]:
    """Each rater's most items still to enter the test: ``items_left`` of
    :func:`judge_verdict`.

    An item not complete yet enters with its first raters, so a rater can still get it
    only if they rated it already (they are among its first) or it is among the items
    still to rate in their block (``still_to_rate[rater]``; an overlap block holds
    only the rater's share, so overlap raters have fewer than the items left; a
    completed block has none). ``rated``: ``{rater: items they rated}`` (every counted
    rating, complete items or not); ``order``: the complete items. Only items the
    judge scored (``judged``) enter. A rater ``still_to_rate`` gives None or lacks (a
    rater without a block: imported ratings) may get every item not complete yet.
    """
    waiting = set(judged) - set(order)
    out = {}
    for rater, theirs in rated.items():
        own = still_to_rate.get(rater)
        out[rater] = len(waiting) if own is None else len(waiting & (set(own) | set(theirs)))
    return out


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
    futility_margin: float | None = FUTILITY_MARGIN,
    items_left: Mapping[Hashable, int] | None = None,
    futility_chance: float | None = FUTILITY_CHANCE,
) -> JudgeVerdict:
    """Whether the judge passes, cannot pass within the budget, or is undecided.

    Parameters
    ----------
    scale, judge : str
        Names for the verdict's sentence.
    humans : mapping
        ``{rater: {item: score}}`` on the scale.
    llm : mapping
        ``{item: score}`` of the judge, items in the order they became complete (the
        order the test by betting takes them in; :func:`complete_items`).
    budget_items : int, keyword-only
        The items the judge scored on the scale: those not in ``llm`` yet (not
        complete yet) are all any rater can still enter.
    raters_to_come : float, keyword-only
        Raters who may still join and rate the scale (``math.inf``: no limit, so the
        judge is never declared unable to pass). When finite they count in the
        family's ``m`` (``n_annotators`` of :func:`alt_test_sequential`), so that their
        coming cannot raise a threshold already reached.
    epsilon, q, scoring
        As in :func:`annotator.metrics.alt_test`, keyword-only.
    futility_margin : float or None, keyword-only
        The futility bet's margin on ``d`` (:func:`alt_test_sequential`; default 0.1):
        a rater it gives up counts as one who cannot be secured. A judge that beats
        every rater by the margin is stopped for futility with probability at most
        0.05. None: only the impossibility bound.
    items_left : mapping or None, keyword-only
        ``{rater: most items still to enter the test with them}`` when the design
        knows it (:func:`rater_items_left`: the items not complete yet that they rated
        or still have in their block; an overlap block holds only the rater's share);
        a rater not named, or None: every rater may still get every item
        not complete yet. Used by the conditional-power bound (``pass_chance`` of
        :func:`alt_test_sequential`).
    futility_chance : float or None, keyword-only
        The judge cannot pass when the bounded chance to pass within the budget is at
        most this (default ``FUTILITY_CHANCE``, 0.025: a judge that would pass is
        stopped so with probability at most 0.05). None: no such stop.

    Returns
    -------
    JudgeVerdict
    """
    if budget_items < 0 or raters_to_come < 0:
        raise ValueError("budget_items and raters_to_come must be 0 or more")
    family = None if math.isinf(raters_to_come) else len(humans) + math.ceil(raters_to_come)
    left = max(budget_items - len(llm), 0)
    # Each rater's own budget (a rater not named may get every item left).
    own = {r: min(int(items_left.get(r, left)), left) for r in humans} if items_left else {}
    # Raters to come count in the chance bound as sure to be secured, if the items left
    # let anyone be.
    able = 0.0
    if family and left * most_log_gain_per_item(epsilon) >= math.log(secure_threshold(family, q)):
        able = raters_to_come
    try:
        verdict = alt_test_sequential(
            humans=humans,
            llm=llm,
            scoring=scoring,
            epsilon=epsilon,
            q=q,
            n_annotators=family,
            futility_margin=futility_margin,
            items_left=None if family is None or futility_chance is None else (own or left),
            raters_to_come=able,
        )
    except ValueError as exc:
        # Too few ratings to test anyone yet: nothing is decided.
        return JudgeVerdict(scale, judge, Outcome.UNDECIDED, f"not testable yet ({reason_of(exc)})")
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
    log_threshold = math.log(secure_threshold(max(len(result.annotators), family or 0), q))
    gain = most_log_gain_per_item(epsilon)
    total = sum(row.weight for row in result.annotators)
    reachable = 0.0
    # Items enter complete and are never changed after (complete_items): a rater can
    # only still enter the items that have not entered yet.
    given_up = set(verdict.given_up)
    # Raters only the futility bet rules out (their items left could still secure them).
    bet_only = 0.0
    for row in result.annotators:
        log_e = math.log(row.statistic) if row.tested and row.statistic > 0 else 0.0
        able = log_e + own.get(row.annotator, left) * gain >= log_threshold
        if row.secured or (able and row.annotator not in given_up):
            reachable += row.weight
        elif able:
            bet_only += row.weight
    # The best case for the judge: raters to come who could be secured do come,
    # those who could not (too few items in the budget) stay away.
    if raters_to_come and left * gain >= log_threshold:
        if math.isinf(raters_to_come):
            return JudgeVerdict(
                scale, judge, Outcome.UNDECIDED, f"{verdict.message}; raters may still join"
            )
        reachable += raters_to_come
        total += raters_to_come
    # The items left in words: each rater's own budget when it is known.
    most = max(own.values(), default=left)
    within = f"the {left} items left" + (
        f" (at most {most} for any rater who rated)" if own and most < left else ""
    )
    if total > 0 and reachable / total < 0.5:
        # When the raters given up could still be secured the stop rests on the
        # futility bet; otherwise passing is impossible whatever comes.
        futile = (reachable + bet_only) / total >= 0.5
        head = "stopped for futility: " if futile else ""
        gave = (
            f"({len(given_up)} given up by the futility bet: the judge is not clearly "
            "better than them) "
            if futile
            else ""
        )
        return JudgeVerdict(
            scale,
            judge,
            Outcome.CANNOT_PASS,
            f"{head}at most {reachable:g} of {total:g} raters can still be secured "
            f"{gave}within {within} (half are needed; winning rate now "
            f"{result.winning_rate:.2f}), epsilon {epsilon:g}, q {q:g}",
        )
    chance = verdict.pass_chance
    if chance is not None and futility_chance is not None and chance <= futility_chance:
        return JudgeVerdict(
            scale,
            judge,
            Outcome.CANNOT_PASS,
            f"stopped for futility: its chance to pass with {within} is at "
            f"most {chance:.3f} (winning rate now {result.winning_rate:.2f}; a judge that "
            f"would pass is stopped so at most 5% of the time), epsilon {epsilon:g}, "
            f"q {q:g}",
        )
    return JudgeVerdict(scale, judge, Outcome.UNDECIDED, verdict.message)
