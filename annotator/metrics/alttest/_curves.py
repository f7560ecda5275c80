"""Alt-test curves: winning rate and advantage probability against items and epsilon.

The analyses of the alt-test paper's Table 3, Figure 2 (the number of items) and
Figure 3 (epsilon): each point resamples a subset of items and a choice of annotators,
runs :func:`alt_test` on it, and reports the mean over resamples with an empirical
interval.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._names import CURVES
from .._validation import check_integer, check_probability, json_float
from ._api import _assemble, _check_threshold, _decide, _options, _rates, alt_test
from ._core import _indicators_of, _tested
from ._inference import _by_rejections
from ._inputs import _as_mapping, _is_missing

__all__ = ["CURVES", "AltTestCurve", "CurvePoint", "alt_test_curve"]

#: The epsilon grid of Figure 3 (the paper's effective range is 0.05-0.3).
DEFAULT_EPSILONS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


@dataclass(frozen=True)
class CurvePoint:
    """One point of an alt-test curve: a summary over resamples.

    Attributes
    ----------
    x : float
        The number of items, or epsilon.
    winning_rate, advantage_probability : float
        Means over the resamples where the test could run.
    winning_rate_low, winning_rate_high, advantage_low, advantage_high : float
        The empirical ``interval`` of the resampled values (quantiles).
    pass_share : float
        Share of those resamples where the LLM passed.
    n_resamples : int
        Resamples drawn.
    n_undefined : int
        Resamples where no annotator could be tested (too few items each).
    """

    x: float
    winning_rate: float
    winning_rate_low: float
    winning_rate_high: float
    advantage_probability: float
    advantage_low: float
    advantage_high: float
    pass_share: float
    n_resamples: int
    n_undefined: int

    def to_dict(self) -> dict[str, Any]:
        return {k: json_float(v) if isinstance(v, float) else v for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class AltTestCurve:
    """An alt-test curve against the number of items or epsilon.

    Attributes
    ----------
    against : {"items", "epsilon"}
    points : tuple of CurvePoint
    n_annotators : int
        Annotators drawn in each resample.
    n_items : int or None
        Items drawn in each resample of the epsilon curve (None on the items curve).
    epsilon : float or None
        Epsilon of the items curve (None on the epsilon curve).
    interval : float
        Coverage of the empirical intervals.
    random_state : int
        The seed.
    """

    against: str
    points: tuple[CurvePoint, ...]
    n_annotators: int
    n_items: int | None
    epsilon: float | None
    interval: float
    random_state: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "against": self.against,
            "n_annotators": self.n_annotators,
            "n_items": self.n_items,
            "epsilon": self.epsilon,
            "interval": self.interval,
            "random_state": self.random_state,
            "resampling": "items without replacement and a random choice of annotators",
            "points": [p.to_dict() for p in self.points],
        }


def _summary(x: float, results: list[Any], n_resamples: int, interval: float) -> CurvePoint:
    done = [r for r in results if r is not None]
    nan = math.nan
    if not done:
        return CurvePoint(x, nan, nan, nan, nan, nan, nan, nan, n_resamples, n_resamples)
    wr = np.array([r.winning_rate for r in done])
    ap = np.array([r.advantage_probability for r in done])
    tail = (1.0 - interval) / 2.0
    return CurvePoint(
        x=float(x),
        winning_rate=float(wr.mean()),
        winning_rate_low=float(np.quantile(wr, tail)),
        winning_rate_high=float(np.quantile(wr, 1.0 - tail)),
        advantage_probability=float(ap.mean()),
        advantage_low=float(np.quantile(ap, tail)),
        advantage_high=float(np.quantile(ap, 1.0 - tail)),
        pass_share=float(np.mean([r.passed for r in done])),
        n_resamples=n_resamples,
        n_undefined=n_resamples - len(done),
    )


_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(alt_test).parameters.items()
    if p.default is not inspect.Parameter.empty
}


def _tested_at(humans: dict, llm: dict, epsilons: list[float], options: dict) -> tuple:
    """The per-annotator tests of one resample at each epsilon, scoring the items once:
    the leave-one-out scores and indicators do not depend on epsilon, only the tests do."""
    args = {**_DEFAULTS, **options}
    opts = [_options({**args, "epsilon": e}) for e in epsilons]
    indicators = _indicators_of(humans, llm, opts[0])
    return [_tested(indicators, o) for o in opts], opts


def _rates_of(resamples: list[tuple], options: dict) -> list[list[Any]]:
    """The rates of each resample's parts (from :func:`_tested_at`), ``None`` where no
    annotator could be tested (where ``alt_test`` raises TooFewItemsError).

    The t-test's Benjamini-Yekutieli correction is one family per part, so the rows of
    every resample go to scipy in one call (one call per row length): its input checks
    cost about 20 times the arithmetic on a handful of p-values, and a curve has up to
    800 parts (0.15 s of the report's curves at 150 items when called per resample).
    """
    threshold = _check_threshold({**_DEFAULTS, **options}["pass_threshold"])
    live = {
        (r, k): (part, opts[k])
        for r, (parts, opts) in enumerate(resamples)
        for k, part in enumerate(parts)
        if part.tested.any()
    }
    rejected: dict[tuple[int, int], np.ndarray] = {}
    # The test and q are the curve's own, the same in every part.
    first = next(iter(live.values()), (None, None))[1]
    if first is not None and first.test == "ttest":
        by_size: dict[int, list[tuple[int, int]]] = {}
        for key, (part, _) in live.items():
            by_size.setdefault(part.p_value.size, []).append(key)
        for keys in by_size.values():
            rows = np.stack([live[key][0].p_value for key in keys])
            rejected.update(zip(keys, _by_rejections(rows, first.q), strict=True))
    else:
        for key, (part, opts) in live.items():
            rejected[key] = _decide([part], opts)[0][0]
    out: list[list[Any]] = []
    for r, (parts, _) in enumerate(resamples):
        rates: list[Any] = []
        for k, part in enumerate(parts):
            if (r, k) not in rejected:
                rates.append(None)
                continue
            # Only the rates enter a curve's point: not the per-annotator rows of a result.
            winning_rate, advantage = _rates(part, rejected[r, k])
            rates.append(_Rates(winning_rate, advantage, winning_rate >= threshold))
        out.append(rates)
    return out


@dataclass(frozen=True)
class _Rates:
    """What :func:`_summary` reads of an :class:`AltTestResult`."""

    winning_rate: float
    advantage_probability: float
    passed: bool


def _alt_tests_by_epsilon(
    humans: Any, llm: Any, epsilons: Sequence[float], options: Mapping[str, Any]
) -> list[Any]:
    """``alt_test(humans=humans, llm=llm, epsilon=e, **options)`` for each ``e``, as
    zero-argument callables that score the items once between them.

    The leave-one-out scores and indicators do not depend on epsilon (as in
    :func:`_tested_at`); each callable validates its options, raises what
    :func:`alt_test` would (the scoring's error each time) and returns the same result,
    so a caller keeps one ``try`` per epsilon. The report's alt-test table runs 6
    epsilons on every item: this is its cost divided by about 6.
    """
    args = {**_DEFAULTS, **options}
    shared: dict[str, Any] = {}

    def indicators(opts: Any) -> Any:
        if not shared:
            try:
                shared["value"] = _indicators_of(humans, llm, opts)
            except Exception as exc:
                shared["error"] = exc
        if "error" in shared:
            raise shared["error"]
        return shared["value"]

    def one(epsilon: float) -> Any:
        def run() -> Any:
            opts = _options({**args, "epsilon": epsilon})
            threshold = _check_threshold(args["pass_threshold"])
            part = _tested(indicators(opts), opts)
            return _assemble(part, _decide([part], opts)[0], opts, threshold)

        return run

    return [one(e) for e in epsilons]


def alt_test_curve(
    *,
    humans: Mapping[Hashable, Mapping[Hashable, Any]],
    llm: Mapping[Hashable, Any],
    against: str = "items",
    values: Sequence[float] | None = None,
    n_resamples: int = 100,
    n_annotators: int = 3,
    n_items: int | None = None,
    epsilon: float = 0.2,
    interval: float = 0.9,
    random_state: int = 0,
    **options: Any,
) -> AltTestCurve:
    r"""Winning rate and advantage probability against the number of items or epsilon.

    For each value on the x-axis, ``n_resamples`` times: draw ``n_annotators`` of the
    annotators at random (a random combination, as the paper's "100 combinations of
    three annotators") and items without replacement from those the LLM scored, and
    run :func:`alt_test` on that subset. Each point is the mean winning rate
    :math:`\omega` and advantage probability :math:`\rho` over the resamples, with the
    empirical central ``interval`` (quantiles; the paper's Figure 2 draws 0.9) and the
    share of resamples that passed.

    - ``against="items"`` (Figure 2): ``values`` are numbers of items (default: 8 steps
      from 30, the t-test's minimum, to all items) at a fixed ``epsilon``.
    - ``against="epsilon"`` (Figure 3): ``values`` are margins (default 0 to 0.3 by
      0.05) on subsets of ``n_items`` items (default all). One resample draws the
      subset once and tests it at every epsilon, so the curve is monotone within a
      resample. With all items and all annotators every resample is the same and the
      interval collapses to the point.

    A resample where no annotator has ``min_items_per_human`` items (default 30) cannot
    be tested; it is left out of the means and counted in ``n_undefined``.

    Parameters
    ----------
    humans, llm : mapping
        As in :func:`alt_test`.
    against : {"items", "epsilon"}, keyword-only
    values : sequence of float, optional, keyword-only
        The x-axis.
    n_resamples : int, keyword-only
        Resamples per point (the paper uses 100).
    n_annotators : int, keyword-only
        Annotators drawn per resample (the paper uses 3); capped at the number there are.
    n_items : int, optional, keyword-only
        Items per resample of the epsilon curve; default all the LLM scored.
    epsilon : float, keyword-only
        Margin of the items curve.
    interval : float, keyword-only
        Coverage of the empirical intervals.
    random_state : int, keyword-only
        Seed: the same seed gives the same curve.
    **options
        Any other option of :func:`alt_test` (``scoring``, ``q``, ``test``,
        ``min_items_per_human``, ``pass_threshold``, ...).

    Returns
    -------
    AltTestCurve

    Raises
    ------
    ValueError
        On a malformed option, fewer than 2 annotators, or an item count above the items
        the LLM scored.

    References
    ----------
    Calderon, Reichart and Dror (2025), shared/papers/004: Table 3, section 5.1 and
    Figure 2, Appendix B.1 and Figure 3.
    """
    if against not in CURVES:
        raise ValueError(f"against must be one of {', '.join(CURVES)}, got {against!r}")
    for name in ("epsilon", "values", "humans", "llm"):
        if name in options:
            raise ValueError(f"{name} is set by alt_test_curve itself")
    unknown = sorted(set(options) - set(_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown alt_test option {unknown[0]!r}")
    n_resamples = check_integer(n_resamples, name="n_resamples", low=1)
    n_annotators = check_integer(n_annotators, name="n_annotators", low=2)
    interval = check_probability(interval, name="interval")
    humans = _as_mapping(humans, name="humans")
    llm = _as_mapping(llm, name="llm")
    annotators = list(humans)
    if len(annotators) < 2:
        raise ValueError(f"humans must hold at least 2 annotators, got {len(annotators)}")
    k = min(n_annotators, len(annotators))
    items = [i for i, v in llm.items() if not _is_missing(v)]
    total = len(items)
    if values is None:
        if against == "items":
            values = sorted({int(round(v)) for v in np.linspace(min(30, total), total, 8)})
        else:
            values = DEFAULT_EPSILONS
    values = [float(v) for v in values]
    if not values:
        raise ValueError("values is empty")
    if against == "items":
        for v in values:
            if v != int(v) or not 2 <= v <= total:
                raise ValueError(
                    f"values must be numbers of items from 2 to the {total} the LLM scored, "
                    f"got {v:g}"
                )
    else:
        n_items = total if n_items is None else check_integer(n_items, name="n_items", low=2)
        if n_items > total:
            raise ValueError(f"n_items ({n_items}) exceeds the {total} items the LLM scored")
    rng = np.random.default_rng(random_state)
    scores = [llm[i] for i in items]
    # Per annotator, where each of the LLM's items stands among the annotator's own (-1:
    # not annotated), so a draw picks an annotator's items with numpy instead of looking
    # up each drawn item (840 draws of 3 annotators x 100 items for the report's curves),
    # and still lists them in the annotator's order.
    position: dict[Hashable, tuple[np.ndarray, list, list]] = {}

    def annotated(h: Hashable) -> tuple[np.ndarray, list, list]:
        if h not in position:
            where = {i: p for p, i in enumerate(humans[h].keys())}
            rank = np.fromiter((where.get(i, -1) for i in items), dtype=np.int64, count=total)
            position[h] = (rank, list(humans[h].keys()), list(humans[h].values()))
        return position[h]

    def draw(size: int) -> tuple[dict, dict]:
        if k == len(annotators) and size == total:
            # Nothing to choose: every resample is the whole data (and costs the same).
            return humans, llm
        chosen = [annotators[j] for j in sorted(rng.choice(len(annotators), k, replace=False))]
        picked = np.sort(rng.choice(total, size, replace=False)).tolist()
        sub = {}
        for h in chosen:
            rank, keys, values = annotated(h)
            ranks = rank[picked]
            mine = np.sort(ranks[ranks >= 0]).tolist()
            sub[h] = {keys[p]: values[p] for p in mine}
        return sub, {items[j]: scores[j] for j in picked}

    points = []
    with warnings.catch_warnings():
        # Tiny subsets give NaN t statistics; the resample then counts as not rejected.
        warnings.simplefilter("ignore", RuntimeWarning)
        if against == "items":
            # Every resample of every value tested first, then decided together.
            tested, counts = [], []
            for v in values:
                same = k == len(annotators) and int(v) == total
                draws = 1 if same else n_resamples
                for _ in range(draws):
                    sub, sub_llm = draw(int(v))
                    tested.append(_tested_at(sub, sub_llm, [epsilon], options))
                counts.append(draws)
            rates = iter(_rates_of(tested, options))
            for v, draws in zip(values, counts, strict=True):
                runs = [next(rates)[0] for _ in range(draws)]
                # The whole data drawn once stands for every resample of its point.
                runs += runs[:1] * (n_resamples - draws)
                points.append(_summary(v, runs, n_resamples, interval))
        else:
            same = k == len(annotators) and n_items == total
            draws = 1 if same else n_resamples
            tested = [_tested_at(*draw(n_items), values, options) for _ in range(draws)]
            by_resample = _rates_of(tested, options)
            by_resample += by_resample[:1] * (n_resamples - draws)
            points = [
                _summary(v, [rates[j] for rates in by_resample], n_resamples, interval)
                for j, v in enumerate(values)
            ]
    return AltTestCurve(
        against=against,
        points=tuple(points),
        n_annotators=k,
        n_items=n_items if against == "epsilon" else None,
        epsilon=float(epsilon) if against == "items" else None,
        interval=interval,
        random_state=int(random_state),
    )
