"""Render the lead's study page (with its dashboard) for 5,000 items x 12 raters x 3 scales
with 6 models, cold and warm, as the page and as the htmx partial.

Run with ``.venv/bin/python benchmarks/study_page.py`` (part of ``make bench``;
``--database-url postgresql://postgres@127.0.0.1:5432/test`` for PostgreSQL, in a
throw-away schema; ``--quick``: 100 items). The study is the generated one of ``annotator.data.synthetic``.

Goal (issue 8): the page renders in under 300 ms once the dashboard is cached (the
cache lasts until a rating changes). Each figure is printed next to the goal and as a
share of it, all measured in this one run; the cold render (dashboard computed) is
printed beside it for scale. Then a rating changes, ``--changes`` times (3): the page
right after each (the last dashboard at once, "updating…", while a ``dashboard`` job
recomputes it: the goal applies to it too; the median), each job then run as a worker
would; the partial once the last job is done (run here by huey's immediate mode from then
on), and the report job asked twice (built, then joined until the data changes).

The app is prepared as ``annotator serve`` prepares a worker before its first request
(:mod:`annotator.cli.serve`): the modules of :data:`~annotator.cli.serve.WARM_MODULES`
imported (the dashboard's analysis, the job queue's huey), the templates compiled and
:func:`annotator.warm.warm_up` run. Without that, the first page after a rating change
also paid the process's first import of huey (0.3-0.5 s: huey imports redis and psycopg
when they are installed), which no served request pays; a fresh worker's first requests
are measured by benchmarks/first_request.py.
"""

from __future__ import annotations

import importlib
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from harness import Recorder, arguments, interleave, temporary_database
from sqlmodel import SQLModel, select

from annotator import create_app
from annotator.cli.serve import WARM_MODULES
from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import get_engine, session_scope
from annotator.models import Rating, RatingChange
from annotator.study.studies import create_lead
from annotator.warm import warm_up

GOAL_MS = 300.0
SPEC = SyntheticSpec(
    slug="bench",
    n_items=5000,
    n_raters=12,
    models=("gpt", "gemini", "llama", "qwen", "deepseek", "mistral"),
    runs=1,
    repeats=3,
    seed=0,
)


def _app(url: str, folder: Path):
    # The job queue's file goes into the throw-away folder.
    os.environ["ANNOTATOR_INSTANCE_PATH"] = str(folder / "instance")
    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench",
            "WTF_CSRF_ENABLED": False,
            "RATELIMIT_ENABLED": False,
            "JOBS_QUEUE_NAME": "bench",
        }
    )
    SQLModel.metadata.create_all(get_engine(app))
    return app


def _as_served(app) -> None:
    """What ``annotator serve`` does before a worker's first request (annotator.cli.serve)."""
    for name in WARM_MODULES:
        importlib.import_module(name)
    for name in app.jinja_env.list_templates():
        app.jinja_env.get_template(name)
    assert warm_up(app), "the warm-up found no study"


def _revise_a_rating(app) -> None:
    with session_scope(app) as session:
        rating = session.exec(select(Rating).order_by(Rating.id)).first()
        old = rating.value
        rating.value = 0.0 if old else 1.0
        session.add(
            RatingChange(
                rating_id=rating.id, value=rating.value, previous_value=old, reason="revise"
            )
        )


def _time(call, repeat: int) -> list[float]:
    return [s * 1000.0 for s in interleave({"it": call}, repeat).times["it"]]


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--repeat", type=int, default=10, help="Warm renders to time.")
    parser.add_argument(
        "--changes", type=int, default=3, help="Rating changes, each followed by the page."
    )
    args = parser.parse_args()
    spec = replace(SPEC, n_items=100) if args.quick else SPEC
    if args.quick:
        args.repeat = 2
        args.changes = 1
    recorder = Recorder("study_page", args)
    with (
        tempfile.TemporaryDirectory() as folder,
        temporary_database(args.database_url, folder=Path(folder)) as database,
    ):
        app = _app(database.url, Path(folder))
        try:
            start = time.perf_counter()
            with session_scope(app) as session:
                create_lead(session, "lead@example.org", "bench-password")
                build_synthetic_study(session, spec)
            built = time.perf_counter() - start
            _as_served(app)
            client = app.test_client()
            client.post(
                "/login", data={"username": "lead@example.org", "password": "bench-password"}
            )
            url = f"/lead/studies/{spec.slug}"

            def page() -> None:
                response = client.get(url)
                assert response.status_code == 200, response.status_code
                assert b'id="dashboard"' in response.data

            def partial() -> None:
                response = client.get(url, headers={"HX-Request": "true"})
                assert response.status_code == 200 and b"<h1>" not in response.data

            cold = _time(page, 1)[0]
            warm = statistics.median(_time(page, args.repeat))
            warm_partial = statistics.median(_time(partial, args.repeat))

            def stale_page() -> None:
                response = client.get(url)
                assert response.status_code == 200 and "updating…" in response.text

            from annotator.jobs import get_queue

            huey = get_queue(app)
            stale_times = []
            for _ in range(args.changes):
                _revise_a_rating(app)
                stale_times += _time(stale_page, 1)
                # The queued dashboard job, run here as a worker would.
                huey.execute(huey.dequeue())
            stale = statistics.median(stale_times)
            huey.immediate = True
            refreshed = _time(partial, 1)[0]

            def report() -> None:
                started = client.post(f"{url}/report")
                assert started.status_code == 302
                assert client.get(started.headers["Location"] + "/file").status_code == 200

            report_first = _time(report, 1)[0]
            report_second = _time(report, 1)[0]
        finally:
            get_engine(app).dispose()
    n_ratings = spec.n_items * spec.n_raters * len(spec.scales)
    print(
        f"study page, {spec.n_items} items x {spec.n_raters} raters x {len(spec.scales)} scales "
        f"(~{n_ratings:,} ratings), {len(spec.models)} models; database "
        f"{database.dialect}; study built in {built:.1f} s"
    )
    print(f"  {'render':<42}{'ms':>9}{'goal ms':>9}{'share':>8}")
    for label, ms in (
        ("cold (dashboard computed)", cold),
        (f"warm page, median of {args.repeat}", warm),
        (f"warm htmx partial, median of {args.repeat}", warm_partial),
        (f"page after a rating change, median of {args.changes}", stale),
        ("partial after the refresh", refreshed),
    ):
        print(f"  {label:<42}{ms:9.1f}{GOAL_MS:9.0f}{ms / GOAL_MS:8.2f}")
        warm_row = label.startswith("warm") or label.startswith("page after")
        recorder.record(
            f"{label.split(', median')[0]}, {database.dialect}, {spec.n_items} items",
            ms,
            "ms",
            goal=f"< {GOAL_MS:g}" if warm_row else None,
            rounds=args.repeat
            if label.startswith("warm")
            else args.changes
            if label.startswith("page after")
            else 1,
        )
    print(f"  cold / warm page: {cold / warm:.1f}x")
    print(
        f"  report download: {report_first / 1000:.1f} s built, {report_second:.1f} ms the "
        f"second time ({report_first / report_second:.0f}x)"
    )
    recorder.save()


if __name__ == "__main__":
    main()
