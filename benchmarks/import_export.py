"""Imports, exports and the report against pandas doing the same by hand.

Run with ``make bench`` or ``.venv/bin/python benchmarks/import_export.py``
(``--database-url postgresql://postgres@127.0.0.1:5432/test`` to measure on a
PostgreSQL server; the tables go into a throw-away schema there).

``--size quick`` (the default): 5,000 items x 12 raters x 3 scales (180,000
ratings); ``--size 1m``: 50,000 items x 5 raters x 4 scales (1,000,000
ratings), for the memory goal; ``--size summeval``: a rubric study of
SummEval's shape, 1,600 summaries x 3 raters x 4 criteria on one 1-5 scale
(19,200 ratings) and 6 judges (38,400 scores), each row naming its criterion,
and beside it in the same run the same rows without criteria (4 scales in
place of the 4 criteria; ``--imports-only`` is implied). ``--report`` also times ``annotator report``
on 5,000 items x 12 raters x 3 scales x 6 models and on 150 items.

Every command runs through the CLI in its own process under
``/usr/bin/time -v`` (wall time and peak memory); the command's start-up is
subtracted. The references run in this process, after their imports, on the
same database in the same run. The
start-up is the same command on an unknown study (imports, app, connection).
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
  indexes and each new rating gets a ``ratingchange`` row (with its own
  foreign keys). On PostgreSQL 15 the foreign-key triggers alone took 4.5
  and 5.1 s of the 7.5 and 9.9 s of the import's insert statement for
  180,000 ratings (``EXPLAIN ANALYZE``, a loaded machine), several times the
  whole reference: the import now checks and locks the referenced rows in
  one statement per table and inserts without the triggers where the role
  may (the fallback keeps them);
- long export: ``pandas.read_sql`` of the same join + ``to_csv``;
- matrix and alt-test exports: ``read_sql`` + ``pivot`` + ``to_csv`` / ``json``.

Goals: imports within 3x, the long export within 2x, matrix and alt-test
within 1x; at 1,000,000 ratings every peak below 1 GiB.
"""

from __future__ import annotations

import argparse
import csv
import functools
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pandas as pd
from sqlalchemy import create_engine, make_url, text
from sqlmodel import SQLModel

from annotator import models  # noqa: F401  (the tables create_all makes)
from annotator.db import normalise_url

SIZES = {"quick": (5000, 12, 3), "1m": (50000, 5, 4), "summeval": (1600, 3, 4)}
# SummEval's criteria (Fabbri et al. 2021), for --size summeval.
CRITERIA = ("coherence", "consistency", "fluency", "relevance")
SUMMEVAL_MODELS = tuple(f"judge-{k}" for k in range(1, 7))
SCALES = [("0-5", 5, 2), ("0-10", 10, 2), ("0-100", 100, 1), ("0-1", 1, 2)]
MODELS = ("judge-a", "judge-b")
CLI = str(Path(sys.executable).with_name("annotator"))


def study_toml(scales: list[tuple[str, int, int]], criteria: tuple[str, ...] = ()) -> str:
    parts = ['name = "Benchmark"\nslug = "bench"\nconsent = "You agree to rate texts."\n']
    for name in criteria:
        parts.append(f'[[criteria]]\nname = "{name}"\ndefinition = "The {name}."\n')
    for name, top, decimals in scales:
        parts.append(f'[[scales]]\nname = "{name}"\nmin = 0\nmax = {top}\nstep = {10**-decimals}\n')
    parts.append(
        '[[benchmarks]]\nname = "sts-b"\ninstructions = "Rate from {min} to {max}."\n'
        'template = "{{ sentence1 }} / {{ sentence2 }}"\n'
    )
    parts.append(
        '[[demographics]]\nkey = "gender"\nlabel = "Gender"\ntype = "choice"\n'
        'choices = ["female", "male"]\n'
    )
    return "\n".join(parts)


