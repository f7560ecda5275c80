"""Start-up time of the command line, side by side with ``python -c "import flask"``.

Run with ``make bench`` or ``.venv/bin/python benchmarks/startup.py [--runs N]``.

Each command is started ``--runs`` times as a new process, the three in turn
(so that load from other work on the machine falls on all of them alike), and
the median wall time of each is printed with its ratio to importing Flask,
the floor of any Flask command line. Goal: ``annotator --help`` within 2x of
``import flask``.

``--export STUDY`` adds ``annotator export STUDY --format long --out -`` (a
command that opens the database; it uses the database of ``ANNOTATOR_DATABASE_URL``
and ``ANNOTATOR_INSTANCE_PATH``, which must hold STUDY).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL_RATIO = 2.0


def _commands(export: str | None) -> dict[str, list[str]]:
    annotator = str(Path(sys.executable).with_name("annotator"))
    commands = {
        'python -c "import flask"': [sys.executable, "-c", "import flask"],
        "annotator --help": [annotator, "--help"],
        "annotator study list --help": [annotator, "study", "list", "--help"],
    }
    if export:
        commands["annotator export (long)"] = [
            annotator,
            "export",
            export,
            "--format",
            "long",
            "--out",
            "-",
        ]
    return commands


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command")
    parser.add_argument("--export", metavar="STUDY", help="also time exporting STUDY")
    args = parser.parse_args()
    commands = _commands(args.export)
    for argv in commands.values():
        _time(argv)  # warm the file cache
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(args.runs):
        for label, argv in commands.items():
            times[label].append(_time(argv))
    medians = {label: statistics.median(values) for label, values in times.items()}
    reference = medians['python -c "import flask"']
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"start-up, median of {args.runs} runs each (interleaved), load average {load}")
    for label, median in medians.items():
        ratio = median / reference
        goal = f"  goal <= {GOAL_RATIO:g}x" if label == "annotator --help" else ""
        print(f"{label:<30} {median * 1000:7.0f} ms  {ratio:5.2f}x import flask{goal}")
    ratio = medians["annotator --help"] / reference
    verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
    print(f"goal {verdict}: annotator --help is {ratio:.2f}x import flask")


if __name__ == "__main__":
    main()
