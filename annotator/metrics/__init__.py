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
import sys
import types
from typing import TYPE_CHECKING, Any

from ._names import LLM_PREFIX

if TYPE_CHECKING:
    from .agreement import (
        GroupAgreement,
        HumanLLMAgreement,
        ModelAgreement,
        grouped_agreement,
        human_llm_agreement,
    )
    from .alpha import cross_alpha, krippendorff_alpha
    from .alttest import (
        AltTestCurve,
        AltTestPair,
        AltTestResult,
        AnnotatorResult,
        MultiDomainAltTestResult,
        SequentialVerdict,
        TooFewItemsError,
        alt_test,
        alt_test_curve,
        alt_test_domains,
        alt_test_pair,
        alt_test_sequential,
    )
    from .bootstrap import BootstrapInterval, bootstrap_icc_difference, bootstrap_nmae
    from .consistency import SelfConsistency, self_consistency, self_consistency_table
    from .correlation import Correlation, correlation, llm_correlations
    from .icc import ICCResult, icc
    from .interscale import InterScaleAgreement, ScalePair, inter_scale_agreement
    from .kappa import PercentAgreement, cohen_kappa, fleiss_kappa, percent_agreement
    from .matrix import RatingMatrix, read_matrix, split_matrix
    from .nmae import nmae
    from .plan import (
        DStudy,
        IntervalWidths,
        VarianceComponents,
        d_study,
        icc_interval_widths,
        raters_needed,
        spearman_brown,
        variance_components,
    )
    from .power import AltTestPower, alt_test_power
    from .ppi import PPIMean, ppi_mean, ppi_share_above
    from .raters import RaterQuality, RaterQualityResult, rater_quality
    from .retest import RaterRetest, RetestResult, retest_reliability
    from .runs import aggregate_runs

# Public name -> submodule that defines it.
_SOURCES = {
    "AltTestCurve": "alttest",
    "alt_test_curve": "alttest",
    "cross_alpha": "alpha",
    "SelfConsistency": "consistency",
    "self_consistency": "consistency",
    "self_consistency_table": "consistency",
    "Correlation": "correlation",
    "correlation": "correlation",
    "llm_correlations": "correlation",
    "PercentAgreement": "kappa",
    "cohen_kappa": "kappa",
    "fleiss_kappa": "kappa",
    "percent_agreement": "kappa",
    "AltTestPower": "power",
    "PPIMean": "ppi",
    "ppi_mean": "ppi",
    "ppi_share_above": "ppi",
    "AltTestResult": "alttest",
    "AnnotatorResult": "alttest",
    "BootstrapInterval": "bootstrap",
    "DStudy": "plan",
    "GroupAgreement": "agreement",
    "HumanLLMAgreement": "agreement",
    "ICCResult": "icc",
    "InterScaleAgreement": "interscale",
    "IntervalWidths": "plan",
    "ModelAgreement": "agreement",
    "MultiDomainAltTestResult": "alttest",
    "RaterQuality": "raters",
    "RaterQualityResult": "raters",
    "RaterRetest": "retest",
    "RatingMatrix": "matrix",
    "RetestResult": "retest",
    "ScalePair": "interscale",
    "SequentialVerdict": "alttest",
    "AltTestPair": "alttest",
    "TooFewItemsError": "alttest",
    "VarianceComponents": "plan",
    "aggregate_runs": "runs",
    "alt_test": "alttest",
    "alt_test_domains": "alttest",
    "alt_test_pair": "alttest",
    "alt_test_power": "power",
    "alt_test_sequential": "alttest",
    "bootstrap_icc_difference": "bootstrap",
    "bootstrap_nmae": "bootstrap",
    "d_study": "plan",
    "grouped_agreement": "agreement",
    "human_llm_agreement": "agreement",
    "icc": "icc",
    "icc_interval_widths": "plan",
    "inter_scale_agreement": "interscale",
    "krippendorff_alpha": "alpha",
    "nmae": "nmae",
    "rater_quality": "raters",
    "raters_needed": "plan",
    "read_matrix": "matrix",
    "retest_reliability": "retest",
    "spearman_brown": "plan",
    "split_matrix": "matrix",
    "variance_components": "plan",
}

__all__ = [
    "LLM_PREFIX",
    "AltTestCurve",
    "alt_test_curve",
    "cross_alpha",
    "SelfConsistency",
    "self_consistency",
    "self_consistency_table",
    "Correlation",
    "correlation",
    "llm_correlations",
    "PercentAgreement",
    "cohen_kappa",
    "fleiss_kappa",
    "percent_agreement",
    "AltTestPower",
    "PPIMean",
    "ppi_mean",
    "ppi_share_above",
    "AltTestPair",
    "AltTestResult",
    "AnnotatorResult",
    "BootstrapInterval",
    "DStudy",
    "GroupAgreement",
    "HumanLLMAgreement",
    "ICCResult",
    "InterScaleAgreement",
    "IntervalWidths",
    "ModelAgreement",
    "MultiDomainAltTestResult",
    "RaterQuality",
    "RaterQualityResult",
    "RaterRetest",
    "RatingMatrix",
    "RetestResult",
    "ScalePair",
    "SequentialVerdict",
    "TooFewItemsError",
    "VarianceComponents",
    "aggregate_runs",
    "alt_test",
    "alt_test_domains",
    "alt_test_pair",
    "alt_test_power",
    "alt_test_sequential",
    "bootstrap_icc_difference",
    "bootstrap_nmae",
    "d_study",
    "grouped_agreement",
    "human_llm_agreement",
    "icc",
    "icc_interval_widths",
    "inter_scale_agreement",
    "krippendorff_alpha",
    "nmae",
    "rater_quality",
    "raters_needed",
    "read_matrix",
    "retest_reliability",
    "spearman_brown",
    "split_matrix",
    "variance_components",
]


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


class _Package(types.ModuleType):
    """Keeps ``icc`` and ``nmae`` the functions once their same-named submodules load.

    Importing a submodule sets it as an attribute of the package, which would shadow a
    function of the same name that is only resolved lazily.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _SOURCES.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
