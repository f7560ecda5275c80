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
   benchmarks/reference_apps.py, through the engine ``annotator serve``
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

The module imports only the standard library at the top: the spawned client
processes import it too. The reference apps (gunicorn factories) are in
benchmarks/reference_apps.py.
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import multiprocessing
import os
import random
import re
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
from urllib.parse import urlencode, urlsplit

# Standard library only at its top too (the spawned clients import this module).
from reference_apps import WRITE_REFERENCES

ROOT = Path(__file__).resolve().parents[1]
ANNOTATOR = Path(sys.executable).with_name("annotator")
P95_GOAL_MS = 30.0
SHARE_GOAL = 0.5
RETRY_FOR_S = 60.0

STUDY_TOML = """
name = "Load test"
slug = "load"
session_gap_days = 0
scale_order = "balanced"
consent = "You agree to rate short texts."

[[scales]]
name = "0-5"
min = 0
max = 5
step = 0.01

[[benchmarks]]
name = "sts-b"
instructions = "Rate the similarity of the two sentences from {min} to {max}."
template = "Sentence 1: {{ sentence1 }}\\nSentence 2: {{ sentence2 }}"

[[demographics]]
key = "age"
label = "Age in years"
type = "number"
min = 18
max = 120
"""


# ------------------------------------------------------------------ servers


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(port: int, path: str, process: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", path)
            if connection.getresponse().status < 500:
                connection.close()
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing answered on port {port} within {timeout} s")


def _stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass
class Instance:
    """A study folder and database, and how to run `annotator` against them."""

    folder: Path
    database_url: str
    port: int = field(default_factory=_free_port)
    # "Worker ready" lines already in the server's log (earlier starts).
    ready: int = 0
    # A source tree of the code before (--baseline), imported first.
    pythonpath: str | None = None

    @property
    def env(self) -> dict[str, str]:
        extra = {"PYTHONPATH": self.pythonpath} if self.pythonpath else {}
        return {
            **os.environ,
            **extra,
            "ANNOTATOR_INSTANCE_PATH": str(self.folder),
            "ANNOTATOR_DATABASE_URL": self.database_url,
            "ANNOTATOR_BASE_URL": f"http://127.0.0.1:{self.port}",
        }

    def annotator(self, *args: str) -> str:
        result = subprocess.run(
            [str(ANNOTATOR), *args], env=self.env, capture_output=True, text=True, timeout=300
        )
        if result.returncode:
            raise RuntimeError(f"annotator {' '.join(args)}: {result.stderr or result.stdout}")
        return result.stdout

    def serve(self, workers: int, threads: int, dev: bool = False) -> subprocess.Popen:
        how = ["--dev"] if dev else ["--workers", str(workers), "--threads", str(threads)]
        process = subprocess.Popen(
            [str(ANNOTATOR), "serve", "--no-demo", "--port", str(self.port), *how],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "server.log", "a"),  # noqa: SIM115
            start_new_session=True,
        )
        _wait_until_up(self.port, "/login", process)
        if dev:
            return process
        # Clients that connect before the second worker has loaded the app all
        # stay with the first (kept-alive connections): wait for every worker.
        log = self.folder / "server.log"
        deadline = time.monotonic() + 90
        while log.read_text().count("Worker ready") < self.ready + workers:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{workers} workers were not ready within 90 s")
            time.sleep(0.2)
        self.ready += workers
        return process


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a server so far: its master and its workers (/proc).

    Unlike requests/s, CPU per request hardly depends on what else the
    machine runs, so it compares this code and the code before on a busy
    machine too. The database server's own CPU (PostgreSQL's backends) is
    not in it.
    """
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return float("nan")
    total = 0
    for process in [pid, *map(int, children)]:
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime and stime, the 14th and 15th fields (the 12th and 13th after the name).
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _hello_server(
    port: int, workers: int, threads: int, factory: str = "hello_app", env: dict | None = None
) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--chdir", str(Path(__file__).parent)]
        + ["--workers", str(workers), "--threads", str(threads)]
        + ["--worker-class", "gthread" if threads > 1 else "sync"]
        + ["--bind", f"127.0.0.1:{port}", "--no-control-socket", f"reference_apps:{factory}()"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )
    _wait_until_up(port, "/hello", process)
    time.sleep(2)  # the other worker (a bare Flask app loads in well under a second)
    return process


def _prepare(instance: Instance, raters: int, items: int) -> list[str]:
    """Create the study, its items and the raters' invites; return the invite paths."""
    instance.folder.mkdir(parents=True, exist_ok=True)
    (instance.folder / "study.toml").write_text(STUDY_TOML, "utf-8")
    rows = [
        {
            "item_id": f"s{i}",
            "benchmark": "sts-b",
            "sentence1": f"A person is slicing vegetable number {i}.",
            "sentence2": f"Someone cuts vegetable {i} with a knife.",
        }
        for i in range(1, items + 1)
    ]
    path = instance.folder / "items.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    instance.annotator("db", "upgrade")
    instance.annotator("study", "create", str(instance.folder / "study.toml"))
    instance.annotator("items", "import", "load", str(path))
    links = instance.annotator("raters", "invite", "load", "--count", str(raters)).split()
    return [urlsplit(link).path for link in links]


