"""CPU time and SQL statements of one rater's score post, in process.

Run with ``.venv/bin/python benchmarks/score_post.py`` (``--postgres-url``
to run on PostgreSQL too, in a throw-away schema; ``--profile`` prints the
top of a cProfile of the posts and the Python function calls per post,
``--profile-out FILE`` writes it for pstats or snakeviz; the profile is of
CPU time, ``--profile-wall`` for wall time). On the study of benchmarks/load.py (one
0-5 scale, 100 items) ``--raters`` raters (2) join through the Flask test
client with CSRF and the rate limiter on as in production, start their
block and post its 100 scores as htmx does. Printed: ms of CPU (process
time; mean and median, the median being steadier on a shared machine) and
wall time per post, SQL statements per post (SQLAlchemy's
``before_cursor_execute``), and the statements of one post in the middle
of the block.

This measures the app's own cost of a post, without a server or network;
benchmarks/load.py measures the served app under load. For a before/after
comparison in one sitting, ``--baseline DIR`` (a tree from ``git archive OLD
annotator templates static | tar -x -C DIR``) runs this code and that tree
alternately, ``--rounds`` (3) times each, each run in its own process, and
prints the medians of both, their ratio, the statements per post and the
Python function calls per post (from one more, profiled, round; the count,
unlike time, does not depend on how busy the machine is).

Without ``--baseline`` the post is measured on both designs of a study (``--design``):
the crossed one and an overlap study dealing the same block (``[assignment]``), in the
harness's interleaved rounds (``--rounds``), each run on a fresh database. Goal (issue
29): an overlap study's post within 1.2x the crossed design's CPU. ``--quick``: one
rater, five posts, one round.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Recorder, arguments, interleave, temporary_database  # noqa: E402
from harness.serving import STUDY_TOML  # noqa: E402

OVERLAP_GOAL = 1.2

_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_START = re.compile(r'action="(/rate/blocks/\d+/start)"')


# The parts of a post whose cumulative share --profile prints: (label, file
# suffix, function). Nested parts are indented; a part the code does not
# call (e.g. before or after a change) is left out.
PARTS = [
    ("Flask request (all of it)", "flask/app.py", "wsgi_app"),
    ("  session cookie: open", "flask/sessions.py", "open_session"),
    ("  session cookie: save", "flask/sessions.py", "save_session"),
    ("  CSRF check", "flask_wtf/csrf.py", "protect"),
    ("  rate limiter before the view", "flask_limiter/_extension.py", "_check_request_limit"),
    ("  user loader (user, study)", "annotator/extensions.py", "_load_user"),
    ("  the view (rate.item)", "annotator/web/rate/views.py", "item"),
    ("    block state", "annotator/collect/block_states.py", "block_state"),
    (
        "    rate_item (checks, writes, next page, commit)",
        "annotator/collect/scoring.py",
        "rate_item",
    ),
    ("      rated places query", "annotator/collect/rated_places.py", "__init__"),
    ("      submit_score", "annotator/collect/scoring.py", "submit_score"),
    ("      next item's page", "annotator/collect/item_pages.py", "item_page"),
    ("      next item's query", "annotator/collect/item_pages.py", "item_and_benchmark"),
    ("      commit", "sqlalchemy/orm/session.py", "commit"),
    ("    fragment response", "annotator/web/rate/views.py", "_item_response"),
    ("      Jinja render_template", "flask/templating.py", "render_template"),
    ("      item's sandboxed template", "annotator/web/rate/display.py", "render_item_text"),
    ("      instructions (Markdown)", "annotator/web/rate/display.py", "instructions_for"),
    ("  pool checkout", "sqlalchemy/pool/base.py", "_checkout"),
]


def _shares(stats: pstats.Stats) -> list[tuple[str, float]]:
    total = stats.total_tt
    found = []
    for label, suffix, name in PARTS:
        cumulative = sum(
            ct
            for (path, _line, function), (_cc, _nc, _tt, ct, _callers) in stats.stats.items()
            if function == name and path.endswith(suffix)
        )
        if cumulative:
            found.append((label, 100 * cumulative / total))
    return found


def _app(folder: Path, database_url: str):
    os.environ["ANNOTATOR_INSTANCE_PATH"] = str(folder)
    from sqlmodel import SQLModel

    from annotator import create_app
    from annotator.db import get_engine

    app = create_app(
        {"DATABASE_URL": database_url, "SECRET_KEY": "bench", "BASE_URL": "http://127.0.0.1"}
    )
    SQLModel.metadata.create_all(get_engine(app))
    return app


def study_toml(design: str, items: int, raters: int) -> str:
    """The study of benchmarks/load.py; ``overlap``: dealt by an [assignment] table.

    The overlap study gives every rater a block as long as the crossed one
    (``items_per_rater`` = the items, ``raters_per_item`` = the raters), so
    the two designs' posts differ only in how the block's items were chosen.
    """
    if design == "crossed":
        return STUDY_TOML
    return STUDY_TOML + (
        f'\n[assignment]\ndesign = "overlap"\nraters_per_item = {max(2, raters)}\n'
        f"items_per_rater = {items}\n"
    )


def _study(app, folder: Path, items: int, raters: int, design: str = "crossed") -> list[str]:
    from annotator.data.importers import import_items
    from annotator.db import session_scope
    from annotator.study.studies import create_invites, create_study
    from annotator.study.studyfile import parse_study_file

    path = folder / "items.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "item_id": f"s{i}",
                    "benchmark": "sts-b",
                    "sentence1": f"A person is slicing vegetable number {i}.",
                    "sentence2": f"Someone cuts vegetable {i} with a knife.",
                }
            )
            + "\n"
            for i in range(1, items + 1)
        ),
        "utf-8",
    )
    with session_scope(app) as session:
        toml = study_toml(design, items, raters)
        study = create_study(session, parse_study_file(toml), source_toml=toml)
        import_items(session, study, path)
        return [invite.token for invite in create_invites(session, study, raters)]


def _join(client, token: str) -> tuple[str, str]:
    """Consent, questionnaire, start: the block's path and the CSRF token."""
    page = client.get(f"/invite/{token}").text
    csrf = _CSRF.search(page).group(1)
    assert (
        client.post(f"/invite/{token}", data={"decision": "agree", "csrf_token": csrf}).status_code
        == 302
    )
    page = client.post(
        "/rate/demographics", data={"age": "30", "csrf_token": csrf}, follow_redirects=True
    ).text
    start = _START.search(page).group(1)
    response = client.post(start, data={"csrf_token": csrf}, follow_redirects=True)
    assert response.status_code == 200
    return response.request.path.rsplit("/items/", 1)[0], csrf


