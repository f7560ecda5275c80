r"""The one core of the alt-test: every resample and every option set at once.

:func:`alt_test` is a batch of one: the whole data, one set of options. The curves
(:func:`alt_test_curve`) are hundreds of subsets of one table at several epsilons, the
report's epsilon sweep one table at several epsilons, :func:`alt_test_pair` one table
under the t-test and the test by betting. All go through :func:`_statistics`, which
collects the annotations once, lays the annotations of every resample end to end and
bins every per-annotator sum by (resample, annotator): the leave-one-out alignment
scores, the winning indicators

.. math::

    W^f_{i,j} = \mathbf{1}\{S(f, x_i, j) \ge S(h_j, x_i, j)\}, \qquad
    W^h_{i,j} = \mathbf{1}\{S(h_j, x_i, j) \ge S(f, x_i, j)\},

the advantage probabilities :math:`\rho^f_j = \bar W^f_j`, and the one-sided t-tests of
:math:`H_{0j}: E[d_j] \ge \varepsilon`, :math:`d_{i,j} = W^h_{i,j} - W^f_{i,j}`,
:math:`t_j = (\bar d_j - \varepsilon) / (s_j / \sqrt{n_j})`, for every epsilon.
:func:`_decide` then runs the Benjamini-Yekutieli procedure (or e-BH for the test by
betting) once per (resample, option set), and :func:`_rates` gives the
winning rate :math:`\omega = \sum_j Q_j [H_{0j}\ \mathrm{rejected}] / \sum_j Q_j` and the
average advantage probability over the tested annotators (Calderon, Reichart and Dror,
2025, The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically Justify
Replacing Human Annotators with LLMs, section 3).

A resample's results equal, bit for bit, those of the same computation on its subset
alone: ``numpy.bincount`` adds each bin in input order, the concatenation keeps each
resample's annotations in the order its own call sorts them into (by item, then in the
order of ``humans``), and the rates reduce rows of equal length, as a 1-D call does.

The options run inside the core: annotator weights (in the sums and the winning rate),
inverse probability weighting, an expert mapping, ranks (mid-ranks per resample and
annotator, in one sort), a callable scoring (one call per annotation and side, which
nothing can batch) and the test by betting (each annotator's capital is a path over
their items in order, so one ``cumsum`` per tested annotator).

One fallback, :func:`_per_resample`, runs the core on each resample's subset as a batch
of one, where the annotations collected once could differ from a subset's: an expert
given as a key of ``humans`` (a resample may or may not draw it), labels that do not
sort under inverse probability weighting (the majority vote's tie rule then follows the
order the labels appear in, which depends on the subset), and annotations that cannot
all be read (a subset may not hold the unreadable one).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._betting import anytime_p_values, betting_log_capital, e_bh, stopped_e_values
from ._inputs import _Annotations, _annotator_weights, _collect, _Options
from ._scores import (
    _indicators,
    _ipw_weights,
    _mode_per_group,
    _nan_scores,
    _pairs,
    _ranks,
    _score_pairs,
    _t_tests,
    _tested_rejections,
)

#: A resample: the sorted positions of its annotators in ``humans`` and of its items in
#: ``llm``, or None for all annotators and all items.
_Resample = tuple[np.ndarray, np.ndarray] | None


@dataclass
class _Batch:
    """Per-annotator statistics of R resamples under E option sets, before the correction.

    Annotator slot ``(r, j)`` holds the annotator ``names[chosen[r, j]]``. ``statistic`` and ``p_value`` are the t-test's until :func:`_decide` replaces
    them by the e-values and anytime-valid p-values of the test by betting.
    """

    opts: list[_Options]
    names: list[Hashable]
    chosen: np.ndarray  # (R, k) int
    n_items: np.ndarray  # (R, k) int
    tested: np.ndarray  # (E, R, k) bool
    rho_f: np.ndarray  # (R, k)
    rho_h: np.ndarray  # (R, k)
    statistic: np.ndarray  # (E, R, k)
    p_value: np.ndarray  # (E, R, k)
    weights: np.ndarray  # (R, k)
    n_kept: np.ndarray  # (R,) int
    # test="betting": per option set, per resample, log K_t of each slot (None: untested).
    log_capital: dict[int, list[list[np.ndarray | None]]]
    # test="betting": each slot's x = (d + 1) / 2 in the order of ``llm`` (R * k runs),
    # for another betting strategy (alt_test_sequential).
    runs: list[np.ndarray] | None = None


def _statistics(
    humans: Any, llm: Any, resamples: Sequence[_Resample], opts: list[_Options]
) -> _Batch:
    """The per-annotator statistics of ``alt_test(subset, opts[e])`` for every resample
    and option set, raising what the first of those calls raises.

    The option sets may differ in ``epsilon``, ``test`` and ``min_items_per_human``
    (what acts after the winning indicators), not in the rest. A resample other than
    None indexes ``list(humans)`` and ``list(llm)``.
    """
    whole = all(r is None for r in resamples)
    data = _pool_data(humans, llm, opts[0], whole)
    if data is None:
        return _per_resample(humans, llm, resamples, opts)
    return _batched(data, resamples, opts)


def _pool_data(humans: Any, llm: Any, opts: _Options, whole: bool) -> _Annotations | None:
    """The annotations collected once, or None where a subset could differ from them."""
    if whole:
        return _collect(humans, llm, opts)
    expert = opts.expert
    if expert is not None and not (isinstance(expert, Mapping) or hasattr(expert, "to_dict")):
        return None
    try:
        data = _collect(humans, llm, opts)
    except (TypeError, ValueError):
        return None
    if opts.ipw and opts.scoring == "accuracy" and not data.sorted_codes:
        return None
    return data


def _select(
    data: _Annotations, resamples: Sequence[_Resample]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The annotations of every resample, laid end to end.

    Returns per annotation its position in ``data`` (sorted by resample, item, then
    annotator order), its bin ``resample * k + slot among the resample's k annotators``
    and its picked item's number; per picked item its item and resample; and the chosen
    annotators (R, k).
    """
    m, n_llm = len(data.annotators), data.llm.size
    # Sorted by item, stably: within an item the annotators stay in the order of humans.
    keys = data.item.astype(np.uint16) if n_llm < np.iinfo(np.uint16).max else data.item
    order = np.argsort(keys, kind="stable")  # numpy radix-sorts 16-bit keys: faster
    everyone, everything = np.arange(m), np.arange(n_llm)
    if len(resamples) == 1 and resamples[0] is None:
        # A batch of one on the whole data (alt_test): nothing to select.
        zero = np.zeros(n_llm, dtype=np.intp)
        return order, data.annotator[order], data.item[order], everything, zero, everyone[None]
    chosen = np.stack([everyone if r is None else r[0] for r in resamples])
    picked = [everything if r is None else r[1] for r in resamples]
    n, k = chosen.shape
    items = np.concatenate(picked)
    item_resample = np.repeat(np.arange(n), [p.size for p in picked])
    # Each annotation's key item * m + annotator increases along the sorted annotations;
    # the keys of every picked item and chosen annotator, looked up there, find the
    # resamples' annotations in the same order (by item, then annotator).
    known = data.item[order] * m + data.annotator[order]
    wanted = ((items * m)[:, None] + chosen[item_resample]).ravel()
    at = np.searchsorted(known, wanted)
    found = known[np.minimum(at, known.size - 1)] == wanted if known.size else at < 0
    slot = np.repeat(np.arange(items.size), k)[found]
    bins = (item_resample[:, None] * k + np.arange(k)).ravel()[found]
    return order[at[found]], bins, slot, items, item_resample, chosen