# ------------------------------------------------------------------ clients

_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_START = re.compile(r'action="(/rate/blocks/\d+/start)"')


class Browser:
    """One rater's browser: a kept-alive connection, cookies, retries."""

    def __init__(self, port: int, stats: Stats) -> None:
        self.port = port
        self.stats = stats
        self.cookies: dict[str, str] = {}
        self.connection: http.client.HTTPConnection | None = None

    def _send(self, method: str, path: str, form: dict | None, headers: dict):
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        all_headers = dict(headers)
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urlencode(form)
            all_headers["Content-Type"] = "application/x-www-form-urlencoded"
        self.connection.request(method, path, body=body, headers=all_headers)
        response = self.connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return response.status, response.getheader("Location"), text

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def request(self, method: str, path: str, form=None, headers=None, *, timed=False):
        """Send until an answer below 500 comes (a browser's user pressing again)."""
        deadline = time.monotonic() + RETRY_FOR_S
        while True:
            started = time.perf_counter()
            try:
                status, location, text = self._send(method, path, form, headers or {})
            except (OSError, http.client.HTTPException):
                self.close()
                self.stats.count("connection errors")
                status = None
            elapsed = time.perf_counter() - started
            if status is not None:
                if timed:
                    self.stats.latency(elapsed)
                if status < 500:
                    return status, location, text
                self.stats.server_error(status, text)
            if time.monotonic() > deadline:
                raise RuntimeError(f"{method} {path}: no answer within {RETRY_FOR_S} s")
            self.stats.count("retries")
            time.sleep(0.2)

    def get(self, path: str) -> tuple[str, str]:
        for _ in range(10):
            status, location, text = self.request("GET", path)
            if status in (301, 302, 303):
                path = urlsplit(location).path
                continue
            if status != 200:
                raise RuntimeError(f"GET {path}: {status}")
            return path, text
        raise RuntimeError(f"GET {path}: too many redirects")

    def post(self, path: str, form: dict) -> tuple[str, str]:
        status, location, text = self.request("POST", path, form)
        if status in (301, 302, 303):
            return self.get(urlsplit(location).path)
        if status != 200:
            raise RuntimeError(f"POST {path}: {status} {text[:200]}")
        return path, text