def run(
    database_url: str,
    *,
    raters: int,
    items: int,
    profile: bool,
    profile_out: str | None = None,
    profile_wall: bool = False,
    quiet: bool = False,
    design: str = "crossed",
) -> dict:
    from sqlalchemy import event

    from annotator.db import get_engine

    folder = Path(tempfile.mkdtemp(prefix="score-post-"))
    app = _app(folder, database_url)
    tokens = _study(app, folder, items, raters, design)
    statements: list[str] = []
    event.listen(
        get_engine(app),
        "before_cursor_execute",
        lambda conn, cursor, statement, *rest: statements.append(statement),
    )
    cpu: list[float] = []
    wall: list[float] = []
    counts: list[int] = []
    middle: list[str] = []
    cookies = 0
    # CPU time by default: waits on the database (a PostgreSQL commit's WAL
    # flush) would otherwise dominate the shares (--profile-wall for them).
    timer = time.perf_counter if profile_wall else time.process_time
    profiler = cProfile.Profile(timer) if profile or profile_out else None
    for token in tokens:
        client = app.test_client()
        block, csrf = _join(client, token)
        for position in range(1, items + 1):
            data = {"score": f"{(position * 37 % 501) / 100:.2f}", "csrf_token": csrf}
            statements.clear()
            c0, w0 = time.process_time(), time.perf_counter()
            if profiler:
                profiler.enable()
            response = client.post(
                f"{block}/items/{position}", data=data, headers={"HX-Request": "true"}
            )
            if profiler:
                profiler.disable()
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
            if response.status_code != 200:
                raise RuntimeError(f"post {position}: {response.status_code} {response.text}")
            counts.append(len(statements))
            cookies += "Set-Cookie" in response.headers
            if position == items // 2:
                middle = list(statements)
    get_engine(app).dispose()
    if profiler:
        # Python function calls per post: unlike time, the same on a busy machine.
        calls = pstats.Stats(profiler).total_calls / len(cpu)
        if not quiet:
            print(f"{calls:.0f} Python function calls per post (cProfile)")
    if profiler and profile_out:
        profiler.dump_stats(profile_out)
    if profiler and profile and not quiet:
        print(
            "share of the posts' profiled time (cumulative, so nested parts are within their parent):"
        )
        for label, share in _shares(pstats.Stats(profiler)):
            print(f"  {label:<52} {share:5.1f}%")
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(45)
        print(out.getvalue())
    return {
        "posts": len(cpu),
        "cpu_ms": 1000 * statistics.mean(cpu),
        # The median is steadier than the mean on a shared machine.
        "cpu_median_ms": 1000 * statistics.median(cpu),
        "wall_ms": 1000 * statistics.mean(wall),
        "wall_p95_ms": 1000 * sorted(wall)[int(0.95 * len(wall)) - 1],
        "statements": statistics.mean(counts),
        "statements_max": max(counts),
        "middle": middle,
        "set_cookie": cookies,
        "calls": calls if profiler else None,
    }


