"""What leaving out withdrawn and excluded raters costs the exports and frames.

Every export and ``study_frames`` filter ratings by
:func:`annotator.study.raters.counted_rater` (a NOT IN over the raters who do
not count). This script imports 180,000 ratings (the import_export benchmark's
files), excludes one rater, and times the three matrix exports and
``study_frames`` with the rule and with it replaced by TRUE, interleaved in one
run (median of ``--runs``). Goal: the rule costs under 10 %.

    .venv/bin/python benchmarks/rater_status.py [--database-url URL] [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text, true
from sqlmodel import SQLModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_export import SCALES, SIZES, study_toml, write_files  # noqa: E402

from annotator import create_app  # noqa: E402
from annotator.data import frames, matrix_export  # noqa: E402
from annotator.data.importers import import_items, import_ratings  # noqa: E402
from annotator.db import get_engine, normalise_url, session_scope  # noqa: E402
from annotator.models import Study  # noqa: E402
from annotator.study.raters import counted_rater, exclude_rater  # noqa: E402
from annotator.study.studies import create_study, study_raters  # noqa: E402
from annotator.study.studyfile import parse_study_file  # noqa: E402

# The import benchmark's quick size: 5,000 items x 12 raters x 3 scales.
N_ITEMS, N_RATERS, N_SCALES = SIZES["quick"]
STUDY_SCALES = SCALES[:N_SCALES]


def _work(study_id: int) -> None:
    with session_scope() as session:
        study = session.get(Study, study_id)
        for scale, _, _ in STUDY_SCALES:
            matrix_export.matrix_export(session, study, scale=scale, temperature=None)
        frames.study_frames(session, study)


def _without_rule(_column):
    return true()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="default: a SQLite file in a temporary folder")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
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
                paths = write_files(folder, N_ITEMS, N_RATERS, STUDY_SCALES)
                with session_scope() as session:
                    study = create_study(session, parse_study_file(study_toml(STUDY_SCALES)))
                    import_items(session, study, paths["items"])
                    import_ratings(session, study, paths["ratings"])
                    rater = study_raters(session, study)[0]
                    exclude_rater(session, rater, actor=None, via="cli", reason="benchmark")
                    study_id = study.id
                times: dict[str, list[float]] = {"with the rule": [], "without": []}
                for _ in range(args.runs):
                    for label, rule in (
                        ("with the rule", counted_rater),
                        ("without", _without_rule),
                    ):
                        matrix_export.counted_rater = frames.counted_rater = rule
                        start = time.perf_counter()
                        _work(study_id)
                        times[label].append(time.perf_counter() - start)
                matrix_export.counted_rater = frames.counted_rater = counted_rater
                n = N_ITEMS * N_RATERS * N_SCALES
                print(f"database: {get_engine().dialect.name}; {n:,} ratings, one rater excluded")
                medians = {label: statistics.median(t) for label, t in times.items()}
                for label, seconds in medians.items():
                    print(f"3 matrix exports + study_frames, {label:<14} {seconds:6.2f} s")
                ratio = medians["with the rule"] / medians["without"]
                print(f"ratio {ratio:.3f} (goal below 1.10)")
        finally:
            get_engine(app).dispose()
            if args.database_url:
                with admin.connect() as connection:
                    connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))


if __name__ == "__main__":
    main()