class Stats:
    """What one client process saw; the parent merges them (:meth:`merge`)."""

    def __init__(self, deadline: float = float("inf"), counter=None) -> None:
        self.lock = threading.Lock()
        # Raters stop scoring then (time.monotonic(), the same clock in every
        # process on Linux; what they stored is still checked).
        self.deadline = deadline
        self.latencies: list[float] = []
        self.counts: dict[str, int] = {}
        # Scores posted, shared by the client processes (the fault runs wait
        # on it); None in the parent's merged copy.
        self.counter = counter
        self.first = float("inf")
        self.last = float("-inf")
        # Each 5xx: when (epoch seconds), its status and whether nginx wrote
        # it (its own error page) rather than the app (benchmarks/scaleout.py).
        self.server_errors: list[tuple[float, int, bool]] = []

    def server_error(self, status: int, text: str) -> None:
        self.count("5xx")
        with self.lock:
            self.server_errors.append((time.time(), status, "<center>nginx" in text))

    def latency(self, seconds: float) -> None:
        ended = time.perf_counter()
        with self.lock:
            self.latencies.append(seconds)
            # The timed window: from the first timed request to the last
            # (perf_counter is CLOCK_MONOTONIC, comparable across processes).
            self.first = min(self.first, ended - seconds)
            self.last = ended

    def count(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + n

    def scored_one(self) -> None:
        if self.counter is not None:
            with self.counter.get_lock():
                self.counter.value += 1

    def merge(self, part: dict) -> None:
        self.latencies += part["latencies"]
        self.first = min(self.first, part["first"])
        self.last = max(self.last, part["last"])
        self.server_errors += part["server_errors"]
        for name, n in part["counts"].items():
            self.count(name, n)


@dataclass(frozen=True)
class Job:
    """One simulated client, picklable for a client process.

    ``invite`` None: a hello-world (or minimal write app) client posting ``items``
    forms to /hello.
    ``think``: mean seconds between a response and the next post (0: none).
    """

    port: int
    invite: str | None
    items: int
    seed: int
    think: float = 0.0


def _pause(rng: random.Random, think: float) -> None:
    # Uniform on 0.5-1.5 x the mean, so that raters who started together do
    # not post in step (a burst of all of them every second would measure
    # the bursts); below gunicorn's 2 s keep-alive at the 1 s default.
    if think:
        time.sleep(rng.uniform(0.5 * think, 1.5 * think))


def _rate(job: Job, stats: Stats, acked: list) -> None:
    """One rater: invite, consent, demographics, start, every score of the block."""
    rng = random.Random(job.seed)
    browser = Browser(job.port, stats)
    invite = job.invite
    _, page = browser.get(invite)
    csrf = _CSRF.search(page).group(1)
    browser.post(invite, {"decision": "agree", "csrf_token": csrf})
    _, page = browser.get("/rate/demographics")
    _, page = browser.post("/rate/demographics", {"age": "30", "csrf_token": csrf})
    start = _START.search(page).group(1)
    path, page = browser.post(start, {"csrf_token": csrf})
    block = path.rsplit("/items/", 1)[0]
    htmx = {"HX-Request": "true"}
    for position in range(1, job.items + 1):
        if time.monotonic() > stats.deadline:
            stats.count("stopped at the time limit")
            break
        _pause(rng, job.think)
        value = f"{rng.randrange(0, 501) / 100:.2f}"
        status, _, _ = browser.request(
            "POST",
            f"{block}/items/{position}",
            {"score": value, "csrf_token": csrf},
            htmx,
            timed=True,
        )
        if status != 200:
            raise RuntimeError(f"score {position} of {invite}: {status}")
        acked.append((invite, position, value))
        stats.scored_one()
    browser.close()


def _hello(job: Job, stats: Stats, acked: list) -> None:
    """A reference app's client (benchmarks/reference_apps.py): sign in, then post."""
    rng = random.Random(job.seed)
    browser = Browser(job.port, stats)
    # The same number of requests before the timed posts as a rater's
    # enrolment (so that a paced run's clients are as spread out when they
    # start posting); the first signs the floor app's rater in and answers
    # its CSRF token (the other references answer none and ignore the field).
    _, _, page = browser.request("GET", f"/hello?rater={job.seed}")
    found = _CSRF.search(page)
    csrf = found.group(1) if found else "x" * 40
    for _ in range(4):
        browser.request("GET", "/hello")
    for item in range(job.items):
        if time.monotonic() > stats.deadline:
            stats.count("stopped at the time limit")
            break
        _pause(rng, job.think)
        # rater and item: the write apps' key (the hello-world ignores them).
        form = {"score": "3.14", "csrf_token": csrf, "rater": job.seed, "item": item}
        status, _, _ = browser.request("POST", "/hello", form, timed=True)
        if status != 200:
            raise RuntimeError(f"hello: {status}")
        acked.append((job.seed, item))
        stats.scored_one()
    browser.close()


def _client_process(jobs: list[Job], deadline: float, counter, results) -> None:
    """Run ``jobs`` in threads of this process; put what they saw on ``results``."""
    stats = Stats(deadline, counter)
    acked: list = []
    errors: list[str] = []

    def guarded(job: Job) -> None:
        try:
            (_hello if job.invite is None else _rate)(job, stats, acked)
        except BaseException as exc:  # reported after the run
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=guarded, args=(job,), daemon=True) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(
        {
            "latencies": stats.latencies,
            "first": stats.first,
            "last": stats.last,
            "counts": stats.counts,
            "server_errors": stats.server_errors,
            "acked": acked,
            "errors": errors,
        }
    )


