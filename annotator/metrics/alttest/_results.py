"""Result dataclasses of the alt-test."""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from .._names import SCORINGS, TESTS

__all__ = [
    "SCORINGS",
    "TESTS",
    "AltTestResult",
    "AnnotatorResult",
    "MultiDomainAltTestResult",
    "TooFewItemsError",
]


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
        The t statistic (``test="ttest"``), or the e-value of the test by betting
        (``test="betting"``).
    p_value : float
        One-sided p-value of H0: ``rho_h - rho_f >= epsilon``; NaN when it cannot be
        computed. With ``test="betting"``, the anytime-valid ``min(1, 1 / max_t K_t)``
        (the decision uses the e-values, not this).
    rejected : bool
        Whether H0 is rejected (the LLM wins): by the Benjamini-Yekutieli procedure on
        the p-values, or with ``test="betting"`` by the e-BH procedure on the e-values.
    test : str or None
        ``"ttest"`` or ``"betting"``; None when not tested.
    weight : float
        The annotator's quality weight (1 unless ``annotator_weights`` is given).
    secured : bool
        ``test="betting"`` only: the e-value reached ``m / q`` (m annotators), so the
        rejection stands whatever items are added after the current ones.
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
    secured: bool = False

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
            "secured": self.secured,
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
        ``winning_rate >= pass_threshold``.
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
    pass_threshold : float
        The winning rate needed to pass (0.5 unless a stricter one was asked for).
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
    pass_threshold: float = 0.5

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
            "pass_threshold": self.pass_threshold,
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


class TooFewItemsError(ValueError):
    """No annotator has enough kept items to be tested.

    A ``ValueError``; the message names the option that lowers the minimum and what the
    paper recommends. :meth:`describe` words it for another front end (the command line
    passes ``option="--min-items-per-human"``).

    Attributes
    ----------
    min_items_per_human : int
        The minimum that no annotator reached.
    most_items : int
        The largest number of kept items of any annotator.
    n_kept : int
        Items kept for the test.
    domain : str or None
        The domain, in :func:`alt_test_domains`.
    """

    def __init__(
        self, *, min_items_per_human: int, most_items: int, n_kept: int, domain: str | None = None
    ) -> None:
        self.min_items_per_human = min_items_per_human
        self.most_items = most_items
        self.n_kept = n_kept
        self.domain = domain
        super().__init__(self.describe())

    def describe(self, *, option: str = "min_items_per_human") -> str:
        """The message, naming the option that sets the minimum as ``option``."""
        where = f"domain {self.domain!r}: " if self.domain is not None else ""
        return (
            f"{where}no annotator has at least {option}={self.min_items_per_human} kept items "
            f"(the most any annotator has is {self.most_items}; items kept: {self.n_kept}); "
            f"nothing to test. Lower {option} to test annotators with fewer items, or better, "
            "have each annotator rate more items: the paper recommends at least 30 items per "
            "annotator (for the t-test) and finds 50-100 sufficient in most cases "
            "(Calderon et al. 2025, section 5.1 and Appendix A)."
        )


def _json_float(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)
