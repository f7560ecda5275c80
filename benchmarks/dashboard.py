"""The study dashboard's computation on 5,000 items x 12 raters x 3 scales with 6 models.

Run with ``make bench`` or ``.venv/bin/python benchmarks/dashboard.py``
(``--database-url postgresql://postgres@127.0.0.1:5432/test`` to measure on a
PostgreSQL server; the tables go into a throw-away schema there; ``--quick``: 100
items).

Measured in one run, side by side: pandas reading the same rows straight from
the tables (``pandas.read_sql`` of the rating and LLM score tables, the floor
any frame-based analysis pays), ``study_frames`` + ``study_dashboard`` cold,
``cached_dashboard`` warm (the data version's queries and the stored dashboard
unpickled), and ``live_dashboard`` right after a new rating (the last dashboard at
once; the ``dashboard`` job it asks for is not run here). Goal: the page in
under 300 ms warm; the template's rendering comes on top of the warm figure
and is measured by the page's own benchmark.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
from harness import Recorder, arguments, interleave, temporary_database
from sqlalchemy import create_engine, text
from sqlmodel import Session, SQLModel, select

from annotator import create_app
from annotator.analysis.settings import study_settings
from annotator.data.frames import study_frames
from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import get_engine, normalise_url
from annotator.models import Rating, RatingChange
from annotator.render.dashboard import study_dashboard
from annotator.services.dashboards import cached_dashboard, clear_dashboard_cache, live_dashboard

WARM_GOAL = 0.300
MODELS = ("gpt", "gemini", "llama", "qwen", "deepseek", "mistral")


def timed(function, repeat: int = 1) -> tuple[object, float]:
    """The result and the median wall time of ``repeat`` calls."""
    results = []
    rounds = interleave({"it": lambda: results.append(function())}, repeat)
    return results[-1], rounds.median("it")


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--database-url", help="default: a SQLite file in a temporary folder")
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--raters", type=int, default=12)
    args = parser.parse_args()
    if args.quick:
        args.items = 100
    recorder = Recorder("dashboard", args)
    with (
        tempfile.TemporaryDirectory() as tmp,
        temporary_database(args.database_url, folder=Path(tmp)) as database,
    ):
        url = database.url
        engine = create_engine(normalise_url(url))
        try:
            SQLModel.metadata.create_all(engine)
            spec = SyntheticSpec(
                slug="bench",
                n_items=args.items,
                n_raters=args.raters,
                models=MODELS,
                runs=1,
                extra_temperatures=(),
                repeats=20,
                attention_items=3,
                seed=1,
            )
            with Session(engine) as session:
                _, build = timed(lambda: build_synthetic_study(session, spec))
                session.commit()
            with Session(engine) as session:
                from annotator.study.studies import get_study

                study = get_study(session, "bench")
                settings = study_settings(study)
                n_ratings = session.execute(text("SELECT count(*) FROM rating")).scalar_one()
                n_llm = session.execute(text("SELECT count(*) FROM llmscore")).scalar_one()
                print(
                    f"database: {engine.dialect.name}; {args.items} items x {args.raters} raters "
                    f"x 3 scales, {len(MODELS)} models: {n_ratings} ratings, {n_llm} LLM scores "
                    f"(built in {build:.1f} s)"
                )

                def read_rows():
                    connection = session.connection()
                    return (
                        pd.read_sql(text("SELECT * FROM rating"), connection),
                        pd.read_sql(text("SELECT * FROM llmscore"), connection),
                    )

                _, pandas_read = timed(read_rows, repeat=3)
                frames, frames_time = timed(lambda: study_frames(session, study), repeat=3)
                _, dashboard_time = timed(
                    lambda: study_dashboard(frames, settings=settings), repeat=1
                )
                clear_dashboard_cache()
                _, cold = timed(lambda: cached_dashboard(session, study, settings=settings))
                session.commit()
                _, warm = timed(
                    lambda: cached_dashboard(session, study, settings=settings), repeat=20
                )
                # A revised rating: the stale path returns the last dashboard at once.
                rating = session.exec(select(Rating).order_by(Rating.id)).first()
                old, rating.value = rating.value, (0.0 if rating.value else 1.0)
                session.add(
                    RatingChange(
                        rating_id=rating.id, value=rating.value, previous_value=old, reason="x"
                    )
                )
                session.commit()
                # The job is asked for in an app (its queue); it is not run here.
                os.environ["ANNOTATOR_INSTANCE_PATH"] = str(Path(tmp) / "instance")
                app = create_app(
                    {"DATABASE_URL": url, "SECRET_KEY": "bench", "JOBS_QUEUE_NAME": "bench"}
                )
                with app.app_context():
                    stale, stale_time = timed(
                        lambda: live_dashboard(session, study, settings=settings)
                    )
                    session.rollback()
                get_engine(app).dispose()
                assert stale.stale and stale.updating
            rows = [
                ("pandas.read_sql of the rating + llmscore tables", pandas_read, None),
                ("study_frames (6 queries, names joined in)", frames_time, None),
                ("study_dashboard on those frames", dashboard_time, None),
                ("cached_dashboard cold (frames + dashboard)", cold, None),
                ("cached_dashboard warm (version, stored dashboard)", warm, WARM_GOAL),
                ("live_dashboard after a rating change (stale)", stale_time, WARM_GOAL),
            ]
            for label, seconds, goal in rows:
                line = (
                    f"{label:<50} {seconds * 1000:9.1f} ms   {seconds / pandas_read:6.2f} x pandas"
                )
                if goal:
                    line += f"   goal {goal * 1000:.0f} ms: {seconds / goal:.3f} of the goal"
                print(line)
                recorder.record(
                    f"{label}, {database.dialect}, {args.items} items",
                    seconds * 1000,
                    "ms",
                    goal=f"< {goal * 1000:g}" if goal else None,
                    rounds=20 if "warm" in label else 3 if "frames" in label else 1,
                )
        finally:
            engine.dispose()
    recorder.save()


if __name__ == "__main__":
    main()
