"""The benchmark scripts: each loads and runs (at tiny sizes, ``--quick``), records its
figures with the keys benchmarks/table.py reads and a goal's verdict that follows from
figure and goal; `make bench` runs each one, docs/performance.md lists them, and no
script imports another's helpers (a script left out, or broken by a refactor of a
script it borrowed from, was found long after).

No timing is asserted (the guide: speed is measured in benchmarks/, never by timed
tests). These tests use no database fixture, so only CI's SQLite pass runs them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import operator
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.documentation import section

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("*.py"))
# The scripts (a main()); the rest is a reference metrics.py loads (the alt-test's
# per-item loop) and, in benchmarks/harness/, what the scripts share.
RUNNABLE = sorted(p.name for p in SCRIPTS if "def main(" in p.read_text())
KEYS = {
    "benchmark",
    "measure",
    "value",
    "unit",
    "goal",
    "goal_met",
    "ratio_of",
    "rounds",
    "commit",
    "machine_load",
    "command",
    "taken_at",
    "quick",
}
# Left out of `make bench-quick`, and why.
NOT_QUICK = {"scaleout.py": "needs nginx, installed as root", "table.py": "writes the docs"}
# Written independently of harness.results.goal_met, to check it.
COMPARE = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}


def _target(name: str) -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    target = makefile.split(f"\n{name}:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"benchmarks/(\w+\.py)", target)


@pytest.fixture(scope="module")
def harness():
    """benchmarks/harness, imported from its folder (benchmarks/ is not a package and
    is not put on sys.path, where its scripts' names would shadow others)."""
    if "harness" not in sys.modules:
        init = BENCHMARKS / "harness" / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            "harness", init, submodule_search_locations=[str(init.parent)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["harness"] = module
        spec.loader.exec_module(module)

    return sys.modules["harness"]


def test_every_benchmark_script_loads():
    # Each module's top level (its imports of the app and of the harness), without
    # running main(): one fresh interpreter, the scripts' own sys.path.
    code = (
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(BENCHMARKS)!r})\n"
        f"for path in {[str(p) for p in SCRIPTS]!r}:\n"
        "    name = 'bench_' + path.rsplit('/', 1)[1][:-3]\n"
        "    spec = importlib.util.spec_from_file_location(name, path)\n"
        "    module = sys.modules[name] = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_no_script_imports_another_script():
    names = {path.stem for path in SCRIPTS}
    borrowed = []
    for path in SCRIPTS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""]
            else:
                continue
            borrowed += [f"{path.name}: {m}" for m in modules if m.split(".")[0] in names]
    assert borrowed == []


def test_make_bench_runs_the_scripts_the_docs_list():
    scripts = _target("bench")
    assert set(RUNNABLE) <= set(scripts), sorted(set(RUNNABLE) - set(scripts))
    assert scripts[-1] == "table.py"  # the table after the figures
    # The first paragraph under the heading lists them.
    listed = re.findall(
        r"`benchmarks/(\w+\.py)`", section("Running the benchmarks").strip().split("\n\n")[0]
    )
    assert sorted(set(scripts)) == sorted(set(listed))


def test_bench_quick_runs_every_script_but_those_that_cannot():
    quick = _target("bench-quick")
    assert sorted(set(quick) | set(NOT_QUICK)) == RUNNABLE
    assert not set(quick) & set(NOT_QUICK)


def _quick_params():
    params = []
    for name in _target("bench-quick"):
        marks = [pytest.mark.browser] if name == "rating_keyboard.py" else []
        params.append(pytest.param(name, marks=marks, id=name[:-3]))
    return params


@pytest.mark.parametrize("script", _quick_params())
def test_quick_run_records_its_figures(script, tmp_path):
    if script == "rating_keyboard.py" and not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    results = tmp_path / "results.json"
    # A row of another benchmark, which the script's save must keep.
    other = {key: None for key in KEYS} | {"benchmark": "other", "measure": "m", "quick": True}
    results.write_text(json.dumps({"figures": [other]}))
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick", "--results", str(results)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:])
    rows = json.loads(results.read_text())["figures"]
    assert other in rows
    mine = [row for row in rows if row["benchmark"] == script[:-3]]
    assert mine, run.stdout[-2000:]
    assert len({row["measure"] for row in mine}) == len(mine)
    for row in mine:
        assert set(row) == KEYS, row
        assert row["quick"] is True
        assert isinstance(row["value"], int | float), row
        assert row["command"].startswith(f"benchmarks/{script} --quick"), row
        assert len(row["machine_load"]) == 2, row
        if row["goal"] is None:
            assert row["goal_met"] is None, row
        else:
            op, bound = re.fullmatch(r"(<=|<|>=|>|==) (\S+)", row["goal"]).groups()
            expected = row["value"] == float(bound) if op == "==" else None
            expected = COMPARE[op](row["value"], float(bound)) if op != "==" else expected
            assert row["goal_met"] is expected, row


