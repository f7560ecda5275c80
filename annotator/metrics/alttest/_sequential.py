"""The alt-test as ratings arrive: a verdict that more items cannot reverse."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._api import _options, _result
from ._betting import STRATEGIES, sequential_log_capital
from ._core import _Batch, _decide, _statistics
from ._futility import pass_chance_bound
from ._results import AltTestResult

__all__ = [
    "AltTestPair",
    "SequentialVerdict",
    "alt_test_pair",
    "alt_test_sequential",
    "secure_threshold",
]


# The default betting strategy of the sequential test (benchmarks/alttest_replay.py).
SEQUENTIAL_STRATEGY = "mixture"
# Level of the futility bet: each annotator the LLM truly beats by the margin is given
# up with probability at most this (Ville's inequality).
FUTILITY_BETA = 0.025


def secure_threshold(m: int, q: float) -> float:
    r"""The e-value at which a rater is secured: :math:`m / (q \lceil m/2 \rceil)`.

    Once :math:`h = \lceil m/2 \rceil` raters' capitals, each stopped when it first
    reaches :math:`m / (q h)`, hold that much, the :math:`h` largest e-values satisfy
    e-BH's condition :math:`e_{(h)} \ge m / (q h)` (Wang and Ramdas 2022), so e-BH
    rejects at least those :math:`h` at level ``q``, now and after any further items
    (stopped e-values do not move): the winning rate stays at least 0.5. Before issue
    39 each capital had to reach :math:`m / q`, the threshold for one rejection:
    :math:`h` times higher.
    """
    return m / (q * math.ceil(m / 2))


@dataclass(frozen=True)
class SequentialVerdict:
    """Where the anytime-valid alt-test stands with the items rated so far.

    Attributes
    ----------
    decided : bool
        The LLM passes and no further items can reverse it: half of the family is
        ``secured`` (e-value at :func:`secure_threshold`), and e-BH keeps rejecting
        them whatever comes next.
    secured_winning_rate : float
        Weight of the secured annotators over the weight of all annotators (tested or
        not, since more items may bring more of them into the test): a lower bound on
        every future winning rate.
    result : AltTestResult
        The test by betting on the current items (``test="betting"``).
    """

    decided: bool
    secured_winning_rate: float
    result: AltTestResult
    # Annotators given up by the futility bet (``futility_margin``): the data say the
    # LLM is not clearly better than them. Empty without the bet.
    given_up: tuple[Hashable, ...] = ()
    # With ``items_left``: an upper bound on the chance that the test still passes
    # within the items left (:mod:`~annotator.metrics.alttest._futility`); None without.
    pass_chance: float | None = None

    @property
    def message(self) -> str:
        """One line for a dashboard or a terminal."""
        res = self.result
        if self.decided:
            return (
                f"the LLM passes (WR {res.winning_rate:.2f}) and this cannot be reversed by "
                "more items"
            )
        secured = sum(row.secured for row in res.annotators)
        return (
            f"not decided yet (WR {res.winning_rate:.2f} now; {secured} of "
            f"{len(res.annotators)} annotators secured, secured WR "
            f"{self.secured_winning_rate:.2f} of the 0.50 needed)"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the verdict as plain Python types (JSON-ready)."""
        return {
            "decided": self.decided,
            "secured_winning_rate": self.secured_winning_rate,
            "message": self.message,
            "result": self.result.to_dict(),
        }


