"""Alt-test curves: winning rate and advantage probability against items and epsilon.

The analyses of the alt-test paper's Table 3, Figure 2 (the number of items) and
Figure 3 (epsilon): each point resamples a subset of items and a choice of annotators,
runs :func:`alt_test` on it, and reports the mean over resamples with an empirical
interval.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._names import CURVES
from .._validation import check_integer, check_probability, json_float
from ..notes import quiet
from ._api import _check_threshold, _options, _result, alt_test
from ._core import _decide, _Resample, _statistics
from ._inputs import _as_mapping, _is_missing
from ._winning import _rates

__all__ = ["CURVES", "AltTestCurve", "CurvePoint", "alt_test_curve"]

#: The defaults of :func:`alt_test`'s options, which a curve's ``**options`` override.
_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(alt_test).parameters.items()
    if p.default is not inspect.Parameter.empty
}

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


def _points(
    xs: Sequence[float],
    winning_rate: np.ndarray,
    advantage: np.ndarray,
    passed: np.ndarray,
    n_resamples: int,
    interval: float,
) -> list[CurvePoint]:
    """One point per row of the (points x resamples) arrays, NaN where undefined.

    Points with as many defined resamples share one call per statistic: a row-wise
    mean or quantile of a 2-D array is, bit for bit, that of each row on its own, and
    600 calls of ``np.quantile`` cost 0.1 s of the report's curves.
    """
    tail = (1.0 - interval) / 2.0
    done = ~np.isnan(winning_rate)
    counts = done.sum(axis=1)
    points: list[Any] = [None] * len(xs)
    nan = math.nan
    for size in np.unique(counts).tolist():
        rows = np.flatnonzero(counts == size)
        if size == 0:
            for i in rows:
                points[i] = CurvePoint(
                    float(xs[i]), nan, nan, nan, nan, nan, nan, nan, n_resamples, n_resamples
                )
            continue
        mask = done[rows]
        wr = winning_rate[rows][mask].reshape(-1, size)
        ap = advantage[rows][mask].reshape(-1, size)
        share = passed[rows][mask].reshape(-1, size).mean(axis=1)
        wr_mean, (wr_low, wr_high) = wr.mean(axis=1), np.quantile(wr, [tail, 1.0 - tail], axis=1)
        ap_mean, (ap_low, ap_high) = ap.mean(axis=1), np.quantile(ap, [tail, 1.0 - tail], axis=1)
        for j, i in enumerate(rows.tolist()):
            points[i] = CurvePoint(
                x=float(xs[i]),
                winning_rate=float(wr_mean[j]),
                winning_rate_low=float(wr_low[j]),
                winning_rate_high=float(wr_high[j]),
                advantage_probability=float(ap_mean[j]),
                advantage_low=float(ap_low[j]),
                advantage_high=float(ap_high[j]),
                pass_share=float(share[j]),
                n_resamples=n_resamples,
                n_undefined=n_resamples - size,
            )
    return points


def _alt_tests_by_epsilon(
    humans: Any, llm: Any, epsilons: Sequence[float], options: Mapping[str, Any]
) -> list[Any]:
    """``alt_test(humans=humans, llm=llm, epsilon=e, **options)`` for each ``e``, as
    zero-argument callables computed together by the core on their first call.

    Each callable validates its options, raises what :func:`alt_test` would (the
    scoring's error each time) and returns the same result, so a caller keeps one
    ``try`` per epsilon. The report's alt-test table runs 6 epsilons on every item.
    """
    args = {**_DEFAULTS, **options}
    shared: dict[str, Any] = {}

    def batch() -> Any:
        if not shared:
            valid = []
            for e in epsilons:
                try:
                    valid.append(_options({**args, "epsilon": e}))
                except ValueError:
                    continue  # raised by that epsilon's own callable
            try:
                found = _statistics(humans, llm, [None], valid)
                shared["value"] = found, _decide([found])[0]
            except Exception as exc:
                shared["error"] = exc
        if "error" in shared:
            raise shared["error"]
        return shared["value"]

    def one(epsilon: float) -> Any:
        def run() -> Any:
            opts = _options({**args, "epsilon": epsilon})
            threshold = _check_threshold(args["pass_threshold"])
            found, decided = batch()
            e = [o.epsilon for o in found.opts].index(opts.epsilon)
            return _result(found, e, decided, threshold)

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
    Calderon, N., Reichart, R., and Dror, R. (2025). The Alternative Annotator Test for
    LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs.
    ACL 2025: Table 3, section 5.1 and Figure 2, Appendix B.1 and Figure 3.
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
    whole = k == len(annotators)

    def draw(size: int) -> _Resample:
        if whole and size == total:
            # Nothing to choose: every resample is the whole data (and costs the same).
            return None
        chosen = np.sort(rng.choice(len(annotators), k, replace=False))
        return chosen, np.sort(rng.choice(total, size, replace=False))

    sizes = [int(v) for v in values] if against == "items" else [n_items]
    resamples: list[_Resample] = []
    rows = []
    for size in sizes:
        start, draws = len(resamples), 1 if whole and size == total else n_resamples
        resamples += [draw(size) for _ in range(draws)]
        # The whole data drawn once stands for every resample of its point.
        rows.append(np.r_[start : start + draws, np.full(n_resamples - draws, start)])
    with quiet():
        # Tiny subsets give NaN t statistics; the resample then counts as not rejected.
        epsilons = [epsilon] if against == "items" else values
        args = {**_DEFAULTS, **options}
        # Checked first, as every resample's alt_test checks them before scoring.
        opts = [_options({**args, "epsilon": e}) for e in epsilons]
        batch = _statistics(humans, {i: llm[i] for i in items}, resamples, opts)
        threshold = _check_threshold(args["pass_threshold"])
        rates, advantage = _rates(batch, _decide([batch])[0][0])
    passes = rates >= threshold
    if against == "items":
        at = np.stack(rows)
        winning_rate, passed, advantage = rates[at, 0], passes[at, 0], advantage[at, 0]
    else:
        # One resample tests its subset at every epsilon: a column per point.
        at = rows[0]
        winning_rate, passed, advantage = rates[at].T, passes[at].T, advantage[at].T
    points = _points(values, winning_rate, advantage, passed, n_resamples, interval)
    return AltTestCurve(
        against=against,
        points=tuple(points),
        n_annotators=k,
        n_items=n_items if against == "epsilon" else None,
        epsilon=float(epsilon) if against == "items" else None,
        interval=interval,
        random_state=int(random_state),
    )
