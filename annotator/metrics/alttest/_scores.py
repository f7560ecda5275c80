r"""The arithmetic of the alt-test: alignment scores, winning indicators, t-tests, BY.

Pure array functions that the core (:mod:`._core`) applies to the annotations of all its
resamples at once. Every leave-one-out alignment score is a sum over ordered pairs of
annotations of the same item (``sum_i c_i (c_i - 1)`` pairs for ``c_i`` annotators of item
``i``), added with ``numpy.bincount`` in the order in which the reference implementation
of Calderon, Reichart and Dror (2025) adds them, so that ties are decided identically.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special, stats

from .._validation import counted
from ..notes import degenerate
from ._inputs import _Annotations, _Options


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
    starts = np.flatnonzero(_run_starts(item))
    sizes = np.diff(np.append(starts, n))
    size_of = np.repeat(sizes, sizes)  # per annotation, its item's number of annotations
    a = np.repeat(np.arange(n), size_of)
    # Partner k of annotation a: the k-th annotation of a's item, at pair number
    # (a's first pair) + k.
    shift = np.repeat(starts, sizes) - (np.cumsum(size_of) - size_of)
    partner = np.arange(a.size) + np.repeat(shift, size_of)
    keep = partner != a
    return a[keep], partner[keep]


def _ranks(
    data: _Annotations,
    items: np.ndarray,
    item_resample: np.ndarray,
    ok: np.ndarray,
    slot: np.ndarray,
    value: np.ndarray,
    group: np.ndarray,
    n_kept: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """FAQ, testing on ranks: the LLM (and the expert) rank a resample's ``N`` kept items,
    each annotator their own ``n_j``, stretched to the same range,
    ``(r - 0.5) * N / n_j + 0.5``, so that annotators who rated fewer items stay
    comparable (a group of ``N`` keeps its ranks exactly). ``group``: the annotation's
    (resample, annotator)."""
    which = item_resample[slot]
    size = np.bincount(group)[group]
    ranked = (_mid_ranks(value, group) - 0.5) * (n_kept[which] / size) + 0.5
    kept = np.flatnonzero(ok)
    where = np.full(items.size, -1)
    where[kept] = np.arange(kept.size)

    def rank_items(values: np.ndarray) -> np.ndarray:
        return _mid_ranks(values[items[kept]], item_resample[kept])[where[slot]]

    expert = rank_items(data.expert) if data.expert is not None else None
    return ranked, rank_items(data.llm), expert


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
    ref_weight: np.ndarray | None,
    value: np.ndarray,
    llm_value: np.ndarray,
    raw: tuple[list[Any], list[Any], list[Any]] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Alignment scores of each annotation and of the LLM against their reference sets.

    Pair ``p`` says that annotation ``a[p]`` has the reference annotation
    ``ref_value[p]`` (weight ``ref_weight[p]``; None: no annotator weights); ``raw`` holds the original objects
    (annotations, LLM prediction per annotation, references per pair) for a callable.
    """
    n = value.size
    if opts.scoring in ("neg_rmse", "accuracy"):
        if opts.scoring == "neg_rmse":
            # The operations of -sqrt(mean((x - r) ** 2)) in the reference, in the same
            # order, so that equal scores stay equal and ties are decided identically.
            own_terms, llm_terms = (value[a] - ref_value) ** 2, (llm_value[a] - ref_value) ** 2
        else:
            own_terms, llm_terms = value[a] == ref_value, llm_value[a] == ref_value
        if opts.weights is None:
            # Unit weights: a count for the total, and the terms as they are (exactly what
            # the products with 1.0 and their sums give).
            total = np.bincount(a, minlength=n)
        else:
            total = np.bincount(a, weights=ref_weight, minlength=n)
            own_terms, llm_terms = ref_weight * own_terms, ref_weight * llm_terms
        own = np.bincount(a, weights=own_terms, minlength=n)
        llm = np.bincount(a, weights=llm_terms, minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            if opts.scoring == "neg_rmse":
                return -np.sqrt(own / total), -np.sqrt(llm / total)
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


def _nan_scores(opts: _Options, names: list[Any], annotator: Any) -> None:
    """Raise for NaN alignment scores, or (``nan_scores="omit"``) warn that they are dropped.

    ``names`` are the items with a NaN score, ``annotator`` the one of the first.
    """
    if opts.nan_scores == "raise":
        raise ValueError(
            f"scoring returned NaN on {counted(len(names), 'kept item')}, first item "
            f"{names[0]!r} (annotator {annotator!r}); a NaN score cannot be "
            "compared, so fix the scoring function, or pass nan_scores='omit' to leave such "
            "items out of the test with a warning"
        )
    degenerate(
        f"scoring returned NaN on {counted(len(names), 'kept item')}, left out of the alt-test: "
        f"{names[:5]!r}{' ...' if len(names) > 5 else ''}",
        stacklevel=5,
    )


def _mid_ranks(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Mid-ranks (1 for the lowest, ties averaged) of ``values`` within each group.

    The ranks of ``scipy.stats.rankdata(method="average")`` applied to each group on its
    own: half-integers, so exact, for every group in one sort.
    """
    order = np.lexsort((values, groups))
    g, v = groups[order], values[order]
    group_start = np.flatnonzero(_run_starts(g))
    first = np.repeat(group_start, np.diff(np.append(group_start, g.size)))
    tie_start = np.flatnonzero(_run_starts(g, v))
    tie_size = np.diff(np.append(tie_start, g.size))
    low = np.repeat(tie_start, tie_size) - first  # tie run's first position in its group
    ranks = np.empty(values.size)
    ranks[order] = 0.5 * (2 * low + np.repeat(tie_size, tie_size) + 1)
    return ranks


def _t_tests(
    w_f: np.ndarray,
    w_h: np.ndarray,
    annot: np.ndarray,
    m: int,
    epsilon: float | np.ndarray,
    pi: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One-sided t-tests of mean(W_h - W_f) < epsilon for all annotators at once.

    Unweighted, this is ``scipy.stats.ttest_1samp(d, epsilon, alternative="less")``
    per annotator, zero variance included (t = -inf, +inf or NaN as in scipy), in
    closed form. Weighted (IPW), the paper's weighted mean, weighted standard deviation
    and effective sample size, with ``n_eff - 1`` degrees of freedom.

    ``epsilon`` may be a column of margins, shape (e, 1): the statistic and p-value
    then have a row per margin, each as the call with that margin alone gives it (the
    alt-test curves test every resample at every epsilon).
    """
    d = w_h - w_f
    weight = np.ones_like(d) if pi is None else pi
    n_items = np.bincount(annot, minlength=m)
    sum_w = np.bincount(annot, weights=weight, minlength=m)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho_f = np.bincount(annot, weights=weight * w_f, minlength=m) / sum_w
        rho_h = np.bincount(annot, weights=weight * w_h, minlength=m) / sum_w
        mean_d = np.bincount(annot, weights=weight * d, minlength=m) / sum_w
        ss = np.bincount(annot, weights=weight * (d - mean_d[annot]) ** 2, minlength=m)
        if pi is None:
            sd = np.sqrt(ss / (n_items - 1))
            n_eff = n_items.astype(float)
        else:
            sd = np.sqrt(ss / sum_w)
            n_eff = sum_w**2 / np.bincount(annot, weights=pi * pi, minlength=m)
        t_stat = (mean_d - epsilon) / (sd / np.sqrt(n_eff))
        df = n_eff - 1.0
        p_value = np.where(df > 0, special.stdtr(np.where(df > 0, df, 1.0), t_stat), np.nan)
    return t_stat, p_value, rho_f, rho_h


def _by_rejections(p_values: np.ndarray, q: float) -> np.ndarray:
    """Benjamini-Yekutieli rejections along the last axis (one family per row).

    A NaN p-value counts in m but is never rejected. The alt-test curves pass a
    2-D array, one row per epsilon, so that scipy runs once per resample rather
    than once per epsilon: its input checks cost about 20 times the arithmetic on
    a handful of p-values.
    """
    p_values = np.asarray(p_values, dtype=float)
    if p_values.shape[-1] == 0:
        return np.zeros(p_values.shape, dtype=bool)
    finite = ~np.isnan(p_values)
    if not np.any(p_values[finite] <= q):
        # BY-adjusted p-values are never below the raw ones: nothing can be rejected.
        return np.zeros(p_values.shape, dtype=bool)
    # A NaN sorts last in the reference and fails every comparison: the same as p = 1.
    adjusted = stats.false_discovery_control(np.where(finite, p_values, 1.0), method="by", axis=-1)
    return finite & (adjusted <= q)


def _tested_rejections(p_value: np.ndarray, tested: np.ndarray, q: float) -> np.ndarray:
    """Benjamini-Yekutieli per row (family) over its tested annotators alone.

    Rows with as many tested annotators go to scipy together (one call per count).
    """
    counts = tested.sum(axis=1)
    if np.all(counts == p_value.shape[1]):
        # Everyone tested. One family goes 1-D: scipy's 2-D path costs more than it.
        rows = p_value[0] if p_value.shape[0] == 1 else p_value
        return _by_rejections(rows, q).reshape(p_value.shape)
    out = np.zeros(p_value.shape, dtype=bool)
    for count in np.unique(counts[counts > 0]).tolist():
        same = counts == count
        mask = tested[same]
        # Boolean indexing reads row by row: each row gives its ``count`` tested ones.
        family = p_value[same][mask].reshape(-1, count)
        family = family[0] if family.shape[0] == 1 else family
        part = np.zeros(mask.shape, dtype=bool)
        part[mask] = _by_rejections(family, q).ravel()
        out[same] = part
    return out
