"""The ratings import and the matrix exports as whole processes (issue 38, item 3).

``import_export.py`` times each command less its start-up; a lead waits for the
whole process. This script times whole ``annotator`` processes (start-up
included, under ``/usr/bin/time``: wall and CPU = user + sys) beside pandas doing
the same work, both as a whole process of its own (``python`` + ``import pandas,
sqlalchemy`` + the work) and as the in-process part of that process (what
``import_export.py`` compares with). Versions take turns within each round
(``--version LABEL=DIR``: the folder holding an earlier ``annotator/``, e.g.
``git archive COMMIT annotator templates static | tar -x -C DIR``); each figure is
the best of ``--rounds``. On a machine shared with other work the CPU figures
are the steadier ones.

- ``ratings``: ``annotator ratings import`` of 5,000 items x 12 raters x 3 scales
  (``--size 1m``: 1,000,000 ratings) into emptied tables, against
  ``read_csv`` + ``to_sql`` into a table with the same unique key;
- ``matrix``: the three ``annotator export --format matrix --scale S`` of the
  study (60,000 ratings each), against ``read_sql`` + ``pivot`` + ``to_csv``.

Goals (issue 38): the import within 3x, the matrix exports within 2x.
SQLite only (a file in a temporary folder).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from harness import Recorder, arguments, run_timed
from harness.bulk import CLI, SCALES, SIZES, run_cli, study_toml, write_files
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

from annotator import models  # noqa: F401  (the tables create_all makes)

REFERENCE = r"""
import sys, time
import pandas as pd
from sqlalchemy import create_engine, text
kind, url, *args = sys.argv[1:]
engine = create_engine(url)
if kind == "matrix":
    start = time.process_time()
    sql = ('SELECT i.external_id, u.rater_code, r.value FROM rating r JOIN item i ON i.id = '
           'r.item_id JOIN "user" u ON u.id = r.rater_id JOIN scale s ON s.id = r.scale_id '
           'WHERE s.name = :scale')
    with engine.connect() as connection:
        frame = pd.read_sql(text(sql), connection, params={"scale": args[0]})
    frame.pivot(index="external_id", columns="rater_code", values="value").to_csv(args[1])
else:
    path, key = args
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE IF EXISTS ref_import"))
        header = pd.read_csv(path, nrows=1, dtype=str).columns
        cols = ", ".join(f"{c} {'DOUBLE PRECISION' if c == 'score' else 'TEXT'}" for c in header)
        connection.execute(text(f"CREATE TABLE ref_import ({cols}, UNIQUE ({key}))"))
    start = time.process_time()
    with engine.begin() as connection:
        frame = pd.read_csv(path, dtype={"item_id": str, "rater": str})
        frame.to_sql("ref_import", connection, if_exists="append", index=False, chunksize=50000)
