"""``annotator report``: the file, the CSV and LaTeX tables, and a light ``--help``."""

from __future__ import annotations

import subprocess
import sys


def test_help_lists_report_without_loading_matplotlib(tmp_path):
    code = (
        "import sys\n"
        "from annotator.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n"
    )
    env = {"ANNOTATOR_INSTANCE_PATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert "report" in out.stdout
    assert "LOADED []" in out.stdout
