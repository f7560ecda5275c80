"""The results file: every figure beside its goal, in benchmarks/results.json.

Each row is ``{benchmark, measure, value, unit, goal, goal_met, ratio_of, rounds,
commit, machine_load, command, taken_at, quick}``. A goal is a comparison and a
number, such as ``"<= 3"`` (a ratio to stay under) or ``">= 0.5"``; ``goal_met`` is
that comparison applied to the value. Saving merges by (benchmark, measure): running
one script replaces its own rows and keeps every other script's, so the file always
holds the last figure of each measure and the commit and load it was taken at.
"""

from __future__ import annotations

import argparse
import datetime
import json
import operator
import os
import shlex
import subprocess
import sys
from pathlib import Path

__all__ = ["RESULTS", "Recorder", "arguments", "goal_met", "machine_load", "parse_goal"]

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results.json"
# --quick runs prove that a script runs; their figures go elsewhere, never over the
# real ones.
QUICK_RESULTS = ROOT / "build" / "bench-quick" / "results.json"
_OPERATORS = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
}


def parse_goal(goal: str) -> tuple[str, float]:
    """``"<= 3"`` -> ``("<=", 3.0)``; ValueError naming the goal if it is not one."""
    parts = goal.split()
    if len(parts) != 2 or parts[0] not in _OPERATORS:
        raise ValueError(
            f"goal must be '<op> <number>' with op one of {list(_OPERATORS)}: {goal!r}"
        )
    try:
        return parts[0], float(parts[1])
    except ValueError:
        raise ValueError(f"goal's bound is not a number: {goal!r}") from None


def goal_met(value: float, goal: str | None) -> bool | None:
    """Whether ``value`` meets ``goal`` (None when there is no goal)."""
    if goal is None:
        return None
    op, bound = parse_goal(goal)
    return bool(_OPERATORS[op](value, bound))


def machine_load() -> float:
    """The one-minute load average (2 cores: above 2, processes wait for a core)."""
    return round(os.getloadavg()[0], 2)


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    # Only the product's own files make a figure's code differ from the commit.
    dirty = git("status", "--porcelain", "--", "annotator", "templates", "static")
    return head + ("+dirty" if dirty else "")


def arguments(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark takes."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes and one round: proves the script runs; figures go to --results "
        f"(default {QUICK_RESULTS.relative_to(ROOT)}), never benchmarks/results.json",
    )
    parser.add_argument("--results", type=Path, help=f"default {RESULTS.relative_to(ROOT)}")
    return parser


def _portable(argument: str) -> str:
    """``argument`` as the docs may show it: a folder of this machine outside the
    repository (an earlier version's ``--baseline /tmp/x``, ``--version old=/tmp/x``)
    becomes ``DIR``, which the command's help explains; one inside it, relative."""
    label, equals, value = argument.rpartition("=")
    path = value if equals else argument
    if not path.startswith("/"):
        return argument
    resolved = Path(path).resolve()
    if resolved.is_relative_to(ROOT):
        return f"{label}{equals}{resolved.relative_to(ROOT)}"
    return f"{label}{equals}DIR"


class Recorder:
    """Collects one script's figures and merges them into the results file."""

    def __init__(self, benchmark: str, args: argparse.Namespace | None = None) -> None:
        self.benchmark = benchmark
        self.quick = bool(getattr(args, "quick", False))
        default = QUICK_RESULTS if self.quick else RESULTS
        self.path = Path(getattr(args, "results", None) or default)
        self.rows: list[dict] = []
        self.commit = _commit()
        self.load_at_start = machine_load()
        script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else benchmark
        arguments_given = [shlex.quote(_portable(arg)) for arg in sys.argv[1:]]
        self.command = " ".join(["benchmarks/" + script, *arguments_given]).strip()

    def record(
        self,
        measure: str,
        value: float,
        unit: str,
        *,
        goal: str | None = None,
        ratio_of: str | None = None,
        rounds: int | None = None,
    ) -> dict:
        """Add one figure (and print it); ``goal`` as in :func:`goal_met`."""
        if not isinstance(value, int | float) or value != value:
            raise ValueError(f"value of {measure!r} must be a number, not {value!r}")
        met = goal_met(value, goal)
        row = {
            "benchmark": self.benchmark,
            "measure": measure,
            "value": round(float(value), 4),
            "unit": unit,
            "goal": goal,
            "goal_met": met,
            "ratio_of": ratio_of,
            "rounds": rounds,
            "commit": self.commit,
            # The load when the script started and when the figure was taken.
            "machine_load": [self.load_at_start, machine_load()],
            "command": self.command,
            "taken_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "quick": self.quick,
        }
        self.rows = [r for r in self.rows if r["measure"] != measure] + [row]
        verdict = "" if met is None else f"  goal {goal}: {'met' if met else 'NOT MET'}"
        print(f"[{self.benchmark}] {measure}: {value:.4g} {unit}{verdict}", flush=True)
        return row

    def save(self) -> Path:
        """Merge this run's rows into the file (replacing the same measures)."""
        rows = load_results(self.path)
        mine = {r["measure"] for r in self.rows}
        kept = [r for r in rows if not (r["benchmark"] == self.benchmark and r["measure"] in mine)]
        merged = sorted(kept + self.rows, key=lambda r: (r["benchmark"], r["measure"]))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole to a temporary file and renamed: never a half-written file.
        temporary = self.path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps({"figures": merged}, indent=1) + "\n")
        temporary.replace(self.path)
        print(f"[{self.benchmark}] {len(self.rows)} figures saved in {self.path}", flush=True)
        return self.path


def load_results(path: Path = RESULTS) -> list[dict]:
    if not path.is_file():
        return []
    return json.loads(path.read_text())["figures"]
