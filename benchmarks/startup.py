"""Start-up time of the command line, side by side with ``python -c "import flask"``.

Run with ``make bench`` or ``.venv/bin/python benchmarks/startup.py [--runs N]``
(``--quick``: two runs).

Each command is started ``--runs`` times as a new process, the three in turn
(the harness's interleaved rounds, so that load from other work on the machine falls
on all of them alike), and
the median wall time of each is printed with its ratio to importing Flask,
the floor of any Flask command line. Goal: ``annotator --help`` within 2x of
``import flask``.

``--export STUDY`` adds ``annotator export STUDY --format long --out -`` (a
command that opens the database; it uses the database of ``ANNOTATOR_DATABASE_URL``
and ``ANNOTATOR_INSTANCE_PATH``, which must hold STUDY).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness import Recorder, arguments, interleave, run_timed

GOAL_RATIO = 2.0
FLASK = 'python -c "import flask"'


def _commands(export: str | None) -> dict[str, list[str]]:
    annotator = str(Path(sys.executable).with_name("annotator"))
    commands = {
        FLASK: [sys.executable, "-c", "import flask"],
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


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--runs", type=int, default=15, help="runs of each command")
    parser.add_argument("--export", metavar="STUDY", help="also time exporting STUDY")
    args = parser.parse_args()
    runs = 2 if args.quick else args.runs
    recorder = Recorder("startup", args)
    commands = _commands(args.export)
    # One warm round (the file cache), dropped.
    rounds = interleave(
        {
            label: lambda argv=argv: run_timed(argv, os.environ).wall
            for label, argv in commands.items()
        },
        runs,
        warm=1,
        measured=True,
    )
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"start-up, median of {runs} runs each (interleaved), load average {load}")
    for label in commands:
        ratio = rounds.ratio(label, FLASK, by="median")
        goal = f"  goal <= {GOAL_RATIO:g}x" if label == "annotator --help" else ""
        print(
            f"{label:<30} {rounds.median(label) * 1000:7.0f} ms  {ratio:5.2f}x import flask{goal}"
        )
    recorder.record(
        "annotator --help against import flask (wall, medians)",
        rounds.ratio("annotator --help", FLASK, by="median"),
        "x",
        goal=f"<= {GOAL_RATIO:g}",
        ratio_of=FLASK,
        rounds=runs,
    )
    recorder.record(
        "annotator --help (wall, median)",
        rounds.median("annotator --help") * 1000,
        "ms",
        rounds=runs,
    )
    recorder.save()


if __name__ == "__main__":
    main()