def write_files(
    folder: Path,
    n_items: int,
    n_raters: int,
    scales,
    *,
    criteria: tuple[str, ...] = (),
    judges: tuple[str, ...] = MODELS,
) -> dict[str, Path]:
    """The items, ratings and LLM scores files. With ``criteria`` each rating and
    score is on the first scale, once per criterion (a ``criterion`` column), in
    place of once per scale: the same number of rows as without."""
    rng = random.Random(1)
    # (scale, criterion) of each block of rows: the scales, or one scale's criteria.
    blocks = [(s, "") for s in scales] if not criteria else [(scales[0], c) for c in criteria]
    extra = ["criterion"] if criteria else []
    paths = {name: folder / f"{name}.csv" for name in ("items", "ratings", "llm")}
    with open(paths["items"], "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "benchmark", "sentence1", "sentence2"])
        for i in range(n_items):
            writer.writerow([f"i{i}", "sts-b", f"first sentence {i}", f"second {i}"])
    truth = [rng.random() for _ in range(n_items)]
    with open(paths["ratings"], "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "rater", "scale", *extra, "score", "gender"])
        for r in range(n_raters):
            gender = "female" if r % 2 else "male"
            for (scale, top, decimals), criterion in blocks:
                named = [criterion] if criteria else []
                for i in range(n_items):
                    share = min(1.0, max(0.0, truth[i] + rng.gauss(0, 0.1)))
                    score = round(share * top, decimals)
                    writer.writerow([f"i{i}", f"rater{r:02d}", scale, *named, score, gender])
    with open(paths["llm"], "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "model", "scale", *extra, "score"])
        for model in judges:
            for (scale, top, _), criterion in blocks:
                named = [criterion] if criteria else []
                for i in range(n_items):
                    writer.writerow([f"i{i}", model, scale, *named, round(truth[i] * top, 3)])
    return paths


def run_cli(args: list[str], env: dict, *, fails: bool = False) -> tuple[float, float]:
    """Wall seconds and peak memory (MiB) of one CLI run, from /usr/bin/time -v."""
    wall, _, peak = run_cli_times(args, env, fails=fails)
    return wall, peak


def run_cli_times(args: list[str], env: dict, *, fails: bool = False) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak memory (MiB) of one CLI run."""
    return run_cli_output(args, env, fails=fails)[:3]


def run_cli_output(
    args: list[str], env: dict, *, fails: bool = False
) -> tuple[float, float, float, str]:
    """``run_cli_times`` and the command's standard output."""
    result = subprocess.run(
        ["/usr/bin/time", "-v", CLI, *args], env=env, capture_output=True, text=True
    )
    if (result.returncode != 0) != fails:
        raise SystemExit(f"annotator {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", result.stderr)
    hours, minutes, seconds = wall.groups()
    elapsed = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    cpu = sum(
        float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", result.stderr).group(1))
        for kind in ("User", "System")
    )
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr).group(1))
    return elapsed, cpu, rss / 1024, result.stdout


def restricted_role(admin, schema: str, role: str, url: str) -> str:
    """PostgreSQL: a new login role with every right on the schema's tables but
    not a superuser and not granted SET on session_replication_role: the
    imports' fallback path (the foreign-key triggers on). Its URL."""
    with admin.connect() as connection:
        connection.execute(text(f"CREATE ROLE {role} LOGIN"))
        for grant in (
            f"GRANT USAGE ON SCHEMA {schema} TO {role}",
            f"GRANT ALL ON ALL TABLES IN SCHEMA {schema} TO {role}",
            f"GRANT ALL ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
        ):
            connection.execute(text(grant))
    return make_url(url).set(username=role).render_as_string(hide_password=False)


def import_path(output: str, dialect: str, label: str) -> str:
    """How an import checked its new rows' foreign keys, from what the CLI printed."""
    if dialect != "postgresql":
        return "SQLite's path"
    if label.strip() == "baseline":
        return "the earlier code's path"
    from annotator.data._bulk import ROW_BY_ROW_NOTE

    # The CLI names the fallback; the fast path adds nothing to its line.
    return "row-by-row triggers" if ROW_BY_ROW_NOTE in output else "set-based checks, no triggers"


def startup_time(args: list[str], env: dict) -> float:
    """The command's start-up: the same command on an unknown study, which loads
    what the command loads and connects, then stops (the fastest of three)."""
    return min(run_cli(args, env, fails=True)[0] for _ in range(3))


def timed(function, clock=time.perf_counter) -> float:
    start = clock()
    function()
    return clock() - start


def in_process_cpu(engine, url: str, folder: Path, paths, key_extra, runs: int) -> None:
    """CPU seconds of each import and of its pandas reference in this process
    (``time.process_time``: what other work on the machine does not lengthen,
    unlike the wall time of the CLI runs), medians of ``runs``; for --size summeval."""
    from annotator import create_app
    from annotator.data.importers import import_llm_scores, import_ratings
    from annotator.db import session_scope
    from annotator.study.studies import get_study

    os.environ["ANNOTATOR_INSTANCE_PATH"] = str(folder / "instance")
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench"})
    for kind, function, path, key, clear in (
        ("ratings import", import_ratings, paths["ratings"], ["item_id", "rater", "scale"],
         ("DELETE FROM ratingchange", "DELETE FROM rating", "DELETE FROM demographics",
          "DELETE FROM \"user\" WHERE role = 'rater'")),
        ("llm-scores import", import_llm_scores, paths["llm"], ["item_id", "model", "scale"],
         ("DELETE FROM llmscore",)),
    ):  # fmt: skip
        ours, references = [], []
        for _ in range(runs):
            clear_tables(engine, clear)
            with app.app_context(), session_scope(app) as session:
                study = get_study(session, "bench")
                ours.append(
                    timed(functools.partial(function, session, study, path), time.process_time)
                )
            references.append(
                reference_import(
                    engine, path, "ref_cpu", key + key_extra, engine.dialect.name,
                    clock=time.process_time,
                )
            )  # fmt: skip
        mine, theirs = statistics.median(ours), statistics.median(references)
        print(
            f"    {kind} in this process, CPU medians of {runs}: {mine:.2f} s against pandas "
            f"{theirs:.2f} s ({mine / theirs:.2f}x)",
            flush=True,
        )


class Table:
    """Prints each figure beside its reference: the fastest of the runs, less the
    command's start-up, and the largest peak memory of the runs."""

    def add(self, label, runs, startup, reference, goal, ref) -> None:
        ours = min(wall for wall, _ in runs) - startup
        memory = max(peak for _, peak in runs)
        ratio = ours / reference
        verdict = "meets" if ratio <= goal else "MISSES"
        if ours <= 0:
            # Faster than the spread of the start-up runs on a busy machine.
            ratio, verdict = 0.0, "meets; within start-up noise"
        print(
            f"{label:<30} {ours:7.2f} s {memory:6.0f} MiB   {ref:<36} {reference:6.2f} s   "
            f"{ratio:5.2f}x (goal {goal:g}x: {verdict})",
            flush=True,
        )


def reference_import(
    engine,
    path: Path,
    table: str,
    key: list[str],
    dialect: str,
    *,
    bare_copy: bool = False,
    clock=time.perf_counter,
) -> float:
    """pandas read_csv + to_sql into a table with the unique key; on PostgreSQL
    to_sql writes through COPY (the ``method`` callable of pandas' documentation,
    "Insertion method"), or, with ``bare_copy``, the file goes straight to COPY
    without pandas (the lighter reference the README showed before)."""
    with engine.begin() as connection:
        connection.execute(text(f"DROP TABLE IF EXISTS {table}"))
        header = pd.read_csv(path, nrows=1, dtype=str).columns
        columns = ", ".join(f"{c} {'DOUBLE PRECISION' if c == 'score' else 'TEXT'}" for c in header)
        connection.execute(text(f"CREATE TABLE {table} ({columns}, UNIQUE ({', '.join(key)}))"))

    def copy_method(pd_table, connection, keys, data_iter):
        # pandas' documented PostgreSQL recipe (psycopg 3's copy in place of
        # psycopg2's copy_expert): the frame's rows as CSV into COPY.
        buffer = io.StringIO()
        csv.writer(buffer).writerows(data_iter)
        driver = connection.connection.driver_connection
        with driver.cursor() as cursor:
            sql = f"COPY {pd_table.name} ({', '.join(keys)}) FROM STDIN WITH (FORMAT csv)"
            with cursor.copy(sql) as copy:
                copy.write(buffer.getvalue())

    def load():
        with engine.begin() as connection:
            if bare_copy:
                driver = connection.connection.driver_connection
                with driver.cursor() as cursor, open(path, "rb") as handle:
                    sql = f"COPY {table} FROM STDIN WITH (FORMAT csv, HEADER true)"
                    with cursor.copy(sql) as copy:
                        while data := handle.read(1 << 20):
                            copy.write(data)
            else:
                frame = pd.read_csv(path, dtype={"item_id": str, "rater": str})
                frame.to_sql(
                    table,
                    connection,
                    if_exists="append",
                    index=False,
                    chunksize=50000,
                    method=copy_method if dialect == "postgresql" else None,
                )

    return timed(load, clock)


def clear_tables(engine, statements) -> None:
    """Empty the tables an import fills, then VACUUM them, so that no import
    meets another's dead rows (PostgreSQL checks a unique index's dead entries)."""
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(text(statement))
    tables = [re.match(r"DELETE FROM (\S+)", s).group(1) for s in statements]
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text(f"VACUUM {', '.join(tables)}"))
        else:
            connection.execute(text("VACUUM"))


