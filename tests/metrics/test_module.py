"""The package as a whole: public API, docstring examples, no web dependencies."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import annotator.metrics as metrics

MODULES = [
    "alpha",
    "alttest",
    "alttest._api",
    "alttest._betting",
    "alttest._sequential",
    "alttest._core",
    "alttest._inference",
    "alttest._inputs",
    "alttest._results",
    "alttest._curves",
    "alttest._curve_rates",
    "consistency",
    "correlation",
    "kappa",
    "icc",
    "matrix",
    "nmae",
    "retest",
    "plan",
    "plan_cli",
    "power",
    "cli",
    "agreement",
    "interscale",
    "bootstrap",
    "runs",
    "raters",
]
PACKAGE = Path(metrics.__file__).parent


def test_public_api():
    for name in [
        "icc",
        "ICCResult",
        "nmae",
        "krippendorff_alpha",
        "alt_test",
        "alt_test_domains",
        "AltTestResult",
        "AnnotatorResult",
        "MultiDomainAltTestResult",
        "read_matrix",
        "split_matrix",
        "RatingMatrix",
    ]:
        assert name in metrics.__all__
        assert getattr(metrics, name) is not None


@pytest.mark.parametrize(
    "name",
    [
        "icc",
        "nmae",
        "krippendorff_alpha",
        "alt_test",
        "alt_test_domains",
        "alt_test_sequential",
        "alt_test_power",
        "retest_reliability",
        "spearman_brown",
        "raters_needed",
        "variance_components",
        "d_study",
        "icc_interval_widths",
        "correlation",
        "llm_correlations",
        "cohen_kappa",
        "fleiss_kappa",
        "percent_agreement",
        "cross_alpha",
        "self_consistency",
        "alt_test_curve",
        "aggregate_runs",
        "rater_quality",
    ],
)
def test_public_functions_have_keyword_only_options_and_docs(name):
    fn = getattr(metrics, name)
    doc = inspect.getdoc(fn)
    for section in ("Parameters", "Returns", "Raises", "References"):
        assert section in doc, (name, section)
    params = list(inspect.signature(fn).parameters.values())
    options = [p for p in params if p.default is not inspect.Parameter.empty]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in options), name


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    mod = importlib.import_module(f"annotator.metrics.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")))
def test_no_web_imports(path):
    # The metrics must run without the web application: only relative imports inside
    # the package, and no Flask or database packages.
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside annotator.metrics
                assert node.level <= len(path.relative_to(PACKAGE).parts), path
                continue
            names = [node.module or ""]
        else:
            continue
        for name in names:
            root = name.split(".")[0]
            assert root not in {"flask", "sqlalchemy", "sqlmodel", "annotator"}, (path, name)


def test_lazy_names_resolve_to_their_modules():
    for name in metrics.__all__:
        value = getattr(metrics, name)
        if callable(value):
            assert value.__module__.startswith("annotator.metrics."), name
    with pytest.raises(AttributeError, match="no_such_name"):
        metrics.no_such_name  # noqa: B018


def test_cli_module_imports_no_numeric_libraries():
    # ``annotator --help`` imports the metrics CLI; the statistics load inside the commands.
    code = (
        "import sys, annotator.metrics.cli, annotator.metrics.plan_cli; "
        "print(sorted(m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_alttest_modules_stay_small():
    for path in (PACKAGE / "alttest").glob("*.py"):
        assert len(path.read_text().splitlines()) <= 450, path


def test_functions_named_like_their_module_stay_functions():
    # A fresh interpreter where the submodules load before the package names resolve.
    code = (
        "import annotator.metrics.icc, annotator.metrics.nmae; "
        "from annotator.metrics import icc, nmae; print(callable(icc), callable(nmae), "
        "type(icc).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "function"]
