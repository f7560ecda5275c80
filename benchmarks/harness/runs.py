"""One serving run: a server (the app or a reference app), its clients, the
faults injected and the stored rows checked; and the table of runs."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.clients import Job, Stats, check_stored, run_clients
from harness.reference_apps import WRITE_REFERENCES
from harness.serving import Instance, free_port, prepare, reference_server, stop, tree_cpu

__all__ = [
    "Result",
    "app_run",
    "hello_rate",
    "kill_a_worker",
    "print_results",
    "reference_run",
    "restart",
    "write_run",
]


def percentile(values: list[float], share: float) -> float:
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
        return percentile(self.stats.latencies, share)


def wait_for(counter, scores: float) -> None:
    while counter.value < scores:
        time.sleep(0.05)


def app_run(name, mode, instance, args, raters, *, think=0.0, fault=None, dev=False) -> Result:
    invites = prepare(instance, raters, args.items)
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
    cpu_before = tree_cpu(server[0].pid)
    try:
        seconds, stats, acked, errors = run_clients(
            jobs, args.client_processes, time.monotonic() + args.time_limit, counter
        )
        if injector is not None:
            injector.join(timeout=120)
            stats.counts.update(getattr(injector, "counts", {}))
        # A fault run's server was killed or restarted: its CPU is not comparable.
        cpu = tree_cpu(server[-1].pid) - cpu_before if fault is None else float("nan")
    finally:
        stop(server[-1])
    result = Result(name, mode, seconds, stats, errors=errors, server_cpu=cpu)
    result.checks = check_stored(instance, acked)
    return result


def kill_a_worker(counter, total: int, server: list, instance: Instance, args) -> None:
    wait_for(counter, total / 3)
    master = server[-1].pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    os.kill(int(children[0]), signal.SIGKILL)
    threading.current_thread().counts = {"workers killed": 1}


def restart(counter, total: int, server: list, instance: Instance, args) -> None:
    wait_for(counter, total / 2)
    stop(server[-1], signal.SIGKILL)
    server.append(instance.serve(args.workers, args.threads))
    threading.current_thread().counts = {"server restarts": 1}


def reference_run(
    name: str,
    mode: str,
    args,
    think: float = 0.0,
    factory: str = "hello_app",
    env: dict | None = None,
) -> tuple[Result, list]:
    """A reference app (``factory``) served and posted to; the result and the posts
    that got a 2xx."""
    port = free_port()
    server = reference_server(port, args.workers, args.threads, factory, env)
    counter = multiprocessing.get_context("spawn").Value("i", 0)
    jobs = [Job(port, None, args.items, i, think) for i in range(args.raters)]
    cpu_before = tree_cpu(server.pid)
    try:
        seconds, stats, acked, errors = run_clients(
            jobs, args.client_processes, time.monotonic() + args.time_limit, counter
        )
        cpu = tree_cpu(server.pid) - cpu_before
    finally:
        stop(server)
    return Result(name, mode, seconds, stats, errors=errors, server_cpu=cpu), acked


def write_run(
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
    result, acked = reference_run(
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


def hello_rate(results: list[Result], mode: str) -> float | None:
    # Saturation: the mean of the hello-world runs before and after the app's.
    mode = "saturation" if mode == "dev" else mode
    rates = [r.per_second for r in results if r.mode == mode and r.name.startswith("hello")]
    return sum(rates) / len(rates) if rates else None


def print_results(results: list[Result]) -> bool:
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
        hello = hello_rate(results, result.mode)
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
