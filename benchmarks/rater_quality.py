"""The raters page's rater quality table on 5,000 items x 12 raters x 3 scales.

Run with ``.venv/bin/python benchmarks/rater_quality.py`` (SQLite in a temporary
folder; ``--items N``, ``--quick`` for 100 items). Measured in one run, side by side: ``study_frames`` alone (the floor of
any frame-based table), ``study_rater_quality`` cold (frames + the statistics), and
``cached_rater_quality`` warm (the cache-key queries only). Goal: the page's table in
under 300 ms warm, as the dashboard's.
"""

from __future__ import annotations

import statistics

from harness import Recorder, arguments, interleave, temporary_database
from sqlmodel import Session, create_engine

from annotator.data.frames import study_frames
from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.services.rater_quality import cached_rater_quality, study_rater_quality

WARM_GOAL_MS = 300.0


def _times(function, repeat: int) -> tuple[float, float]:
    rounds = interleave({"it": function}, repeat)
    return rounds.best("it"), statistics.median(rounds.times["it"])


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--items", type=int, default=5000)
    args = parser.parse_args()
    items = 100 if args.quick else args.items
    recorder = Recorder("rater_quality", args)
    with temporary_database(create_tables=True) as database:
        engine = create_engine(database.url)
        with Session(engine) as session:
            spec = SyntheticSpec(n_items=items, n_raters=12, straight_liners=1, speeders=1)
            study = build_synthetic_study(session, spec)
            session.commit()
            frames = _times(lambda: study_frames(session, study), 2)
            cold = _times(lambda: study_rater_quality(session, study), 2)
            cached_rater_quality(session, study)
            warm = _times(lambda: cached_rater_quality(session, study), 5)
        engine.dispose()
    print(f"{items:,} items x 12 raters x 3 scales (SQLite), best / median seconds:")
    print(f"  study_frames            {frames[0]:.3f} / {frames[1]:.3f}")
    print(f"  study_rater_quality     {cold[0]:.3f} / {cold[1]:.3f}  (cold)")
    print(f"  cached_rater_quality    {warm[0]:.3f} / {warm[1]:.3f}  (warm)")
    print(f"  statistics over frames  {cold[0] / frames[0]:.2f}x the frames' time")
    recorder.record(
        f"rater quality warm, {items} items (best of 5)",
        warm[0] * 1000,
        "ms",
        goal=f"< {WARM_GOAL_MS:g}",
        rounds=5,
    )
    recorder.record(
        f"rater quality cold, {items} items (best of 2)", cold[0] * 1000, "ms", rounds=2
    )
    recorder.save()


if __name__ == "__main__":
    main()
