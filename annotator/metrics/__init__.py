"""Agreement statistics for human and LLM ratings: ICC, nMAE, Krippendorff's alpha, alt-test.

Pure functions on arrays (items x raters, NaN for a missing rating) or on the
``{annotator: {item: annotation}}`` dictionaries of the alt-test; no database and no
Flask. See ``docs/metrics.md`` for usage, the command line and benchmark figures.
"""

from __future__ import annotations

from .alpha import krippendorff_alpha
from .alttest import (
    AltTestResult,
    AnnotatorResult,
    MultiDomainAltTestResult,
    alt_test,
    alt_test_domains,
)
from .icc import ICCResult, icc
from .matrix import RatingMatrix, read_matrix, split_matrix
from .nmae import nmae

__all__ = [
    "AltTestResult",
    "AnnotatorResult",
    "ICCResult",
    "MultiDomainAltTestResult",
    "RatingMatrix",
    "alt_test",
    "alt_test_domains",
    "icc",
    "krippendorff_alpha",
    "nmae",
    "read_matrix",
    "split_matrix",
]
