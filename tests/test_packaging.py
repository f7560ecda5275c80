"""A non-editable install finds its templates, static files, demo and migrations."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import sys
from pathlib import Path
import annotator
from annotator import create_app
package = Path(annotator.__file__).parent
assert str(package).startswith(sys.argv[1]), package
app = create_app({"DATABASE_URL": "sqlite://", "SECRET_KEY": "x"})
assert Path(app.template_folder) == package / "templates", app.template_folder
assert Path(app.static_folder) == package / "static", app.static_folder
with app.test_request_context():
    app.jinja_env.get_template("base.html")
    app.jinja_env.get_template("auth/login.html")
assert (package / "static" / "vendor" / "htmx-2.0.11.min.js").is_file()
assert (package / "demo_data" / "study.toml").is_file()
assert (package / "demo_data" / "items.jsonl").is_file()
assert (package / "demo_data" / "llm_scores.csv").is_file()
assert list((package / "migrations" / "versions").glob("*.py"))
print("ok")
"""


def test_wheel_carries_templates_static_demo_and_migrations(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("annotator-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    result = subprocess.run(
        [sys.executable, "-c", CHECK, str(site)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "ANNOTATOR_INSTANCE_PATH": str(tmp_path / "instance")},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