def _batched(data: _Annotations, resamples: Sequence[_Resample], opts: list[_Options]) -> _Batch:
    """:func:`_statistics` with the annotations collected once."""
    first = opts[0]
    n = len(resamples)
    at, bins, slot, items, item_resample, chosen = _select(data, resamples)
    k = chosen.shape[1]
    weights = np.ones((n, k))
    if first.weights is not None:
        # Checked against each resample's annotators, as its own call checks them.
        for r in range(n):
            weights[r] = _annotator_weights([data.annotators[j] for j in chosen[r]], first)
    # Kept items: the LLM annotated them, and enough of the resample's humans (or the
    # expert) did.
    ok = ~np.isnan(data.llm[items])
    if data.expert is not None:
        ok &= ~np.isnan(data.expert[items])
    else:
        ok &= np.bincount(slot, minlength=items.size) >= first.min_humans_per_item
    n_kept = np.bincount(item_resample[ok], minlength=n)
    keep = ok[slot]
    at, bins, slot = at[keep], bins[keep], slot[keep]
    value = data.value[at]
    llm_value = data.llm[items[slot]]
    expert_value = data.expert[items[slot]] if data.expert is not None else None
    if first.ranks:
        value, llm_value, expert_value = _ranks(
            data, items, item_resample, ok, slot, value, bins, n_kept
        )
    # Reference set of each annotation: the item's other annotators, or the expert.
    if expert_value is not None:
        a = np.arange(slot.size)
        ref_value, ref_weight = expert_value, np.ones(slot.size)
        b = None
    else:
        a, b = _pairs(slot)  # pairs never cross resamples: a slot is one resample's item
        ref_value = value[b]
        # Without annotator weights the scores need none (None); the majority vote does.
        ref_weight = None if first.weights is None else weights.ravel()[bins[b]]
    raw = None
    if data.raw is not None:
        own_raw = [data.raw[i] for i in at]
        raw_ref = (
            [data.raw_expert[i] for i in items[slot]]
            if expert_value is not None
            else [own_raw[i] for i in b]
        )
        raw = (own_raw, [data.raw_llm[i] for i in items[slot]], raw_ref)
    own, llm_score = _score_pairs(first, a, ref_value, ref_weight, value, llm_value, raw)
    gold = None
    if first.ipw:
        gold = (
            expert_value
            if expert_value is not None
            else _mode_per_group(
                a, ref_value, np.ones(a.size) if ref_weight is None else ref_weight, value.size
            )
        )
    bad = np.isnan(own) | np.isnan(llm_score)
    if bad.any():
        # Per resample, in order: the first raises (nan_scores="raise") or each warns.
        which = item_resample[slot]
        for r in np.unique(which[bad]).tolist():
            mine = bad & (which == r)
            bad_items = np.unique(items[slot[mine]])
            _nan_scores(
                first,
                [data.items[i] for i in bad_items],
                data.annotators[chosen.ravel()[bins[np.argmax(mine)]]],
            )
            n_kept[r] -= bad_items.size
        drop = np.isin(slot, np.unique(slot[bad]))
        bins, own, llm_score = bins[~drop], own[~drop], llm_score[~drop]
        gold = gold[~drop] if gold is not None else None
    w_f, w_h = _indicators(llm_score, own)
    return _tests(opts, data.annotators, chosen, bins, w_f, w_h, gold, weights, n_kept)


