"""What the agreement tables (self-consistency, correlations, kappa, cross-group alpha,
alt-test curves) add to the report, on a generated study.

Run with ``.venv/bin/python benchmarks/agreement_tables.py [--items 5000]``. The study
is the generated one of ``annotator.data.synthetic`` (12 raters, 3 scales, 6 models with
2 runs each) in a temporary SQLite file. Both figures are measured in this one run: the
whole ``report_tables`` (which includes the agreement tables) and ``agreement_tables``
alone, each table timed on its own, and the share of the report they take.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sqlmodel import SQLModel

from annotator import create_app
from annotator.analysis.agreement_tables import (
    alttest_curve_rows,
    consistency_rows,
    correlation_rows,
    cross_alpha_rows,
    kappa_rows,
)
from annotator.analysis.matrices import Notes, main_temperature
from annotator.analysis.settings import AnalysisSettings
from annotator.analysis.study_analysis import report_tables
from annotator.data.frames import study_frames
from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import get_engine, session_scope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=5000)
    args = parser.parse_args()
    spec = SyntheticSpec(
        slug="bench",
        n_items=args.items,
        n_raters=12,
        scales=(("0-5", 0.0, 5.0, 1.0), ("0-10", 0.0, 10.0, 0.1), ("0-100", 0.0, 100.0, 1.0)),
        models=("gpt", "gemini", "llama", "qwen", "deepseek", "mistral"),
        runs=2,
        seed=0,
    )
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.sqlite'}"
        app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench"})
        SQLModel.metadata.create_all(get_engine(app))
        with session_scope(app) as session:
            study = build_synthetic_study(session, spec)
            session.commit()
            frames = study_frames(session, study)
    settings = AnalysisSettings()
    temperature, _ = main_temperature(frames, settings.temperature)
    notes = Notes()
    parts = {
        "consistency": lambda: consistency_rows(frames),
        "correlations": lambda: correlation_rows(frames, temperature, notes),
        "kappa": lambda: kappa_rows(frames, temperature, notes),
        "cross_alpha": lambda: cross_alpha_rows(frames, temperature, settings, notes),
        "alttest_curves": lambda: alttest_curve_rows(frames, temperature, settings, notes),
    }
    seconds = {}
    for name, run in parts.items():
        start = time.perf_counter()
        run()
        seconds[name] = time.perf_counter() - start
    start = time.perf_counter()
    report_tables(frames, settings=settings)
    whole = time.perf_counter() - start
    added = sum(seconds.values())
    print(f"study: {args.items} items x 12 raters x 3 scales, 6 models x 2 runs")
    for name, value in seconds.items():
        print(f"  {name:<15} {value:7.2f} s")
    print(f"  agreement tables {added:6.2f} s of report_tables {whole:.2f} s ({added / whole:.0%})")


if __name__ == "__main__":
    main()
