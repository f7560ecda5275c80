"""Load and fault test of `annotator serve` (gunicorn), on loopback only.

Run with ``.venv/bin/python benchmarks/load.py`` (part of ``make bench``). For
SQLite and then PostgreSQL (``--postgres-url``, in a throw-away schema;
``--no-postgres`` to skip), in one run, interleaved:

1. **saturation** (throughput): ``annotator serve --workers 2 --threads 4``
   on a fresh study (one 0-5 scale, 100 items). ``--raters`` (50) simulated
   raters at once each open their invite, consent, answer the demographics,
   start their block and post its 100 scores as htmx does (one request per
   score), without pauses. The same number of clients post 100 forms each to
   a bare Flask hello-world served the same way (gunicorn, same workers,
   threads and worker class, no access log either), once before the app's
   runs and once after; the app's ratings/s is given as a share of the mean
   of the two.
2. **paced** (latency at that load): the same 50 raters, each waiting a
   mean ``--think`` seconds (1; drawn uniformly from 0.5-1.5x so that they
   do not post in step) between a response and their next post, still far
   faster than anyone reads an item; the hello-world's clients the same.
   p50/p95/p99 of the posts, for both.

   Why two runs: with 50 clients posting without pauses every request waits
   behind the others (Little's law: mean latency = 50 / throughput), so the
   saturation run's latency is queueing, set by throughput alone; p95 < 30 ms
   there would need about 1,700 posts/s, beyond even the hello-world's on
   this machine (its saturation p95 is printed too). The saturation run is
   read for the throughput share, the paced one for latency.
   Two more references follow each database's saturation run (both in
   benchmarks/harness/reference_apps.py, through the engine ``annotator serve``
   uses): a **minimal write app** (a bare Flask app storing each posted
   score with one INSERT and commit, no sign-in, session, CSRF, block or
   template), the least any rating app must do; and the **signed-in floor
   app**, the least this product's post must do (the signed session cookie,
   the CSRF check, the rater's block read, the rating with its history row
   and the block's progress in one transaction, the next item's fragment
   from a compiled Jinja template), written as lean as it can be. The app's
   ratings/s are also given as a share of each (``--no-write-reference``
   skips both). Their stored rows are checked like the app's.
3. **kill a worker**: the same flow (``--fault-raters`` raters); once a third
   of the scores are in, one gunicorn worker gets SIGKILL (the master
   starts another).
4. **restart**: the same again; half-way the whole server (master and
   workers) gets SIGKILL and is started again on the same port.
5. ``--dev`` (SQLite, saturation; ``--no-dev`` skips it): werkzeug's
   development server, what ``annotator serve`` was before.

The clients are Python threads using http.client, dealt to
``--client-processes`` (2) spawned processes so that one interpreter's GIL
is not the limit; the app's runs and the hello-world's use the same client.
On the 2-core machine the client processes share the cores with the
server: with 1, 2 or 4 client processes the hello-world's requests/s moved
less than between two runs of the same setting (see README, Benchmarks).

``--baseline DIR``: a source tree of the code before (``git archive OLD
annotator templates static | tar -x -C DIR``: the templates too, which the
app finds beside its package); each app run (saturation and paced) is
followed by the same run of that code (``PYTHONPATH``), so before and after
come from one sitting. For quicker iterations ``--no-sqlite``,
``--no-postgres``, ``--no-saturation``, ``--no-faults`` and ``--no-dev``
leave runs out (e.g. the PostgreSQL paced runs alone), and ``--items``
shortens every run.

Raters retry as a browser would: a post whose connection broke or that got a
5xx is sent again, same value, until it gets an answer (at most 60 s).
After each run the study is exported (``annotator export --format long``)
and every score that got a 2xx must be there exactly once with its value
(0 lost, 0 duplicated), no rating is there that no rater posted, and in the
database every rating has exactly one creation record, each block's rated
places are 1..k without a gap and a completed block is complete (nothing
half-written). A failed check makes the script exit non-zero.

Each row also gives the server's CPU per timed request (``CPU ms``: gunicorn's
master and workers, from /proc, while the clients ran; PostgreSQL's own
processes are not in it): unlike requests/s it hardly moves with what else
the machine runs, so it compares this code and ``--baseline`` on a shared
machine too.

Goals (issue 10): at saturation >= 50% of the hello-world's ratings/s; at
the paced load p95 < 30 ms; 0 5xx; 0 lost, 0 duplicated. Each run scores
for at most ``--time-limit`` seconds (150; a rater still scoring then
stops, and the row says how many scores were posted), so the whole script
is bounded: about 10 minutes on an idle 2-core machine (the paced runs
take 100 s each), up to about 25 on a heavily shared one.

The servers, clients, runs and checks are the harness's (benchmarks/harness/:
serving.py, clients.py, runs.py; the reference apps, gunicorn factories, in
reference_apps.py). The figures go to benchmarks/results.json (``--quick``: two
raters, five scores, SQLite, no faults, to prove the script runs).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from harness import Recorder, arguments, temporary_database
from harness.reference_apps import WRITE_REFERENCES
from harness.runs import (
    Result,
    app_run,
    hello_rate,
    kill_a_worker,
    print_results,
    reference_run,
    restart,
    write_run,
)
from harness.serving import Instance

P95_GOAL_MS = 30.0
SHARE_GOAL = 0.5


def print_goals(results: list[Result], args, recorder: Recorder) -> None:
    print(
        f"\nGoals (issue 10): >= {SHARE_GOAL:.0%} of the hello-world's requests/s at "
        f"saturation, p95 < {P95_GOAL_MS:.0f} ms at the paced load, 0 5xx; 0 lost, "
        "duplicated, unexpected or half-written in every row. 'share' is of the "
        "hello-world of the same mode (saturation: the mean of its two runs); 'retry' "
        "counts posts sent again after a broken connection or a 5xx (the fault rows); "
        "'CPU ms': the server's CPU (gunicorn's master and workers, not PostgreSQL's) "
        "per timed request while the clients ran, the raters' enrolment included."
    )
    hello_paced = next(
        (r for r in results if r.mode == "paced" and r.name.startswith("hello")), None
    )
    for result in results:
        if result.name.startswith("hello") or result.mode == "fault":
            continue
        if any(reference in result.name for reference in WRITE_REFERENCES):
            kind = result.name.split(":")[0]
            app = next((r for r in results if r.name == f"{kind}: load"), None)
            share = result.per_second / hello_rate(results, "saturation")
            against = (
                f"; the app's ratings/s are {app.per_second / result.per_second:.0%} of it "
                f"(server CPU per post {app.cpu_ms:.2f} ms against {result.cpu_ms:.2f} ms)"
                if app
                else ""
            )
            print(f"  {result.name}: {share:.0%} of the hello-world's requests/s{against}")
            if app:
                recorder.record(
                    f"{kind}: saturation, ratings/s against the {result.name.split(': ')[1]}",
                    app.per_second / result.per_second,
                    "x",
                    ratio_of=result.name.split(": ")[1],
                    rounds=1,
                )
            continue
        fivexx = result.stats.counts.get("5xx", 0)
        if result.mode == "saturation":
            share = result.per_second / hello_rate(results, "saturation")
            verdict = "met" if share >= SHARE_GOAL else "NOT met"
            print(
                f"  {result.name}: {share:.0%} of the hello-world's requests/s "
                f"(goal {SHARE_GOAL:.0%}: {verdict}); p95 {result.p(0.95):.0f} ms "
                f"(queueing: {args.raters} clients without pauses); {fivexx} 5xx"
            )
            recorder.record(
                f"{result.name}: saturation, ratings/s against the hello-world",
                share,
                "x",
                goal=f">= {SHARE_GOAL}",
                ratio_of="a Flask hello-world served the same way",
                rounds=1,
            )
            recorder.record(f"{result.name}: server CPU per request", result.cpu_ms, "ms", rounds=1)
        elif result.mode == "paced":
            verdict = "met" if result.p(0.95) < P95_GOAL_MS else "NOT met"
            hello = f", hello-world {hello_paced.p(0.95):.1f} ms" if hello_paced else ""
            print(
                f"  {result.name}: p95 {result.p(0.95):.1f} ms at {result.per_second:.0f} "
                f"ratings/s (goal < {P95_GOAL_MS:.0f} ms: {verdict}{hello}); {fivexx} 5xx"
            )
            recorder.record(
                f"{result.name}: p95 of a post",
                result.p(0.95),
                "ms",
                goal=f"< {P95_GOAL_MS:g}",
                rounds=1,
            )


def _server(kind: str, args) -> str | None:
    return args.postgres_url if kind == "PostgreSQL" else None


def record_checks(results: list[Result], recorder: Recorder) -> None:
    """The stored checks as figures: lost, duplicated or half-written, and 5xx outside
    the fault runs (goal 0 each)."""
    for result in results:
        if not result.checks:
            continue
        bad = sum(result.checks.get(k, 0) for k in ("lost", "duplicated", "unexpected"))
        bad += result.checks.get("half-written", 0)
        recorder.record(
            f"{result.name}: scores lost, duplicated or half-written",
            bad,
            "scores",
            goal="== 0",
            rounds=1,
        )


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--fault-raters", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument(
        "--think",
        type=float,
        default=1.0,
        help="paced runs: mean seconds a rater waits between posts (default 1; 0 skips them)",
    )
    parser.add_argument(
        "--client-processes",
        type=int,
        default=2,
        help="processes the simulated clients are dealt to (default 2)",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        help="a source tree of the code before (e.g. from git archive): its app runs "
        "follow each of this code's, interleaved",
    )
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument(
        "--no-saturation",
        action="store_true",
        help="skip the saturation runs (with --no-faults --no-dev: the paced runs alone)",
    )
    parser.add_argument("--no-faults", action="store_true")
    parser.add_argument(
        "--no-write-reference",
        action="store_true",
        help="skip the minimal write app's and the signed-in floor app's saturation runs "
        "(the second and third references)",
    )
    parser.add_argument("--no-dev", action="store_true", help="skip the development server's run")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=150,
        help="seconds a run may score for; raters stop then (default 150)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        # One server of each kind, two raters: proves the runs and checks work.
        args.raters, args.items, args.think, args.workers, args.threads = 2, 3, 0.0, 1, 2
        args.no_postgres = args.no_faults = args.no_dev = args.no_write_reference = True
        args.client_processes = 1
    recorder = Recorder("load", args)

    print(
        f"{args.raters} raters x {args.items} scores at once, without pauses (saturation) "
        f"and with a mean {args.think:g} s between a rater's posts (paced); faults: "
        f"{args.fault_raters} raters; annotator serve --workers {args.workers} --threads "
        f"{args.threads}; clients in {args.client_processes} processes; {os.cpu_count()} "
        f"cores, load average {os.getloadavg()[0]:.1f} at the start",
        flush=True,
    )
    kinds = [
        kind
        for kind, skip in (("SQLite", args.no_sqlite), ("PostgreSQL", args.no_postgres))
        if not skip
    ]
    saturation = not args.no_saturation
    # Interleaved: the hello-world before and after the app's saturation
    # runs, and its paced run between the databases' paced runs.
    plan: list[tuple] = [("hello", "hello-world", "saturation", 0.0)] if saturation else []
    for index, kind in enumerate(kinds):
        if saturation:
            plan.append((kind, "load", "saturation", 0.0))
            if not args.no_write_reference:
                plan += [(kind, name, "saturation", 0.0) for name in WRITE_REFERENCES]
            if args.baseline:
                plan.append((kind, "load, before", "saturation", 0.0))
        if args.think:
            plan.append((kind, "load, paced", "paced", args.think))
            if args.baseline:
                plan.append((kind, "load, paced, before", "paced", args.think))
            if index == 0:
                plan.append(("hello", "hello-world, paced", "paced", args.think))
    if saturation:
        plan.append(("hello", "hello-world, again", "saturation", 0.0))
    for kind in kinds:
        if kind == "SQLite" and not args.no_dev:
            # The server `annotator serve` ran before: werkzeug's, one process.
            plan.append((kind, "load, --dev", "dev", 0.0))
        if not args.no_faults:
            plan.append((kind, "kill a worker", "fault", 0.0))
            plan.append((kind, "restart the server", "fault", 0.0))
    faults = {"kill a worker": kill_a_worker, "restart the server": restart}
    with tempfile.TemporaryDirectory(prefix="annotator-load-") as tmp:
        results: list[Result] = []
        for kind, name, mode, think in plan:
            if kind == "hello":
                result, _ = reference_run(name, mode, args, think)
            elif name in WRITE_REFERENCES:
                folder = Path(tmp) / f"{kind}-{WRITE_REFERENCES[name][0]}"
                folder.mkdir()
                with temporary_database(_server(kind, args), folder=folder) as database:
                    result = write_run(f"{kind}: {name}", name, database.url, args)
            else:
                folder = Path(tmp) / f"{kind}-{re.sub(r'[^a-z]+', '-', name)}"
                folder.mkdir()
                raters = args.fault_raters if mode == "fault" else args.raters
                with temporary_database(_server(kind, args), folder=folder) as database:
                    result = app_run(
                        f"{kind}: {name}",
                        mode,
                        Instance(
                            folder,
                            database.url,
                            pythonpath=args.baseline if "before" in name else None,
                        ),
                        args,
                        raters,
                        think=think,
                        fault=faults.get(name),
                        dev=mode == "dev",
                    )
            results.append(result)
            print(
                f"  done: {result.name} ({result.seconds:.1f} s, load average "
                f"{os.getloadavg()[0]:.1f}) {result.checks} {result.stats.counts}",
                flush=True,
            )
        print()
        all_ok = print_results(results)
    print_goals(results, args, recorder)
    record_checks(results, recorder)
    recorder.save()
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print("stored checks:", "all passed" if all_ok else "FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
