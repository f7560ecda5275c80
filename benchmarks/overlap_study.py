"""The overlap design's goal: dealing a 600-item study to 30 raters, and its score post.

Run with ``.venv/bin/python benchmarks/overlap_study.py`` (``--postgres-url``
to run on PostgreSQL too, in a throw-away schema). Two parts:

1. **Dealing.** An overlap study of ``--items`` (600) items, ``k = 3`` raters per
   item, ``items_per_rater`` 60 (so 30 seats) and three scales. Raters join one
   after another through the data functions the rate views call (invite,
   consent, start each block, rate it); ``--quitters`` (4) of them leave in
   the middle of their first block, half withdrawing and half going silent
   past the abandonment deadline, and newcomers take their seats until the
   study is full. Checked: every pool item has exactly 3 counted ratings on
   every scale, the loads of one scale are within one item, and the pairwise
   overlaps (items two raters share on a scale) are printed. Also the time
   of a block start (the dealing), against a crossed study's.
2. **Score post.** benchmarks/score_post.py on the crossed and on the overlap
   design, interleaved ``--rounds`` (3) times each in this process: median
   CPU ms per post, its ratio (goal: at most 1.2), and statements per post.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

import score_post  # noqa: E402


def _app(url: str, clock):
    from sqlmodel import SQLModel

    from annotator import create_app
    from annotator.db import get_engine

    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "CLOCK": clock})
    SQLModel.metadata.create_all(get_engine(app))
    return app


def deal(url: str, *, items: int, quitters: int, per_rater: int = 60, k: int = 3) -> dict:
    """Part 1 on one database: the figures of the dealing goal."""
    from sqlmodel import Session, select

    from annotator.clock import FrozenClock
    from annotator.collect.dealing import StudyFull, overlap_spec, study_pool
    from annotator.db import get_engine
    from annotator.models import Scale
    from tests.collect import overlap_sim as sim

    clock = FrozenClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    app = _app(url, clock)
    folder = Path(tempfile.mkdtemp(prefix="overlap-bench-"))
    seats = items * k // per_rater
    # Spread the quitters over the study: raters 3, 3 + step, ...
    step = max(1, seats // max(1, quitters))
    leaving = {3 + i * step: 1 + (i * 17) % (per_rater - 1) for i in range(quitters)}
    starts: list[float] = []
    crossed_starts: list[float] = []
    with app.app_context(), Session(get_engine(app), expire_on_commit=False) as session:
        study = sim.make_overlap_study(
            session, folder, sim.overlap_toml(k=k, per_rater=per_rater), items
        )
        started = time.perf_counter()
        index, stayed = 0, 0
        while True:
            try:
                user = sim.join(session, study)
            except StudyFull:
                session.rollback()
                break
            blocks = sim.blocks(session, user)
            t0 = time.perf_counter()
            first = sim.start(session, user, blocks[0])
            starts.append(time.perf_counter() - t0)
            if index in leaving:
                sim.rate(session, user, first, leaving[index])
                if index % 2:
                    sim.withdraw(session, study, user)
                else:
                    clock.advance(days=3.5)
            else:
                sim.rate(session, user, first)
                for block in blocks[1:]:
                    t0 = time.perf_counter()
                    block = sim.start(session, user, block)
                    starts.append(time.perf_counter() - t0)
                    sim.rate(session, user, block)
                stayed += 1
            index += 1
        seconds = time.perf_counter() - started
        pool = study_pool(session, study, overlap_spec(study))
        counts = sim.counted_per_item(session, study)
        scales = session.exec(select(Scale.id).where(Scale.study_id == study.id)).all()
        per_item = Counter(counts[(item, scale)] for item in pool.pool for scale in scales)
        loads = sim.loads(session, study, pool.anchors)
        load_range = {
            scale: (
                min(v for (r, s), v in loads.items() if s == scale),
                max(v for (r, s), v in loads.items() if s == scale),
            )
            for scale in scales
        }
        pairs = sim.pair_overlaps(session, study, pool.anchors)
        # A crossed study of the same items: its block start, for reference.
        crossed = sim.make_overlap_study(
            session, folder, sim.study_toml(slug="crossed", gap_days=0), items
        )
        for _ in range(5):
            user = sim.join(session, crossed)
            t0 = time.perf_counter()
            sim.start(session, user, sim.blocks(session, user)[0])
            crossed_starts.append(time.perf_counter() - t0)
    from annotator.db import get_engine as engine_of

    engine_of(app).dispose()
    return {
        "raters_joined": index,
        "stayed": stayed,
        "left": len(leaving),
        "ratings_per_item_scale": dict(per_item),
        "load_range": list(load_range.values()),
        "pairs": [
            (min(v), statistics.median(v), max(v), sum(x == 0 for x in v), len(v))
            for v in pairs.values()
        ],
        "seconds": seconds,
        "start_ms": 1000 * statistics.median(starts),
        "crossed_start_ms": 1000 * statistics.median(crossed_starts),
    }


def pair_spread(items: int, seats: int, k: int = 3, randoms: int = 10) -> dict:
    """The dealing alone (no database), greedy against a random deal of the same loads."""
    from tests.collect.overlap_sim import simulate_deal

    def summary(counts: list[int]) -> tuple:
        return (statistics.pstdev(counts), max(counts), counts.count(0))

    greedy = summary(simulate_deal(items, k, seats, greedy=True))
    random_deals = [
        summary(simulate_deal(items, k, seats, greedy=False, seed=seed)) for seed in range(randoms)
    ]
    return {
        "greedy": greedy,
        "random": tuple(statistics.median(r[i] for r in random_deals) for i in range(3)),
        "pairs": seats * (seats - 1) // 2,
    }


def posts(fresh, *, rounds: int, items: int, raters: int) -> dict:
    """Part 2 on one database: crossed and overlap score posts, interleaved
    (``fresh()``: a new empty database for each run)."""
    runs: dict[str, list[dict]] = {"crossed": [], "overlap": []}
    for _ in range(rounds):
        for design in runs:
            runs[design].append(
                score_post.run(
                    fresh(), raters=raters, items=items, profile=False, quiet=True, design=design
                )
            )
    out = {}
    for design, results in runs.items():
        out[design] = {
            "cpu_ms": statistics.median(r["cpu_median_ms"] for r in results),
            "wall_ms": statistics.median(r["wall_ms"] for r in results),
            "statements": results[0]["statements"],
            "statements_max": max(r["statements_max"] for r in results),
        }
    out["ratio"] = out["overlap"]["cpu_ms"] / out["crossed"]["cpu_ms"]
    out["wall_ratio"] = out["overlap"]["wall_ms"] / out["crossed"]["wall_ms"]
    return out


def _databases(postgres_url: str | None):
    yield "SQLite", lambda: f"sqlite:///{tempfile.mkdtemp(prefix='overlap-db-')}/a.sqlite", None
    if postgres_url:
        from sqlalchemy import create_engine, text

        from annotator.db import normalise_url

        server = create_engine(normalise_url(postgres_url), isolation_level="AUTOCOMMIT")
        schemas: list[str] = []

        def fresh() -> str:
            schema = "bench_" + uuid.uuid4().hex[:12]
            schemas.append(schema)
            with server.connect() as connection:
                connection.execute(text(f'CREATE SCHEMA "{schema}"'))
            url = server.url.update_query_dict({"options": f"-csearch_path={schema}"})
            return url.render_as_string(hide_password=False)

        def drop() -> None:
            with server.connect() as connection:
                for schema in schemas:
                    connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            server.dispose()

        yield "PostgreSQL", fresh, drop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--quitters", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--post-items", type=int, default=100)
    parser.add_argument("--post-raters", type=int, default=2)
    parser.add_argument("--postgres-url", default=None)
    args = parser.parse_args(argv)
    failed = False
    spread = pair_spread(args.items, args.items * 3 // 60)
    g, r = spread["greedy"], spread["random"]
    print(
        f"dealing alone, {args.items} items, k = 3, {args.items * 3 // 60} raters: pairs' shared "
        f"items sd {g[0]:.2f}, max {g[1]}, {g[2]} of {spread['pairs']} pairs share none; a "
        f"random deal of the same loads (median of 10): sd {r[0]:.2f}, max {r[1]:g}, "
        f"{r[2]:g} share none"
    )
    for name, fresh, drop in _databases(args.postgres_url):
        try:
            d = deal(fresh(), items=args.items, quitters=args.quitters)
            p = posts(fresh, rounds=args.rounds, items=args.post_items, raters=args.post_raters)
        finally:
            if drop:
                drop()
        exact = set(d["ratings_per_item_scale"]) == {3}
        within = all(high - low <= 1 for low, high in d["load_range"])
        failed |= not (exact and within and p["ratio"] <= 1.2)
        print(f"{name}: {args.items} items, k = 3, 3 scales; {d['raters_joined']} raters joined,")
        print(
            f"  {d['left']} left mid-block ({d['left'] // 2} withdrew, the others went silent), "
            f"{d['stayed']} stayed; {d['seconds']:.1f} s in all"
        )
        print(
            f"  counted ratings per (item, scale): {d['ratings_per_item_scale']} "
            f"({'exactly 3' if exact else 'NOT exactly 3'})"
        )
        print(
            f"  pool items per rater and scale: {d['load_range']} "
            f"({'within one' if within else 'NOT within one'})"
        )
        for low, median, high, zeros, total in d["pairs"]:
            print(
                f"  pairs sharing items on a scale: min {low}, median {median:g}, max {high}; "
                f"{zeros} of {total} pairs share none"
            )
        print(
            f"  block start (dealing) median {d['start_ms']:.1f} ms; "
            f"crossed block start {d['crossed_start_ms']:.1f} ms"
        )
        print(
            f"  score post, {args.rounds} interleaved rounds of {args.post_raters} raters x "
            f"{args.post_items} posts: CPU ms/post crossed {p['crossed']['cpu_ms']:.2f}, "
            f"overlap {p['overlap']['cpu_ms']:.2f}, ratio {p['ratio']:.2f} (goal <= 1.2); "
            f"wall ratio {p['wall_ratio']:.2f}"
        )
        print(
            f"  statements/post crossed {p['crossed']['statements']:.2f} "
            f"(max {p['crossed']['statements_max']}), overlap "
            f"{p['overlap']['statements']:.2f} (max {p['overlap']['statements_max']})"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
