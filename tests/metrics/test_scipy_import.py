"""scipy through ``annotator.metrics._scipy``: the docstring rewriting skipped, nothing else.

Each case runs in a fresh interpreter: the bypass only acts before scipy's modules load,
and this test session has loaded them long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

# What both interpreters print: docstrings of functions scipy decorates with
# xp_capabilities, and results computed by the functions the metrics use.
_REPORT = """
    import json
    import numpy as np
    report = {
        "docs": {
            name: getattr(stats, name).__doc__
            for name in ("false_discovery_control", "rankdata", "pearsonr")
        },
        "special_doc": special.ndtri.__doc__,
        "rankdata": stats.rankdata([3.0, 1.0, 2.0, 2.0]).tolist(),
        "fdc": stats.false_discovery_control([0.01, 0.02, 0.04, 0.3], method="by").tolist(),
        "pearson": float(stats.pearsonr([1.0, 2.0, 3.0, 5.0], [2.0, 1.0, 4.0, 4.0]).pvalue),
        "ndtri": float(special.ndtri(0.975)),
        "bypass": bypass,
    }
    print(json.dumps(report))
"""


def _run(setup: str) -> dict:
    code = textwrap.dedent(setup) + textwrap.dedent(_REPORT)
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout)


def _through_annotator() -> dict:
    return _run(
        """
        from annotator.metrics._scipy import bypass_installed, special, stats
        bypass = bypass_installed()
        """
    )


def _plain() -> dict:
    return _run(
        """
        from scipy import special, stats
        bypass = False
        """
    )


def test_the_bypass_is_in_place_and_leaves_results_and_documentation_as_they_were():
    quick, plain = _through_annotator(), _plain()
    # Fails when a scipy release moves the private name: the bypass then does nothing.
    assert quick["bypass"] is True
    for key in ("rankdata", "fdc", "pearson", "ndtri"):
        assert quick[key] == plain[key], key
    backend_table = "Array API Standard Support"
    assert any(backend_table in doc for doc in plain["docs"].values()), (
        "scipy no longer adds its backend table: the bypass has nothing left to save"
    )
    for name, doc in quick["docs"].items():
        assert backend_table not in doc, name
        # The function's own documentation is kept: its summary and its parameters.
        summary = doc.strip().splitlines()[0]
        assert summary and summary in plain["docs"][name], name
        assert "Parameters" in doc, name
    # A ufunc's documentation starts as scipy's does, its generated signature not doubled.
    assert quick["special_doc"].splitlines()[0] == plain["special_doc"].splitlines()[0]


def test_the_other_decorators_parse_no_docstring_either():
    # axis_nan_policy (ttest_1samp), _transition_to_rng (permutation_test): their
    # functions keep their own documentation and results, without the added paragraphs.
    setup = """
        {}
        import numpy as np
        from scipy._lib import _util
        from scipy.stats import _axis_nan_policy
        found = {{
            "parsers": [m.FunctionDoc.__name__ for m in (_util, _axis_nan_policy)],
            "ttest": float(stats.ttest_1samp([1.0, 2.0, 4.0, 3.5], 1.5).pvalue),
            "ttest_doc": stats.ttest_1samp.__doc__,
            "perm_doc": stats.permutation_test.__doc__,
        }}
        print(json.dumps(found))
    """
    quick, plain = (
        json.loads(
            subprocess.run(
                [sys.executable, "-c", "import json\n" + textwrap.dedent(setup.format(first))],
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            ).stdout
        )
        for first in (
            "from annotator.metrics._scipy import stats",
            "from scipy import stats",
        )
    )
    assert quick["parsers"] == ["_DocAsIs", "_DocAsIs"]
    assert plain["parsers"] == ["FunctionDoc", "FunctionDoc"]
    assert quick["ttest"] == plain["ttest"]
    for key in ("ttest_doc", "perm_doc"):
        summary = quick[key].strip().splitlines()[0]
        assert summary == plain[key].strip().splitlines()[0], key
        assert "Parameters" in quick[key], key
    # What the parser would have added: the note on np.matrix inputs.
    assert "np.matrix" in plain["ttest_doc"] and "np.matrix" not in quick["ttest_doc"]


def test_no_bypass_once_scipy_is_loaded():
    """Installed after scipy.stats loaded, the bypass would save nothing: not installed."""
    late = _run(
        """
        import scipy.stats
        from annotator.metrics._scipy import bypass_installed, special, stats
        bypass = bypass_installed()
        """
    )
    assert late["bypass"] is False


def test_every_scipy_import_of_the_package_goes_through_the_bypass():
    """A module importing scipy directly would load it before the bypass, unnoticed."""
    from pathlib import Path

    import annotator

    root = Path(annotator.__file__).parent
    direct = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "_scipy.py"
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.lstrip().startswith(("from scipy", "import scipy"))
    ]
    assert direct == []