def test_goal_met_follows_figure_and_goal(harness):
    goal_met = harness.goal_met
    assert goal_met(2.9, "<= 3") is True
    assert goal_met(3.0, "<= 3") is True
    assert goal_met(3.1, "<= 3") is False
    assert goal_met(3.0, "< 3") is False
    assert goal_met(0.49, ">= 0.5") is False
    assert goal_met(0, "== 0") is True
    assert goal_met(1, "== 0") is False
    assert goal_met(1.0, None) is None
    for bad in ("3", "=< 3", "<= three", "<= 3 x"):
        with pytest.raises(ValueError, match="goal"):
            goal_met(1.0, bad)


def test_saving_merges_by_benchmark_and_measure(harness, tmp_path):
    from argparse import Namespace

    path = tmp_path / "results.json"
    first = harness.Recorder("a", Namespace(quick=False, results=path))
    first.record("speed", 2.0, "x", goal="<= 3")
    first.record("size", 5.0, "MiB")
    first.save()
    second = harness.Recorder("b", Namespace(quick=False, results=path))
    second.record("speed", 4.0, "x", goal="<= 3")
    second.save()
    again = harness.Recorder("a", Namespace(quick=False, results=path))
    again.record("speed", 3.5, "x", goal="<= 3")
    again.save()
    rows = {(r["benchmark"], r["measure"]): r for r in json.loads(path.read_text())["figures"]}
    assert sorted(rows) == [("a", "size"), ("a", "speed"), ("b", "speed")]
    assert (rows["a", "speed"]["value"], rows["a", "speed"]["goal_met"]) == (3.5, False)
    assert rows["a", "size"]["value"] == 5.0
    assert rows["b", "speed"]["goal_met"] is False


def test_table_puts_each_figure_beside_its_goal(harness, tmp_path):
    from argparse import Namespace

    results = tmp_path / "results.json"
    recorder = harness.Recorder("startup", Namespace(quick=False, results=results))
    recorder.record("--help against import flask", 1.25, "x", goal="<= 2")
    recorder.record("export", 3.5, "x", goal="<= 2")
    recorder.record("reference", 12.0, "ms")
    recorder.save()
    page = tmp_path / "performance.md"
    spec = importlib.util.spec_from_file_location("bench_table", BENCHMARKS / "table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    page.write_text(f"# Performance\n\n{table.START}\nold\n{table.END}\n\nafter\n")
    assert table.main(["--results", str(results), "--page", str(page)]) == 0
    text = page.read_text()
    assert "old" not in text and text.endswith("\n\nafter\n")
    rows = {
        line.split(" | ")[1]: line for line in text.splitlines() if line.startswith("| startup")
    }
    assert "| 1.25x | <= 2x | met |" in rows["--help against import flask"]
    assert "| 3.5x | <= 2x | **not met** |" in rows["export"]
    assert "| 12 ms | - | no goal |" in rows["reference"]
    assert table.main(["--results", str(results), "--page", str(page), "--check"]) == 0


def test_the_docs_table_is_the_results_files():
    # docs/performance.md shows what benchmarks/results.json holds, not a copy by hand.
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / "table.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_recorded_command_names_no_folder_of_this_machine(harness, tmp_path, monkeypatch):
    # The docs show each row's command (tests/test_docs.py refuses machine paths):
    # an earlier version's folder outside the repository reads DIR, one inside it
    # is relative to it.
    from argparse import Namespace

    inside = str(ROOT / "benchmarks" / "results.json")
    argv = ["benchmarks/x.py", "--baseline", str(tmp_path), "--version", f"old={tmp_path}"]
    monkeypatch.setattr(sys, "argv", [*argv, "--results", inside, "--runs", "3"])
    recorder = harness.Recorder("x", Namespace(quick=True, results=tmp_path / "r.json"))
    assert recorder.command == (
        "benchmarks/x.py --baseline DIR --version old=DIR "
        "--results benchmarks/results.json --runs 3"
    )


def test_a_commands_peak_memory_is_its_own_not_the_benchmarks(harness):
    """Linux starts a process's peak memory at its parent's: a command forked by a
    benchmark holding 300 MiB of frames reported a peak above 300 MiB."""
    allocate = [
        sys.executable,
        "-c",
        "x = bytearray(30 * 2**20); x[::4096] = b'1' * len(x[::4096])",
    ]
    alone = harness.run_timed(allocate)
    ballast = bytearray(300 * 2**20)
    ballast[::4096] = b"1" * len(ballast[::4096])  # touched, so resident
    beside = harness.run_timed(allocate)
    del ballast
    assert 30 < alone.peak_mib < 100
    assert abs(beside.peak_mib - alone.peak_mib) < 20
    # The figures are the command's: its CPU and a wall time without the launcher's
    # start-up; its exit code and output are kept.
    failing = [sys.executable, "-c", "print('out'); raise SystemExit(3)"]
    timing = harness.run_timed(failing, check=False, output=True)
    assert (timing.returncode, timing.output) == (3, "out\n")
    with pytest.raises(RuntimeError, match="failed"):
        harness.run_timed(failing)
    with pytest.raises(RuntimeError, match="No such file"):
        harness.run_timed(["/no/such/command"])
