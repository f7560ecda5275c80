"""Option checks and the conversion of annotation dictionaries into flat arrays."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any

import numpy as np

from .._validation import check_probability
from ._results import SCORINGS, TESTS

# Offered until issue 9: they tested a pseudo-median instead of the mean (docs/metrics.md).
_REMOVED_TESTS = ("wilcoxon", "auto")


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
    nan_scores: str


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _as_mapping(obj: Any, *, name: str, flat: bool = False) -> Mapping:
    # DataFrames and Series (for instance the matrix export) become nested dicts; their
    # NaN cells are then missing annotations.
    if flat and hasattr(obj, "columns") and hasattr(obj, "to_dict"):
        # One annotation per item (llm, expert): a frame must be one column.
        columns = list(obj.columns)
        if len(columns) != 1:
            raise ValueError(
                f"{name} is a DataFrame with {len(columns)} columns {columns[:5]!r}: pass "
                f"one model's column, for instance {name}=frame[{columns[0]!r}]"
                if columns
                else f"{name} is a DataFrame without columns"
            )
        obj = obj[columns[0]]
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
    nan_scores: Any,
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
    if test in _REMOVED_TESTS:
        raise ValueError(
            f"test={test!r} is no longer offered: the Wilcoxon signed-rank test of d - epsilon "
            "tests a pseudo-median, not the mean of d = W_h - W_f that the alt-test's H0 is "
            "about, and since d is mostly 0 it rejected true null hypotheses far more often "
            f"than the level (see docs/metrics.md); use one of {', '.join(TESTS)}"
        )
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if inverse_probability_weighting and test == "betting":
        raise ValueError(
            "inverse_probability_weighting reweights the items, which the test by betting "
            "does not support; use test='ttest' with it"
        )
    if nan_scores not in ("raise", "omit"):
        raise ValueError(f"nan_scores must be 'raise' or 'omit', got {nan_scores!r}")
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
        nan_scores=nan_scores,
    )


def _check_scalars(values: list[Any], *, name: str, keys: list[Any] | None) -> None:
    """Raise where an annotation is a list, array or mapping (one value per item needed)."""
    for at, v in enumerate(values):
        if isinstance(v, Mapping) or (not isinstance(v, str) and np.ndim(v) > 0):
            where = f" at item {keys[at]!r}" if keys is not None else ""
            raise ValueError(
                f"{name} must hold one annotation per item, got a {type(v).__name__}{where}: "
                "combine a judge's runs first (for instance their mean, "
                "annotator.metrics.runs.aggregate_runs)"
            )


def _encode(
    values: list[Any],
    kind: str,
    codebook: dict[Any, int],
    *,
    name: str,
    keys: list[Any] | None = None,
) -> np.ndarray:
    """Turn annotations into float64: numbers as such, labels as integer codes; NaN = missing."""
    if kind == "numeric":
        try:
            arr = np.array(values, dtype=float)
        except (TypeError, ValueError) as exc:
            _check_scalars(values, name=name, keys=keys)
            raise ValueError(
                f"{name} must hold numbers for scoring='neg_rmse' (use scoring='accuracy' for "
                "labels)"
            ) from exc
        if arr.ndim != 1:
            _check_scalars(values, name=name, keys=keys)
        return arr
    try:
        codes = [-1 if _is_missing(v) else codebook.setdefault(v, len(codebook)) for v in values]
    except TypeError as exc:
        _check_scalars(values, name=name, keys=keys)
        raise ValueError(f"{name} must hold hashable labels for scoring='accuracy'") from exc
    arr = np.array(codes, dtype=float)
    arr[arr < 0] = np.nan
    return arr


@dataclass
class _Annotations:
    """The annotations of one domain, restricted to the items the LLM was asked about."""

    annotators: list[Hashable]
    items: list[Hashable]  # the keys of ``llm``
    llm: np.ndarray  # per LLM item: value, label code, or NaN when missing
    item: np.ndarray  # per human annotation: position of its item in ``llm``
    annotator: np.ndarray  # per human annotation: position of its annotator
    value: np.ndarray  # per human annotation: value or label code
    expert: np.ndarray | None  # per LLM item: the expert's value (single-expert mode)
    # The original objects, kept only for a callable scoring.
    raw: list[Any] | None = None
    raw_llm: list[Any] | None = None
    raw_expert: list[Any] | None = None
    # Whether label codes follow the labels' sort order (False when labels do not sort).
    sorted_codes: bool = True


def _collect(humans: Any, llm: Any, opts: _Options) -> _Annotations:
    humans = _as_mapping(humans, name="humans")
    llm = _as_mapping(llm, name="llm", flat=True)
    expert_key = None
    expert_map = None
    if opts.expert is not None:
        if isinstance(opts.expert, Mapping) or hasattr(opts.expert, "to_dict"):
            expert_map = _as_mapping(opts.expert, name="expert", flat=True)
        elif opts.expert in humans:
            expert_key = opts.expert
            expert_map = _as_mapping(humans[expert_key], name=f"humans[{expert_key!r}]")
        else:
            raise ValueError(f"expert {opts.expert!r} is neither a mapping nor a key of humans")
    annotators = [h for h in humans if expert_key is None or h != expert_key]
    needed = 1 if expert_map is not None else 2
    if len(annotators) < needed:
        raise ValueError(
            # metrics imports nothing of the app (not annotator.words): the plural here.
            f"humans must hold at least {needed} annotator{'' if needed == 1 else 's'} "
            "besides the expert, "
            f"got {len(annotators)}"
        )

    if opts.scoring == "neg_rmse" or (callable(opts.scoring) and opts.ranks):
        kind = "numeric"
    elif opts.scoring == "accuracy":
        kind = "label"
    else:
        kind = "object"
    codebook: dict[Any, int] = {}

    def encode(values: list[Any], name: str, keys: list[Any] | None = None) -> np.ndarray:
        if kind == "object":
            return np.array([np.nan if _is_missing(v) else 0.0 for v in values], dtype=float)
        return _encode(values, kind, codebook, name=name, keys=keys)

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
                    encode(list(anns.values()), f"humans[{h!r}]", list(anns))
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
        items=list(llm),
        llm=encode(llm_values, "llm", list(llm)),
        item=item,
        annotator=annotator,
        value=value,
        expert=None,
    )
    if expert_map is not None:
        expert_values = [expert_map.get(i) for i in llm]
        data.expert = encode(expert_values, "expert", list(llm))
        if kind == "object":
            data.raw_expert = expert_values
    if kind == "numeric":
        for name, arr in (("humans", value), ("llm", data.llm), ("expert", data.expert)):
            if arr is not None and np.isinf(arr).any():
                raise ValueError(f"{name} holds an infinite annotation")
    if kind == "label" and codebook:
        data.sorted_codes = _sort_codes(codebook, data, value)
    keep = (item >= 0) & ~np.isnan(value)
    data.item, data.annotator, data.value = item[keep], annotator[keep], value[keep]
    if kind == "object":
        data.raw = [raw[i] for i in np.flatnonzero(keep)]
        data.raw_llm = llm_values
    return data


def _sort_codes(codebook: dict[Any, int], data: _Annotations, value: np.ndarray) -> bool:
    """Renumber label codes in the labels' sort order (in place), when labels sort.

    Codes are handed out in order of appearance; the majority-vote tie rule of the IPW
    variant ("the smallest label") needs them in label order.
    """
    try:
        ordered = sorted(codebook)
    except TypeError:
        return False  # labels of mixed types: ties go to the label seen first
    remap = np.empty(len(codebook))
    remap[[codebook[label] for label in ordered]] = np.arange(len(ordered))
    for arr in (value, data.llm, data.expert):
        if arr is not None:
            ok = ~np.isnan(arr)
            arr[ok] = remap[arr[ok].astype(np.intp)]
    return True


def _annotator_weights(annotators: list[Hashable], opts: _Options) -> np.ndarray:
    if opts.weights is None:
        return np.ones(len(annotators))
    known = set(annotators)
    unknown = [h for h in opts.weights if h not in known]
    if unknown and opts.expert is None:
        raise ValueError(
            f"annotator_weights names unknown "
            f"{'annotator' if len(unknown) == 1 else 'annotators'}: {unknown[:5]!r}"
        )
    missing = [h for h in annotators if h not in opts.weights]
    if missing:
        raise ValueError(
            f"annotator_weights lacks "
            f"{'annotator' if len(missing) == 1 else 'annotators'}: {missing[:5]!r}"
        )
    weights = np.array([opts.weights[h] for h in annotators], dtype=float)
    if not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise ValueError("annotator_weights must be positive finite numbers")
    return weights
