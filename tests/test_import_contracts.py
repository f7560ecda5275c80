"""The import rules of docs/architecture.md hold, and lint-imports catches a break.

``make lint`` runs lint-imports on the package; here it also runs on a copy of the
package with one import planted against each rule, which must fail, so that a
contract that checks nothing (a misspelt module, a rule the tool skips) is found.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(
    not LINT_IMPORTS.exists(), reason="lint-imports is not installed (make install-test)"
)


def _lint(tree: Path) -> subprocess.CompletedProcess:
    # The copy comes first on the path, before the editable install of ROOT.
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    tree = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "annotator", tree / "annotator", ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_package_keeps_every_contract(package_copy):
    result = _lint(package_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "planted", "contract"),
    [
        ("metrics/_icc.py", "import flask", "metrics: statistics on arrays"),
        ("metrics/_nmae.py", "from annotator import models", "metrics: statistics on arrays"),
        ("metrics/kappa.py", "import matplotlib.pyplot", "metrics: statistics on arrays"),
        ("cli/export.py", "from annotator.web import downloads", "cli: no web helpers"),
        ("web/downloads.py", "from annotator.cli import export", "web: no cli helpers"),
        ("analysis/columns.py", "from annotator.web import display", "layers: web and cli"),
        ("services/cache.py", "from annotator.web import downloads", "layers: web and cli"),
        ("metrics/_nmae.py", "from annotator.render.report import cells", "layers: web and cli"),
        ("analysis/columns.py", "import sqlmodel", "analysis is pure"),
        ("analysis/columns.py", "import pickle", "analysis is pure"),
        ("analysis/columns.py", "from annotator import db", "analysis is pure"),
        ("analysis/columns.py", "import matplotlib", "analysis is pure"),
        ("data/matrix_rules.py", "from annotator.data import sql", "matrix rules are pure"),
        ("data/temperatures.py", "import sqlmodel", "matrix rules are pure"),
        ("render/table_files.py", "from annotator import models", "render is display only"),
        ("render/table_files.py", "import sqlalchemy", "render is display only"),
        ("jobs/kinds.py", "from annotator.services import cache", "jobs is the queue"),
        ("study/strict.py", "from annotator.data import csv_escape", "no import circle"),
        ("analysis/columns.py", "from annotator.analysis import model", "no import circle"),
        ("web/lead/common.py", "from annotator.web.lead import views", "no import circle"),
    ],
)
def test_a_planted_import_breaks_its_contract(package_copy, module, planted, contract):
    path = package_copy / "annotator" / module
    original = path.read_text()
    try:
        path.write_text(original + f"\n{planted}  # planted by the test\n")
        result = _lint(package_copy)
    finally:
        path.write_text(original)
    assert result.returncode != 0, result.stdout
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, result.stdout
