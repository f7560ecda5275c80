"""Scale-out test: two app servers behind nginx, one PostgreSQL, Redis, two job workers.

Run with ``.venv/bin/python benchmarks/scaleout.py`` on a machine with Debian's
nginx (``apt-get install -y nginx-light``: the script prints the command and
stops if ``nginx`` is missing, or runs it with ``--install-nginx``, and names
the package the nginx it runs came from; CI does not run it), PostgreSQL
(``--postgres-url``, a role that may create databases) and Redis
(``--redis-url``). The processes and their settings are in
benchmarks/harness/cluster.py. Everything listens
on 127.0.0.1 only, every run is bounded (``--time-limit``) and the script
cleans up what it made: its processes, its database, its Redis keys and its
temporary folder.

The set-up (docs/deploy.md, "Several app servers behind nginx"):

* a fresh PostgreSQL database (``annotator_scaleout_<random>``), dropped at the end;
* two ``annotator serve --no-jobs-worker`` servers on two ports, each with an
  instance folder of its own (two machines, as far as the app can tell) and
  the same ``ANNOTATOR_SECRET_KEY``, so that a session cookie signed by one is
  good on the other;
* nginx in front, round robin over the two (the upstream block printed by
  ``--print-nginx-config`` is the one docs/deploy.md shows), with
  ``ANNOTATOR_PROXY_FIX=1``;
* Redis for the login rate limit (``ANNOTATOR_RATELIMIT_STORAGE_URI``) and for
  the jobs (``ANNOTATOR_REDIS_URL``, a queue name of this run's own);
* two ``annotator worker`` processes.

``--raters`` (100) simulated raters (the clients of benchmarks/harness/clients.py) each
open their invite, consent, answer the demographics and rate a whole block of
``--items`` items through nginx, a mean ``--think`` seconds between posts. A
lead logs in through nginx and, one after another until the raters are done,
asks for the report (the form of its start page), follows the job page until
the job is done, and downloads the file. Mid-run, once a third of the scores
are in, one app server's gunicorn master and its workers get SIGKILL; then, as
soon as a job is running, the job worker running it gets SIGKILL.

Raters retry as a browser would: a post whose connection broke or that got a
5xx (nginx's 502 or 504 included) is sent again, same value. The checks:

* every score that got a 2xx is stored exactly once with its value, nothing
  else is stored, nothing is half-written (harness/clients.py's checks, against the
  export);
* every job the lead started ended ``done``; the job under way when its worker
  was killed was taken back (attempt 2 or more) and finished by the other
  worker;
* every 5xx a client saw is nginx's own error page, within ``--kill-window``
  seconds after the server's kill.

A failed check makes the script exit non-zero; the checks' counts go to
benchmarks/results.json (goal 0 each). ``--quick``: 4 raters x 5 items. The module imports only the
standard library at the top (like the harness, whose clients it runs).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from harness import Recorder, arguments
from harness.clients import Browser, Job, Stats, check_stored, run_clients
from harness.cluster import (
    APT_ENV,
    NGINX_INSTALL,
    NGINX_UPSTREAM,
    Cluster,
    create_database,
    drop_redis_keys,
)
from harness.serving import ANNOTATOR, Instance, prepare

LEAD_EMAIL = "lead@example.org"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_REPORT_FORM = re.compile(r'<form method="post" action="([^"]+/report[^"]*)"')
_JOB_STATUS = re.compile(r'class="job-status">(\w+)<')

# ------------------------------------------------------------------ the lead


@dataclass
class LeadLog:
    """What the lead did: each job's id, how it ended and the file's size."""

    jobs: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _lead(port: int, password: str, stop: threading.Event, log: LeadLog, stats: Stats) -> None:
    """Log in, then ask for the report, follow its job page and download the file,
    again and again until ``stop`` (a job under way is followed to its end)."""
    browser = Browser(port, stats)
    try:
        _, page = browser.get("/login")
        csrf = _CSRF.search(page).group(1)
        status, _, _ = browser.request(
            "POST", "/login", {"username": LEAD_EMAIL, "password": password, "csrf_token": csrf}
        )
        if status != 302:
            raise RuntimeError(f"lead login: {status}")
        while not stop.is_set():
            path, page = browser.get("/lead/studies/load/report")
            if "/jobs/" not in path:
                # The start page's form; none (the study page) while the
                # study has too few ratings for a report.
                form = _REPORT_FORM.search(page) if path.endswith("/report") else None
                if form is not None:
                    action = form.group(1).replace("&amp;", "&")
                    path, page = browser.post(action, {"csrf_token": csrf})
                if "/jobs/" not in path:
                    time.sleep(1)
                    continue
            started = time.monotonic()
            while (status := _JOB_STATUS.search(page).group(1)) in ("queued", "running"):
                time.sleep(0.5)
                _, page = browser.get(path)
            job = {"id": int(path.rsplit("/", 1)[1]), "status": status}
            job["seconds"] = time.monotonic() - started
            if status == "done":
                file_path = urlsplit(path + "/file").path
                code, _, body = browser.request("GET", file_path)
                job["file"] = (code, len(body))
            log.jobs.append(job)
    except Exception as exc:  # reported with the checks
        log.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        browser.close()


# ------------------------------------------------------------------ faults


@dataclass
class Faults:
    server_killed_at: float | None = None
    worker_killed: str | None = None
    worker_pid: int | None = None
    job_id: int | None = None
    notes: list[str] = field(default_factory=list)


def _running_job(database_url: str, worker_pids: dict[int, str]) -> tuple[int, int] | None:
    """A running job held by one of ``worker_pids``: (job id, worker pid), or None."""
    from sqlalchemy import text

    from annotator.db import make_engine

    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT id, worker FROM job WHERE status = 'running' ORDER BY id")
            ).all()
    finally:
        engine.dispose()
    for job_id, worker in rows:
        pid = int((worker or ":0").rsplit(":", 1)[1])
        if pid in worker_pids:
            return job_id, pid
    return None


def _inject(cluster: Cluster, counter, total: int, faults: Faults, url: str, stop) -> None:
    """A third of the way: SIGKILL server "a" (master and workers); then SIGKILL the
    worker of the first job seen running."""
    while counter.value < total / 3 and not stop.is_set():
        time.sleep(0.05)
    server = cluster.servers["a"]
    faults.server_killed_at = time.time()
    os.killpg(server.pid, signal.SIGKILL)
    server.wait()
    pids = {process.pid: name for name, process in cluster.workers.items()}
    while not stop.is_set():
        found = _running_job(url, pids)
        if found is not None:
            faults.job_id, faults.worker_pid = found
            faults.worker_killed = pids[faults.worker_pid]
            os.killpg(faults.worker_pid, signal.SIGKILL)
            cluster.workers[faults.worker_killed].wait()
            return
        time.sleep(0.05)
    faults.notes.append("no job was running before the raters finished: no worker killed")


# ------------------------------------------------------------------ checks


def _job_checks(url: str, lead: LeadLog, faults: Faults, survivor_pid: int | None) -> dict:
    from sqlalchemy import text

    from annotator.db import make_engine

    engine = make_engine(url)
    with engine.connect() as connection:
        rows = {
            job_id: (status, attempt, worker)
            for job_id, status, attempt, worker in connection.execute(
                text("SELECT id, status, attempt, worker FROM job")
            )
        }
    engine.dispose()
    asked = [job["id"] for job in lead.jobs]
    taken_over = rows.get(faults.job_id)
    return {
        "jobs": len(asked),
        "done": sum(1 for j in asked if rows[j][0] == "done"),
        "files": sum(1 for job in lead.jobs if job.get("file", (0, 0))[0] == 200),
        "not done": sum(1 for j in asked if rows[j][0] != "done"),
        "killed job": faults.job_id,
        "killed job's attempts": taken_over[1] if taken_over else None,
        "killed job finished by the other worker": bool(
            taken_over
            and taken_over[0] == "done"
            and taken_over[1] >= 2
            and taken_over[2].endswith(f":{survivor_pid}")
        ),
    }


def _error_checks(stats: Stats, lead_stats: Stats, faults: Faults, window: float) -> dict:
    errors = stats.server_errors + lead_stats.server_errors
    killed = faults.server_killed_at or float("inf")
    return {
        "5xx": len(errors),
        "5xx from the app": sum(1 for _, _, from_nginx in errors if not from_nginx),
        "5xx outside the kill's seconds": sum(
            1 for at, _, _ in errors if not killed - 0.5 <= at <= killed + window
        ),
        "statuses": sorted({status for _, status, _ in errors}),
        "seconds after the kill (first, last)": (
            round(min((at - killed for at, _, _ in errors), default=0), 2),
            round(max((at - killed for at, _, _ in errors), default=0), 2),
        ),
    }


# ------------------------------------------------------------------ the run


def run(args) -> bool:
    if shutil.which("nginx") is None and args.install_nginx:
        print(f"installing nginx: {NGINX_INSTALL}", flush=True)
        subprocess.run(NGINX_INSTALL.split(), check=True, env={**os.environ, **APT_ENV})
    nginx = shutil.which("nginx")
    if nginx is None:
        print(f"nginx is not installed; on Debian: {NGINX_INSTALL} (or --install-nginx)")
        raise SystemExit(2)
    version = subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.strip()
    # Which Debian package it came from (dpkg -S), or where it is if not from one.
    package = ""
    if shutil.which("dpkg"):
        package = subprocess.run(["dpkg", "-S", nginx], capture_output=True, text=True).stdout
    origin = f"Debian package {package.split(':', 1)[0]}" if package else nginx
    print(
        f"{args.raters} raters x {args.items} items through {version} ({origin}; "
        f"installed with `{NGINX_INSTALL}` if absent) as round-robin proxy to two "
        f"`annotator serve --workers {args.workers} --threads {args.threads}`, one PostgreSQL "
        f"database, Redis, two `annotator worker`; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}",
        flush=True,
    )
    url, drop = create_database(args.postgres_url)
    queue = "scaleout-" + uuid.uuid4().hex[:10]
    password = secrets.token_urlsafe(12)
    with tempfile.TemporaryDirectory(prefix="annotator-scaleout-") as tmp:
        folder = Path(tmp)
        env = {
            **os.environ,
            "ANNOTATOR_DATABASE_URL": url,
            "ANNOTATOR_SECRET_KEY": secrets.token_hex(32),
            "ANNOTATOR_PROXY_FIX": "1",
            "ANNOTATOR_RATELIMIT_STORAGE_URI": args.redis_url,
            "ANNOTATOR_REDIS_URL": args.redis_url,
            "ANNOTATOR_JOBS_QUEUE_NAME": queue,
            "ANNOTATOR_JOBS_HEARTBEAT_SECONDS": str(args.heartbeat),
        }
        cluster = Cluster(folder, env)
        env["ANNOTATOR_BASE_URL"] = f"http://127.0.0.1:{cluster.nginx_port}"
        # The study, its invites and the lead, made through the CLI of server "a".
        os.environ.update(cluster.instance_env("a"))
        instance = Instance(folder / "instance-a", url, port=cluster.nginx_port)
        try:
            invites = prepare(instance, args.raters, args.items)
            subprocess.run(
                [str(ANNOTATOR), "lead", "create", LEAD_EMAIL, "--password-stdin"],
                input=password + "\n",
                env=instance.env,
                check=True,
                capture_output=True,
                text=True,
            )
            for name in ("a", "b"):
                cluster.serve(name, args.workers, args.threads)
                cluster.start_worker(name)
            cluster.start_nginx()
            return _drive(cluster, instance, invites, password, args)
        finally:
            cluster.stop()
            drop()
            removed = drop_redis_keys(args.redis_url, queue)
            print(f"cleaned up: processes stopped, database dropped, {removed} Redis keys removed")


def _record(recorder: Recorder, stored: dict, jobs: dict, errors: dict) -> None:
    bad = sum(stored[k] for k in ("lost", "duplicated", "unexpected", "half-written"))
    for measure, value in (
        ("scores lost, duplicated or half-written", bad),
        ("report jobs not done", jobs["not done"]),
        ("5xx from the app (nginx's at the kill excluded)", errors["5xx from the app"]),
    ):
        recorder.record(measure, value, "count", goal="== 0", rounds=1)


def _drive(cluster: Cluster, instance: Instance, invites: list[str], password, args) -> bool:
    context = multiprocessing.get_context("spawn")
    counter = context.Value("i", 0)
    jobs = [
        Job(cluster.nginx_port, invite, args.items, i, args.think)
        for i, invite in enumerate(invites)
    ]
    stop = threading.Event()
    faults, lead_log, lead_stats = Faults(), LeadLog(), Stats()
    lead = threading.Thread(
        target=_lead, args=(cluster.nginx_port, password, stop, lead_log, lead_stats), daemon=True
    )
    url = instance.database_url
    injector = threading.Thread(
        target=_inject,
        args=(cluster, counter, args.raters * args.items, faults, url, stop),
        daemon=True,
    )
    lead.start()
    injector.start()
    deadline = time.monotonic() + args.time_limit
    seconds, stats, acked, errors = run_clients(jobs, args.client_processes, deadline, counter)
    stop.set()
    lead.join(timeout=args.time_limit)
    if lead.is_alive():
        lead_log.errors.append(f"the lead's last job did not end within {args.time_limit} s")
    injector.join(timeout=10)
    survivor = next((p.pid for p in cluster.workers.values() if p.poll() is None), None)
    stored = check_stored(instance, acked)
    job_checks = _job_checks(url, lead_log, faults, survivor)
    error_checks = _error_checks(stats, lead_stats, faults, args.kill_window)
    _record(args.recorder, stored, job_checks, error_checks)
    rate = len(stats.latencies) / max(stats.last - stats.first, 1e-9)
    print(
        f"\n{len(acked)} scores acknowledged in {seconds:.1f} s ({rate:.0f} posts/s through "
        f"nginx); p50 {_ms(stats, 0.5):.0f} ms, p95 {_ms(stats, 0.95):.0f} ms; "
        f"client counts {stats.counts}"
    )
    print(
        f"faults: server 'a' killed; worker {faults.worker_killed!r} killed during job "
        f"{faults.job_id} {faults.notes or ''}"
    )
    print(f"stored: {stored}")
    print(f"jobs: {job_checks} (lead: {lead_log.jobs[:3]} ...)")
    print(f"5xx: {error_checks}")
    for error in (errors + lead_log.errors)[:5]:
        print(f"  client error: {error}")
    ok = (
        not errors
        and not lead_log.errors
        and stored["lost"] == stored["duplicated"] == stored["unexpected"] == 0
        and stored["half-written"] == 0
        and stored["exported"] == stored["2xx scores"]
        and job_checks["jobs"] > 0
        and job_checks["not done"] == 0
        and job_checks["files"] == job_checks["jobs"]
        and job_checks["killed job finished by the other worker"]
        and error_checks["5xx from the app"] == 0
        and error_checks["5xx outside the kill's seconds"] == 0
    )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print("checks:", "all passed" if ok else "FAILED")
    return ok


def _ms(stats: Stats, share: float) -> float:
    ordered = sorted(stats.latencies) or [float("nan")]
    return 1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--raters", type=int, default=100)
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--think", type=float, default=0.5, help="mean seconds between posts")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per server")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--heartbeat", type=float, default=1.0, help="jobs' heartbeat (s); stale after 6"
    )
    parser.add_argument(
        "--kill-window", type=float, default=10.0, help="seconds after the kill a 5xx may come"
    )
    parser.add_argument("--time-limit", type=float, default=240, help="seconds the raters rate")
    parser.add_argument(
        "--install-nginx",
        action="store_true",
        help=f"if nginx is missing, run `{NGINX_INSTALL}` (as root) first",
    )
    parser.add_argument(
        "--print-nginx-config", action="store_true", help="print the upstream block and stop"
    )
    args = parser.parse_args(argv)
    if args.print_nginx_config:
        print(NGINX_UPSTREAM.format(port_a=8001, port_b=8002))
        return 0
    if args.quick:
        args.raters, args.items, args.think, args.workers = 4, 5, 0.1, 1
    args.recorder = Recorder("scaleout", args)
    ok = run(args)
    args.recorder.save()
    return 0 if ok else 1


if __name__ == "__main__":
    socket.setdefaulttimeout(60)
    sys.exit(main())
