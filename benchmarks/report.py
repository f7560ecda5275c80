"""``annotator report`` on generated studies of 150 and 5,000 items, against its goals.

Run with ``make bench`` or ``.venv/bin/python benchmarks/report.py``
(``--folder DIR`` keeps the generated SQLite studies there and reuses them).

Each study: 12 raters x 3 scales x 6 models, one run each
(:func:`annotator.data.synthetic.build_synthetic_study`, seed 1). The report runs
through the CLI in its own process (the harness's ``run_timed``), bootstrap intervals
(2,000 resamples), alt-test curves, figures and ``--tables`` included; the command's
start-up (the same command on an unknown study: imports, app, connection; the fastest of
three) is subtracted, so the figure includes the report's own scipy and matplotlib
imports. The CPU seconds (user + system, less the start-up's) are printed beside: on a
shared machine they move much less with the others' load than the wall time. ``--repeat N`` runs
the report N times (default 3) and prints the medians; ``--items 150`` (or 5000) times
only that study. Then, in this process, the report's phases, each in one process as the
web server's download runs them: reading the study (``study_frames``), the tables
(``report_tables``) and the HTML with its figures (``render_report``). The machine's
load average is printed beside the figures: the machine is shared, and the goals are for
an idle one. The first line gives the machine's speed (the README's CPU yardstick, to
compare sittings on different machines); at 150 items a line gives the report's own
imports and a first small figure drawn in a fresh process, the part of the figure that
no change to the tables or figures shortens.

``--baseline DIR``: also time the report of an earlier version of the package, the
folder holding its ``annotator/`` (for instance ``git archive COMMIT annotator | tar -x
-C DIR``), its runs interleaved with this version's (baseline, this version, baseline,
...), for a ratio measured side by side.

Goals (issue 16): 5,000 items within 20 s, 150 items (the seed paper's size) within 2 s;
with ``--baseline``, within 1.3x the code before. ``--quick``: a study of 20 items, one
run, no goal.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Recorder, arguments, run_timed
from harness.studies import synthetic_study
from sqlalchemy import create_engine
from sqlmodel import Session, select

from annotator.db import normalise_url

GOALS = ((150, 2.0), (5000, 20.0))
BASELINE_GOAL = 1.3
CLI = str(Path(sys.executable).with_name("annotator"))


def phases(url: str) -> dict[str, float]:
    """Seconds of each phase of ``build_report``, in this process (imports done first)."""
    from annotator.analysis.settings import study_settings
    from annotator.analysis.study_analysis import report_tables
    from annotator.data.frames import study_frames
    from annotator.models import Study
    from annotator.render.report.html import render_report

    engine = create_engine(normalise_url(url))
    out = {}
    with Session(engine) as session:
        study = session.exec(select(Study).where(Study.slug == "bench")).one()
        start = time.perf_counter()
        frames = study_frames(session, study)
        out["read"] = time.perf_counter() - start
        start = time.perf_counter()
        tables = report_tables(frames, settings=study_settings(study))
        out["tables"] = time.perf_counter() - start
        start = time.perf_counter()
        render_report(tables, title="Report", study="bench")
        out["html+figures"] = time.perf_counter() - start
    engine.dispose()
    return out


def run_cli(args: list[str], env: dict, *, fails: bool = False) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak MiB of one CLI run.

    The CPU time is printed beside the wall time: on a shared machine the wall time
    of one process grows with the others' load, its CPU time much less.
    """
    timing = run_timed([CLI, *args], env, check=False)
    if (timing.returncode != 0) != fails:
        raise SystemExit(f"annotator {' '.join(args)} exited with {timing.returncode}")
    return timing.wall, timing.cpu, timing.peak_mib


