"""The benchmark scripts: each still loads, and each one `make bench` runs is in the
list of docs/performance.md (a script left out of either was found broken long after
a refactor)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.documentation import section

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))


def _make_bench_scripts() -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    target = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"benchmarks/(\w+\.py)", target)


def test_every_benchmark_script_loads():
    # Each module's top level (its imports of the app and of the other benchmarks),
    # without running main(): one fresh interpreter, the scripts' own sys.path.
    code = (
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
        f"for path in {[str(p) for p in BENCHMARKS]!r}:\n"
        "    name = 'bench_' + path.rsplit('/', 1)[1][:-3]\n"
        "    spec = importlib.util.spec_from_file_location(name, path)\n"
        "    module = sys.modules[name] = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_make_bench_runs_the_scripts_the_docs_list():
    scripts = _make_bench_scripts()
    # Every script with a main() is run by `make bench` (a module others import,
    # such as the alt-test's per-item loop, need not be).
    runnable = {p.name for p in BENCHMARKS if "def main(" in p.read_text()}
    assert runnable <= set(scripts), sorted(runnable - set(scripts))
    # The first paragraph under the heading lists them.
    listed = re.findall(
        r"`benchmarks/(\w+\.py)`", section("Running the benchmarks").strip().split("\n\n")[0]
    )
    assert sorted(set(scripts)) == sorted(set(listed))
    assert all((ROOT / "benchmarks" / name).is_file() for name in scripts)