def _tests(
    opts: list[_Options],
    names: list[Hashable],
    chosen: np.ndarray,
    bins: np.ndarray,
    w_f: np.ndarray,
    w_h: np.ndarray,
    gold: np.ndarray | None,
    weights: np.ndarray,
    n_kept: np.ndarray,
) -> _Batch:
    """The per-annotator tests of every option set on the winning indicators."""
    n, k = chosen.shape
    n_items = np.bincount(bins, minlength=n * k)
    pi = _ipw_weights(bins, gold, n_items) if gold is not None else None
    epsilons = np.array([o.epsilon for o in opts])[:, None]
    t_stat, p_t, rho_f, rho_h = _t_tests(w_f, w_h, bins, n * k, epsilons, pi)
    tested = n_items >= np.array([o.min_items_per_human for o in opts])[:, None]
    log_capital: dict[int, list[list[np.ndarray | None]]] = {}
    runs = None
    if any(o.test == "betting" for o in opts):
        # Each annotator's items in the order of ``llm``: fixed before seeing the data, as
        # the supermartingale argument needs.
        x = (w_h - w_f + 1.0) / 2.0
        runs = np.split(x[np.argsort(bins, kind="stable")], np.cumsum(n_items)[:-1])
        for e, o in enumerate(opts):
            if o.test == "betting":
                m0 = (1.0 + o.epsilon) / 2.0
                paths = [
                    betting_log_capital(x, m0) if t else None
                    for x, t in zip(runs, tested[e], strict=True)
                ]
                log_capital[e] = [paths[r * k : (r + 1) * k] for r in range(n)]
    shape = (len(opts), n, k)
    return _Batch(
        opts=opts,
        names=names,
        chosen=chosen,
        n_items=n_items.reshape(n, k),
        tested=tested.reshape(shape),
        rho_f=rho_f.reshape(n, k),
        rho_h=rho_h.reshape(n, k),
        statistic=np.where(tested, t_stat, np.nan).reshape(shape),
        p_value=np.where(tested, p_t, np.nan).reshape(shape),
        weights=weights,
        n_kept=n_kept,
        log_capital=log_capital,
        runs=runs,
    )


