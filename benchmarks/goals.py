"""The serving goals of issue 28, against the signed-in floor app, in one run.

Run with ``.venv/bin/python benchmarks/goals.py`` (loopback only). For SQLite
and then PostgreSQL (``--postgres-url``, throw-away schemas; ``--no-postgres``
or ``--no-sqlite`` to skip one), four runs each, interleaved so that both sides
of a ratio share the machine's state:

1. the app's **saturation** run (``annotator serve --workers 2 --threads 4``,
   ``--raters`` raters each enrolling and posting ``--items`` scores without
   pauses; the harness's clients and checks, as benchmarks/load.py's);
2. the **signed-in floor app** (benchmarks/harness/reference_apps.py: the least this
   product's post must do, written as lean as it can be), served the same way
   and posted to by the same clients at saturation;
3. the floor app **paced**: the same raters posting once a second on average
   (``--think``), ``--paced-items`` each;
4. the app paced, the same.

Goals: the app's score posts per second at saturation at least
``SHARE_GOAL`` (0.5) x the floor app's; at the paced load the app's p95
latency at most ``P95_RATIO_GOAL`` (3) x the floor app's. Every run's stored
rows are checked (0 lost, duplicated, unexpected or half-written); a failed
check makes the script exit non-zero (a missed goal does not: it is reported).
The runs are bounded by ``--time-limit`` each; about four minutes in all on
an idle 2-core machine. The figures go to benchmarks/results.json (``--quick``:
two raters, a few scores, SQLite only).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from harness import Recorder, arguments, temporary_database
from harness.runs import Result, app_run, print_results, write_run
from harness.serving import Instance

SHARE_GOAL = 0.5
P95_RATIO_GOAL = 3.0
FLOOR = "signed-in floor app"


def _runs(kind: str, folder: Path, args) -> list[Result]:
    results = []
    plan = [
        ("app", "saturation", 0.0),
        ("floor app", "saturation", 0.0),
        ("floor app, paced", "paced", args.think),
        ("app, paced", "paced", args.think),
    ]
    for name, mode, think in plan:
        run_folder = folder / f"{kind}-{len(results)}"
        run_folder.mkdir()
        server = args.postgres_url if kind == "PostgreSQL" else None
        paced = mode == "paced"
        items = args.items
        args.items = args.paced_items if paced else args.items
        try:
            with temporary_database(server, folder=run_folder) as database:
                url = database.url
                if name.startswith("floor"):
                    result = write_run(f"{kind}: {name}", FLOOR, url, args, mode, think)
                else:
                    instance = Instance(run_folder, url)
                    result = app_run(
                        f"{kind}: {name}", mode, instance, args, args.raters, think=think
                    )
        finally:
            args.items = items
        print(
            f"  done: {result.name} ({result.seconds:.1f} s, load average "
            f"{os.getloadavg()[0]:.1f}) {result.checks} {result.stats.counts}",
            flush=True,
        )
        results.append(result)
    return results


def _verdicts(kind: str, results: list[Result], recorder: Recorder) -> list[str]:
    by_name = {r.name.split(": ", 1)[1]: r for r in results if r.name.startswith(f"{kind}: ")}
    app, floor = by_name["app"], by_name["floor app"]
    app_paced, floor_paced = by_name["app, paced"], by_name["floor app, paced"]
    share = app.per_second / floor.per_second
    ratio = app_paced.p(0.95) / floor_paced.p(0.95)
    recorder.record(
        f"{kind}: saturation, posts/s against the floor app",
        share,
        "x",
        goal=f">= {SHARE_GOAL}",
        ratio_of=FLOOR,
        rounds=1,
    )
    recorder.record(
        f"{kind}: paced p95 against the floor app's",
        ratio,
        "x",
        goal=f"<= {P95_RATIO_GOAL:g}",
        ratio_of=FLOOR,
        rounds=1,
    )
    return [
        f"  {kind}: saturation {app.per_second:.0f} against {floor.per_second:.0f} posts/s: "
        f"{share:.2f}x the floor app (goal >= {SHARE_GOAL}x: "
        f"{'met' if share >= SHARE_GOAL else 'NOT met'}); server CPU per request "
        f"{app.cpu_ms:.2f} against {floor.cpu_ms:.2f} ms",
        f"  {kind}: paced ({app_paced.per_second:.0f} posts/s) p95 {app_paced.p(0.95):.1f} "
        f"against {floor_paced.p(0.95):.1f} ms: {ratio:.2f}x the floor app (goal <= "
        f"{P95_RATIO_GOAL:g}x: {'met' if ratio <= P95_RATIO_GOAL else 'NOT met'}); p50 "
        f"{app_paced.p(0.5):.1f} against {floor_paced.p(0.5):.1f} ms",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--items", type=int, default=60, help="scores per rater at saturation")
    parser.add_argument("--paced-items", type=int, default=30, help="scores per rater, paced")
    parser.add_argument("--think", type=float, default=1.0, help="paced: mean s between posts")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--time-limit", type=float, default=120, help="seconds per run")
    args = parser.parse_args(argv)
    if args.quick:
        args.raters, args.items, args.paced_items, args.think = 2, 3, 2, 0.05
        args.workers, args.threads, args.client_processes, args.no_postgres = 1, 2, 1, True
    recorder = Recorder("goals", args)
    # The harness's runs read these; the goals take no baseline.
    args.baseline = None
    kinds = [
        k for k, skip in (("SQLite", args.no_sqlite), ("PostgreSQL", args.no_postgres)) if not skip
    ]
    print(
        f"{args.raters} raters; saturation {args.items} scores each without pauses, paced "
        f"{args.paced_items} each a mean {args.think:g} s apart; annotator serve and the floor "
        f"app --workers {args.workers} --threads {args.threads}; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the start",
        flush=True,
    )
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="annotator-goals-") as tmp:
        for kind in kinds:
            results += _runs(kind, Path(tmp), args)
    print()
    ok = print_results(results)
    print("\nGoals (issue 28), the app against the signed-in floor app of the same run:")
    for kind in kinds:
        print("\n".join(_verdicts(kind, results, recorder)))
    recorder.save()
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print("stored checks:", "all passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