def _interleaved(args) -> int:
    """This code and the --baseline tree's, alternately, ``--rounds`` times each."""
    here = Path(__file__).resolve()
    trees = {"this code": str(here.parents[1]), "before": str(Path(args.baseline).resolve())}
    common = ["--raters", str(args.raters), "--items", str(args.items), "--json"]
    common += ["--design", "crossed" if args.design == "both" else args.design]
    if args.postgres_url:
        common += ["--postgres-url", args.postgres_url]
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    calls: dict[str, dict] = {}
    for round_ in range(args.rounds + 1):
        for name, tree in trees.items():
            # The last round is profiled, for the call counts only (cProfile
            # slows the posts down, so its times are not used).
            extra = ["--profile"] if round_ == args.rounds else []
            output = subprocess.run(
                [sys.executable, str(here), *common, *extra],
                env={**os.environ, "PYTHONPATH": tree},
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            rows = json.loads(output.strip().splitlines()[-1])
            if extra:
                calls[name] = {db: r["calls"] for db, r in rows.items()}
            else:
                runs[name].append(rows)
    print(
        f"{args.rounds} interleaved rounds of {args.raters} raters x {args.items} posts; "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )
    print(
        f"{'database':<11} {'code':<10} {'CPU ms/post (median of rounds)':>31}"
        f" {'wall ms/post':>13} {'statements':>11} {'calls/post':>11}"
    )
    for db in runs["this code"][0]:
        medians = {}
        for name in trees:
            cpu = statistics.median(r[db]["cpu_median_ms"] for r in runs[name])
            wall = statistics.median(r[db]["wall_ms"] for r in runs[name])
            medians[name] = cpu
            print(
                f"{db:<11} {name:<10} {cpu:>31.2f} {wall:>13.2f}"
                f" {runs[name][0][db]['statements']:>11.2f} {calls[name][db]:>11.0f}"
            )
        print(f"{db:<11} {'ratio':<10} {medians['this code'] / medians['before']:>31.2f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--raters", type=int, default=2)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--postgres-url", default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--show-statements", action="store_true")
    parser.add_argument(
        "--profile-wall",
        action="store_true",
        help="profile wall time (waits on the database included) instead of CPU time",
    )
    parser.add_argument(
        "--profile-out", default=None, help="write the posts' cProfile to this file (per database)"
    )
    parser.add_argument(
        "--baseline",
        default=None,
        help="a source tree of the code before (git archive OLD annotator templates static): "
        "run it and this code alternately, in subprocesses, and print both",
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument(
        "--design",
        choices=("crossed", "overlap", "both"),
        default="both",
        help="the study's [assignment] design (default: both, side by side)",
    )
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline:
        return _interleaved(args)
    if args.quick:
        args.raters, args.items, args.rounds = 1, 5, 1
    recorder = Recorder("score_post", args)
    designs = ["crossed", "overlap"] if args.design == "both" else [args.design]
    rows = []
    for server in [None, args.postgres_url] if args.postgres_url else [None]:
        results: dict[str, dict] = {}

        def side(design: str, server=server, results=results) -> float:
            with temporary_database(server) as database:
                name = database.dialect
                result = run(
                    database.url,
                    raters=args.raters,
                    items=args.items,
                    profile=args.profile,
                    profile_out=f"{args.profile_out}.{name}" if args.profile_out else None,
                    profile_wall=args.profile_wall,
                    quiet=args.json,
                    design=design,
                )
            results[design] = {**result, "database": name}
            # The side's measure: CPU per post, the median (steadier than the mean).
            return result["cpu_median_ms"]

        rounds = interleave({d: lambda d=d: side(d) for d in designs}, args.rounds, measured=True)
        name = results[designs[0]]["database"]
        for design in designs:
            result = results[design]
            label = name if len(designs) == 1 else f"{name}, {design}"
            rows.append((label, result))
            recorder.record(
                f"{name}, {design}: CPU per post (median of rounds)",
                rounds.median(design),
                "ms",
                rounds=args.rounds,
            )
            recorder.record(
                f"{name}, {design}: SQL statements per post",
                result["statements"],
                "statements",
                rounds=1,
            )
            if args.show_statements:
                print(f"{label}: the statements of post {args.items // 2}:")
                for statement in result["middle"]:
                    print("   ", " ".join(statement.split())[:160])
        if len(designs) == 2:
            recorder.record(
                f"{name}: overlap study's post against the crossed design's (CPU)",
                rounds.ratio("overlap", "crossed", by="median"),
                "x",
                goal=f"<= {OVERLAP_GOAL}",
                ratio_of="the crossed design's post",
                rounds=args.rounds,
            )
    if args.json:
        print(json.dumps({name: {k: v for k, v in r.items() if k != "middle"} for name, r in rows}))
        return 0
    print(
        f"{'database':<20} {'posts':>5} {'CPU ms/post':>12} {'median':>7} {'wall ms/post':>13}"
        f" {'wall p95 ms':>12} {'statements/post':>16} {'Set-Cookie':>11}"
    )
    for name, r in rows:
        print(
            f"{name:<20} {r['posts']:>5} {r['cpu_ms']:>12.2f} {r['cpu_median_ms']:>7.2f}"
            f" {r['wall_ms']:>13.2f}"
            f" {r['wall_p95_ms']:>12.2f} {r['statements']:>9.2f} (max {r['statements_max']})"
            f" {r['set_cookie']:>11}"
        )
    recorder.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