def startup_time(args: list[str], env: dict, repeat: int = 3) -> tuple[float, float]:
    """The command's start-up, wall and CPU: the same command on an unknown study (the
    fastest of three)."""
    runs = [run_cli(args, env, fails=True) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


# What the command imports before any report work is done (the start-up, subtracted),
# then what the report itself imports, and a first small figure drawn (matplotlib
# loads its fonts then), before it computes anything: the part of the report's time
# that no change to its tables or figures can shorten.
IMPORTS = """
import time
import annotator.cli, annotator.db, annotator.data.selection
start = time.perf_counter(), time.process_time()
from annotator.analysis.study_analysis import report_tables
from annotator.render.report.html import render_report
from annotator.render.figures import new_figure, png_bytes
fig = new_figure(1.0, 1.0)
fig.subplots().plot([0.0, 1.0], [0.0, 1.0], label="a")
fig.legend()
png_bytes(fig)
print(time.perf_counter() - start[0], time.process_time() - start[1])
"""


def import_floor(env: dict) -> tuple[float, float]:
    """Wall and CPU seconds of the report's own imports and a first small figure in a
    fresh process (the fastest of three)."""
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", IMPORTS], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    return min(r[0] for r in runs), min(r[1] for r in runs)


def machine_speed() -> float:
    """Milliseconds of the README's CPU yardstick on this machine, to compare sittings:
    ``python -m timeit -n 3 -r 3 "sum(i*i for i in range(2_000_000))"`` (79 ms on the
    fastest machine seen)."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "timeit",
            "-n",
            "3",
            "-r",
            "3",
            "sum(i*i for i in range(2_000_000))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    value, unit = re.search(r"best of 3: ([\d.]+) (\w+)", out).groups()
    return float(value) * {"sec": 1000.0, "msec": 1.0, "usec": 0.001}[unit]


def identical(a: Path, b: Path) -> bool:
    """Whether two folders hold the same files, byte for byte."""
    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        return False
    return all((a / n).read_bytes() == (b / n).read_bytes() for n in names)


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--folder", type=Path, help="keep (and reuse) the studies here")
    parser.add_argument("--baseline", type=Path, help="folder with an earlier annotator/")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each report (medians)")
    parser.add_argument(
        "--items",
        type=int,
        choices=[n for n, _ in GOALS],
        help="only the study of this many items (default: both)",
    )
    args = parser.parse_args()
    goals = ((20, None),) if args.quick else GOALS
    if args.quick:
        args.repeat = 1
    recorder = Recorder("report", args)
    tmp = None
    folder = args.folder
    if folder is None:
        tmp = tempfile.mkdtemp()
        folder = Path(tmp)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        print(f"annotator report, 12 raters x 3 scales x 6 models ({load()})", flush=True)
        if not args.quick:
            print(
                f"machine: the CPU yardstick takes {machine_speed():.0f} ms (79 ms on the "
                "fastest machine seen)",
                flush=True,
            )
        for n_items, goal in goals:
            if args.items and n_items != args.items:
                continue
            url = synthetic_study(folder / f"report{n_items}.sqlite", n_items)
            env = dict(os.environ, ANNOTATOR_DATABASE_URL=url, ANNOTATOR_SECRET_KEY="bench")
            env["ANNOTATOR_INSTANCE_PATH"] = str(folder / "instance")
            versions = {"this version": env}
            if args.baseline:
                before = dict(env, PYTHONPATH=str(args.baseline.resolve()))
                versions = {"baseline": before, **versions}
            startups = {
                label: startup_time(
                    ["report", "nosuchstudy", "--out", str(folder / "x.html")],
                    version_env,
                    repeat=1 if args.quick else 3,
                )
                for label, version_env in versions.items()
            }
            runs: dict[str, list[tuple[float, float, float]]] = {label: [] for label in versions}
            for _ in range(args.repeat):
                for label, version_env in versions.items():
                    out = folder / f"report{n_items}.html"
                    tables = folder / f"tables{n_items}-{label.replace(' ', '-')}"
                    runs[label].append(
                        run_cli(
                            ["report", "bench", "--out", str(out), "--tables", str(tables)],
                            version_env,
                        )
                    )
            times, cpus = {}, {}
            for label, done in runs.items():
                startup, startup_cpu = startups[label]
                seconds = times[label] = statistics.median(r[0] for r in done) - startup
                cpus[label] = statistics.median(r[1] for r in done) - startup_cpu
                memory = max(r[2] for r in done)
                spread = ", ".join(f"{r[0] - startup:.2f}" for r in done)
                verdict = "-" if goal is None else "meets" if seconds <= goal else "MISSES"
                print(
                    f"{n_items:>5} items, {label:<12}: {seconds:6.2f} s (CPU {cpus[label]:6.2f} s) "
                    f"{memory:6.0f} MiB  (start-up {startup:.2f} s, CPU {startup_cpu:.2f} s)  "
                    f"goal {goal if goal else '-'} s: {verdict}   runs {spread}   {load()}",
                    flush=True,
                )
                if label == "this version":
                    recorder.record(
                        f"{n_items} items, wall less the start-up (median)",
                        seconds,
                        "s",
                        goal=None if goal is None else f"<= {goal:g}",
                        rounds=args.repeat,
                    )
                    recorder.record(
                        f"{n_items} items, CPU less the start-up's (median)",
                        cpus[label],
                        "s",
                        rounds=args.repeat,
                    )
            if args.baseline:
                same = identical(
                    folder / f"tables{n_items}-baseline", folder / f"tables{n_items}-this-version"
                )
                print(
                    f"             {times['this version'] / times['baseline']:.2f}x the baseline "
                    f"(CPU {cpus['this version'] / cpus['baseline']:.2f}x); "
                    f"--tables CSV files {'identical' if same else 'DIFFERENT'} to the baseline's",
                    flush=True,
                )
                recorder.record(
                    f"{n_items} items, CPU against the code before",
                    cpus["this version"] / cpus["baseline"],
                    "x",
                    goal=f"<= {BASELINE_GOAL}",
                    ratio_of=f"the code in {args.baseline}",
                    rounds=args.repeat,
                )
            if n_items == goals[0][0] and not args.quick:
                wall, cpu = import_floor(env)
                print(
                    f"             of which the report's imports and a first figure, "
                    f"before any work: {wall:.2f} s (CPU {cpu:.2f} s)",
                    flush=True,
                )
            parts = phases(url)
            print(
                "             in-process: "
                + ", ".join(f"{k} {v:.2f} s" for k, v in parts.items())
                + f"   {load()}",
                flush=True,
            )
    finally:
        shutil.rmtree(folder / "instance", ignore_errors=True)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    recorder.save()


if __name__ == "__main__":
    main()
