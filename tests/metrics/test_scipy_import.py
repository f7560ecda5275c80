"""scipy is imported as it is: the metrics change nothing of it.

Runs in a fresh interpreter, so that the comparison sees scipy as the metrics
load it, not as this test session loaded it long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

_REPORT = """
    import json
    from scipy import special, stats
    print(json.dumps({
        "docs": {
            name: getattr(stats, name).__doc__
            for name in ("false_discovery_control", "rankdata", "pearsonr", "ttest_1samp")
        },
        "special_doc": special.ndtri.__doc__,
    }))
"""


def _docs(first: str) -> dict:
    code = textwrap.dedent(first) + textwrap.dedent(_REPORT)
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout)


def test_the_metrics_leave_scipys_documentation_whole():
    """scipy's functions keep the documentation scipy gives them (the backend table
    and the notes its decorators add) after every metrics module is imported."""
    through_metrics = _docs(
        """
        import importlib, pkgutil
        import annotator.metrics as metrics
        for module in pkgutil.walk_packages(metrics.__path__, "annotator.metrics."):
            importlib.import_module(module.name)
        """
    )
    plain = _docs("")
    assert through_metrics == plain
    # What scipy's decorators add at import, present when scipy is left alone.
    assert "Array API Standard Support" in plain["docs"]["pearsonr"]
    assert "np.matrix" in plain["docs"]["ttest_1samp"]
