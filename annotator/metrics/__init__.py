"""Agreement statistics for human and LLM ratings: ICC, nMAE, Krippendorff's alpha, alt-test.

Pure functions on arrays (items x raters, NaN for a missing rating) or on the
``{annotator: {item: annotation}}`` dictionaries of the alt-test. A statistics package
as ``scipy.stats`` and pingouin are: numpy, pandas and scipy only, no command line,
plotting, Flask or database (the commands are in :mod:`annotator.cli`, the figures in
:mod:`annotator.analysis`). See ``docs/metrics.md`` for usage and the command line.

The names are imported on first use (PEP 562), so that the command line, which reads
the option names of :mod:`annotator.metrics._names`, and ``annotator --help`` do not
pay for numpy, pandas and scipy.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._names import LLM_PREFIX

# The one listing of the public names: submodule -> the names it defines. ``__all__``
# and the lazy lookup both come from it. Submodules whose public function has their
# name are private (``_icc`` defines ``icc``), as scipy.stats's ``_stats_py`` is: a
# loaded submodule is set as an attribute of its package and would otherwise shadow
# the function.
_SUBMODULES: dict[str, tuple[str, ...]] = {
    "agreement": (
        "GroupAgreement",
        "HumanLLMAgreement",
        "ModelAgreement",
        "grouped_agreement",
        "human_llm_agreement",
    ),
    "alpha": ("cross_alpha", "krippendorff_alpha"),
    "alttest": (
        "AltTestCurve",
        "AltTestPair",
        "AltTestResult",
        "AnnotatorResult",
        "MultiDomainAltTestResult",
        "SequentialVerdict",
        "TooFewItemsError",
        "alt_test",
        "alt_test_curve",
        "alt_test_domains",
        "alt_test_pair",
        "alt_test_sequential",
    ),
    "bootstrap": ("BootstrapInterval", "bootstrap_icc_difference", "bootstrap_nmae"),
    "consistency": ("SelfConsistency", "self_consistency", "self_consistency_table"),
    "_correlation": ("Correlation", "correlation", "llm_correlations"),
    "gwet": ("GwetAC", "gwet_ac1", "gwet_ac2"),
    "_icc": ("ICCResult", "icc"),
    "interscale": ("InterScaleAgreement", "ScalePair", "inter_scale_agreement"),
    "kappa": ("PercentAgreement", "cohen_kappa", "fleiss_kappa", "percent_agreement"),
    "matrix": ("RatingMatrix", "read_matrix", "split_matrix"),
    "_nmae": ("nmae",),
    "plan": (
        "DStudy",
        "IntervalWidths",
        "VarianceComponents",
        "d_study",
        "icc_interval_widths",
        "raters_needed",
        "spearman_brown",
        "variance_components",
    ),
    "power": ("AltTestPower", "alt_test_power"),
    "ppi": ("PPIMean", "ppi_mean", "ppi_share_above"),
    "raters": ("RaterQuality", "RaterQualityResult", "rater_quality"),
    "retest": ("RaterRetest", "RetestResult", "retest_reliability"),
    "runs": ("aggregate_runs",),
}

# Public name -> submodule that defines it.
_SOURCES = {name: module for module, names in _SUBMODULES.items() for name in names}

__all__ = ["LLM_PREFIX", *_SOURCES]


def __getattr__(name: str) -> Any:
    try:
        module = _SOURCES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
