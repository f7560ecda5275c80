"""Leave-one-out alignment scores and indicators of all annotators of one domain at once."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._betting import betting_log_capital
from ._inference import _t_tests
from ._inputs import _annotator_weights, _collect, _group_ranks, _Options, _Tested


def _run_starts(*keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the first element of each run of equal keys (sorted input)."""
    n = keys[0].size
    new = np.ones(n, dtype=bool)
    if n > 1:
        new[1:] = keys[0][1:] != keys[0][:-1]
        for key in keys[1:]:
            new[1:] |= key[1:] != key[:-1]
    return new


def _pairs(item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs (a, b), a != b, of annotations of the same item.

    ``item`` must be sorted; the partners of each ``a`` come out in annotation order,
    the order in which the reference implementation lists an item's annotators.
    """
    n = item.size
    if n == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    new = _run_starts(item)
    block = np.cumsum(new) - 1
    size_of = np.bincount(block)[block]
    first_of = np.flatnonzero(new)[block]
    a = np.repeat(np.arange(n), size_of)
    # Partner k of annotation a: the k-th annotation of a's item.
    local = np.arange(a.size) - np.repeat(np.cumsum(size_of) - size_of, size_of)
    partner = np.repeat(first_of, size_of) + local
    keep = partner != a
    return a[keep], partner[keep]


def _mode_per_group(
    group: np.ndarray, label: np.ndarray, weight: np.ndarray, n_groups: int
) -> np.ndarray:
    """Most frequent label per group (weighted), ties to the smallest label."""
    order = np.lexsort((label, group))
    g, lab, w = group[order], label[order], weight[order]
    new = _run_starts(g, lab)
    run = np.cumsum(new) - 1
    run_weight = np.bincount(run, weights=w)
    run_group = g[new]
    run_label = lab[new]
    # Heaviest run first, then smallest label: the first run of each group wins.
    pick = np.lexsort((run_label, -run_weight, run_group))
    first = _run_starts(run_group[pick])
    out = np.full(n_groups, np.nan)
    out[run_group[pick][first]] = run_label[pick][first]
    return out


def _score_pairs(
    opts: _Options,
    a: np.ndarray,
    ref_value: np.ndarray,
    ref_weight: np.ndarray,
    value: np.ndarray,
    llm_value: np.ndarray,
    raw: tuple[list[Any], list[Any], list[Any]] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Alignment scores of each annotation and of the LLM against their reference sets.

    Pair ``p`` says that annotation ``a[p]`` has the reference annotation
    ``ref_value[p]`` (weight ``ref_weight[p]``); ``raw`` holds the original objects
    (annotations, LLM prediction per annotation, references per pair) for a callable.
    """
    n = value.size
    if opts.scoring == "neg_rmse":
        # The operations of -sqrt(mean((x - r) ** 2)) in the reference, in the same
        # order, so that equal scores stay equal and ties are decided identically.
        total = np.bincount(a, weights=ref_weight, minlength=n)
        own = np.bincount(a, weights=ref_weight * (value[a] - ref_value) ** 2, minlength=n)
        llm = np.bincount(a, weights=ref_weight * (llm_value[a] - ref_value) ** 2, minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            return -np.sqrt(own / total), -np.sqrt(llm / total)
    if opts.scoring == "accuracy":
        total = np.bincount(a, weights=ref_weight, minlength=n)
        own = np.bincount(a, weights=ref_weight * (value[a] == ref_value), minlength=n)
        llm = np.bincount(a, weights=ref_weight * (llm_value[a] == ref_value), minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            return own / total, llm / total
    # A callable cannot be vectorised: one call per annotation and side.
    fn = opts.scoring
    if raw is None:
        own_raw, llm_raw, ref_raw = list(value), list(llm_value), list(ref_value)
    else:
        own_raw, llm_raw, ref_raw = raw
    own_scores = np.full(n, np.nan)
    llm_scores = np.full(n, np.nan)
    starts = np.flatnonzero(_run_starts(a)) if a.size else a
    ends = np.append(starts[1:], a.size).astype(np.intp)
    for s, e in zip(starts, ends, strict=True):
        idx = a[s]
        refs = ref_raw[s:e]
        kwargs = {"weights": ref_weight[s:e]} if opts.weights is not None else {}
        own_scores[idx] = fn(own_raw[idx], refs, **kwargs)
        llm_scores[idx] = fn(llm_raw[idx], refs, **kwargs)
    return own_scores, llm_scores


@dataclass(frozen=True)
class _Indicators:
    """The winning indicators of one domain: what the t-test and the test by betting share."""

    data: Any
    weights: np.ndarray
    annot: np.ndarray
    w_f: np.ndarray
    w_h: np.ndarray
    gold: np.ndarray | None
    n_kept: int


def _domain_statistics(humans: Any, llm: Any, opts: _Options) -> _Tested:
    return _tested(_indicators_of(humans, llm, opts), opts)


def _indicators_of(humans: Any, llm: Any, opts: _Options) -> _Indicators:
    """Leave-one-out scores and indicators: independent of ``opts.test`` and
    ``opts.min_items_per_human``, so one computation serves both tests."""
    data = _collect(humans, llm, opts)
    m = len(data.annotators)
    weights = _annotator_weights(data.annotators, opts)

    # Kept items: the LLM annotated them, and enough humans (or the expert) did.
    kept_items = ~np.isnan(data.llm)
    if data.expert is not None:
        kept_items &= ~np.isnan(data.expert)
    else:
        humans_per_item = np.bincount(data.item, minlength=data.llm.size)
        kept_items &= humans_per_item >= opts.min_humans_per_item
    # Sorted by item, stably: within an item the annotators stay in the order of humans.
    sel = np.flatnonzero(kept_items[data.item])
    keys = data.item[sel]
    if data.llm.size < np.iinfo(np.uint16).max:
        keys = keys.astype(np.uint16)  # numpy radix-sorts 16-bit keys: several times faster
    sel = sel[np.argsort(keys, kind="stable")]
    item, annot, value = data.item[sel], data.annotator[sel], data.value[sel]
    llm_value = data.llm[item]
    expert_value = data.expert[item] if data.expert is not None else None
    raw_own = [data.raw[i] for i in sel] if data.raw is not None else None

    if opts.ranks:
        # The LLM (and the expert) rank all kept items; each annotator ranks their own
        # and is stretched to the same range so that the ranks stay comparable.
        kept = np.flatnonzero(kept_items)
        value = _group_ranks(value, annot, m, kept.size)
        ranked = np.full(data.llm.size, np.nan)
        ranked[kept] = stats.rankdata(data.llm[kept])
        llm_value = ranked[item]
        if expert_value is not None:
            ranked = np.full(data.llm.size, np.nan)
            ranked[kept] = stats.rankdata(data.expert[kept])
            expert_value = ranked[item]

    # Reference set of each annotation: the item's other annotators, or the expert.
    if expert_value is not None:
        a = np.arange(item.size)
        ref_value = expert_value
        ref_weight = np.ones(item.size)
        raw_ref = [data.raw_expert[i] for i in item] if raw_own is not None else None
    else:
        a, b = _pairs(item)
        ref_value = value[b]
        ref_weight = weights[annot[b]]
        raw_ref = [raw_own[i] for i in b] if raw_own is not None else None
    raw = None
    if raw_own is not None:
        raw = (raw_own, [data.raw_llm[i] for i in item], raw_ref)
    own, llm_score = _score_pairs(opts, a, ref_value, ref_weight, value, llm_value, raw)
    gold = None
    if opts.ipw:
        gold = (
            expert_value
            if expert_value is not None
            else _mode_per_group(a, ref_value, ref_weight, item.size)
        )
    n_dropped = 0
    bad = np.isnan(own) | np.isnan(llm_score)
    if bad.any():
        bad_items = np.unique(item[bad])
        _nan_scores(opts, data, bad_items, annot[np.argmax(bad)])
        n_dropped = bad_items.size
        keep = ~np.isin(item, bad_items)
        item, annot, own, llm_score = item[keep], annot[keep], own[keep], llm_score[keep]
        gold = gold[keep] if gold is not None else None
    w_f, w_h = _indicators(llm_score, own)
    return _Indicators(data, weights, annot, w_f, w_h, gold, int(kept_items.sum()) - n_dropped)


def _tested(ind: _Indicators, opts: _Options) -> _Tested:
    """The per-annotator tests of ``opts.test`` on the indicators."""
    data, weights, annot, w_f, w_h, gold = (
        ind.data,
        ind.weights,
        ind.annot,
        ind.w_f,
        ind.w_h,
        ind.gold,
    )
    m = len(data.annotators)
    n_items = np.bincount(annot, minlength=m)
    tested = n_items >= opts.min_items_per_human
    pi = _ipw_weights(annot, gold, n_items) if gold is not None else None
    t_stat, p_t, rho_f, rho_h = _t_tests(w_f, w_h, annot, m, opts.epsilon, pi)

    statistic = np.where(tested, t_stat, np.nan)
    p_value = np.where(tested, p_t, np.nan)
    tests: list[str | None] = [opts.test if t else None for t in tested]
    log_capital = None
    if opts.test == "betting":
        # Each annotator's items in the order of ``llm`` (the stable sort above): fixed
        # before seeing the data, as the supermartingale argument needs.
        x = (w_h - w_f + 1.0) / 2.0
        m0 = (1.0 + opts.epsilon) / 2.0
        log_capital = [
            betting_log_capital(x[annot == j], m0) if tested[j] else None for j in range(m)
        ]
    return _Tested(
        annotators=data.annotators,
        n_items=n_items,
        tested=tested,
        rho_f=rho_f,
        rho_h=rho_h,
        statistic=statistic,
        p_value=p_value,
        tests=tests,
        weights=weights,
        n_kept=ind.n_kept,
        log_capital=log_capital,
    )


def _ipw_weights(annot: np.ndarray, gold: np.ndarray, n_items: np.ndarray) -> np.ndarray:
    """Appendix C.1: pi_{y,j} = |I_j| / #{i in I_j : y_i = y} for each annotation."""
    order = np.lexsort((gold, annot))
    g_annot, g_gold = annot[order], gold[order]
    new = _run_starts(g_annot, g_gold)
    run = np.cumsum(new) - 1
    pi = np.empty(annot.size)
    pi[order] = n_items[g_annot] / np.bincount(run)[run]
    return pi


# Relative tolerance under which two alignment scores are a tie. Rounding: a score is a
# sum of at most a few hundred non-negative terms, a division and a square root, so two
# equal scores computed in different orders differ by < 1e-13 relative. Distinct scores:
# on a 0-100 scale in 0.01 steps, two different neg_rmse scores differ by > 5e-10
# relative. 1e-12 sits between the two with a margin of 100 on each side.
_TIE_RTOL = 1e-12


def _indicators(llm_score: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W_f = [S(f) >= S(h)], W_h = [S(h) >= S(f)], with scores within _TIE_RTOL tied.

    The reference implementation compares the floats exactly, so that a tie computed
    in two rounding orders (fractional scores and more than 7 other annotators per item,
    where numpy's sum switches to pairwise summation) is decided by rounding; here it
    counts for both sides, as the paper's definition (ties count for both) intends.
    """
    tie = np.abs(llm_score - own) <= _TIE_RTOL * np.maximum(np.abs(llm_score), np.abs(own))
    return ((llm_score > own) | tie).astype(float), ((own > llm_score) | tie).astype(float)


def _nan_scores(opts: _Options, data: Any, bad_items: np.ndarray, first_annot: int) -> None:
    """Raise for NaN alignment scores, or (``nan_scores="omit"``) warn that they are dropped."""
    names = [data.items[i] for i in bad_items[:5]]
    if opts.nan_scores == "raise":
        raise ValueError(
            f"scoring returned NaN on {bad_items.size} kept item(s), first item "
            f"{names[0]!r} (annotator {data.annotators[first_annot]!r}); a NaN score cannot be "
            "compared, so fix the scoring function, or pass nan_scores='omit' to leave such "
            "items out of the test with a warning"
        )
    warnings.warn(
        f"scoring returned NaN on {bad_items.size} kept item(s), left out of the alt-test: "
        f"{names!r}{' ...' if bad_items.size > 5 else ''}",
        RuntimeWarning,
        stacklevel=4,
    )
