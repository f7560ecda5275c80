"""The demo study's cost: loading it on ``annotator serve``'s first start, its dashboard
and its report, for the demo data of this tree beside ``--baseline DIR``'s.

Run with ``.venv/bin/python benchmarks/demo.py [--baseline DIR] [--rounds N]``.

``--baseline DIR``: a folder with the demo files before (``study.toml``, ``items.jsonl``,
``ratings.csv``, ``llm_scores.csv``; e.g. ``git show OLD:annotator/demo_data/FILE``).
Each round loads each data set into a fresh SQLite database (migrated first, not timed)
with :func:`annotator.demo.load_demo`, then computes the lead's dashboard and builds the
report, the data sets in turn, so that load from other work on the machine falls on
both alike; medians are printed with the ratio after/before. The first round's
figures are dropped (the imports of pandas, scipy and matplotlib).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import annotator.demo as demo_module

STEPS = ("load_demo", "dashboard", "report")


def _app(folder: Path):
    from annotator import create_app

    os.environ["ANNOTATOR_INSTANCE_PATH"] = str(folder)
    return create_app({"DATABASE_URL": f"sqlite:///{folder / 'demo.db'}", "SECRET_KEY": "bench"})


def _round(data: Path, folder: Path) -> dict[str, float]:
    from annotator import migrate
    from annotator.analysis.settings import study_settings
    from annotator.data.frames import study_frames
    from annotator.db import get_engine, session_scope
    from annotator.render.dashboard import study_dashboard
    from annotator.services.report import build_report
    from annotator.study.studies import get_study

    folder.mkdir()
    app = _app(folder)
    times = {}
    with app.app_context():
        migrate.upgrade(get_engine())
        demo_module.DEMO_DIR = data
        start = time.perf_counter()
        with session_scope() as session:
            demo_module.load_demo(
                session, base_url="http://127.0.0.1:5000", instance_path=str(folder)
            )
        times["load_demo"] = time.perf_counter() - start
        with session_scope() as session:
            study = get_study(session, "demo")
            start = time.perf_counter()
            study_dashboard(study_frames(session, study), settings=study_settings(study))
            times["dashboard"] = time.perf_counter() - start
            start = time.perf_counter()
            build_report(session, study)
            times["report"] = time.perf_counter() - start
        get_engine().dispose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a folder with the demo files before")
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds (one more warms)")
    args = parser.parse_args()
    sets = {"this tree": demo_module.DEMO_DIR}
    if args.baseline:
        sets["before"] = args.baseline.resolve()
    times = {name: {step: [] for step in STEPS} for name in sets}
    with tempfile.TemporaryDirectory(prefix="annotator-demo-") as tmp:
        for index in range(args.rounds + 1):
            for name, data in sets.items():
                measured = _round(data, Path(tmp) / f"{index}-{name.replace(' ', '-')}")
                if index:
                    for step, seconds in measured.items():
                        times[name][step].append(seconds)
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"demo study, median of {args.rounds} rounds (interleaved), load average {load}")
    print(f"{'':<12}" + "".join(f"{step:>14}" for step in STEPS))
    medians = {
        name: {step: statistics.median(values) for step, values in steps.items()}
        for name, steps in times.items()
    }
    for name, steps in medians.items():
        print(f"{name:<12}" + "".join(f"{steps[step] * 1000:11.0f} ms" for step in STEPS))
    if "before" in medians:
        ratios = [medians["this tree"][step] / medians["before"][step] for step in STEPS]
        print(f"{'ratio':<12}" + "".join(f"{ratio:13.2f}x" for ratio in ratios))


if __name__ == "__main__":
    main()
