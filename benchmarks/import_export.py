"""Imports, exports and the report against pandas doing the same by hand.

Run with ``make bench`` or ``.venv/bin/python benchmarks/import_export.py``
(``--database-url postgresql://postgres@127.0.0.1:5432/test`` to measure on a
PostgreSQL server; the tables go into a throw-away schema there, the harness's
``temporary_database``). The data and the pandas references are in
benchmarks/harness/bulk.py; the figures go to benchmarks/results.json, each with its
goal, and ``--quick`` (200 items x 3 raters x 2 scales, one run) proves the script
runs.

``--size 180k`` (the default): 5,000 items x 12 raters x 3 scales (180,000
ratings); ``--size 1m``: 50,000 items x 5 raters x 4 scales (1,000,000
ratings), for the memory goal; ``--size summeval``: a rubric study of
SummEval's shape, 1,600 summaries x 3 raters x 4 criteria on one 1-5 scale
(19,200 ratings) and 6 judges (38,400 scores), each row naming its criterion,
and beside it in the same run the same rows without criteria (4 scales in
place of the 4 criteria; ``--imports-only`` is implied). ``--report`` also runs
benchmarks/report.py (``annotator report`` on 5,000 and 150 items, SQLite).

Every command runs through the CLI in its own process (the harness's ``run_timed``:
wall time, CPU and peak memory); the command's start-up (the same command on an
unknown study: imports, app, connection) is subtracted, and the results file also
holds each figure as a whole process. The references run in this process, after
their imports, on the same database in the same run.
The imports and the long export take the fastest of ``--runs`` runs less the
fastest of three start-ups. The matrix and alt-test exports take well under a
second on 180,000 ratings, less than the spread of the start-up on a busy
machine, so they run in at least five rounds, each round the start-up, the
export and the reference one after another; a run counts less the start-up of
its own round, and the rows give the medians. The machine is shared with other
work: the ratios, measured side by side, are what counts.

``--exports-only`` loads the study once, untimed, and times the matrix and
alt-test exports alone; ``--baseline DIR`` times beside them, in the same
rounds, an earlier version (the folder holding its ``annotator/``, e.g.
``git archive COMMIT annotator | tar -x -C DIR``) and says whether its files
are byte-identical; it also runs the earlier version's imports in turn with
this one's (``--imports-only`` to time the imports alone). Before each import
its tables are emptied and vacuumed, so that every run, this version's or the
earlier one's, starts from the same state.

On PostgreSQL the imports also run, in turn with the others, as a throw-away
login role with every right on the benchmark's tables but neither superuser
nor granted SET on ``session_replication_role`` ("fallback"): the path a
restricted deployment takes, with the per-row foreign-key triggers on (see
docs/deploy.md). A line per import says which path each version took, as
the CLI reported it.

- imports: ``pandas.read_csv`` + ``DataFrame.to_sql`` into a table with the
  same unique key, as the issue names it; on PostgreSQL ``to_sql`` writes
  through ``COPY`` (the insertion ``method`` of pandas' documentation), and a
  second line shows the bare ``COPY`` of the file without pandas (what this
  benchmark compared with before). The reference is lighter than the import:
  its table holds the file's text columns with one unique index, no foreign
  keys and no history, where ``rating`` has four foreign keys and four
  indexes and each new rating gets a ``ratingchange`` row (the foreign-key
  triggers' cost on PostgreSQL, and why the import goes without them where the
  role may: ``git log -p benchmarks/import_export.py``);
- long export: ``pandas.read_sql`` of the same join + ``to_csv``;
- matrix and alt-test exports: ``read_sql`` + ``pivot`` + ``to_csv`` / ``json``.

Goals: imports within 3x, the long export within 2x, matrix and alt-test
within 1x less the start-up and 2x as whole processes; at 1,000,000 ratings every
peak below 1 GiB.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pandas as pd
from harness import Recorder, arguments, bulk, temporary_database
from harness.bulk import (
    CRITERIA,
    LLM_SQL,
    LONG_SQL,
    MATRIX_SQL,
    MODELS,
    SCALES,
    SIZES,
    SUMMEVAL_MODELS,
    Table,
    clear_tables,
    import_path,
    in_process_cpu,
    reference_import,
    restricted_role,
    run_cli,
    run_cli_output,
    run_cli_times,
    startup_time,
    study_toml,
    timed,
    write_files,
)
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

from annotator import models  # noqa: F401  (the tables create_all makes)
from annotator.db import normalise_url


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--database-url", help="default: a SQLite file in a temporary folder")
    parser.add_argument("--size", choices=sorted(SIZES), default="180k")
    parser.add_argument("--report", action="store_true", help="also time `annotator report`")
    parser.add_argument(
        "--runs", type=int, default=3, help="runs of each (the fastest counts; matrix: >= 5)"
    )
    parser.add_argument(
        "--exports-only",
        action="store_true",
        help="load the study once, untimed, and time the matrix and alt-test exports only",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="also time the imports and the matrix and alt-test exports of an earlier "
        "version: the folder holding its annotator/ (git archive COMMIT annotator | tar -x -C DIR)",
    )
    parser.add_argument("--imports-only", action="store_true", help="skip the exports")
    args = parser.parse_args()
    n_items, n_raters, n_scales = (200, 3, 2) if args.quick else SIZES[args.size]
    if args.quick:
        args.runs = bulk.STARTUP_RUNS = 1
    recorder = Recorder("import_export", args)
    scales = SCALES[:n_scales]
    # (label, criteria): --size summeval times the rubric study beside the same
    # rows without criteria, each on a database of its own.
    variants = [("", ())]
    if args.size == "summeval":
        scales = [(f"0-5 #{k}", 5, 0) for k in range(1, n_scales + 1)]
        variants = [("plain ", ()), ("rubric ", CRITERIA)]
        args.imports_only = True
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        for variant, criteria in variants:
            folder = Path(tmp) / (variant.strip() or "bench")
            folder.mkdir()
            database = stack.enter_context(temporary_database(args.database_url, folder=folder))
            url, schema, fallback_role, fallback_url = database.url, database.schema, None, None
            if schema:
                admin = create_engine(
                    normalise_url(args.database_url), isolation_level="AUTOCOMMIT"
                )
            engine = create_engine(normalise_url(url))
            dialect = engine.dialect.name
            env = dict(os.environ, ANNOTATOR_DATABASE_URL=url, ANNOTATOR_SECRET_KEY="bench")
            env["ANNOTATOR_INSTANCE_PATH"] = str(folder / "instance")
            try:
                SQLModel.metadata.create_all(engine)
                if schema:
                    fallback_role = "bench_" + uuid.uuid4().hex[:8]
                    fallback_url = restricted_role(admin, schema, fallback_role, url)
                judges = SUMMEVAL_MODELS if args.size == "summeval" else MODELS
                paths = write_files(
                    folder, n_items, n_raters, scales, criteria=criteria, judges=judges
                )
                (folder / "study.toml").write_text(
                    study_toml(scales[:1] if criteria else scales, criteria)
                )
                n_ratings = n_items * n_raters * n_scales
                print(
                    f"{variant}database: {dialect}; {n_items} items x {n_raters} raters x "
                    f"{f'{len(criteria)} criteria' if criteria else f'{n_scales} scales'} "
                    f"= {n_ratings} ratings ({paths['ratings'].stat().st_size / 2**20:.1f} MiB); "
                    f"machine: {os.cpu_count()} cores, {os.uname().machine}, shared with other work"
                )
                run_cli(["study", "create", str(folder / "study.toml")], env)
                run_cli(["items", "import", "bench", str(paths["items"])], env)
                size = f"{args.size} ratings" if not args.quick else "quick"
                table = Table(recorder, f"{database.dialect}, {variant}{size}".replace("  ", " "))
                runs = args.runs
                for group, kind, path, key, clear in (
                    (
                        "ratings",
                        "ratings import",
                        paths["ratings"],
                        ["item_id", "rater", "scale", *(["criterion"] if criteria else [])],
                        (
                            "DELETE FROM ratingchange",
                            "DELETE FROM rating",
                            "DELETE FROM demographics",
                            "DELETE FROM \"user\" WHERE role = 'rater'",
                        ),
                    ),
                    (
                        "llm-scores",
                        "llm-scores import",
                        paths["llm"],
                        ["item_id", "model", "scale", *(["criterion"] if criteria else [])],
                        ("DELETE FROM llmscore",),
                    ),
                ):
                    if args.exports_only:
                        run_cli([group, "import", "bench", str(path)], env)
                        continue
                    versions = {"": env}
                    if fallback_url:
                        versions["fallback "] = dict(env, ANNOTATOR_DATABASE_URL=fallback_url)
                    if args.baseline is not None:
                        versions["baseline "] = dict(env, PYTHONPATH=str(args.baseline.resolve()))
                    startups = {
                        label: startup_time(
                            [group, "import", "nosuchstudy", str(path)], version_env
                        )
                        for label, version_env in versions.items()
                    }
                    ours = {label: [] for label in versions}
                    cpus = {label: [] for label in versions}
                    ways = {label: set() for label in versions}
                    references, copies = [], []
                    loads = [os.getloadavg()[0]]
                    for run in range(runs):
                        references.append(
                            reference_import(engine, path, f"ref_{group[:3]}", key, dialect)
                        )
                        if dialect == "postgresql":
                            copies.append(
                                reference_import(
                                    engine, path, f"ref_{group[:3]}", key, dialect, bare_copy=True
                                )
                            )
                        # The versions take turns going first.
                        labels = (
                            list(versions)[run % len(versions) :]
                            + list(versions)[: run % len(versions)]
                        )
                        for label in labels:
                            # Every import into the same state: the tables emptied and
                            # vacuumed (the reference's table is made anew each time).
                            clear_tables(engine, clear)
                            wall, cpu, peak, output = run_cli_output(
                                [group, "import", "bench", str(path)], versions[label]
                            )
                            ours[label].append((wall, peak))
                            cpus[label].append(cpu)
                            ways[label].add(import_path(output, dialect, label))
                    loads.append(os.getloadavg()[0])
                    print(
                        f"    {kind}: "
                        + "; ".join(
                            f"{label.strip() or 'this'} took {' and '.join(sorted(ways[label]))}"
                            for label in versions
                        ),
                        flush=True,
                    )
                    ref = "pandas read_csv+to_sql" + (" (COPY)" if dialect == "postgresql" else "")
                    for label in versions:
                        name = variant + label + kind
                        table.add(
                            name,
                            ours[label],
                            startups[label],
                            min(references),
                            3,
                            ref + ", unique key",
                        )
                        if copies:
                            table.add(
                                name,
                                ours[label],
                                startups[label],
                                min(copies),
                                3,
                                "bare COPY of the file, unique key",
                            )
                    if len(versions) > 1 or criteria or args.size == "summeval":
                        # The fastest run says little on a busy machine: the medians,
                        # and the CPU time, which the other work does not lengthen
                        # (the server's share is not in it).
                        print(
                            f"    {kind}, medians of {runs} alternated runs (start-up included): "
                            + "; ".join(
                                f"{label.strip() or 'this'} wall "
                                f"{statistics.median(w for w, _ in ours[label]):.2f} s, CPU "
                                f"{statistics.median(cpus[label]):.2f} s"
                                for label in versions
                            )
                            + f"; load {loads[0]:.1f}-{loads[1]:.1f}",
                            flush=True,
                        )

                if args.size == "summeval":
                    key_extra = ["criterion"] if criteria else []
                    in_process_cpu(engine, url, folder, paths, key_extra, runs)
                if args.imports_only:
                    continue
                if not args.exports_only:
                    n_rows = n_ratings + len(MODELS) * n_items * n_scales
                    time_long_export(engine, env, folder, table, runs, n_rows)
                time_matrix_exports(
                    engine,
                    env,
                    folder,
                    scales[0][0],
                    rounds=1 if args.quick else max(runs, 5),
                    baseline=args.baseline,
                    table=table,
                )
            finally:
                engine.dispose()
                if fallback_role:
                    with admin.connect() as connection:
                        connection.execute(text(f"DROP OWNED BY {fallback_role}"))
                        connection.execute(text(f"DROP ROLE {fallback_role}"))
                if schema:
                    admin.dispose()
                stack.close()  # the database, dropped before the next variant's
    recorder.save()
    if args.report:
        report = Path(__file__).with_name("report.py")
        subprocess.run([sys.executable, str(report)], check=True)


def time_matrix_exports(
    engine, env, folder: Path, scale: str, *, rounds: int, baseline: Path | None, table: Table
) -> None:
    """``export --format matrix`` and ``alttest`` of one scale against ``read_sql`` +
    ``pivot`` + ``to_csv`` / ``json``.

    Well under a second on 180,000 ratings, less than the spread of the start-up on a
    busy machine: each of ``rounds`` rounds runs the start-up (the same command on an
    unknown study), right after it the export (and with ``baseline`` the older
    version's), and the reference, in an order rotated from round to round; a run
    counts less its own round's start-up, and the rows give the medians. Beside the
    wall times, the CPU times (the CLI's user + system, the reference's
    ``process_time``), which the other work on the machine does not lengthen; on
    PostgreSQL neither holds the server's share.
    """
    args = ["--format", "matrix", "--scale", scale, "--out"]
    versions = {"": env}
    if baseline is not None:
        versions = {"baseline ": dict(env, PYTHONPATH=str(baseline.resolve())), **versions}

    def pandas_matrix(write):
        with engine.connect() as connection:
            frame = pd.read_sql(text(MATRIX_SQL), connection, params={"scale": scale})
        wide = frame.pivot(index="external_id", columns="rater_code", values="value")
        write(wide)

    def to_json(wide):
        data = {c: wide[c].dropna().to_dict() for c in wide.columns}
        (folder / "ref.json").write_text(json.dumps(data))

    for fmt, write in (
        ("matrix", lambda wide: wide.to_csv(folder / "ref-matrix.csv")),
        ("alttest", to_json),
    ):
        args[1] = fmt
        walls = {label: [] for label in versions}
        cpus = {label: [] for label in versions}
        peaks = {label: [] for label in versions}
        references = {"wall": [], "cpu": []}
        wholes: list[float] = []

        def ours(label, version_env, fmt=fmt, walls=walls, cpus=cpus, peaks=peaks, wholes=wholes):
            _, startup_cpu, _ = startup = run_cli_times(
                ["export", "nosuchstudy", *args, "-"], version_env, fails=True
            )
            out = folder / f"{label.strip() or 'this'}.{fmt}"
            wall, cpu, peak = run_cli_times(["export", "bench", *args, str(out)], version_env)
            walls[label].append(wall - startup[0])
            if not label:
                wholes.append(wall)
            cpus[label].append(cpu - startup_cpu)
            peaks[label].append(peak)

        def reference(write=write, references=references):
            wall, cpu = time.perf_counter(), time.process_time()
            pandas_matrix(write)
            references["wall"].append(time.perf_counter() - wall)
            references["cpu"].append(time.process_time() - cpu)

        steps = [lambda item=item: ours(*item) for item in versions.items()] + [reference]
        loads = [os.getloadavg()[0]]
        for round_ in range(rounds):
            for step in steps[round_ % len(steps) :] + steps[: round_ % len(steps)]:
                step()
        loads.append(os.getloadavg()[0])
        ref_wall = statistics.median(references["wall"])
        reference_name = f"read_sql+pivot+{'to_csv' if fmt == 'matrix' else 'json'}"
        # As in Table.add: the whole process against the in-process reference has no
        # goal here; whole_process.py sets it against pandas as a whole process.
        for measure, value, goal in (
            ("less the start-up (wall, medians)", statistics.median(walls[""]), "<= 1"),
            ("whole process (wall, medians)", statistics.median(wholes), None),
        ):
            table.recorder.record(
                f"{table.where}: export --format {fmt} (1 scale) {measure}, against {reference_name}",
                value / ref_wall,
                "x",
                goal=goal,
                ratio_of=reference_name,
                rounds=rounds,
            )
        ref_cpu = statistics.median(references["cpu"])
        for label in versions:
            wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
            peak = max(peaks[label])
            print(
                f"{label}export --format {fmt} (1 scale): wall {wall:5.2f} s against "
                f"{ref_wall:5.2f} s = {wall / ref_wall:5.2f}x; CPU {cpu:5.2f} s against "
                f"{ref_cpu:5.2f} s = {cpu / ref_cpu:5.2f}x (goal 1x: wall "
                f"{'meets' if wall <= ref_wall else 'MISSES'}, CPU "
                f"{'meets' if cpu <= ref_cpu else 'MISSES'}); peak {peak:.0f} MiB "
                f"({'below' if peak < 1024 else 'ABOVE'} 1 GiB); reference read_sql+pivot+"
                f"{'to_csv' if fmt == 'matrix' else 'json'}; medians of {rounds} rounds, "
                f"less each round's start-up; load {loads[0]:.1f}-{loads[1]:.1f}",
                flush=True,
            )
        if baseline is not None:
            same = (folder / f"baseline.{fmt}").read_bytes() == (
                folder / f"this.{fmt}"
            ).read_bytes()
            print(f"    {fmt} file {'identical' if same else 'DIFFERENT'} to the baseline's")


def time_long_export(engine, env, folder: Path, table: Table, runs: int, n_rows: int) -> None:
    """``export --format long`` against ``read_sql`` of the same join + ``to_csv``."""
    startup = startup_time(["export", "nosuchstudy", "--format", "long", "--out", "-"], env)

    def pandas_long():
        with engine.connect() as connection:
            frame = pd.read_sql(text(LONG_SQL), connection)
            frame.to_csv(folder / "ref-long.csv", index=False)
            llm = pd.read_sql(text(LLM_SQL), connection)
            llm.to_csv(folder / "ref-long.csv", mode="a", index=False, header=False)

    out = folder / "long.csv"
    ours, references = [], []
    for _ in range(runs):
        references.append(timed(pandas_long))
        ours.append(run_cli(["export", "bench", "--format", "long", "--out", str(out)], env))
    with open(out) as handle:
        lines = sum(1 for _ in handle) - 1
    assert lines == n_rows, lines
    table.add("export --format long", ours, startup, min(references), 2, "read_sql+to_csv")


if __name__ == "__main__":
    main()