print(f"IN-PROCESS CPU {time.process_time() - start:.3f}")
"""

CLEAR = (
    "DELETE FROM ratingchange",
    "DELETE FROM rating",
    "DELETE FROM demographics",
    "DELETE FROM \"user\" WHERE role = 'rater'",
)


def timed(args: list[str], env: dict) -> tuple[float, float, str]:
    """Wall and CPU (user + sys) seconds of a whole process, and its output."""
    timing = run_timed(args, env, output=True)
    return timing.wall, timing.cpu, timing.output


def clear(url: str) -> None:
    engine = create_engine(url)
    with engine.begin() as connection:
        for statement in CLEAR:
            connection.execute(text(statement))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("VACUUM"))
    engine.dispose()


def main() -> None:
    parser = arguments(__doc__)
    # No choices= here: argparse checks an empty positional list against them.
    parser.add_argument("kind", nargs="*", help="ratings, matrix (default: both)")
    parser.add_argument("--size", choices=["180k", "1m"], default="180k")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--version", action="append", default=[], metavar="LABEL=DIR")
    args = parser.parse_args()
    unknown = set(args.kind) - {"ratings", "matrix"}
    if unknown:
        parser.error(f"kind must be ratings or matrix, not {', '.join(sorted(unknown))}")
    recorder = Recorder("whole_process", args)
    for kind in args.kind or ["ratings", "matrix"]:
        measure(kind, args, recorder)
    recorder.save()


def measure(kind: str, args, recorder: Recorder) -> None:
    """Time one kind (``ratings`` or ``matrix``) and record its ratios to pandas."""
    args.kind = kind
    n_items, n_raters, n_scales = SIZES[args.size]
    if args.quick:  # proves the script runs (tests/test_benchmarks.py)
        n_items, args.rounds = 200, 1
    scales = SCALES[:n_scales]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = f"sqlite:///{folder / 'bench.sqlite'}"
        env = dict(os.environ, ANNOTATOR_DATABASE_URL=url, ANNOTATOR_SECRET_KEY="bench")
        env["ANNOTATOR_INSTANCE_PATH"] = str(folder / "instance")
        versions = {"this": env}
        for spec in args.version:
            label, _, path = spec.partition("=")
            versions[label] = dict(env, PYTHONPATH=str(Path(path).resolve()))
        paths = write_files(folder, n_items, n_raters, scales)
        (folder / "study.toml").write_text(study_toml(scales))
        engine = create_engine(url)
        SQLModel.metadata.create_all(engine)
        engine.dispose()
        run_cli(["study", "create", str(folder / "study.toml")], env)
        run_cli(["items", "import", "bench", str(paths["items"])], env)
        if args.kind == "matrix":
            run_cli(["ratings", "import", "bench", str(paths["ratings"])], env)
            run_cli(["llm-scores", "import", "bench", str(paths["llm"])], env)
        reference = [sys.executable, "-c", REFERENCE, args.kind, url]
        results: dict[str, list[tuple[float, float]]] = {
            label: [] for label in ["pandas", *versions]
        }
        in_process: list[float] = []
        loads = [os.getloadavg()[0]]
        for round_ in range(args.rounds):
            order = list(results)
            for label in order[round_ % len(order) :] + order[: round_ % len(order)]:
                wall = cpu = inner = 0.0
                jobs = [[s] for s, _, _ in scales] if args.kind == "matrix" else [[]]
                for job in jobs:
                    if label == "pandas":
                        extra = (
                            [job[0], str(folder / "ref.csv")]
                            if args.kind == "matrix"
                            else [str(paths["ratings"]), "item_id,rater,scale"]
                        )
                        w, c, out = timed([*reference, *extra], env)
                        inner += float(re.search(r"IN-PROCESS CPU (\S+)", out).group(1))
                    elif args.kind == "matrix":
                        out = str(folder / f"{label}.csv")
                        command = ["export", "bench", "--format", "matrix", "--scale", job[0]]
                        w, c, _ = timed([CLI, *command, "--out", out], versions[label])
                    else:
                        clear(url)
                        command = ["ratings", "import", "bench", str(paths["ratings"])]
                        w, c, _ = timed([CLI, *command], versions[label])
                    wall, cpu = wall + w, cpu + c
                results[label].append((wall, cpu))
                if label == "pandas":
                    in_process.append(inner)
        loads.append(os.getloadavg()[0])
        what = "three matrix exports" if kind == "matrix" else "ratings import"
        goal = 2 if args.kind == "matrix" else 3
        best = {label: (min(w for w, _ in r), min(c for _, c in r)) for label, r in results.items()}
        ref_wall, ref_cpu = best.pop("pandas")
        ref_in = min(in_process)
        print(
            f"{what}: best of {args.rounds} rounds, load {loads[0]:.1f}-{loads[1]:.1f}; pandas "
            f"as a whole process {ref_wall:.2f} s wall, {ref_cpu:.2f} s CPU, of which "
            f"{ref_in:.2f} s CPU its work in process; goal {goal}x"
        )
        size = "quick" if args.quick else args.size
        for label, (wall, cpu) in best.items():
            if label == "this":
                recorder.record(
                    f"{what}, {size}: CPU against pandas as a whole process",
                    round(cpu / ref_cpu, 3),
                    "x",
                    goal=f"<= {goal}",
                    ratio_of="pandas read_csv + to_sql"
                    if kind == "ratings"
                    else "pandas read_sql + pivot + to_csv",
                    rounds=args.rounds,
                )
            print(
                f"  {label:10s} wall {wall:6.2f} s ({wall / ref_wall:.2f}x pandas' whole process)"
                f"; CPU {cpu:6.2f} s ({cpu / ref_cpu:.2f}x pandas' whole process, "
                f"{cpu / ref_in:.2f}x its in-process part)",
                flush=True,
            )


if __name__ == "__main__":
    main()