def alt_test_sequential(
    *,
    humans: Mapping[Hashable, Mapping[Hashable, Any]],
    llm: Mapping[Hashable, Any],
    scoring: str | Callable[..., float] = "neg_rmse",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_humans_per_item: int = 2,
    min_items_per_human: int = 1,
    annotator_weights: Mapping[Hashable, float] | None = None,
    expert: Hashable | Mapping[Hashable, Any] | None = None,
    nan_scores: str = "raise",
    n_annotators: int | None = None,
    strategy: str = "mixture",  # SEQUENTIAL_STRATEGY
    futility_margin: float | None = None,
    items_left: int | Mapping[Hashable, int] | None = None,
    raters_to_come: float = 0.0,
) -> SequentialVerdict:
    r"""Monitor the alt-test as ratings arrive: passed for good, or not decided yet.

    Runs :func:`alt_test` with ``test="betting"``: for each annotator a test by betting
    of :math:`H_{0j}: E[d] \ge \varepsilon` on :math:`d = W^h - W^f \in [-1, 1]`
    (Waudby-Smith and Ramdas 2023), valid at every sample size and under continuous
    monitoring, and the e-BH procedure across annotators (Wang and Ramdas 2022), which
    controls the false discovery rate at ``q`` under any dependence. Each annotator's
    capital is stopped when it reaches :math:`m / (q h)`, :math:`h = \lceil m/2
    \rceil` (:func:`secure_threshold`; with ``annotator_weights``, :math:`m/q`); such an
    annotator is *secured*. The verdict is decided when :math:`h` annotators are
    secured (with weights: when

    .. math::

        \frac{\sum_{j\ \mathrm{secured}} Q_j}{\sum_{j} Q_j} \ge 0.5

    over the annotators in ``humans``): then e-BH rejects at least those, now and after
    any number of further items, and every future winning rate is at least 0.5.

    The guarantee assumes that new ratings come as new items appended to ``llm`` with
    their human annotations complete and fixed: an annotator's items are taken in the
    order of ``llm``, and a later annotation of an earlier item would change that item's
    reference set and so the past of the betting game. An application feeds each item
    once it has its planned number of raters, with those raters only, in the order the
    items became complete (:func:`annotator.analysis.stop_rule.complete_items`). The
    family is fixed too: ``m`` counts every annotator in ``humans`` (tested or not) and,
    with ``n_annotators``, those who may still come.

    Parameters
    ----------
    humans : mapping
        ``{annotator: {item: annotation}}`` (or a DataFrame items x annotators).
    llm : mapping
        ``{item: annotation}``, items in the order they were rated.
    scoring, epsilon, q, min_humans_per_item, annotator_weights, expert, nan_scores
        As in :func:`alt_test`, keyword-only.
    min_items_per_human : int, keyword-only
        Annotators with fewer kept items are not tested yet (default 1: the test by
        betting is valid from the first item, so there is no normality minimum).
    strategy : {"mixture", "agrapa", "ons"}, keyword-only
        The betting strategy of each annotator's capital
        (:func:`~annotator.metrics.alttest._betting.sequential_log_capital`; Waudby-Smith
        and Ramdas 2023). ``"mixture"`` (default) decided the most replays of the
        public data soonest (``benchmarks/alttest_replay.py``); all keep the level.
    futility_margin : float or None, keyword-only
        With a margin ``delta``, a second bet per annotator, on the other side: against
        :math:`H'_j: E[d] \le \varepsilon - \delta` (the LLM clearly good enough
        against annotator ``j``), same strategy. An annotator whose capital on that side
        reaches ``1 / FUTILITY_BETA`` (40) is *given up* (``given_up``). If the LLM
        beats every annotator by the margin, each is given up with probability at most
        ``FUTILITY_BETA`` = 0.025 (Ville), so more than half of them (what stopping
        for futility needs) with probability at most 0.05 (Markov). Giving up rejects
        nothing, so it cannot raise the false-pass rate.
    items_left : int, mapping or None, keyword-only
        The most items each annotator may still get within the budget (one number for
        all, or ``{annotator: count}``). With it, ``pass_chance`` bounds the chance
        that the test passes within the budget, over every distribution of the
        annotators' results the data so far allow
        (:func:`~annotator.metrics.alttest._futility.pass_chance_bound`; unweighted,
        ``strategy="mixture"`` only). A rule that stops when it is at most ``FUTILITY_CHANCE`` stops a judge
        that would pass within the budget with probability at most 0.05.
    raters_to_come : float, keyword-only
        With ``items_left``: raters with no items yet who could still be secured (each
        counts as sure to be).
    n_annotators : int or None, keyword-only
        The family's size ``m`` in the threshold ``m / q`` and in e-BH: every annotator
        who may ever be tested, at least those in ``humans`` (None: those). Raters who
        may still join a study count here, so that their coming cannot raise the
        threshold an annotator has reached. The winning rates count the annotators in
        ``humans``.

    Returns
    -------
    SequentialVerdict

    Raises
    ------
    ValueError
        As :func:`alt_test`.

    References
    ----------
    Waudby-Smith, I., and Ramdas, A. (2023). Estimating means of bounded random variables
    by betting. Journal of the Royal Statistical Society B, 86(1), 1-27.
    Wang, R., and Ramdas, A. (2022). False discovery rate control with e-values. Journal
    of the Royal Statistical Society B, 84(3), 822-852.
    Calderon, N., Reichart, R., and Dror, R. (2025). The Alternative Annotator Test for
    LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs.
    ACL 2025, section 3.

    Examples
    --------
    >>> from annotator.metrics import alt_test_sequential
    >>> scores = [1, 2, 3, 4, 5] * 40
    >>> humans = {h: dict(enumerate(scores)) for h in ("a", "b", "c")}
    >>> alt_test_sequential(humans=humans, llm=dict(enumerate(scores)), epsilon=0.2).message
    'the LLM passes (WR 1.00) and this cannot be reversed by more items'
    """
    opts = _options(
        {
            "scoring": scoring,
            "epsilon": epsilon,
            "q": q,
            "min_humans_per_item": min_humans_per_item,
            "min_items_per_human": min_items_per_human,
            "test": "betting",
            "annotator_weights": annotator_weights,
            "inverse_probability_weighting": False,
            "expert": expert,
            "ranks": False,
            "nan_scores": nan_scores,
        }
    )
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    weighted = annotator_weights is not None
    batch = _restake(_statistics(humans, llm, [None], [opts]), 0, strategy)
    listed = batch.chosen.shape[1]
    if n_annotators is not None:
        if isinstance(n_annotators, bool) or not isinstance(n_annotators, int):
            raise ValueError(f"n_annotators must be an integer or None, got {n_annotators!r}")
        if n_annotators < listed:
            raise ValueError(
                f"n_annotators must be at least the {listed} annotators in humans, "
                f"got {n_annotators}"
            )
    # Unweighted, half of the family secured at m / (q ceil(m/2)) fixes e-BH's verdict;
    # with weights the needed count is not known in advance: one rejection's m / q.
    secure_at = None if weighted else secure_threshold
    decided = _decide([batch], family_size=n_annotators, secure_at=secure_at)[0]
    result = _result(batch, 0, decided, 0.5)
    verdict = _verdict(result, family=None if weighted else max(n_annotators or 0, listed))
    if items_left is not None and strategy == "mixture" and not weighted and not verdict.decided:
        verdict = replace(
            verdict,
            pass_chance=_pass_chance(
                batch, result, items_left, raters_to_come, max(n_annotators or 0, listed)
            ),
        )
    if futility_margin is None:
        return verdict
    margin = float(futility_margin)
    if not 0.0 < margin <= 1.0 + opts.epsilon:
        raise ValueError(f"futility_margin must be in (0, 1 + epsilon], got {futility_margin!r}")
    # The bet on the other side: x = (d + 1)/2 above m0 - margin/2, i.e. 1 - x below.
    other = 1.0 - ((1.0 + opts.epsilon) / 2.0 - margin / 2.0)
    give_up = math.log(1.0 / FUTILITY_BETA)
    names = [batch.names[j] for j in batch.chosen[0]]
    given_up = tuple(
        name
        for name, x, tested in zip(names, batch.runs, batch.tested[0, 0], strict=True)
        if tested
        and x.size
        and sequential_log_capital(1.0 - x, other, strategy=strategy).max() >= give_up
    )
    return replace(verdict, given_up=given_up)


