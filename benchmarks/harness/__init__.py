"""The benchmarks' one harness: interleaved rounds, temporary databases, process
timing and the results file.

Every script in benchmarks/ measures a standing goal with it::

    from harness import Recorder, arguments, interleave, temporary_database

    parser = arguments(__doc__)          # adds --quick and --results
    args = parser.parse_args()
    recorder = Recorder("startup", args)
    rounds = interleave({"annotator": run_a, "flask": run_b}, rounds=5)
    recorder.record("--help against import flask", rounds.ratio("annotator", "flask"),
                    "x", goal="<= 2", ratio_of="python -c 'import flask'", rounds=5)
    recorder.save()                      # merges into benchmarks/results.json

``benchmarks/table.py`` renders benchmarks/results.json into docs/performance.md.
"""

from harness.databases import Database, temporary_database
from harness.processes import Timing, run_timed
from harness.results import Recorder, arguments, goal_met, machine_load
from harness.rounds import Rounds, best_of, interleave

__all__ = [
    "Database",
    "Recorder",
    "Rounds",
    "Timing",
    "arguments",
    "best_of",
    "goal_met",
    "interleave",
    "machine_load",
    "run_timed",
    "temporary_database",
]
