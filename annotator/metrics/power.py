"""Planning the alt-test: pass probability against the numbers of items and raters."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import check_integer, check_integers
from .alttest import TooFewItemsError, alt_test
from .alttest._inputs import _as_mapping, _is_missing

__all__ = ["AltTestPower", "alt_test_power"]


@dataclass(frozen=True)
class AltTestPower:
    """Resampled alt-test outcomes for each (items, raters) study size.

    Attributes
    ----------
    rows : tuple of dict
        One per size: ``n_items``, ``n_raters``, ``pass_probability`` (share of
        resampled studies the LLM passes), ``winning_rate_mean``, ``winning_rate_sd``,
        ``advantage_mean`` and ``reps``.
    seed : int
        Seed of the resampling.
    options : dict
        The alt-test options used.
    """

    rows: tuple[dict[str, Any], ...]
    seed: int
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return the table as plain Python types (JSON-ready)."""
        return {"seed": self.seed, "options": self.options, "rows": list(self.rows)}


def alt_test_power(
    *,
    humans: Mapping[Hashable, Mapping[Hashable, Any]],
    llm: Mapping[Hashable, Any],
    n_items: Sequence[int] | int,
    n_raters: Sequence[int] | int,
    reps: int = 200,
    seed: int = 0,
    **options: Any,
) -> AltTestPower:
    r"""Probability that the LLM passes the alt-test in a study of a given size.

    A bootstrap of the pilot, as the paper's section 5.1 (Figure 2) studies the number
    of items: each resampled study draws ``n_raters`` of the pilot's annotators without
    replacement and ``n_items`` of the items the LLM and at least two of them rated,
    with replacement (a repeated item becomes a new item with the same annotations),
    and runs :func:`annotator.metrics.alt_test`. Over ``reps`` studies per size it
    reports the pass probability :math:`P(\omega \ge 0.5)`, the mean and standard
    deviation of the winning rate :math:`\omega` and the mean advantage probability.
    A study where no annotator reaches ``min_items_per_human`` counts as not passed.

    The prediction inherits the pilot's sampling error (the pilot's items and raters
    stand for the population), and more raters than the pilot has cannot be asked for.

    Parameters
    ----------
    humans, llm : mapping
        The pilot, as for :func:`annotator.metrics.alt_test`.
    n_items, n_raters : int or sequence of int, keyword-only
        Study sizes to simulate (raters at most the pilot's annotators, at least 2).
    reps : int, keyword-only
        Resampled studies per size.
    seed : int, keyword-only
        Seed of ``numpy.random.default_rng``; the same seed gives the same table.
    **options
        Passed to :func:`annotator.metrics.alt_test` (``epsilon``, ``scoring``, ``q``,
        ``min_items_per_human``, ``test``, ...), keyword-only.

    Returns
    -------
    AltTestPower

    Raises
    ------
    ValueError
        If a size is out of range, ``reps`` is not positive, or an option is invalid.

    References
    ----------
    Calderon, N., Reichart, R., and Dror, R. (2025). The Alternative Annotator Test for
    LLM-as-a-Judge, section 5.1 (the number of instances).
    Efron, B., and Tibshirani, R. (1993). An Introduction to the Bootstrap.
    """
    humans = _as_mapping(humans, name="humans")
    llm = _as_mapping(llm, name="llm")
    items_sizes = check_integers(n_items, name="n_items", low=1)
    rater_sizes = check_integers(n_raters, name="n_raters", low=2)
    if max(rater_sizes) > len(humans):
        raise ValueError(f"n_raters must be at most the pilot's {len(humans)} annotators")
    reps = check_integer(reps, name="reps", low=1)
    annotators = list(humans)
    # DataFrame inputs (the matrix export) carry NaN for a missing rating: drop those.
    maps = {
        h: {
            i: v
            for i, v in _as_mapping(humans[h], name=f"humans[{h!r}]").items()
            if not _is_missing(v)
        }
        for h in annotators
    }
    llm = {i: v for i, v in llm.items() if not _is_missing(v)}
    rng = np.random.default_rng(seed)
    rows = []
    for r in rater_sizes:
        for n in items_sizes:
            passed, rates, advantages = 0, [], []
            for _ in range(reps):
                chosen = [annotators[i] for i in rng.choice(len(annotators), r, replace=False)]
                pool = [
                    i for i in llm if llm[i] is not None and sum(i in maps[h] for h in chosen) >= 2
                ]
                if not pool:
                    raise ValueError("the pilot has no item rated by the LLM and 2 annotators")
                picks = rng.integers(0, len(pool), n)
                study_llm = {(k, pool[p]): llm[pool[p]] for k, p in enumerate(picks)}
                study_humans = {
                    h: {
                        (k, pool[p]): maps[h][pool[p]]
                        for k, p in enumerate(picks)
                        if pool[p] in maps[h]
                    }
                    for h in chosen
                }
                try:
                    res = alt_test(humans=study_humans, llm=study_llm, **options)
                except TooFewItemsError:
                    rates.append(0.0)
                    continue
                passed += res.passed
                rates.append(res.winning_rate)
                advantages.append(res.advantage_probability)
            rows.append(
                {
                    "n_items": n,
                    "n_raters": r,
                    "pass_probability": passed / reps,
                    "winning_rate_mean": float(np.mean(rates)),
                    "winning_rate_sd": float(np.std(rates, ddof=1)) if reps > 1 else 0.0,
                    "advantage_mean": float(np.mean(advantages)) if advantages else None,
                    "reps": reps,
                }
            )
    return AltTestPower(rows=tuple(rows), seed=int(seed), options=dict(options))