def _pass_chance(
    batch: _Batch,
    result: AltTestResult,
    items_left: int | Mapping[Hashable, int],
    to_come: float,
    family: int,
) -> float:
    """The bound of :func:`pass_chance_bound` for the raters not secured yet."""
    opts = batch.opts[0]
    names = [batch.names[j] for j in batch.chosen[0]]
    runs = dict(zip(names, batch.runs, strict=True))
    open_rows = [row for row in result.annotators if not row.secured]
    need = math.ceil(family / 2) - (len(result.annotators) - len(open_rows))

    def left(name: Hashable) -> int:
        return int(items_left.get(name, 0) if isinstance(items_left, Mapping) else items_left)

    return pass_chance_bound(
        [runs.get(row.annotator, np.zeros(0)) for row in open_rows],
        (1.0 + opts.epsilon) / 2.0,
        remaining=[left(row.annotator) for row in open_rows],
        log_threshold=math.log(secure_threshold(family, opts.q)),
        need=need,
        to_come=to_come,
        raters=len(result.annotators),
    )


def _restake(batch: _Batch, e: int, strategy: str) -> _Batch:
    """The batch with option set ``e``'s capitals bet by ``strategy`` (in place)."""
    if strategy != "agrapa":
        m0 = (1.0 + batch.opts[e].epsilon) / 2.0
        batch.log_capital[e] = [
            [
                sequential_log_capital(x, m0, strategy=strategy) if path is not None else None
                for x, path in zip(batch.runs, batch.log_capital[e][0], strict=True)
            ]
        ]
    return batch


