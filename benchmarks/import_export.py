"""Import 5,000 items x 12 raters x 3 scales (180,000 ratings) and export the matrices.

Run with ``make bench`` or ``.venv/bin/python benchmarks/import_export.py``
(``--database-url postgresql://postgres@127.0.0.1:5432/test`` to measure on a
PostgreSQL server; the tables are created in a throw-away schema there).

Goals on the project's 2-core machine: the import under 10 s, the three
matrix exports under 2 s together. Each figure is printed next to its goal
and as a share of it, measured in this one run.
"""

from __future__ import annotations

import argparse
import csv
import random
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

from annotator import create_app
from annotator.db import get_engine, normalise_url, session_scope
from annotator.exporters import matrix_export
from annotator.importers import import_items, import_llm_scores, import_ratings
from annotator.studies import create_study
from annotator.studyfile import parse_study_file

N_ITEMS, N_RATERS = 5000, 12
SCALES = {"0-5": 5, "0-10": 10, "0-100": 100}
STUDY = """
name = "Benchmark"
slug = "bench"
consent = "ok"
[[scales]]
name = "0-5"
min = 0
max = 5
step = 0.01
[[scales]]
name = "0-10"
min = 0
max = 10
step = 0.01
[[scales]]
name = "0-100"
min = 0
max = 100
step = 0.1
[[benchmarks]]
name = "sts-b"
instructions = "Rate from {min} to {max}."
template = "{{ sentence1 }} / {{ sentence2 }}"
[[benchmarks]]
name = "truthfulqa"
instructions = "Rate from {min} to {max}."
template = "{{ question }} / {{ answer }}"
"""


def write_files(folder: Path) -> tuple[Path, Path, Path]:
    rng = random.Random(1)
    items = folder / "items.csv"
    with open(items, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "benchmark", "sentence1", "sentence2", "question", "answer"])
        for i in range(N_ITEMS):
            if i % 2:
                writer.writerow([f"i{i}", "sts-b", f"first sentence {i}", f"second {i}", "", ""])
            else:
                writer.writerow([f"i{i}", "truthfulqa", "", "", f"question {i}?", f"answer {i}"])
    ratings = folder / "ratings.csv"
    truth = [rng.random() for _ in range(N_ITEMS)]
    with open(ratings, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "rater", "scale", "score", "gender"])
        for r in range(N_RATERS):
            gender = "female" if r % 2 else "male"
            for scale, top in SCALES.items():
                for i in range(N_ITEMS):
                    share = min(1.0, max(0.0, truth[i] + rng.gauss(0, 0.1)))
                    # On the scale's step (0.1 on 0-100), as the import requires.
                    score = round(share * top, 1 if top == 100 else 2)
                    writer.writerow([f"i{i}", f"rater{r:02d}", scale, score, gender])
    llm = folder / "llm.csv"
    with open(llm, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "model", "scale", "score"])
        for model in ("judge-a", "judge-b"):
            for scale, top in SCALES.items():
                for i in range(N_ITEMS):
                    writer.writerow([f"i{i}", model, scale, round(truth[i] * top, 1)])
    return items, ratings, llm


def timed(label: str, goal: float | None, function):
    start = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - start
    if goal:
        print(
            f"{label:<34} {seconds:7.2f} s   goal {goal:5.1f} s   {seconds / goal:5.2f} of the goal"
        )
    else:
        print(f"{label:<34} {seconds:7.2f} s")
    return result, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="default: a SQLite file in a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        schema = None
        url = args.database_url or f"sqlite:///{folder / 'bench.sqlite'}"
        if args.database_url:
            schema = "bench_" + uuid.uuid4().hex[:8]
            admin = create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
            with admin.connect() as connection:
                connection.execute(text(f"CREATE SCHEMA {schema}"))
            url = admin.url.update_query_dict({"options": f"-csearch_path={schema}"})
            url = url.render_as_string(hide_password=False)
        app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench"})
        try:
            with app.app_context():
                SQLModel.metadata.create_all(get_engine())
                items, ratings, llm = write_files(folder)
                print(
                    f"database: {get_engine().dialect.name}; {N_ITEMS} items x {N_RATERS} raters "
                    f"x {len(SCALES)} scales = {N_ITEMS * N_RATERS * len(SCALES)} ratings"
                )
                with session_scope() as session:
                    study = create_study(session, parse_study_file(STUDY))
                study_id = study.id

                def run_import(importer, path):
                    def run():
                        with session_scope() as session:
                            from annotator.models import Study

                            return importer(session, session.get(Study, study_id), path)

                    return run

                timed("items import (5,000)", None, run_import(import_items, items))
                report, import_seconds = timed(
                    "ratings import (180,000)", 10.0, run_import(import_ratings, ratings)
                )
                assert report.created == N_ITEMS * N_RATERS * len(SCALES), report
                timed("LLM scores import (30,000)", None, run_import(import_llm_scores, llm))

                def export_all():
                    from annotator.models import Study

                    with session_scope() as session:
                        the_study = session.get(Study, study_id)
                        return [
                            matrix_export(session, the_study, scale=name).frame.to_csv(index=False)
                            for name in SCALES
                        ]

                csvs, export_seconds = timed("three matrix exports", 2.0, export_all)
                assert all(text.count("\n") == N_ITEMS + 1 for text in csvs)
                print(
                    f"import / export ratio to goals: {import_seconds / 10:.2f} and "
                    f"{export_seconds / 2:.2f} (below 1 meets the goal)"
                )
        finally:
            get_engine(app).dispose()
            if schema:
                with admin.connect() as connection:
                    connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))


if __name__ == "__main__":
    main()
