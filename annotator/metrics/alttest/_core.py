"""The winning rates and advantage probabilities of an alt-test curve's resamples.

A curve runs :func:`alt_test` on up to several hundred resamples (840 for the report's
21 curves at 150 items), each a subset of one table of annotations. Run one by one,
that is thousands of numpy calls on arrays of a few hundred elements, where the calls'
overhead is most of the cost. :func:`_batched` collects the annotations once and
computes every resample at once: the resamples' annotations are concatenated and
every per-annotator sum is binned by (resample, annotator), so the scores, the t-tests,
the Benjamini-Yekutieli corrections and the rates take a handful of calls per curve.

The results are bit for bit those of the per-resample computation: ``np.bincount``
accumulates each bin in input order, and the concatenation keeps each resample's
annotations in the order :func:`alt_test` sorts them into, so each bin adds the same
numbers in the same order; the rates' row-wise means reduce each row as the 1-D call
does. Options the batched path does not cover go through :func:`_per_resample`, the
plain route through :func:`alt_test`'s own steps.
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._api import _check_threshold, _decide, _options, _rates, alt_test
from ._core import (
    _indicators,
    _indicators_of,
    _ipw_weights,
    _mode_per_group,
    _pairs,
    _run_starts,
    _score_pairs,
    _tested,
)
from ._inference import _by_rejections, _t_tests
from ._inputs import _collect, _Options, _Tested

#: The defaults of :func:`alt_test`'s options, which a curve's ``**options`` override.
_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(alt_test).parameters.items()
    if p.default is not inspect.Parameter.empty
}

#: A resample: the sorted positions of its annotators and of its items, or None for
#: all annotators and all items.
_Resample = tuple[np.ndarray, np.ndarray] | None


@dataclass(frozen=True)
class _CurveRates:
    """What the points of a curve read of its resamples' alt-tests.

    Attributes
    ----------
    winning_rate : numpy.ndarray
        Shape (resamples, epsilons); NaN where no annotator could be tested.
    advantage : numpy.ndarray
        Shape (resamples,): the advantage probability does not depend on epsilon.
    passed : numpy.ndarray
        Shape (resamples, epsilons), bool.
    """

    winning_rate: np.ndarray
    advantage: np.ndarray
    passed: np.ndarray


def _resample_rates(
    humans: Mapping[Hashable, Any],
    llm: Mapping[Hashable, Any],
    items: list[Hashable],
    resamples: Sequence[_Resample],
    epsilons: Sequence[float],
    options: Mapping[str, Any],
) -> _CurveRates:
    """The rates of ``alt_test(humans=sub, llm=sub_llm, epsilon=e, **options)`` on
    every resample and epsilon, raising what the first of those calls raises.

    Parameters
    ----------
    humans, llm : mapping
        ``{annotator: {item: annotation}}`` and ``{item: annotation}``, as mappings.
    items : list
        The items of ``llm`` a resample draws from: those with an annotation.
    resamples : sequence
        Each the sorted positions of its annotators in ``humans`` and of its items in
        ``items``, or None for the whole of ``humans`` and ``llm``.
    epsilons : sequence of float
    options : mapping
        The other options of :func:`alt_test`.

    Returns
    -------
    _CurveRates
    """
    args = {**_DEFAULTS, **options}
    # Checked first, as every resample's alt_test checks them before scoring.
    opts = [_options({**args, "epsilon": e}) for e in epsilons]
    batched = _batched(humans, {i: llm[i] for i in items}, resamples, opts)
    if batched is None:
        return _per_resample(humans, llm, items, resamples, opts, args["pass_threshold"])
    threshold = _check_threshold(args["pass_threshold"])
    winning_rate, advantage = batched
    return _CurveRates(winning_rate, advantage, winning_rate >= threshold)


@dataclass(frozen=True)
class _Pool:
    """The annotations a curve's resamples draw from, sorted by item and, within an
    item, in the order of ``humans``: the order :func:`alt_test` sorts a subset into."""

    item: np.ndarray
    annot: np.ndarray
    value: np.ndarray
    start: np.ndarray  # per item, its first annotation; one more for the end
    llm: np.ndarray
    n_annotators: int


def _pool(
    humans: Mapping[Hashable, Any], llm: Mapping[Hashable, Any], opts: _Options
) -> _Pool | None:
    """The annotations collected once, or None where a subset could differ from them.

    The batched path covers the built-in scores of the t-test without the expert, ranks
    or annotator weights (ranks depend on the subset, weights are checked against each
    subset's annotators) and without labels' majority vote under IPW (its tie rule
    follows the order the labels appear in); annotations a subset might not hold, such as
    an unreadable one, go through the per-resample path, which raises where
    :func:`alt_test` raises.
    """
    if (
        opts.scoring not in ("neg_rmse", "accuracy")
        or opts.test != "ttest"
        or opts.expert is not None
        or opts.ranks
        or opts.weights is not None
        or (opts.ipw and opts.scoring == "accuracy")
        or not all(isinstance(anns, Mapping) for anns in humans.values())
    ):
        return None
    try:
        data = _collect(humans, llm, opts)
    except (TypeError, ValueError):
        return None
    order = np.argsort(data.item, kind="stable")
    item = data.item[order]
    start = np.searchsorted(item, np.arange(data.llm.size + 1))
    return _Pool(
        item, data.annotator[order], data.value[order], start, data.llm, len(data.annotators)
    )


def _select(pool: _Pool, resamples: Sequence[_Resample], k: int) -> tuple[np.ndarray, ...]:
    """The annotations of every resample, concatenated: their positions in the pool,
    their resample and their annotator's position among the resample's annotators."""
    n = len(resamples)
    everyone, everything = np.arange(pool.n_annotators), np.arange(pool.llm.size)
    chosen = np.stack([everyone if r is None else r[0] for r in resamples])
    picked = [everything if r is None else r[1] for r in resamples]
    member = np.zeros((n, pool.n_annotators), dtype=bool)
    member[np.arange(n)[:, None], chosen] = True
    local = np.cumsum(member, axis=1) - 1
    items = np.concatenate(picked)
    # Each picked item's run of annotations in the pool, laid end to end.
    first, count = pool.start[items], pool.start[items + 1] - pool.start[items]
    ends = np.cumsum(count)
    at = np.repeat(first - (ends - count), count) + np.arange(ends[-1] if ends.size else 0)
    which = np.repeat(np.repeat(np.arange(n), [p.size for p in picked]), count)
    keep = member[which, pool.annot[at]]
    at, which = at[keep], which[keep]
    return at, which, local[which, pool.annot[at]]


def _batched(
    humans: Mapping[Hashable, Any],
    llm: Mapping[Hashable, Any],
    resamples: Sequence[_Resample],
    opts: list[_Options],
) -> tuple[np.ndarray, np.ndarray] | None:
    """The winning rates (resamples x epsilons) and advantage probabilities of every
    resample, computed together; None where :func:`_pool` declines the options."""
    first = opts[0]
    pool = _pool(humans, llm, first)
    if pool is None:
        return None
    n = len(resamples)
    k = pool.n_annotators if resamples[0] is None else resamples[0][0].size
    at, which, local = _select(pool, resamples, k)
    # An item is kept where the LLM scored it and enough of the resample's annotators did.
    key = which * pool.llm.size + pool.item[at]
    runs = np.cumsum(_run_starts(key)) - 1
    kept = (np.bincount(runs)[runs] >= first.min_humans_per_item) & ~np.isnan(
        pool.llm[pool.item[at]]
    )
    at, which, local, key = at[kept], which[kept], local[kept], key[kept]
    # Pairs never cross resamples: the key holds the resample.
    a, b = _pairs(key)
    value = pool.value[at]
    ref_value, ref_weight = value[b], np.ones(b.size)
    llm_value = pool.llm[pool.item[at]]
    own, llm_score = _score_pairs(first, a, ref_value, ref_weight, value, llm_value, None)
    if np.isnan(own).any() or np.isnan(llm_score).any():
        return None  # nan_scores' error or warning: the per-resample path gives it
    w_f, w_h = _indicators(llm_score, own)
    bins = which * k + local
    n_items = np.bincount(bins, minlength=n * k)
    tested = (n_items >= first.min_items_per_human).reshape(n, k)
    pi = None
    if first.ipw:
        pi = _ipw_weights(bins, _mode_per_group(a, ref_value, ref_weight, value.size), n_items)
    epsilons = np.array([o.epsilon for o in opts])[:, None]
    _, p_value, rho_f, _ = _t_tests(w_f, w_h, bins, n * k, epsilons, pi)
    p_value = np.where(tested.ravel(), p_value, np.nan).reshape(len(opts), n, k)
    n_tested = tested.sum(axis=1)
    live = n_tested > 0
    # One family per (resample, epsilon): the rows of one BY call.
    rows = p_value.transpose(1, 0, 2)[live]
    rejected = _by_rejections(rows.reshape(-1, k), first.q).reshape(rows.shape)
    winning_rate = np.full((n, len(opts)), np.nan)
    # Sums of ones and zeros: exact, so the order of the additions cannot matter.
    wins = (rejected & tested[live][:, None, :]).sum(axis=2)
    winning_rate[live] = wins / n_tested[live][:, None]
    advantage = np.full(n, np.nan)
    rho_f = rho_f.reshape(n, k)
    for size in np.unique(n_tested[live]):
        # Rows of equal length: each row's mean is the 1-D mean of that row.
        same = live & (n_tested == size)
        advantage[same] = rho_f[same][tested[same]].reshape(-1, size).mean(axis=1)
    return winning_rate, advantage


def _tested_at(humans: Mapping, llm: Mapping, opts: list[_Options]) -> list[_Tested]:
    """The per-annotator tests of one resample at each epsilon, scoring the items once:
    the leave-one-out scores and indicators do not depend on epsilon, only the tests do."""
    indicators = _indicators_of(humans, llm, opts[0])
    return [_tested(indicators, o) for o in opts]


def _per_resample(
    humans: Mapping[Hashable, Any],
    llm: Mapping[Hashable, Any],
    items: list[Hashable],
    resamples: Sequence[_Resample],
    opts: list[_Options],
    threshold: Any,
) -> _CurveRates:
    """:func:`_resample_rates` one resample at a time, for any options.

    The t-test's Benjamini-Yekutieli correction is one family per part, so the rows of
    every resample go to scipy in one call (one call per row length): its input checks
    cost about 20 times the arithmetic on a handful of p-values.
    """
    names = list(humans)
    scores = [llm[i] for i in items]
    # Per annotator, where each of the LLM's items stands among the annotator's own (-1:
    # not annotated), so a draw picks an annotator's items with numpy instead of looking
    # up each drawn item, and still lists them in the annotator's order.
    position: dict[Hashable, tuple[np.ndarray, list, list]] = {}

    def annotated(h: Hashable) -> tuple[np.ndarray, list, list]:
        if h not in position:
            where = {i: p for p, i in enumerate(humans[h].keys())}
            rank = np.fromiter((where.get(i, -1) for i in items), dtype=np.int64, count=len(items))
            position[h] = (rank, list(humans[h].keys()), list(humans[h].values()))
        return position[h]

    def subset(resample: _Resample) -> tuple[Mapping, Mapping]:
        if resample is None:
            return humans, llm
        picked = resample[1].tolist()
        sub = {}
        for j in resample[0].tolist():
            rank, keys, values = annotated(names[j])
            ranks = rank[picked]
            mine = np.sort(ranks[ranks >= 0]).tolist()
            sub[names[j]] = {keys[p]: values[p] for p in mine}
        return sub, {items[j]: scores[j] for j in picked}

    parts = [_tested_at(*subset(r), opts) for r in resamples]
    threshold = _check_threshold(threshold)
    live = {
        (r, e): part
        for r, tested in enumerate(parts)
        for e, part in enumerate(tested)
        if part.tested.any()
    }
    rejected: dict[tuple[int, int], np.ndarray] = {}
    if opts[0].test == "ttest":
        by_size: dict[int, list[tuple[int, int]]] = {}
        for key, part in live.items():
            by_size.setdefault(part.p_value.size, []).append(key)
        for keys in by_size.values():
            rows = np.stack([live[key].p_value for key in keys])
            rejected.update(zip(keys, _by_rejections(rows, opts[0].q), strict=True))
    else:
        for (r, e), part in live.items():
            rejected[r, e] = _decide([part], opts[e])[0][0]
    winning_rate = np.full((len(resamples), len(opts)), np.nan)
    advantage = np.full(len(resamples), np.nan)
    for (r, e), part in live.items():
        # Only the rates enter a curve's point: not the per-annotator rows of a result.
        winning_rate[r, e], advantage[r] = _rates(part, rejected[r, e])
    return _CurveRates(winning_rate, advantage, winning_rate >= threshold)