def _verdict(result: AltTestResult, *, family: int | None = None) -> SequentialVerdict:
    total = sum(row.weight for row in result.annotators)
    secured = sum(row.weight for row in result.annotators if row.secured)
    rate = secured / total
    decided = rate >= 0.5
    if family is not None:
        # The secured capitals stand at m / (q h): e-BH is settled only with h of them.
        decided = decided and secured >= math.ceil(family / 2)
    return SequentialVerdict(decided=decided, secured_winning_rate=rate, result=result)


@dataclass(frozen=True)
class AltTestPair:
    """:func:`alt_test` and :func:`alt_test_sequential` of the same data.

    Attributes
    ----------
    result : AltTestResult or None
        The t-test (``alt_test``); None when it raised ``error``.
    error : ValueError or None
        Why the t-test cannot run (a :class:`TooFewItemsError` while annotators have
        fewer than ``min_items_per_human`` items).
    sequential : SequentialVerdict or None
        The anytime-valid verdict; None when it raised ``sequential_error``.
    sequential_error : ValueError or None
    """

    result: AltTestResult | None
    error: ValueError | None
    sequential: SequentialVerdict | None
    sequential_error: ValueError | None


def alt_test_pair(
    *,
    humans: Mapping[Hashable, Mapping[Hashable, Any]],
    llm: Mapping[Hashable, Any],
    scoring: str | Callable[..., float] = "neg_rmse",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_humans_per_item: int = 2,
    min_items_per_human: int = 30,
) -> AltTestPair:
    r""":func:`alt_test` (t-test) and :func:`alt_test_sequential` with one scoring pass.

    Both tests start from the same leave-one-out alignment scores and winning
    indicators :math:`W^f_{i,j}, W^h_{i,j}`, which take most of the time; the core
    computes them once and runs both on them: the one-sided t-test of
    :math:`H_{0j}: E[W^h_j - W^f_j] \ge \varepsilon` with Benjamini-Yekutieli, and the
    test by betting with e-BH (``min_items_per_human=1``). The results equal those of
    the two functions called separately.

    Parameters
    ----------
    humans, llm, scoring, epsilon, q, min_humans_per_item
        As in :func:`alt_test`, keyword-only.
    min_items_per_human : int, keyword-only
        The t-test's minimum (the sequential test keeps its own, 1).

    Returns
    -------
    AltTestPair
        An exception of either test is returned in it, not raised; an invalid option
        raises ``ValueError``.

    References
    ----------
    Calderon, N., Reichart, R., and Dror, R. (2025). The Alternative Annotator Test for
    LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs.
    ACL 2025, section 3.
    Waudby-Smith, I., and Ramdas, A. (2023). Estimating means of bounded random variables
    by betting. Journal of the Royal Statistical Society B, 86(1), 1-27.
    """
    opts = _options(
        {
            "scoring": scoring,
            "epsilon": epsilon,
            "q": q,
            "min_humans_per_item": min_humans_per_item,
            "min_items_per_human": min_items_per_human,
            "test": "ttest",
            "annotator_weights": None,
            "inverse_probability_weighting": False,
            "expert": None,
            "ranks": False,
            "nan_scores": "raise",
        }
    )
    betting = replace(opts, test="betting", min_items_per_human=1)
    try:
        batch = _statistics(humans, llm, [None], [opts, betting])
    except ValueError as exc:
        return AltTestPair(None, exc, None, exc)
    _restake(batch, 1, SEQUENTIAL_STRATEGY)
    decided = _decide([batch], secure_at=secure_threshold)[0]
    out: list[Any] = []
    for e in range(2):
        try:
            out += [_result(batch, e, decided, 0.5), None]
        except ValueError as exc:
            out += [None, exc]
    result, error, betting, sequential_error = out
    sequential = _verdict(betting, family=len(betting.annotators)) if betting is not None else None
    return AltTestPair(result, error, sequential, sequential_error)
