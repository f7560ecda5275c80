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
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotator.analysis.criteria import criterion_frames  # noqa: E402
from annotator.analysis.study_analysis import analyse  # noqa: E402
from tests.analysis.summeval_shape import summeval_shape  # noqa: E402

PARTS = ("reliability", "agreement", "alttest")


def _best_of(repeat: int, call) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--summaries", type=int, default=1600)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    frames = summeval_shape(args.summaries, seed=0).frames
    mine = criterion_frames(frames, "coherence")
    single = replace(
        mine,
        ratings=mine.ratings.drop(columns="criterion"),
        llm=mine.llm.drop(columns="criterion"),
        criteria=pd.DataFrame(columns=["criterion", "definition", "benchmarks"]),
    )
    timings = {
        "single": _best_of(args.repeat, lambda: analyse(single, parts=PARTS)),
        "one criterion": _best_of(
            args.repeat, lambda: analyse(frames, parts=PARTS, criterion="coherence")
        ),
        "all criteria": _best_of(args.repeat, lambda: analyse(frames, parts=PARTS)),
    }
    base = timings["single"]
    print(f"{args.summaries} summaries x 4 criteria, 3 raters, 6 judges (best of {args.repeat})")
    for name, seconds in timings.items():
        print(f"  {name:<14} {seconds:7.2f} s  {seconds / base:5.2f} x single")


if __name__ == "__main__":
    main()
