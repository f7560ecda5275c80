"""The package as a whole: public API, docstring examples, a pure statistics package."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import json
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
    "alttest._scores",
    "alttest._inputs",
    "alttest._results",
    "alttest._curves",
    "consistency",
    "_correlation",
    "gwet",
    "kappa",
    "_icc",
    "matrix",
    "_nmae",
    "retest",
    "plan",
    "power",
    "ppi",
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
        "gwet_ac1",
        "gwet_ac2",
        "cross_alpha",
        "self_consistency",
        "alt_test_curve",
        "aggregate_runs",
        "rater_quality",
        "ppi_mean",
        "ppi_share_above",
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


# What a statistics package, as scipy.stats or pingouin, does not import: a command
# line, plotting, the web application or a database.
FORBIDDEN = ("click", "matplotlib", "flask", "sqlalchemy", "sqlmodel")


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_no_command_line_plotting_web_or_database_imports(path):
    # Only relative imports inside the package (numpy, pandas and scipy outside it),
    # anywhere in the module, functions included.
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
            assert root not in {*FORBIDDEN, "annotator"}, (path, name)


def test_importing_every_module_loads_no_command_line_plotting_web_or_database():
    """The package and all its submodules, imported in a fresh interpreter, leave none
    of those libraries in ``sys.modules`` (whatever way a module might import them).

    ``annotator`` itself (the Flask app) is stood in for by an empty package, so that
    only what ``annotator.metrics`` imports is seen.
    """
    code = f"""
import importlib, json, pkgutil, sys, types
package = types.ModuleType("annotator")
package.__path__ = [{str(PACKAGE.parent)!r}]
sys.modules["annotator"] = package
import annotator.metrics as metrics
names = [m.name for m in pkgutil.walk_packages(metrics.__path__, "annotator.metrics.")]
for name in names:
    importlib.import_module(name)
for name in metrics.__all__:
    getattr(metrics, name)
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({FORBIDDEN!r}))
print(json.dumps({{"modules": len(names), "forbidden": loaded}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["modules"] >= 20
    assert found["forbidden"] == []


def test_lazy_names_resolve_to_their_modules():
    for name in metrics.__all__:
        value = getattr(metrics, name)
        if callable(value):
            assert value.__module__.startswith("annotator.metrics."), name
    with pytest.raises(AttributeError, match="no_such_name"):
        metrics.no_such_name  # noqa: B018


def test_alttest_modules_stay_small():
    for path in (PACKAGE / "alttest").glob("*.py"):
        assert len(path.read_text().splitlines()) <= 450, path


def test_functions_named_like_their_module_stay_functions():
    # A fresh interpreter where the submodules load before the package names resolve.
    code = (
        "import annotator.metrics._icc, annotator.metrics._nmae, annotator.metrics._correlation; "
        "from annotator.metrics import correlation, icc, nmae; "
        "print(callable(icc), callable(nmae), type(icc).__name__, type(correlation).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "function", "function"]
