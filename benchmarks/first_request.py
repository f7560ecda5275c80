"""A fresh ``annotator serve``'s first request against the warm ones (issue 34, item 7).

Run with ``.venv/bin/python benchmarks/first_request.py [--baseline DIR] [--rounds N]``.

Each round starts whole ``annotator serve`` processes (one gunicorn worker, two threads,
no job worker) on a copy of one SQLite database holding the demo study and its
dashboard, and waits until the worker says it is ready. The dashboard is computed
beforehand (in this process) because a study's very first view computes it in the
request, once per data version (``annotator.services.dashboards``): that is the study's
cost, not the worker's; here every server is a restart on data already seen. On one kept-alive connection (so every request reaches that
one worker) the lead logs in, then sends one kind of request 11 times: the first is
the worker's first of its kind, the median of the next 10 its warm cost. Two kinds,
each on a server of its own per round: the study page (GET, the dashboard) and the
"Download report" POST that starts the report job (the job tables are emptied before
each POST, so that every POST starts a new job rather than joining one). The login
page (GET, the very first request) is timed too.

``--baseline DIR``: a source tree of the code before (``git archive OLD annotator
templates static | tar -x -C DIR``), run with ``PYTHONPATH=DIR``; each of its servers
follows the same server of this tree, so before and after share a sitting. Goal: the
first request within 2x the warm median (the median over the servers of each server's
own ratio; the ratio of the medians is printed beside). ``--quick``: one server of each
kind, two warm requests.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

from harness import Recorder, arguments
from harness.serving import ANNOTATOR, free_port

GOAL = 2.0
KINDS = ("study page", "report POST")
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def _prime(folder: Path) -> None:
    """The demo study and its stored dashboard in ``folder`` (``annotator.sqlite``)."""
    from annotator import create_app, migrate
    from annotator.db import get_engine, session_scope
    from annotator.demo import load_demo
    from annotator.services.dashboards import cached_dashboard
    from annotator.study.studies import get_study

    folder.mkdir()
    os.environ["ANNOTATOR_INSTANCE_PATH"] = str(folder)
    url = f"sqlite:///{folder / 'annotator.sqlite'}"
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench"})
    with app.app_context():
        migrate.upgrade(get_engine())
        with session_scope() as session:
            load_demo(session, base_url="http://127.0.0.1", instance_path=str(folder))
        with session_scope() as session:
            cached_dashboard(session, get_study(session, "demo"))
        get_engine().dispose()


class Server:
    """``annotator serve`` on a copy of a primed instance folder, and a lead's connection
    to it."""

    def __init__(self, primed: Path, folder: Path, pythonpath: str | None):
        shutil.copytree(primed, folder)
        self.folder, self.port = folder, free_port()
        env = {
            **os.environ,
            "ANNOTATOR_INSTANCE_PATH": str(folder),
            "ANNOTATOR_DATABASE_URL": f"sqlite:///{folder / 'annotator.sqlite'}",
            "ANNOTATOR_BASE_URL": f"http://127.0.0.1:{self.port}",
        }
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        self.log = folder / "server.log"
        args = ["serve", "--port", str(self.port), "--workers", "1", "--threads", "2"]
        self.process = subprocess.Popen(
            [str(ANNOTATOR), *args, "--no-jobs-worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.log, "w"),  # noqa: SIM115
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while "Worker ready" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {self.log.read_text()}")
            time.sleep(0.1)
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        self.cookie = ""

    def request(self, method: str, path: str, form: dict | None = None) -> tuple[float, str]:
        headers = {"Cookie": self.cookie} if self.cookie else {}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        start = time.perf_counter()
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        text = response.read().decode()
        elapsed = time.perf_counter() - start
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status}")
        for name, value in response.getheaders():
            if name.lower() == "set-cookie" and value.startswith("session="):
                self.cookie = value.split(";", 1)[0]
        return elapsed, text

    def login(self) -> float:
        """Log in as the demo's lead (landing on the study list); the login page's time."""
        elapsed, page = self.request("GET", "/login")
        password = (self.folder / "demo-lead-password.txt").read_text().strip()
        form = {"csrf_token": CSRF.search(page)[1], "username": "lead@example.org"}
        self.request("POST", "/login", form | {"password": password})
        return elapsed

    def clear_jobs(self) -> None:
        """Forget the report jobs (the stored dashboard stays)."""
        with sqlite3.connect(self.folder / "annotator.sqlite") as db:
            reports = "SELECT id FROM job WHERE kind = 'report'"
            db.execute(f"DELETE FROM jobresult WHERE job_id IN ({reports})")
            db.execute("DELETE FROM job WHERE kind = 'report'")

    def stop(self) -> None:
        self.connection.close()
        self.process.terminate()
        self.process.wait(timeout=60)


def _times(
    kind: str, pythonpath: str | None, primed: Path, folder: Path, warm: int
) -> tuple[float, list[float]]:
    """The login page's time, and the ``1 + warm`` times of ``kind``."""
    server = Server(primed, folder, pythonpath)
    try:
        login = server.login()
        if kind == "study page":
            times = [server.request("GET", "/lead/studies/demo")[0] for _ in range(1 + warm)]
        else:
            # The button is on the study page: the lead has seen it (untimed) before.
            token = CSRF.search(server.request("GET", "/lead/studies/demo")[1])[1]
            times = []
            for _ in range(1 + warm):
                server.clear_jobs()
                form = {"csrf_token": token}
                times.append(server.request("POST", "/lead/studies/demo/report", form)[0])
        return login, times
    finally:
        server.stop()


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--baseline", help="a source tree of the code before")
    parser.add_argument("--rounds", type=int, default=3, help="servers of each kind and code")
    parser.add_argument("--warm", type=int, default=10, help="warm requests after the first")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.warm = 1, 2
    recorder = Recorder("first_request", args)
    codes = {"this tree": None} | ({"before": args.baseline} if args.baseline else {})
    first = {(code, kind): [] for code in codes for kind in (*KINDS, "login page")}
    # Each server's own first/warm: steadier than the ratio of the two medians.
    ratios = {(code, kind): [] for code in codes for kind in KINDS}
    warm = {(code, kind): [] for code in codes for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="annotator-first-") as tmp:
        primed = Path(tmp) / "primed"
        _prime(primed)
        for index in range(args.rounds):
            for kind in KINDS:
                for code, pythonpath in codes.items():
                    folder = Path(tmp) / f"{index}-{kind}-{code}".replace(" ", "-")
                    login, times = _times(kind, pythonpath, primed, folder, args.warm)
                    first[code, "login page"].append(login)
                    first[code, kind].append(times[0])
                    warm[code, kind].append(statistics.median(times[1:]))
                    ratios[code, kind].append(times[0] / statistics.median(times[1:]))
                    print(
                        f"  round {index + 1}, {code}, {kind}: first {times[0] * 1000:.0f} ms,"
                        f" warm {statistics.median(times[1:]) * 1000:.0f} ms",
                        flush=True,
                    )
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(
        f"\nfirst request of a fresh worker against the median of the next {args.warm}, "
        f"medians over {args.rounds} servers each (interleaved), load average {load}"
    )
    print(
        f"{'':<12}{'kind':<14}{'first':>10}{'warm':>10}{'first/warm':>12}"
        f"{'per server (median)':>30}"
    )
    met = True
    for code in codes:
        for kind in KINDS:
            f, w = statistics.median(first[code, kind]), statistics.median(warm[code, kind])
            each = ratios[code, kind]
            if code == "this tree":
                met &= statistics.median(each) <= GOAL
                recorder.record(
                    f"{kind}: a fresh worker's first request against the warm median",
                    statistics.median(each),
                    "x",
                    goal=f"<= {GOAL:g}",
                    ratio_of=f"the median of the next {args.warm} requests",
                    rounds=args.rounds,
                )
            listed = " ".join(f"{ratio:.1f}" for ratio in each)
            print(
                f"{code:<12}{kind:<14}{f * 1000:7.0f} ms{w * 1000:7.0f} ms{f / w:11.2f}x"
                f"  {listed} ({statistics.median(each):.2f}x)"
            )
        login = statistics.median(first[code, "login page"])
        print(f"{code:<12}{'login page':<14}{login * 1000:7.0f} ms  (the server's first request)")
    print(f"goal (first within {GOAL:g}x warm, this tree): {'met' if met else 'NOT met'}")
    recorder.save()


if __name__ == "__main__":
    main()