def _per_resample(
    humans: Mapping[Hashable, Any],
    llm: Mapping[Hashable, Any],
    resamples: Sequence[_Resample],
    opts: list[_Options],
) -> _Batch:
    """The fallback: the core on each resample's subset as a batch of one, merged."""
    names, items = list(humans), list(llm)
    scores = list(llm.values())
    # Per annotator, where each of the LLM's items stands among the annotator's own (-1:
    # not annotated), so a draw picks an annotator's items with numpy and still lists
    # them in the annotator's order.
    position: dict[Hashable, tuple[np.ndarray, list, list]] = {}

    def annotated(h: Hashable) -> tuple[np.ndarray, list, list]:
        if h not in position:
            where = {i: p for p, i in enumerate(humans[h].keys())}
            rank = np.fromiter((where.get(i, -1) for i in items), dtype=np.int64, count=len(items))
            position[h] = (rank, list(humans[h].keys()), list(humans[h].values()))
        return position[h]

    def subset(resample: _Resample) -> tuple[Mapping, Mapping]:
        picked = resample[1].tolist()
        sub = {}
        for j in resample[0].tolist():
            rank, keys, values = annotated(names[j])
            ranks = rank[picked]
            sub[names[j]] = {keys[p]: values[p] for p in np.sort(ranks[ranks >= 0]).tolist()}
        return sub, {items[j]: scores[j] for j in picked}

    parts = [
        _batched(_collect(humans, llm, opts[0]), [None], opts)
        if r is None
        else _batched(_collect(*subset(r), opts[0]), [None], opts)
        for r in resamples
    ]
    # Merged into one batch. Every resample has as many annotators: those of a resample
    # that lacks an expert given as a key raise (it is neither a mapping nor a key).
    at = {h: j for j, h in enumerate(names)}

    def stacked(name: str, axis: int) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts], axis=axis)

    return _Batch(
        opts=opts,
        names=names,
        chosen=np.array([[at[p.names[j]] for j in p.chosen[0]] for p in parts]),
        n_items=stacked("n_items", 0),
        tested=stacked("tested", 1),
        rho_f=stacked("rho_f", 0),
        rho_h=stacked("rho_h", 0),
        statistic=stacked("statistic", 1),
        p_value=stacked("p_value", 1),
        weights=stacked("weights", 0),
        n_kept=stacked("n_kept", 0),
        log_capital={e: [p.log_capital[e][0] for p in parts] for e in parts[0].log_capital},
    )


def _decide(
    batches: list[_Batch],
    *,
    family_size: int | None = None,
    secure_at: Callable[[int, float], float] | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Rejections and secured flags (E, R, k) of each batch: one family per option set
    and resample, spanning the batches (the domains of :func:`alt_test_domains`).

    The t-test: Benjamini-Yekutieli on the p-values of the tested annotators. ``m``
    counts the tested annotators only, as the authors' reference code does (it skips an
    annotator below ``min_items_per_human`` before collecting the p-values); a tested
    annotator whose p-value is NaN (no variance) counts in ``m`` and is never rejected,
    as there.

    The test by betting: each capital stopped at ``m / q``, then e-BH; the statistic
    becomes the e-value and the p-value the anytime-valid one. Here ``m`` counts every
    annotator given, tested or not (e = 1 when not tested): a sequential family must be
    fixed before the data, and an annotator below the minimum now may be tested after
    more items, which would raise a threshold that had already been reached.
    ``family_size`` raises that ``m`` to annotators not given yet (raters who may still
    join a study, :func:`alt_test_sequential`). ``secure_at(m, q)``: the threshold at
    which a capital is stopped and its annotator secured, instead of ``m / q``.
    """
    opts = batches[0].opts
    bounds = np.cumsum([0, *[b.chosen.shape[1] for b in batches]])
    n, size = batches[0].chosen.shape[0], int(bounds[-1])
    rejected = np.zeros((len(opts), n, size), dtype=bool)
    secured = np.zeros_like(rejected)
    for e, o in enumerate(opts):
        if o.test == "betting":  # one e-BH per family: nothing to gain from batching
            for r in range(n):
                paths = [p for b in batches for p in b.log_capital[e][r]]
                m = max(len(paths), family_size or 0)
                threshold = m / o.q if secure_at is None else secure_at(m, o.q)
                e_values = stopped_e_values(paths, threshold)
                p_values = anytime_p_values(paths)
                rejected[e, r] = e_bh(e_values, o.q, m=m)
                secured[e, r] = e_values >= threshold
                for b, lo, hi in zip(batches, bounds[:-1], bounds[1:], strict=True):
                    b.statistic[e, r] = np.where(b.tested[e, r], e_values[lo:hi], np.nan)
                    b.p_value[e, r] = p_values[lo:hi]
    # The t-test's families of all option sets with the same q in one scipy call (its
    # input checks cost about 20 times the arithmetic on a handful of p-values).
    for q in {o.q for o in opts if o.test == "ttest"}:
        sets = [e for e, o in enumerate(opts) if o.test == "ttest" and o.q == q]
        sets = slice(None) if len(sets) == len(opts) else sets  # all: no copy
        parts = [b.p_value[sets] for b in batches]
        p_value = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=2)  # (E', R, K)
        tests = [b.tested[sets] for b in batches]
        tested = tests[0] if len(tests) == 1 else np.concatenate(tests, axis=2)
        rejected[sets] = _tested_rejections(
            p_value.reshape(-1, size), tested.reshape(-1, size), q
        ).reshape(p_value.shape)
    return [
        (rejected[..., lo:hi], secured[..., lo:hi])
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
    ]
