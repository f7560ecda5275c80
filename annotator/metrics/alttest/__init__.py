"""The alternative annotator test (alt-test) for LLM judges, vectorised.

Modules: ``_results`` (result dataclasses), ``_inputs`` (option checks, annotation
arrays), ``_scores`` (alignment scores, winning indicators, t-tests, the
Benjamini-Yekutieli correction), ``_betting`` (the anytime-valid test by betting and
e-BH), ``_core`` (the one core: every resample and option set at once, its one
fallback, the decision and the rates), ``_api`` (:func:`alt_test`,
:func:`alt_test_domains`), ``_sequential`` (:func:`alt_test_pair`,
:func:`alt_test_sequential`), ``_curves`` (:func:`alt_test_curve` and the epsilon
sweep). Every public function is a call of the core: :func:`alt_test` a batch of one.

The procedure is the one of Calderon, Reichart and Dror (2025), The Alternative
Annotator Test for LLM-as-a-Judge: How to Statistically Justify Replacing Human
Annotators with LLMs (ACL 2025), section 3, with the
edge behaviour of the authors' reference implementation (public repository
``nitaytech/AltTest``): an item is kept when at least ``min_humans_per_item`` humans
and the LLM annotated it; an annotator is tested only with at least
``min_items_per_human`` kept items; ties count as a win for both sides (``>=``); a
p-value that cannot be computed (NaN) is never a rejection but counts in the
Benjamini-Yekutieli ``m``, which counts the tested annotators only.

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

from ._api import alt_test, alt_test_domains
from ._curves import CURVES, AltTestCurve, CurvePoint, alt_test_curve
from ._results import (
    SCORINGS,
    TESTS,
    AltTestResult,
    AnnotatorResult,
    MultiDomainAltTestResult,
    TooFewItemsError,
)
from ._scores import _by_rejections  # noqa: F401  (tests reach it here)
from ._sequential import AltTestPair, SequentialVerdict, alt_test_pair, alt_test_sequential

__all__ = [
    "CURVES",
    "AltTestCurve",
    "CurvePoint",
    "alt_test_curve",
    "SCORINGS",
    "TESTS",
    "AltTestPair",
    "AltTestResult",
    "AnnotatorResult",
    "MultiDomainAltTestResult",
    "SequentialVerdict",
    "TooFewItemsError",
    "alt_test",
    "alt_test_domains",
    "alt_test_pair",
    "alt_test_sequential",
]
