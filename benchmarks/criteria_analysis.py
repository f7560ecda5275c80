"""What a rubric study's analysis costs, against a study of one criterion.

Run with ``.venv/bin/python benchmarks/criteria_analysis.py [--summaries 1600]``. The
data is SummEval-shaped (summaries x 4 criteria, 3 raters, 6 judges, 1-5;
``tests/analysis/summeval_shape.py``), in memory. Measured side by side in one run:

- ``single``: the analysis (reliability, agreement, alt-test) of one criterion's
  scores as a study without criteria;
- ``one criterion``: the same criterion picked from the rubric study (the dashboard's
  computation), which should cost the same;
- ``all criteria``: every criterion and the tables across them (pooled alt-test over
  4 x the instances, the alt-test with the criteria as domains, correlations between
  criteria), which should cost about 4 x ``single`` plus the pooled test.

The three alternate in the harness's interleaved rounds (best of each). Goal: picking
a criterion costs nothing over a study of it (within 1.1x, this machine's noise).
``--quick``: 40 summaries, one round.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import Recorder, arguments, interleave  # noqa: E402

from annotator.analysis.criteria import criterion_frames  # noqa: E402
from annotator.analysis.study_analysis import analyse  # noqa: E402
from tests.analysis.summeval_shape import summeval_shape  # noqa: E402

PARTS = ("reliability", "agreement", "alttest")


PICK_GOAL = 1.1


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--summaries", type=int, default=1600)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.quick:
        args.summaries, args.repeat = 40, 1
    recorder = Recorder("criteria_analysis", args)
    frames = summeval_shape(args.summaries, seed=0).frames
    mine = criterion_frames(frames, "coherence")
    single = replace(
        mine,
        ratings=mine.ratings.drop(columns="criterion"),
        llm=mine.llm.drop(columns="criterion"),
        criteria=pd.DataFrame(columns=["criterion", "definition", "benchmarks"]),
    )
    rounds = interleave(
        {
            "single": lambda: analyse(single, parts=PARTS),
            "one criterion": lambda: analyse(frames, parts=PARTS, criterion="coherence"),
            "all criteria": lambda: analyse(frames, parts=PARTS),
        },
        args.repeat,
    )
    timings = {name: rounds.best(name) for name in rounds.times}
    base = timings["single"]
    print(f"{args.summaries} summaries x 4 criteria, 3 raters, 6 judges (best of {args.repeat})")
    for name, seconds in timings.items():
        print(f"  {name:<14} {seconds:7.2f} s  {seconds / base:5.2f} x single")
    recorder.record(
        f"one criterion picked, against a study of it ({args.summaries} summaries)",
        rounds.ratio("one criterion", "single"),
        "x",
        goal=f"<= {PICK_GOAL}",
        ratio_of="the criterion as a study of its own",
        rounds=args.repeat,
    )
    recorder.record(
        f"every criterion and the tables across them ({args.summaries} summaries)",
        rounds.ratio("all criteria", "single"),
        "x",
        ratio_of="one criterion as a study of its own",
        rounds=args.repeat,
    )
    recorder.save()


if __name__ == "__main__":
    main()