def _run_clients(
    jobs: list[Job], processes: int, deadline: float, counter
) -> tuple[float, Stats, list, list[str]]:
    """Run the clients, dealt round-robin to ``processes`` client processes.

    Several processes, so that the load generator is not one interpreter's
    GIL: a Python client costs about as much CPU per request as the
    hello-world's server does. Spawned, not forked: the parent may have
    threads (a fault injector) and a database engine.
    """
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [
        context.Process(
            target=_client_process, args=(jobs[i::processes], deadline, counter, results)
        )
        for i in range(min(processes, len(jobs)))
    ]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    stats = Stats(deadline)
    acked: list = []
    errors: list[str] = []
    for _ in workers:
        part = results.get()
        stats.merge(part)
        acked += part["acked"]
        errors += part["errors"]
    for worker in workers:
        worker.join()
    return time.perf_counter() - started, stats, acked, errors


# ------------------------------------------------------------------ checks


def _check_stored(instance: Instance, acked: list[tuple[str, int, str]]) -> dict[str, int]:
    """Compare the 2xx scores with the export and the database (see the module docstring)."""
    from decimal import Decimal

    from sqlalchemy import func
    from sqlmodel import Session, select

    from annotator.db import make_engine
    from annotator.models import Block, ChangeReason, Invite, Rating, RatingChange, User

    out = instance.folder / "long.csv"
    instance.annotator("export", "load", "--format", "long", "--out", str(out))
    with out.open(newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["kind"] == "human"]
    exported: dict[tuple[str, int], list[Decimal]] = {}
    for row in rows:
        key = (row["rater"], int(row["presentation_position"]))
        exported.setdefault(key, []).append(Decimal(row["score"]))

    engine = make_engine(instance.database_url)
    problems = 0
    with Session(engine) as session:
        codes = dict(
            session.exec(
                select(Invite.token, User.rater_code).join(User, User.id == Invite.user_id)
            ).all()
        )
        creations = dict(
            session.exec(
                select(RatingChange.rating_id, func.count())
                .where(RatingChange.reason == ChangeReason.CREATE)
                .group_by(RatingChange.rating_id)
            ).all()
        )
        ratings = session.exec(select(Rating.id, Rating.block_id, Rating.position)).all()
        problems += sum(1 for rating_id, _, _ in ratings if creations.get(rating_id) != 1)
        places: dict[int, list[int]] = {}
        for _, block_id, position in ratings:
            places.setdefault(block_id, []).append(position)
        for block in session.exec(select(Block)).all():
            rated = sorted(places.get(block.id, []))
            if rated != list(range(1, len(rated) + 1)):
                problems += 1
            if block.completed_at is not None and len(rated) != len(block.item_order):
                problems += 1
    engine.dispose()

    wanted = {}
    for invite, position, value in acked:
        wanted[(codes[invite.rsplit("/", 1)[1]], position)] = Decimal(value)
    lost = sum(1 for key, value in wanted.items() if exported.get(key, [None])[0] != value)
    return {
        "2xx scores": len(acked),
        "exported": len(rows),
        "lost": lost,
        "duplicated": sum(len(values) - 1 for values in exported.values()),
        "unexpected": sum(1 for key in exported if key not in wanted),
        "half-written": problems,
    }


# ------------------------------------------------------------------ runs


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


@dataclass
class Result:
    name: str
    # "saturation", "paced" or "fault": which hello-world row it is compared with.
    mode: str
    seconds: float
    stats: Stats
    checks: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # CPU seconds of the server (master and workers) while the clients ran.
    server_cpu: float = float("nan")

    @property
    def cpu_ms(self) -> float:
        """The server's CPU per timed request (a rater's enrolment requests included)."""
        return 1000 * self.server_cpu / self.count if self.count else float("nan")

    @property
    def count(self) -> int:
        return len(self.stats.latencies)

    @property
    def per_second(self) -> float:
        # Over the scoring itself: the raters' enrolment before it is left out.
        return self.count / (self.stats.last - self.stats.first)

    def p(self, share: float) -> float:
        return _percentile(self.stats.latencies, share)


def _wait_for(counter, scores: float) -> None:
    while counter.value < scores:
        time.sleep(0.05)


def _app_run(name, mode, instance, args, raters, *, think=0.0, fault=None, dev=False) -> Result:
    invites = _prepare(instance, raters, args.items)
    server = [instance.serve(args.workers, args.threads, dev)]
    counter = multiprocessing.get_context("spawn").Value("i", 0)
    jobs = [Job(instance.port, invite, args.items, i, think) for i, invite in enumerate(invites)]
    injector = None
    if fault is not None:
        total = raters * args.items
        injector = threading.Thread(
            target=fault, args=(counter, total, server, instance, args), daemon=True
        )
        injector.start()
    cpu_before = _tree_cpu(server[0].pid)
    try:
        seconds, stats, acked, errors = _run_clients(
            jobs, args.client_processes, time.monotonic() + args.time_limit, counter
        )
        if injector is not None:
            injector.join(timeout=120)
            stats.counts.update(getattr(injector, "counts", {}))
        # A fault run's server was killed or restarted: its CPU is not comparable.
        cpu = _tree_cpu(server[-1].pid) - cpu_before if fault is None else float("nan")
    finally:
        _stop(server[-1])
    result = Result(name, mode, seconds, stats, errors=errors, server_cpu=cpu)
    result.checks = _check_stored(instance, acked)
    return result


