"""The alternative annotator test (alt-test) for LLM judges, vectorised.

The procedure is the one of Calderon, Reichart and Dror (ACL 2025), section 3, with the
edge behaviour of the authors' reference implementation (public repository
``nitaytech/AltTest``): an item is kept when at least ``min_humans_per_item`` humans
and the LLM annotated it; an annotator is tested only with at least
``min_items_per_human`` kept items; ties count as a win for both sides (``>=``); a
p-value that cannot be computed (NaN) is never a rejection.

Instead of looping over items, every annotation of a kept item is paired with the other
annotations of the same item (``sum_i c_i (c_i - 1)`` pairs for ``c_i`` annotators of
item ``i``), and the leave-one-out alignment scores are sums over those pairs
(``numpy.bincount``), added in the same order as the reference adds them, so that ties
are decided identically: bit for bit with integer scores, and with fractional scores up
to 7 other annotators per item (beyond that numpy's own sum in the reference switches to
pairwise summation). The one-sided t-tests of all annotators are evaluated at once, in
closed form.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any

import numpy as np
from scipy import special, stats

from ._validation import check_probability

__all__ = [
    "SCORINGS",
    "TESTS",
    "AltTestResult",
    "AnnotatorResult",
    "MultiDomainAltTestResult",
    "alt_test",
    "alt_test_domains",
]

SCORINGS = ("neg_rmse", "accuracy")
TESTS = ("ttest", "wilcoxon", "auto")

# The paper's FAQ: below 30 items the t-test's normality assumption is doubtful.
_AUTO_WILCOXON_BELOW = 30


@dataclass(frozen=True)
class AnnotatorResult:
    """One human annotator's comparison with the LLM.

    Attributes
    ----------
    annotator : hashable
        The annotator's key in ``humans``.
    n_items : int
        Kept items this annotator annotated (the sample size of the test).
    tested : bool
        False when ``n_items < min_items_per_human``: the annotator is skipped and
        counts neither in the winning rate nor in the advantage probability.
    rho_f, rho_h : float
        Advantage probabilities: share of items where the LLM (``rho_f``) or the
        annotator (``rho_h``) aligns with the other annotators at least as well as the
        other side (IPW-weighted shares with ``inverse_probability_weighting``).
    statistic : float
        The t statistic, or the Wilcoxon signed-rank statistic (sum of positive ranks).
    p_value : float
        One-sided p-value of H0: ``rho_h - rho_f >= epsilon``; NaN when it cannot be
        computed.
    rejected : bool
        Whether H0 is rejected by the Benjamini-Yekutieli procedure (the LLM wins).
    test : str or None
        ``"ttest"`` or ``"wilcoxon"``; None when not tested.
    weight : float
        The annotator's quality weight (1 unless ``annotator_weights`` is given).
    """

    annotator: Hashable
    n_items: int
    tested: bool
    rho_f: float
    rho_h: float
    statistic: float
    p_value: float
    rejected: bool
    test: str | None
    weight: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        """Return the row as plain Python types (JSON-ready; NaN becomes None)."""
        return {
            "annotator": self.annotator,
            "n_items": self.n_items,
            "tested": self.tested,
            "rho_f": _json_float(self.rho_f),
            "rho_h": _json_float(self.rho_h),
            "statistic": _json_float(self.statistic),
            "p_value": _json_float(self.p_value),
            "rejected": self.rejected,
            "test": self.test,
            "weight": self.weight,
        }


@dataclass(frozen=True)
class AltTestResult:
    """Outcome of the alt-test for one LLM.

    Attributes
    ----------
    winning_rate : float
        Share of tested annotators whose null hypothesis is rejected (weighted by the
        annotators' quality weights when given).
    advantage_probability : float
        Mean of ``rho_f`` over the tested annotators: the probability that the LLM is
        as good as or better than a randomly chosen annotator.
    passed : bool
        ``winning_rate >= 0.5``.
    annotators : tuple of AnnotatorResult
        One row per annotator, in the order of ``humans`` (skipped ones included).
    n_items : int
        Items kept for the test.
    n_tested : int
        Annotators tested.
    epsilon, q : float
        The cost-benefit margin and the target false discovery rate.
    scoring, test : str
        Names of the alignment scoring function and of the requested test.
    """

    winning_rate: float
    advantage_probability: float
    passed: bool
    annotators: tuple[AnnotatorResult, ...]
    n_items: int
    n_tested: int
    epsilon: float
    q: float
    scoring: str
    test: str

    def to_dict(self) -> dict[str, Any]:
        """Return the result as plain Python types (JSON-ready)."""
        return {
            "winning_rate": self.winning_rate,
            "advantage_probability": self.advantage_probability,
            "passed": self.passed,
            "n_items": self.n_items,
            "n_tested": self.n_tested,
            "epsilon": self.epsilon,
            "q": self.q,
            "scoring": self.scoring,
            "test": self.test,
            "annotators": [row.to_dict() for row in self.annotators],
        }


@dataclass(frozen=True)
class MultiDomainAltTestResult:
    """Alt-test over several domains with one Benjamini-Yekutieli correction.

    Attributes
    ----------
    domains : dict
        Domain name to its :class:`AltTestResult` (winning rate computed per domain).
    n_passed : int
        Domains the LLM passes: "the LLM passes the alt-test in ``n_passed`` out of
        ``n_domains`` domains".
    n_domains : int
        Number of domains.
    """

    domains: dict[str, AltTestResult] = field(default_factory=dict)
    n_passed: int = 0
    n_domains: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return the result as plain Python types (JSON-ready)."""
        return {
            "n_passed": self.n_passed,
            "n_domains": self.n_domains,
            "domains": {name: res.to_dict() for name, res in self.domains.items()},
        }


def _json_float(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


# --------------------------------------------------------------------------- inputs


@dataclass
class _Options:
    scoring: str | Callable[..., float]
    scoring_name: str
    epsilon: float
    q: float
    min_humans_per_item: int
    min_items_per_human: int
    test: str
    weights: Mapping[Hashable, float] | None
    ipw: bool
    expert: Hashable | Mapping[Hashable, Any] | None
    ranks: bool


@dataclass
class _Tested:
    """Per-annotator statistics of one domain, before the FDR correction."""

    annotators: list[Hashable]
    n_items: np.ndarray
    tested: np.ndarray
    rho_f: np.ndarray
    rho_h: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray
    tests: list[str | None]
    weights: np.ndarray
    n_kept: int


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _as_mapping(obj: Any, *, name: str) -> Mapping:
    # DataFrames and Series (for instance the matrix export) become nested dicts; their
    # NaN cells are then missing annotations.
    if hasattr(obj, "to_dict") and not isinstance(obj, Mapping):
        obj = obj.to_dict()
    if not isinstance(obj, Mapping):
        raise ValueError(f"{name} must be a mapping, got {type(obj).__name__}")
    return obj


def _check_options(
    *,
    scoring: Any,
    epsilon: Any,
    q: Any,
    min_humans_per_item: Any,
    min_items_per_human: Any,
    test: Any,
    annotator_weights: Any,
    inverse_probability_weighting: Any,
    expert: Any,
    ranks: Any,
) -> _Options:
    if callable(scoring):
        scoring_name = getattr(scoring, "__name__", "custom")
    elif scoring in SCORINGS:
        scoring_name = scoring
    else:
        raise ValueError(
            f"scoring must be one of {', '.join(SCORINGS)} or a callable, got {scoring!r}"
        )
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError) as exc:
        raise ValueError("epsilon must be a number in [0, 1]") from exc
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
    q = check_probability(q, name="q")
    for name, value, low in (
        ("min_humans_per_item", min_humans_per_item, 2),
        ("min_items_per_human", min_items_per_human, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if inverse_probability_weighting and test == "wilcoxon":
        raise ValueError(
            "inverse_probability_weighting uses the weighted t-test; it cannot be combined "
            "with test='wilcoxon'"
        )
    if ranks and scoring == "accuracy":
        raise ValueError("ranks=True needs a numeric scoring ('neg_rmse' or a callable)")
    if annotator_weights is not None:
        annotator_weights = _as_mapping(annotator_weights, name="annotator_weights")
    return _Options(
        scoring=scoring,
        scoring_name=scoring_name,
        epsilon=epsilon,
        q=q,
        min_humans_per_item=int(min_humans_per_item),
        min_items_per_human=int(min_items_per_human),
        test=test,
        weights=annotator_weights,
        ipw=bool(inverse_probability_weighting),
        expert=expert,
        ranks=bool(ranks),
    )


def _encode(values: list[Any], kind: str, codebook: dict[Any, int], *, name: str) -> np.ndarray:
    """Turn annotations into float64: numbers as such, labels as integer codes; NaN = missing."""
    if kind == "numeric":
        try:
            return np.array(values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must hold numbers for scoring='neg_rmse' (use scoring='accuracy' for "
                "labels)"
            ) from exc
    try:
        codes = [-1 if _is_missing(v) else codebook.setdefault(v, len(codebook)) for v in values]
    except TypeError as exc:
        raise ValueError(f"{name} must hold hashable labels for scoring='accuracy'") from exc
    arr = np.array(codes, dtype=float)
    arr[arr < 0] = np.nan
    return arr


@dataclass
class _Annotations:
    """The annotations of one domain, restricted to the items the LLM was asked about."""

    annotators: list[Hashable]
    llm: np.ndarray  # per LLM item: value, label code, or NaN when missing
    item: np.ndarray  # per human annotation: position of its item in ``llm``
    annotator: np.ndarray  # per human annotation: position of its annotator
    value: np.ndarray  # per human annotation: value or label code
    expert: np.ndarray | None  # per LLM item: the expert's value (single-expert mode)
    # The original objects, kept only for a callable scoring.
    raw: list[Any] | None = None
    raw_llm: list[Any] | None = None
    raw_expert: list[Any] | None = None


def _collect(humans: Any, llm: Any, opts: _Options) -> _Annotations:
    humans = _as_mapping(humans, name="humans")
    llm = _as_mapping(llm, name="llm")
    expert_key = None
    expert_map = None
    if opts.expert is not None:
        if isinstance(opts.expert, Mapping) or hasattr(opts.expert, "to_dict"):
            expert_map = _as_mapping(opts.expert, name="expert")
        elif opts.expert in humans:
            expert_key = opts.expert
            expert_map = _as_mapping(humans[expert_key], name=f"humans[{expert_key!r}]")
        else:
            raise ValueError(f"expert {opts.expert!r} is neither a mapping nor a key of humans")
    annotators = [h for h in humans if expert_key is None or h != expert_key]
    needed = 1 if expert_map is not None else 2
    if len(annotators) < needed:
        raise ValueError(
            f"humans must hold at least {needed} annotator(s) besides the expert, "
            f"got {len(annotators)}"
        )

    if opts.scoring == "neg_rmse" or (callable(opts.scoring) and opts.ranks):
        kind = "numeric"
    elif opts.scoring == "accuracy":
        kind = "label"
    else:
        kind = "object"
    codebook: dict[Any, int] = {}

    def encode(values: list[Any], name: str) -> np.ndarray:
        if kind == "object":
            return np.array([np.nan if _is_missing(v) else 0.0 for v in values], dtype=float)
        return _encode(values, kind, codebook, name=name)

    item_pos = dict(zip(llm, range(len(llm)), strict=True))
    maps = [_as_mapping(humans[h], name=f"humans[{h!r}]") for h in annotators]
    counts = [len(anns) for anns in maps]
    total = sum(counts)
    # One pass over all annotations; items the LLM did not annotate become -1 (dropped).
    item = np.fromiter(
        map(item_pos.get, chain.from_iterable(maps), repeat(-1)), dtype=np.intp, count=total
    )
    value = None
    if kind == "numeric":
        try:
            value = np.fromiter(
                chain.from_iterable(anns.values() for anns in maps), dtype=float, count=total
            )
        except (TypeError, ValueError):
            value = None  # a None or a label: the per-annotator path converts or names it
    if value is None:
        value = (
            np.concatenate(
                [
                    encode(list(anns.values()), f"humans[{h!r}]")
                    for h, anns in zip(annotators, maps, strict=True)
                ]
            )
            if total
            else np.zeros(0)
        )
    llm_values = list(llm.values())
    raw = [v for anns in maps for v in anns.values()] if kind == "object" else []
    annotator = np.repeat(np.arange(len(annotators)), counts)
    data = _Annotations(
        annotators=annotators,
        llm=encode(llm_values, "llm"),
        item=item,
        annotator=annotator,
        value=value,
        expert=None,
    )
    if expert_map is not None:
        expert_values = [expert_map.get(i) for i in llm]
        data.expert = encode(expert_values, "expert")
        if kind == "object":
            data.raw_expert = expert_values
    if kind == "numeric":
        for name, arr in (("humans", value), ("llm", data.llm), ("expert", data.expert)):
            if arr is not None and np.isinf(arr).any():
                raise ValueError(f"{name} holds an infinite annotation")
    if kind == "label" and codebook:
        _sort_codes(codebook, data, value)
    keep = (item >= 0) & ~np.isnan(value)
    data.item, data.annotator, data.value = item[keep], annotator[keep], value[keep]
    if kind == "object":
        data.raw = [raw[i] for i in np.flatnonzero(keep)]
        data.raw_llm = llm_values
    return data


def _sort_codes(codebook: dict[Any, int], data: _Annotations, value: np.ndarray) -> None:
    """Renumber label codes in the labels' sort order (in place), when labels sort.

    Codes are handed out in order of appearance; the majority-vote tie rule of the IPW
    variant ("the smallest label") needs them in label order.
    """
    try:
        ordered = sorted(codebook)
    except TypeError:
        return  # labels of mixed types: ties go to the label seen first
    remap = np.empty(len(codebook))
    remap[[codebook[label] for label in ordered]] = np.arange(len(ordered))
    for arr in (value, data.llm, data.expert):
        if arr is not None:
            ok = ~np.isnan(arr)
            arr[ok] = remap[arr[ok].astype(np.intp)]


def _annotator_weights(annotators: list[Hashable], opts: _Options) -> np.ndarray:
    if opts.weights is None:
        return np.ones(len(annotators))
    known = set(annotators)
    unknown = [h for h in opts.weights if h not in known]
    if unknown and opts.expert is None:
        raise ValueError(f"annotator_weights names unknown annotator(s): {unknown[:5]!r}")
    missing = [h for h in annotators if h not in opts.weights]
    if missing:
        raise ValueError(f"annotator_weights lacks annotator(s): {missing[:5]!r}")
    weights = np.array([opts.weights[h] for h in annotators], dtype=float)
    if not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise ValueError("annotator_weights must be positive finite numbers")
    return weights


def _group_ranks(values: np.ndarray, groups: np.ndarray, n_groups: int, size: int) -> np.ndarray:
    """Mid-ranks within each group, stretched to ``size`` ranks: (r - 0.5) * size / n + 0.5.

    A group of ``size`` values keeps its ranks exactly (the factor is 1.0), so on a
    crossed design these are the plain ranks and equal scores stay exactly tied.
    """
    out = np.empty_like(values)
    for g in range(n_groups):
        sel = groups == g
        n = int(sel.sum())
        if n:
            out[sel] = (stats.rankdata(values[sel]) - 0.5) * (size / n) + 0.5
    return out


# --------------------------------------------------------------------------- core


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


def _domain_statistics(humans: Any, llm: Any, opts: _Options) -> _Tested:
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
    # Ties count for both sides (>=); a NaN score wins for neither, as in the reference.
    w_f = (llm_score >= own).astype(float)
    w_h = (own >= llm_score).astype(float)

    n_items = np.bincount(annot, minlength=m)
    tested = n_items >= opts.min_items_per_human
    pi = _ipw_weights(a, annot, ref_value, ref_weight, expert_value, n_items) if opts.ipw else None
    t_stat, p_t, rho_f, rho_h = _t_tests(w_f, w_h, annot, m, opts.epsilon, pi)

    statistic = np.full(m, np.nan)
    p_value = np.full(m, np.nan)
    tests: list[str | None] = [None] * m
    d = w_h - w_f
    for j in np.flatnonzero(tested):
        use_wilcoxon = opts.test == "wilcoxon" or (
            opts.test == "auto" and not opts.ipw and n_items[j] < _AUTO_WILCOXON_BELOW
        )
        if use_wilcoxon:
            statistic[j], p_value[j] = _wilcoxon(d[annot == j], opts.epsilon)
            tests[j] = "wilcoxon"
        else:
            statistic[j], p_value[j] = t_stat[j], p_t[j]
            tests[j] = "ttest"
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
        n_kept=int(kept_items.sum()),
    )


def _ipw_weights(
    a: np.ndarray,
    annot: np.ndarray,
    ref_value: np.ndarray,
    ref_weight: np.ndarray,
    expert_value: np.ndarray | None,
    n_items: np.ndarray,
) -> np.ndarray:
    """Appendix C.1: pi_{y,j} = |I_j| / #{i in I_j : y_i = y} for each annotation."""
    n = annot.size
    gold = (
        expert_value if expert_value is not None else _mode_per_group(a, ref_value, ref_weight, n)
    )
    order = np.lexsort((gold, annot))
    g_annot, g_gold = annot[order], gold[order]
    new = _run_starts(g_annot, g_gold)
    run = np.cumsum(new) - 1
    pi = np.empty(n)
    pi[order] = n_items[g_annot] / np.bincount(run)[run]
    return pi


def _t_tests(
    w_f: np.ndarray,
    w_h: np.ndarray,
    annot: np.ndarray,
    m: int,
    epsilon: float,
    pi: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One-sided t-tests of mean(W_h - W_f) < epsilon for all annotators at once.

    Unweighted, this is ``scipy.stats.ttest_1samp(d, epsilon, alternative="less")``
    per annotator, zero variance included (t = -inf, +inf or NaN as in scipy), in
    closed form. Weighted (IPW), the paper's weighted mean, weighted standard deviation
    and effective sample size, with ``n_eff - 1`` degrees of freedom.
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


def _wilcoxon(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """One-sided Wilcoxon signed-rank test of median(d) < epsilon; NaN when impossible."""
    diff = d - epsilon
    if not np.any(diff != 0):
        return float("nan"), float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            res = stats.wilcoxon(diff, alternative="less")
        except ValueError:
            return float("nan"), float("nan")
    return float(res.statistic), float(res.pvalue)


def _by_rejections(p_values: np.ndarray, q: float) -> np.ndarray:
    """Benjamini-Yekutieli rejections; a NaN p-value counts in m but is never rejected."""
    if p_values.size == 0:
        return np.zeros(0, dtype=bool)
    finite = ~np.isnan(p_values)
    if not np.any(p_values[finite] <= q):
        # BY-adjusted p-values are never below the raw ones: nothing can be rejected.
        return np.zeros(p_values.size, dtype=bool)
    # A NaN sorts last in the reference and fails every comparison: the same as p = 1.
    adjusted = stats.false_discovery_control(np.where(finite, p_values, 1.0), method="by")
    return finite & (adjusted <= q)


def _assemble(part: _Tested, rejected: np.ndarray, opts: _Options) -> AltTestResult:
    tested = part.tested
    if not tested.any():
        raise ValueError(
            f"no annotator has at least min_items_per_human={opts.min_items_per_human} kept "
            f"items (items kept: {part.n_kept}); nothing to test"
        )
    w = part.weights[tested]
    winning_rate = float(np.sum(w * rejected[tested]) / np.sum(w))
    advantage = float(np.mean(part.rho_f[tested]))
    rows = tuple(
        AnnotatorResult(
            annotator=h,
            n_items=int(part.n_items[j]),
            tested=bool(part.tested[j]),
            rho_f=float(part.rho_f[j]),
            rho_h=float(part.rho_h[j]),
            statistic=float(part.statistic[j]),
            p_value=float(part.p_value[j]),
            rejected=bool(rejected[j]),
            test=part.tests[j],
            weight=float(part.weights[j]),
        )
        for j, h in enumerate(part.annotators)
    )
    return AltTestResult(
        winning_rate=winning_rate,
        advantage_probability=advantage,
        passed=winning_rate >= 0.5,
        annotators=rows,
        n_items=part.n_kept,
        n_tested=int(tested.sum()),
        epsilon=opts.epsilon,
        q=opts.q,
        scoring=opts.scoring_name,
        test=opts.test,
    )


# --------------------------------------------------------------------------- public

_DOC_PARAMETERS = """
    scoring : {"neg_rmse", "accuracy"} or callable, keyword-only
        Alignment score S of a prediction against the other annotators' annotations:
        negative root mean squared error (numeric annotations), share of equal labels,
        or ``scoring(prediction, annotations) -> float`` (called with ``weights=`` as
        well when ``annotator_weights`` is given).
    epsilon : float, keyword-only
        Cost-benefit margin in [0, 1]: 0.2 for experts, 0.15 for skilled annotators,
        0.1 for crowd-workers (paper, section 3.3 and Appendix B.1).
    q : float, keyword-only
        Target false discovery rate of the Benjamini-Yekutieli procedure.
    min_humans_per_item : int, keyword-only
        An item is kept when at least this many humans (>= 2) and the LLM annotated it.
    min_items_per_human : int, keyword-only
        An annotator is tested only with at least this many kept items.
    test : {"ttest", "wilcoxon", "auto"}, keyword-only
        One-sided one-sample t-test of ``d = W_h - W_f`` against ``epsilon``, the
        Wilcoxon signed-rank test of ``d - epsilon``, or Wilcoxon for annotators with
        fewer than 30 items and the t-test otherwise (paper, Appendix A).
    annotator_weights : mapping, optional, keyword-only
        Quality score ``Q_j > 0`` of every annotator (Appendix C.3): the alignment
        scores weight the other annotators by ``Q_k`` and the winning rate is
        ``sum_j Q_j [H0j rejected] / sum_j Q_j``.
    inverse_probability_weighting : bool, keyword-only
        Appendix C.1, for imbalanced labels: each item of annotator ``j`` is weighted by
        ``pi_{y,j} = |I_j| / #{i in I_j : y_i = y}``, where ``y_i`` is the majority label
        of the other annotators (ties: the smallest label) or the expert's label;
        ``rho`` are weighted means and the t statistic uses the weighted standard
        deviation and the effective sample size ``(sum pi)^2 / sum pi^2``, with
        ``n_eff - 1`` degrees of freedom (so ``test="auto"`` uses it for everyone).
    expert : hashable or mapping, optional, keyword-only
        Appendix C.2, a single expert as the reference: the key of the expert in
        ``humans`` (then not tested) or the expert's ``{item: annotation}``. Each
        annotator and the LLM are scored against the expert alone; items need the
        expert's and the LLM's annotation. With gold labels and ``epsilon=0`` this is
        the test of Appendix C.5 (does the LLM outperform humans).
    ranks : bool, keyword-only
        FAQ, testing on ranks: replace the LLM's (and the expert's) annotations of the
        ``N`` kept items by their mid-ranks (1 for the lowest score), and each
        annotator's by the mid-ranks of their ``n_j`` kept items stretched to the same
        range, ``(r - 0.5) * N / n_j + 0.5``, so that annotators who rated fewer items
        stay comparable. On a fully crossed design these are the plain ranks.
"""


def alt_test(
    *,
    humans: Mapping[Hashable, Mapping[Hashable, Any]],
    llm: Mapping[Hashable, Any],
    scoring: str | Callable[..., float] = "neg_rmse",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_humans_per_item: int = 2,
    min_items_per_human: int = 30,
    test: str = "ttest",
    annotator_weights: Mapping[Hashable, float] | None = None,
    inverse_probability_weighting: bool = False,
    expert: Hashable | Mapping[Hashable, Any] | None = None,
    ranks: bool = False,
) -> AltTestResult:
    r"""The alternative annotator test: may the LLM replace the human annotators?

    For each annotator :math:`h_j` and each item :math:`x_i` that :math:`h_j` annotated,
    the LLM :math:`f` and :math:`h_j` are scored against the other annotators
    :math:`H_i[-j]` of the item with :math:`S(\cdot, x_i, j)` and give the indicators

    .. math::

        W^f_{i,j} = \mathbf{1}\{S(f, x_i, j) \ge S(h_j, x_i, j)\}, \qquad
        W^h_{i,j} = \mathbf{1}\{S(h_j, x_i, j) \ge S(f, x_i, j)\}

    (ties count for both), the advantage probabilities
    :math:`\rho^f_j = \bar W^f_j`, :math:`\rho^h_j = \bar W^h_j`, and the test of
    :math:`H_{0j}: \rho^f_j \le \rho^h_j - \varepsilon` with
    :math:`t_j = (\bar d_j - \varepsilon) / (s_j / \sqrt{n_j})`,
    :math:`d_{i,j} = W^h_{i,j} - W^f_{i,j}`, one-sided (alternative: mean below
    :math:`\varepsilon`). The Benjamini-Yekutieli procedure at level ``q``
    (``scipy.stats.false_discovery_control(method="by")``) decides the rejections; the
    winning rate :math:`\omega` is the share of rejected hypotheses, the LLM passes when
    :math:`\omega \ge 0.5`, and the average advantage probability is
    :math:`\rho = \frac{1}{m}\sum_j \rho^f_j` (Calderon, Reichart and Dror 2025,
    section 3).

    Parameters
    ----------
    humans : mapping
        ``{annotator: {item: annotation}}`` (a DataFrame items x annotators works too,
        NaN for missing). ``None`` or NaN annotations count as missing.
    llm : mapping
        ``{item: annotation}`` of the LLM judge (or a Series).
    {parameters}
    Returns
    -------
    AltTestResult

    Raises
    ------
    ValueError
        On a malformed option or input, or when no annotator can be tested.

    References
    ----------
    Calderon, N., Reichart, R., and Dror, R. (2025). The Alternative Annotator Test for
    LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs.
    ACL 2025, pages 16051-16081. Reference implementation: github.com/nitaytech/AltTest.
    Benjamini, Y., and Yekutieli, D. (2001). The control of the false discovery rate in
    multiple testing under dependency. Annals of Statistics, 29(4), 1165-1188.

    Examples
    --------
    >>> from annotator.metrics import alt_test
    >>> humans = {"a": {1: 1, 2: 2, 3: 3}, "b": {1: 1, 2: 3, 3: 3}, "c": {1: 2, 2: 2, 3: 3}}
    >>> res = alt_test(humans=humans, llm={1: 1, 2: 2, 3: 3}, min_items_per_human=3)
    >>> round(res.advantage_probability, 2)
    1.0
    """
    opts = _check_options(
        scoring=scoring,
        epsilon=epsilon,
        q=q,
        min_humans_per_item=min_humans_per_item,
        min_items_per_human=min_items_per_human,
        test=test,
        annotator_weights=annotator_weights,
        inverse_probability_weighting=inverse_probability_weighting,
        expert=expert,
        ranks=ranks,
    )
    part = _domain_statistics(humans, llm, opts)
    return _assemble(part, _by_rejections(part.p_value, opts.q), opts)


def alt_test_domains(
    domains: Mapping[str, Mapping[str, Any]],
    *,
    scoring: str | Callable[..., float] = "neg_rmse",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_humans_per_item: int = 2,
    min_items_per_human: int = 30,
    test: str = "ttest",
    annotator_weights: Mapping[Hashable, float] | None = None,
    inverse_probability_weighting: bool = False,
    expert: Hashable | Mapping[Hashable, Any] | None = None,
    ranks: bool = False,
) -> MultiDomainAltTestResult:
    r"""The alt-test over several domains with one false-discovery correction.

    Each domain is tested on its own (its annotators compared with the LLM on its
    items), but the Benjamini-Yekutieli procedure runs once over the p-values of all
    annotators of all domains; the winning rate is then computed per domain and the
    summary is "the LLM passes in ``n_passed`` of ``n_domains`` domains" (paper,
    Appendix A, "How to test if the LLM can be used in several environments or
    domains?"). See :func:`alt_test` for the statistic.

    Parameters
    ----------
    domains : mapping
        ``{domain: {"humans": {annotator: {item: annotation}}, "llm": {item: annotation}}}``.
    {parameters}
    Returns
    -------
    MultiDomainAltTestResult

    Raises
    ------
    ValueError
        On a malformed option or domain, or a domain where no annotator can be tested.

    References
    ----------
    Calderon, N., Reichart, R., and Dror, R. (2025), Appendix A (FAQ).
    """
    opts = _check_options(
        scoring=scoring,
        epsilon=epsilon,
        q=q,
        min_humans_per_item=min_humans_per_item,
        min_items_per_human=min_items_per_human,
        test=test,
        annotator_weights=annotator_weights,
        inverse_probability_weighting=inverse_probability_weighting,
        expert=expert,
        ranks=ranks,
    )
    domains = _as_mapping(domains, name="domains")
    if not domains:
        raise ValueError("domains is empty")
    parts: dict[str, _Tested] = {}
    for name, spec in domains.items():
        if not isinstance(spec, Mapping) or "humans" not in spec or "llm" not in spec:
            raise ValueError(f"domains[{name!r}] must be a mapping with 'humans' and 'llm'")
        try:
            parts[name] = _domain_statistics(spec["humans"], spec["llm"], opts)
        except ValueError as exc:
            raise ValueError(f"domain {name!r}: {exc}") from exc
    all_p = np.concatenate([part.p_value for part in parts.values()])
    rejected = _by_rejections(all_p, opts.q)
    results: dict[str, AltTestResult] = {}
    start = 0
    for name, part in parts.items():
        stop = start + part.p_value.size
        try:
            results[name] = _assemble(part, rejected[start:stop], opts)
        except ValueError as exc:
            raise ValueError(f"domain {name!r}: {exc}") from exc
        start = stop
    return MultiDomainAltTestResult(
        domains=results,
        n_passed=sum(res.passed for res in results.values()),
        n_domains=len(results),
    )


# The two functions share their options; their docstrings share the text (not under -OO).
for _function in (alt_test, alt_test_domains):
    if _function.__doc__:
        _function.__doc__ = _function.__doc__.replace(
            "{parameters}", _DOC_PARAMETERS.strip() + "\n"
        )
