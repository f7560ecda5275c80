"""The package as a whole: public API, docstring examples, no web dependencies."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
from pathlib import Path

import pytest

import annotator.metrics as metrics

MODULES = ["alpha", "alttest", "icc", "matrix", "nmae", "cli"]


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
    "name", ["icc", "nmae", "krippendorff_alpha", "alt_test", "alt_test_domains"]
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


@pytest.mark.parametrize("path", sorted(Path(metrics.__file__).parent.glob("*.py")))
def test_no_web_imports(path):
    # The metrics must run without the web application: only relative imports inside
    # the package, and no Flask or database packages.
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside annotator.metrics
                assert node.level == 1, path
                continue
            names = [node.module or ""]
        else:
            continue
        for name in names:
            root = name.split(".")[0]
            assert root not in {"flask", "sqlalchemy", "sqlmodel", "annotator"}, (path, name)
