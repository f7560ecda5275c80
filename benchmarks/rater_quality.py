"""The raters page's rater quality table on 5,000 items x 12 raters x 3 scales.

Run with ``.venv/bin/python benchmarks/rater_quality.py`` (SQLite in a temporary
folder). Measured in one run, side by side: ``study_frames`` alone (the floor of
any frame-based table), ``study_rater_quality`` cold (frames + the statistics), and
``cached_rater_quality`` warm (the cache-key queries only). Goal: the page's table in
under 300 ms warm, as the dashboard's.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from sqlmodel import Session, SQLModel, create_engine

from annotator.data.frames import study_frames
from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.services.rater_quality import cached_rater_quality, study_rater_quality

WARM_GOAL = 0.300


def _best(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        engine = create_engine(f"sqlite:///{Path(folder) / 'bench.sqlite'}")
        SQLModel.metadata.create_all(engine)
        with Session(engine) as session:
            spec = SyntheticSpec(n_items=5000, n_raters=12, straight_liners=1, speeders=1)
            study = build_synthetic_study(session, spec)
            session.commit()
            frames = _best(lambda: study_frames(session, study), 2)
            cold = _best(lambda: study_rater_quality(session, study), 2)
            cached_rater_quality(session, study)
            warm = _best(lambda: cached_rater_quality(session, study), 5)
        engine.dispose()
    print("5,000 items x 12 raters x 3 scales (SQLite), best / median seconds:")
    print(f"  study_frames            {frames[0]:.3f} / {frames[1]:.3f}")
    print(f"  study_rater_quality     {cold[0]:.3f} / {cold[1]:.3f}  (cold)")
    print(f"  cached_rater_quality    {warm[0]:.3f} / {warm[1]:.3f}  (warm)")
    print(f"  statistics over frames  {cold[0] / frames[0]:.2f}x the frames' time")
    verdict = "met" if warm[0] < WARM_GOAL else "NOT met"
    print(f"  warm goal {WARM_GOAL * 1000:.0f} ms: {verdict}")


if __name__ == "__main__":
    main()
