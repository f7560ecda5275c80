"""The simulated raters of the serving benchmarks: one kept-alive connection each,
cookies and a browser's retries, dealt to spawned client processes; then the
stored rows checked against the scores that got a 2xx.

Only the standard library at the top: spawned client processes import this module.
"""

from __future__ import annotations

import csv
import http.client
import multiprocessing
import random
import re
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from harness.serving import Instance

__all__ = ["Browser", "Job", "Stats", "check_stored", "run_clients"]

RETRY_FOR_S = 60.0

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
START = re.compile(r'action="(/rate/blocks/\d+/start)"')


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


def pause(rng: random.Random, think: float) -> None:
    # Uniform on 0.5-1.5 x the mean, so that raters who started together do
    # not post in step (a burst of all of them every second would measure
    # the bursts); below gunicorn's 2 s keep-alive at the 1 s default.
    if think:
        time.sleep(rng.uniform(0.5 * think, 1.5 * think))


def rate(job: Job, stats: Stats, acked: list) -> None:
    """One rater: invite, consent, demographics, start, every score of the block."""
    rng = random.Random(job.seed)
    browser = Browser(job.port, stats)
    invite = job.invite
    _, page = browser.get(invite)
    csrf = CSRF.search(page).group(1)
    browser.post(invite, {"decision": "agree", "csrf_token": csrf})
    _, page = browser.get("/rate/demographics")
    _, page = browser.post("/rate/demographics", {"age": "30", "csrf_token": csrf})
    start = START.search(page).group(1)
    path, page = browser.post(start, {"csrf_token": csrf})
    block = path.rsplit("/items/", 1)[0]
    htmx = {"HX-Request": "true"}
    for position in range(1, job.items + 1):
        if time.monotonic() > stats.deadline:
            stats.count("stopped at the time limit")
            break
        pause(rng, job.think)
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


def hello(job: Job, stats: Stats, acked: list) -> None:
    """A reference app's client (benchmarks/reference_apps.py): sign in, then post."""
    rng = random.Random(job.seed)
    browser = Browser(job.port, stats)
    # The same number of requests before the timed posts as a rater's
    # enrolment (so that a paced run's clients are as spread out when they
    # start posting); the first signs the floor app's rater in and answers
    # its CSRF token (the other references answer none and ignore the field).
    _, _, page = browser.request("GET", f"/hello?rater={job.seed}")
    found = CSRF.search(page)
    csrf = found.group(1) if found else "x" * 40
    for _ in range(4):
        browser.request("GET", "/hello")
    for item in range(job.items):
        if time.monotonic() > stats.deadline:
            stats.count("stopped at the time limit")
            break
        pause(rng, job.think)
        # rater and item: the write apps' key (the hello-world ignores them).
        form = {"score": "3.14", "csrf_token": csrf, "rater": job.seed, "item": item}
        status, _, _ = browser.request("POST", "/hello", form, timed=True)
        if status != 200:
            raise RuntimeError(f"hello: {status}")
        acked.append((job.seed, item))
        stats.scored_one()
    browser.close()


def client_process(jobs: list[Job], deadline: float, counter, results) -> None:
    """Run ``jobs`` in threads of this process; put what they saw on ``results``."""
    stats = Stats(deadline, counter)
    acked: list = []
    errors: list[str] = []

    def guarded(job: Job) -> None:
        try:
            (hello if job.invite is None else rate)(job, stats, acked)
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


def run_clients(
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
            target=client_process, args=(jobs[i::processes], deadline, counter, results)
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


def check_stored(instance: Instance, acked: list[tuple[str, int, str]]) -> dict[str, int]:
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
