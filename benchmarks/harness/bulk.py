"""The data and the pandas references of benchmarks/import_export.py: the study file,
the items, ratings and LLM-score files it imports, pandas' ``read_csv`` + ``to_sql``
into a table with the same unique key, the queries its exports are compared with, the
CLI's runs (whole processes, the harness's ``run_timed``) and the table of figures.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

import pandas as pd
from sqlalchemy import make_url, text

from harness.processes import run_timed
from harness.results import Recorder

__all__ = [
    "CLI",
    "Table",
    "import_path",
    "in_process_cpu",
    "run_cli",
    "run_cli_output",
    "run_cli_times",
    "startup_time",
    "CRITERIA",
    "LLM_SQL",
    "LONG_SQL",
    "MATRIX_SQL",
    "MODELS",
    "SCALES",
    "SIZES",
    "SUMMEVAL_MODELS",
    "clear_tables",
    "reference_import",
    "restricted_role",
    "study_toml",
    "timed",
    "write_files",
]

SIZES = {"180k": (5000, 12, 3), "1m": (50000, 5, 4), "summeval": (1600, 3, 4)}
# SummEval's criteria (Fabbri et al. 2021), for --size summeval.
CRITERIA = ("coherence", "consistency", "fluency", "relevance")
SUMMEVAL_MODELS = tuple(f"judge-{k}" for k in range(1, 7))
SCALES = [("0-5", 5, 2), ("0-10", 10, 2), ("0-100", 100, 1), ("0-1", 1, 2)]
MODELS = ("judge-a", "judge-b")


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


def timed(function, clock=time.perf_counter) -> float:
    start = clock()
    function()
    return clock() - start


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


CLI = str(Path(sys.executable).with_name("annotator"))


def run_cli(args: list[str], env: dict, *, fails: bool = False) -> tuple[float, float]:
    """Wall seconds and peak memory (MiB) of one CLI run."""
    wall, _, peak = run_cli_times(args, env, fails=fails)
    return wall, peak


def run_cli_times(args: list[str], env: dict, *, fails: bool = False) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak memory (MiB) of one CLI run."""
    return run_cli_output(args, env, fails=fails)[:3]


def run_cli_output(
    args: list[str], env: dict, *, fails: bool = False
) -> tuple[float, float, float, str]:
    """``run_cli_times`` and the command's standard output."""
    timing = run_timed([CLI, *args], env, check=False, output=True)
    if (timing.returncode != 0) != fails:
        raise SystemExit(f"annotator {' '.join(args)} exited with {timing.returncode}")
    return timing.wall, timing.cpu, timing.peak_mib, timing.output


def import_path(output: str, dialect: str, label: str) -> str:
    """How an import checked its new rows' foreign keys, from what the CLI printed."""
    if dialect != "postgresql":
        return "SQLite's path"
    if label.strip() == "baseline":
        return "the earlier code's path"
    from annotator.data._bulk import ROW_BY_ROW_NOTE

    # The CLI names the fallback; the fast path adds nothing to its line.
    return "row-by-row triggers" if ROW_BY_ROW_NOTE in output else "set-based checks, no triggers"


# Runs of a start-up (the fastest counts); --quick sets 1.
STARTUP_RUNS = 3


def startup_time(args: list[str], env: dict) -> float:
    """The command's start-up: the same command on an unknown study, which loads
    what the command loads and connects, then stops (the fastest of three)."""
    return min(run_cli(args, env, fails=True)[0] for _ in range(STARTUP_RUNS))


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
    command's start-up, and the largest peak memory of the runs; records it, and the
    whole process's ratio (start-up included), in the results file."""

    def __init__(self, recorder: Recorder, where: str) -> None:
        self.recorder, self.where = recorder, where

    def add(self, label, runs, startup, reference, goal, ref) -> None:
        whole = min(wall for wall, _ in runs)
        # Less the start-up, a run faster than the start-up's spread counts as 0 (as printed).
        less = max(whole - startup, 0.0)
        # The whole process (start-up included) against the reference's in-process
        # part is recorded without a goal: the goal for a whole process is set against
        # pandas as a whole process too (benchmarks/whole_process.py).
        for measure, value, its_goal in (
            (" less the start-up", less, f"<= {goal:g}"),
            (", whole process", whole, None),
        ):
            self.recorder.record(
                f"{self.where}: {label.strip()}{measure}, against {ref}",
                value / reference,
                "x",
                goal=its_goal,
                ratio_of=ref,
                rounds=len(runs),
            )
        ours = whole - startup
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
