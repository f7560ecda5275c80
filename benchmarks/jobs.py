"""Jobs at 5,000 items: the request that starts (or joins) the report job, and the report
job against ``annotator report`` run directly.

Run with ``make bench`` or ``.venv/bin/python benchmarks/jobs.py`` (``--folder DIR`` keeps
the generated SQLite study there and reuses it, as ``benchmarks/report.py`` does; the
same study: 5,000 items x 12 raters x 3 scales x 6 models).

1. In process (Flask's test client, CSRF off), the lead's "Download report" POST: a new
   job each time (each of the five ways of combining LLM runs, then again after the
   jobs' rows are cleared), and joining a job already asked; beside them the GET of a
   job's page, the lightest lead page there is. Goal: under 200 ms.
2. The report built by an ``annotator worker`` process (the embedded default: the queue
   in a SQLite file in the instance folder), from the POST until the job is done, against
   ``annotator report STUDY --out FILE`` as a process of its own, start-up included,
   interleaved (``--repeat`` times each, medians). The worker is started fresh before
   each job, so both pay the imports of pandas, scipy and matplotlib. Goal: within 1.1x.

``--quick``: a study of 30 items, one round of part 1 (part 2's job runs in the tests).
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Recorder, arguments, interleave, run_timed
from harness.studies import synthetic_study

CLI = str(Path(sys.executable).with_name("annotator"))
RUNS = ("mean", "median", "majority", "first", "each")
START_GOAL = 0.200
JOB_GOAL = 1.1


def _app(url: str, instance: Path):
    from annotator import create_app

    os.environ["ANNOTATOR_INSTANCE_PATH"] = str(instance)
    return create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench",
            "WTF_CSRF_ENABLED": False,
            "RATELIMIT_ENABLED": False,
            "JOBS_IMMEDIATE": False,
        }
    )


def _lead(app):
    from sqlmodel import select

    from annotator.db import session_scope
    from annotator.models import Role, User
    from annotator.study.studies import create_lead

    with session_scope(app) as session:
        # The first lead is the admin: a member of every study.
        if session.exec(select(User).where(User.role == Role.LEAD)).first() is None:
            create_lead(session, "bench@example.org", "bench-password-1")
    client = app.test_client()
    client.post("/login", data={"username": "bench@example.org", "password": "bench-password-1"})
    return client


def _clear_jobs(app) -> None:
    from sqlalchemy import delete

    from annotator.db import session_scope
    from annotator.jobs import Job, JobResult

    with session_scope(app) as session:
        session.execute(delete(JobResult))
        session.execute(delete(Job))


def _timed_post(client, url: str) -> tuple[float, str]:
    start = time.perf_counter()
    response = client.post(url)
    elapsed = time.perf_counter() - start
    assert response.status_code == 302, response.status_code
    return elapsed, response.headers["Location"]


def start_latency(app, recorder: Recorder, rounds: int = 2) -> None:
    client = _lead(app)
    _clear_jobs(app)
    new, joined, page = [], [], []
    for _round in range(rounds):
        for runs in RUNS:
            elapsed, location = _timed_post(client, f"/lead/studies/bench/report?runs={runs}")
            new.append(elapsed)
        for runs in RUNS:
            joined.append(_timed_post(client, f"/lead/studies/bench/report?runs={runs}")[0])
            start = time.perf_counter()
            assert client.get(location).status_code == 200
            page.append(time.perf_counter() - start)
        _clear_jobs(app)
    print("\n1. The request that starts the report job (ms; median, max):")
    for label, times in (
        ("POST Download report, a new job", new),
        ("POST Download report, joining the job", joined),
        ("GET a job's page (reference)", page),
    ):
        print(
            f"  {label:<42} {1000 * statistics.median(times):7.1f} {1000 * max(times):7.1f}"
            f"  ({statistics.median(times) / statistics.median(page):.2f}x the job page)"
        )
    worst = max(new + joined)
    print(
        f"  goal: under {1000 * START_GOAL:.0f} ms (the medians): "
        f"{'met' if max(map(statistics.median, (new, joined))) < START_GOAL else 'NOT met'}; "
        f"the slowest {1000 * worst:.0f} ms"
    )
    for label, times in (("a new job", new), ("joining the job", joined)):
        recorder.record(
            f"POST Download report, {label} (median)",
            1000 * statistics.median(times),
            "ms",
            goal=f"< {1000 * START_GOAL:g}",
            rounds=len(times),
        )


def _worker(env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [CLI, "worker", "--workers", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _job_time(app, client, env: dict) -> float:
    from sqlmodel import Session

    from annotator.db import get_engine
    from annotator.jobs import Job

    _clear_jobs(app)
    worker = _worker(env)
    try:
        start = time.perf_counter()
        _, location = _timed_post(client, "/lead/studies/bench/report")
        job_id = int(location.rsplit("/", 1)[1])
        while True:
            with Session(get_engine(app)) as session:
                status = session.get(Job, job_id).status
            if status in ("done", "failed", "cancelled"):
                break
            time.sleep(0.05)
        elapsed = time.perf_counter() - start
        assert status == "done", status
        return elapsed
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)


def _cli_time(env: dict, out: Path) -> float:
    return run_timed([CLI, "report", "bench", "--out", str(out)], env).wall


def job_against_cli(app, url: str, instance: Path, repeat: int, recorder: Recorder) -> None:
    client = _lead(app)
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": url, "ANNOTATOR_INSTANCE_PATH": str(instance)}
    # The worker runs only messages signed with the app's secret (annotator/jobs/queue.py).
    env["ANNOTATOR_SECRET_KEY"] = app.config["SECRET_KEY"]
    rounds = interleave(
        {
            "cli": lambda: _cli_time(env, instance / "report.html"),
            "job": lambda: _job_time(app, client, env),
        },
        repeat,
        measured=True,
    )
    cli, job = rounds.times["cli"], rounds.times["job"]
    ratio = rounds.ratio("job", "cli", by="median")
    recorder.record(
        "the report job against annotator report (medians)",
        ratio,
        "x",
        goal=f"<= {JOB_GOAL}",
        ratio_of="annotator report as a process",
        rounds=repeat,
    )
    print("\n2. The report job (a fresh `annotator worker`) against `annotator report` (s):")
    print(
        f"  annotator report       {statistics.median(cli):7.2f}  ({', '.join(f'{t:.2f}' for t in cli)})"
    )
    print(
        f"  report job             {statistics.median(job):7.2f}  ({', '.join(f'{t:.2f}' for t in job)})"
    )
    print(
        f"  ratio {ratio:.2f}x; goal within {JOB_GOAL}x: {'met' if ratio <= JOB_GOAL else 'NOT met'}"
    )


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--folder", type=Path, help="keep (and reuse) the study here")
    parser.add_argument("--repeat", type=int, default=3, help="report runs of each kind")
    parser.add_argument("--latency-only", action="store_true", help="only part 1")
    args = parser.parse_args()
    items = 30 if args.quick else 5000
    if args.quick:
        args.repeat = 1
    recorder = Recorder("jobs", args)
    folder = args.folder or Path(tempfile.mkdtemp(prefix="annotator-jobs-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    url = synthetic_study(folder / f"report-{items}.sqlite", items)
    instance = folder / "instance"
    instance.mkdir(exist_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f}; study {url}")
    app = _app(url, instance)
    from sqlmodel import SQLModel

    from annotator.db import get_engine

    # A study built by an earlier version lacks the job tables.
    SQLModel.metadata.create_all(get_engine(app))
    start_latency(app, recorder, rounds=1 if args.quick else 2)
    if not (args.latency_only or args.quick):
        job_against_cli(app, url, instance, args.repeat, recorder)
    print(f"load average {os.getloadavg()[0]:.1f}")
    recorder.save()


if __name__ == "__main__":
    main()
