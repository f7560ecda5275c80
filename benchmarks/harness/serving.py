"""Servers for the serving benchmarks (load.py, goals.py, scaleout.py): a study
folder and database run by `annotator serve`, the reference apps served by gunicorn
the same way, and their CPU read from /proc.

Only the standard library at the top: the spawned client processes import the
harness too (benchmarks/harness/clients.py).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "ANNOTATOR",
    "STUDY_TOML",
    "Instance",
    "free_port",
    "prepare",
    "reference_server",
    "stop",
    "tree_cpu",
    "wait_until_up",
]

BENCHMARKS = Path(__file__).resolve().parents[1]
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(port: int, path: str, process: subprocess.Popen, timeout: float = 90) -> None:
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


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
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
    port: int = field(default_factory=free_port)
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
        wait_until_up(self.port, "/login", process)
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


def tree_cpu(pid: int) -> float:
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


def reference_server(
    port: int, workers: int, threads: int, factory: str = "hello_app", env: dict | None = None
) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--chdir", str(BENCHMARKS)]
        + ["--workers", str(workers), "--threads", str(threads)]
        + ["--worker-class", "gthread" if threads > 1 else "sync"]
        + [
            "--bind",
            f"127.0.0.1:{port}",
            "--no-control-socket",
            f"harness.reference_apps:{factory}()",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )
    wait_until_up(port, "/hello", process)
    time.sleep(2)  # the other worker (a bare Flask app loads in well under a second)
    return process


def prepare(instance: Instance, raters: int, items: int) -> list[str]:
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