def _kill_a_worker(counter, total: int, server: list, instance: Instance, args) -> None:
    _wait_for(counter, total / 3)
    master = server[-1].pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    os.kill(int(children[0]), signal.SIGKILL)
    threading.current_thread().counts = {"workers killed": 1}


def _restart(counter, total: int, server: list, instance: Instance, args) -> None:
    _wait_for(counter, total / 2)
    _stop(server[-1], signal.SIGKILL)
    server.append(instance.serve(args.workers, args.threads))
    threading.current_thread().counts = {"server restarts": 1}


def _hello_run(
    name: str,
    mode: str,
    args,
    think: float = 0.0,
    factory: str = "hello_app",
    env: dict | None = None,
) -> tuple[Result, list]:
    """A reference app (``factory``) served and posted to; the result and the posts
    that got a 2xx."""
    port = _free_port()
    server = _hello_server(port, args.workers, args.threads, factory, env)
    counter = multiprocessing.get_context("spawn").Value("i", 0)
    jobs = [Job(port, None, args.items, i, think) for i in range(args.raters)]
    cpu_before = _tree_cpu(server.pid)
    try:
        seconds, stats, acked, errors = _run_clients(
            jobs, args.client_processes, time.monotonic() + args.time_limit, counter
        )
        cpu = _tree_cpu(server.pid) - cpu_before
    finally:
        _stop(server)
    return Result(name, mode, seconds, stats, errors=errors, server_cpu=cpu), acked


def _write_run(
    name: str, reference: str, url: str, args, mode: str = "saturation", think: float = 0.0
) -> Result:
    """A reference app that writes (``reference_apps.WRITE_REFERENCES``), at saturation
    or paced (``think``), then its tables checked: every acknowledged post stored exactly once (and, for the
    floor app, with exactly one history row)."""
    from sqlalchemy import text

    from annotator.db import make_engine

    factory, tables, stored_query, half_query = WRITE_REFERENCES[reference]
    engine = make_engine(url)
    auto = "" if engine.dialect.name == "sqlite" else " GENERATED ALWAYS AS IDENTITY"
    with engine.begin() as connection:
        for table in tables:
            connection.execute(text(table.format(auto=auto)))
    result, acked = _hello_run(
        name, mode, args, think, factory=factory, env={"LOAD_WRITE_URL": url}
    )
    with engine.connect() as connection:
        rows = [tuple(row) for row in connection.execute(text(stored_query))]
        half = connection.execute(text(half_query)).scalar_one() if half_query else None
    engine.dispose()
    stored, posted = set(rows), set(acked)
    result.checks = {
        "2xx scores": len(acked),
        "exported": len(rows),
        "lost": len(posted - stored),
        "duplicated": len(rows) - len(stored),
        "unexpected": len(stored - posted),
    }
    if half is not None:  # shown as "-" otherwise
        result.checks["half-written"] = half
    return result