LONG_SQL = """
SELECT i.external_id, s.name AS scale, u.rater_code, r.value, b.position AS block_position,
       r.position, r.served_at, r.submitted_at, r.is_repeat, r.is_attention_check, r.source
FROM rating r JOIN item i ON i.id = r.item_id JOIN scale s ON s.id = r.scale_id
JOIN "user" u ON u.id = r.rater_id LEFT JOIN block b ON b.id = r.block_id
ORDER BY u.rater_code, b.position, r.scale_id, r.position, i.id
"""
LLM_SQL = """
SELECT i.external_id, s.name AS scale, l.model, l.run, l.temperature, l.value, l.created_at
FROM llmscore l JOIN item i ON i.id = l.item_id JOIN scale s ON s.id = l.scale_id
ORDER BY l.model, l.scale_id, l.run, i.id
"""
MATRIX_SQL = """
SELECT i.external_id, u.rater_code, r.value FROM rating r JOIN item i ON i.id = r.item_id
JOIN "user" u ON u.id = r.rater_id JOIN scale s ON s.id = r.scale_id WHERE s.name = :scale
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="default: a SQLite file in a temporary folder")
    parser.add_argument("--size", choices=sorted(SIZES), default="quick")
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
    n_items, n_raters, n_scales = SIZES[args.size]
    scales = SCALES[:n_scales]
    # (label, criteria): --size summeval times the rubric study beside the same
    # rows without criteria, each on a database of its own.
    variants = [("", ())]
    if args.size == "summeval":
        scales = [(f"0-5 #{k}", 5, 0) for k in range(1, n_scales + 1)]
        variants = [("plain ", ()), ("rubric ", CRITERIA)]
        args.imports_only = True
    with tempfile.TemporaryDirectory() as tmp:
        for variant, criteria in variants:
            folder = Path(tmp) / (variant.strip() or "bench")
            folder.mkdir()
            schema = fallback_role = fallback_url = None
            url = args.database_url or f"sqlite:///{folder / 'bench.sqlite'}"
            if args.database_url:
                schema = "bench_" + uuid.uuid4().hex[:8]
                admin = create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
                with admin.connect() as connection:
                    connection.execute(text(f"CREATE SCHEMA {schema}"))
                url = admin.url.update_query_dict({"options": f"-csearch_path={schema}"})
                url = url.render_as_string(hide_password=False)
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
                table = Table()
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
                    engine, env, folder, scales[0][0], rounds=max(runs, 5), baseline=args.baseline
                )
            finally:
                engine.dispose()
                if schema:
                    with admin.connect() as connection:
                        if fallback_role:
                            connection.execute(text(f"DROP OWNED BY {fallback_role}"))
                            connection.execute(text(f"DROP ROLE {fallback_role}"))
                        connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        if args.report:
            time_report(Path(tmp) / "bench", args.database_url)


def time_matrix_exports(
    engine, env, folder: Path, scale: str, *, rounds: int, baseline: Path | None
) -> None:
    """``export --format matrix`` and ``alttest`` of one scale against ``read_sql`` +
    ``pivot`` + ``to_csv`` / ``json``.

    These exports take well under a second on 180,000 ratings, less than the
    spread of the command's start-up on a busy machine, so one run says little.
    Each of ``rounds`` rounds runs the start-up (the same command on an unknown
    study) and right after it the export (and with ``baseline`` the older
    version's start-up and export), and the reference, in an order rotated
    from round to round; a run counts less the start-up of its own round, and
    the rows give the medians. Beside the wall times, the CPU times (the CLI's
    user + system time from ``time -v``, the reference's ``process_time``):
    with more runnable processes than cores, a wall time is mostly waiting,
    and the CPU time is the figure that does not depend on the other work. On
    PostgreSQL neither CPU time holds the server's share.
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

        def ours(label, version_env, fmt=fmt, walls=walls, cpus=cpus, peaks=peaks):
            _, startup_cpu, _ = startup = run_cli_times(
                ["export", "nosuchstudy", *args, "-"], version_env, fails=True
            )
            out = folder / f"{label.strip() or 'this'}.{fmt}"
            wall, cpu, peak = run_cli_times(["export", "bench", *args, str(out)], version_env)
            walls[label].append(wall - startup[0])
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


def time_report(folder: Path, database_url: str | None) -> None:
    """``annotator report`` on synthetic studies (bootstrap intervals included)."""
    from sqlmodel import Session

    from annotator.data.synthetic import SyntheticSpec, build_synthetic_study

    judges = ("gpt", "gemini", "llama", "qwen", "deepseek", "mistral")
    for n_items, n_raters, goal in ((5000, 12, 20.0), (150, 12, 2.0)):
        url = database_url or f"sqlite:///{folder / f'report{n_items}.sqlite'}"
        schema = None
        if database_url:
            schema = "bench_" + uuid.uuid4().hex[:8]
            admin = create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
            with admin.connect() as connection:
                connection.execute(text(f"CREATE SCHEMA {schema}"))
            url = admin.url.update_query_dict({"options": f"-csearch_path={schema}"})
            url = url.render_as_string(hide_password=False)
        engine = create_engine(normalise_url(url))
        try:
            SQLModel.metadata.create_all(engine)
            spec = SyntheticSpec(
                slug="bench",
                n_items=n_items,
                n_raters=n_raters,
                models=judges,
                runs=1,
                extra_temperatures=(),
                seed=1,
            )
            with Session(engine) as session:
                build_synthetic_study(session, spec)
                session.commit()
            env = dict(os.environ, ANNOTATOR_DATABASE_URL=url, ANNOTATOR_SECRET_KEY="bench")
            env["ANNOTATOR_INSTANCE_PATH"] = str(folder / "instance")
            startup = startup_time(["report", "nosuchstudy", "--out", str(folder / "x.html")], env)
            out = folder / f"report{n_items}.html"
            wall, memory = run_cli(["report", "bench", "--out", str(out)], env)
            seconds = wall - startup
            print(
                f"annotator report, {n_items} items x {n_raters} raters x 3 scales x 6 models: "
                f"{seconds:6.2f} s {memory:6.0f} MiB   goal {goal:g} s: "
                f"{'meets' if seconds <= goal else 'MISSES'}",
                flush=True,
            )
        finally:
            engine.dispose()
            if schema:
                with admin.connect() as connection:
                    connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
            shutil.rmtree(folder / "instance", ignore_errors=True)


if __name__ == "__main__":
    main()