def _database(kind: str, folder: Path, postgres_url: str):
    if kind == "SQLite":
        return f"sqlite:///{folder / 'annotator.sqlite'}", None
    from sqlalchemy import create_engine, text

    from annotator.db import normalise_url

    schema = "load_" + uuid.uuid4().hex[:12]
    admin = create_engine(normalise_url(postgres_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = admin.url.update_query_dict({"options": f"-csearch_path={schema}"})

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()

    return url.render_as_string(hide_password=False), drop


def _hello_rate(results: list[Result], mode: str) -> float | None:
    # Saturation: the mean of the hello-world runs before and after the app's.
    mode = "saturation" if mode == "dev" else mode
    rates = [r.per_second for r in results if r.mode == mode and r.name.startswith("hello")]
    return sum(rates) / len(rates) if rates else None


def _print(results: list[Result]) -> bool:
    header = (
        f"{'run':<34}{'requests':>9}{'per s':>8}{'share':>7}{'p50 ms':>8}{'p95 ms':>8}"
        f"{'p99 ms':>8}{'CPU ms':>8}{'5xx':>5}{'retry':>6}{'lost':>5}{'dup':>5}{'extra':>6}"
        f"{'half':>5}"
    )
    print(header)
    print("-" * len(header))
    ok = True
    for result in results:
        c = result.stats.counts
        hello = _hello_rate(results, result.mode)
        share = f"{result.per_second / hello:>7.0%}" if hello else f"{'-':>7}"
        checks = result.checks
        cells = [
            f"{result.name:<34}{result.count:>9}{result.per_second:>8.0f}{share}",
            f"{result.p(0.5):>8.1f}{result.p(0.95):>8.1f}{result.p(0.99):>8.1f}"
            f"{result.cpu_ms:>8.2f}",
            f"{c.get('5xx', 0):>5}{c.get('retries', 0):>6}",
            "".join(
                f"{checks[k]:>{w}}" if k in checks else f"{'-':>{w}}"
                for k, w in (("lost", 5), ("duplicated", 5), ("unexpected", 6), ("half-written", 5))
            ),
        ]
        print("".join(cells))
        stored_ok = all(checks.get(k, 0) == 0 for k in ("lost", "duplicated", "unexpected"))
        ok = ok and stored_ok and checks.get("half-written", 0) == 0 and not result.errors
        if checks and checks["exported"] != checks["2xx scores"]:
            ok = False
        for error in result.errors[:3]:
            print(f"  {result.name}: client error: {error}")
    return ok


def _goals(results: list[Result], args) -> None:
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
            share = result.per_second / _hello_rate(results, "saturation")
            against = (
                f"; the app's ratings/s are {app.per_second / result.per_second:.0%} of it "
                f"(server CPU per post {app.cpu_ms:.2f} ms against {result.cpu_ms:.2f} ms)"
                if app
                else ""
            )
            print(f"  {result.name}: {share:.0%} of the hello-world's requests/s{against}")
            continue
        fivexx = result.stats.counts.get("5xx", 0)
        if result.mode == "saturation":
            share = result.per_second / _hello_rate(results, "saturation")
            verdict = "met" if share >= SHARE_GOAL else "NOT met"
            print(
                f"  {result.name}: {share:.0%} of the hello-world's requests/s "
                f"(goal {SHARE_GOAL:.0%}: {verdict}); p95 {result.p(0.95):.0f} ms "
                f"(queueing: {args.raters} clients without pauses); {fivexx} 5xx"
            )
        elif result.mode == "paced":
            verdict = "met" if result.p(0.95) < P95_GOAL_MS else "NOT met"
            hello = f", hello-world {hello_paced.p(0.95):.1f} ms" if hello_paced else ""
            print(
                f"  {result.name}: p95 {result.p(0.95):.1f} ms at {result.per_second:.0f} "
                f"ratings/s (goal < {P95_GOAL_MS:.0f} ms: {verdict}{hello}); {fivexx} 5xx"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    faults = {"kill a worker": _kill_a_worker, "restart the server": _restart}
    with tempfile.TemporaryDirectory(prefix="annotator-load-") as tmp:
        results: list[Result] = []
        for kind, name, mode, think in plan:
            if kind == "hello":
                result, _ = _hello_run(name, mode, args, think)
            elif name in WRITE_REFERENCES:
                folder = Path(tmp) / f"{kind}-{WRITE_REFERENCES[name][0]}"
                folder.mkdir()
                url, drop = _database(kind, folder, args.postgres_url)
                try:
                    result = _write_run(f"{kind}: {name}", name, url, args)
                finally:
                    if drop is not None:
                        drop()
            else:
                folder = Path(tmp) / f"{kind}-{re.sub(r'[^a-z]+', '-', name)}"
                url, drop = _database(kind, folder, args.postgres_url)
                raters = args.fault_raters if mode == "fault" else args.raters
                try:
                    result = _app_run(
                        f"{kind}: {name}",
                        mode,
                        Instance(
                            folder, url, pythonpath=args.baseline if "before" in name else None
                        ),
                        args,
                        raters,
                        think=think,
                        fault=faults.get(name),
                        dev=mode == "dev",
                    )
                finally:
                    if drop is not None:
                        drop()
            results.append(result)
            print(
                f"  done: {result.name} ({result.seconds:.1f} s, load average "
                f"{os.getloadavg()[0]:.1f}) {result.checks} {result.stats.counts}",
                flush=True,
            )
        print()
        all_ok = _print(results)
    _goals(results, args)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print("stored checks:", "all passed" if all_ok else "FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
