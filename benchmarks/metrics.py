"""Benchmark of annotator.metrics against its baselines, measured side by side in one run.

    .venv/bin/python benchmarks/metrics.py [--repeat N] [--quick]

1. The alt-test over all 18 (dataset, LLM) pairs of ../shared/data/alttest, starting
   from the JSON dicts, against the per-item loop of benchmarks/alttest_baseline.py
   (goal: at least 30 times faster). Both must give the same winning rates and
   advantage probabilities.
2. ``icc`` on 5,000 x 12 against ``pingouin.intraclass_corr`` on the same data
   (goal: at least 50 times faster). pingouin gets its long-format DataFrame ready-made.
3. Interval Krippendorff's alpha on 5,000 x 12 continuous scores (goal: under 50 ms).

Timings are the best of several runs (the harness's ``best_of``); this is not a test.
``--quick`` times each once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import Recorder, arguments, best_of  # noqa: E402

from annotator.metrics import alt_test, icc, krippendorff_alpha  # noqa: E402

SETTINGS = {
    "10k_prompts": ("neg_rmse", 0.15),
    "cebab_stars": ("neg_rmse", 0.1),
    "mtbench": ("accuracy", 0.2),
}


def _baseline():
    spec = importlib.util.spec_from_file_location(
        "alttest_baseline", ROOT / "benchmarks" / "alttest_baseline.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --quick: every timing once (it proves the script runs, the figures mean nothing).
QUICK = False


def _at_least(repeat: int, least: int) -> int:
    return repeat if QUICK else max(repeat, least)


def alttest_pairs() -> list[tuple[str, str, dict, dict, str, float]]:
    shared = Path(os.environ.get("ANNOTATOR_SHARED_DIR", ROOT.parent / "shared"))
    base = shared / "data" / "alttest"
    if not base.is_dir():
        sys.exit(f"alt-test data not found at {base}; set ANNOTATOR_SHARED_DIR")
    pairs = []
    for dataset, (scoring, epsilon) in SETTINGS.items():
        humans = json.loads((base / dataset / "human_annotations.json").read_text())
        llms = json.loads((base / dataset / "llm_annotations.json").read_text())
        for model, predictions in llms.items():
            pairs.append((dataset, model, humans, predictions, scoring, epsilon))
    return pairs


def bench_alttest(repeat: int) -> dict[str, float]:
    pairs = alttest_pairs()
    loop = _baseline().alt_test_loop

    def fast():
        return [alt_test(humans=h, llm=p, scoring=s, epsilon=e) for _, _, h, p, s, e in pairs]

    def slow():
        return [loop(h, p, scoring=s, epsilon=e) for _, _, h, p, s, e in pairs]

    fast()  # warm caches and imports
    t_fast, fast_out = best_of(fast, _at_least(repeat, 10))
    t_slow, slow_out = best_of(slow, max(1, repeat // 3))
    for (dataset, model, *_), mine, ref in zip(pairs, fast_out, slow_out, strict=True):
        same = mine.winning_rate == ref[0] and abs(mine.advantage_probability - ref[1]) < 1e-12
        if not same:
            sys.exit(f"alt-test mismatch on {dataset}/{model}: {mine} vs {ref[:2]}")
    return {"pairs": len(pairs), "fast": t_fast, "slow": t_slow}


def bench_icc(repeat: int) -> dict[str, float]:
    import pingouin as pg

    rng = np.random.default_rng(0)
    x = rng.normal(size=(5000, 1)) + rng.normal(size=(5000, 12)) * 0.5 + rng.normal(size=12) * 0.2
    long = pd.DataFrame(x).reset_index().melt(id_vars="index", var_name="rater", value_name="y")

    def ours():
        return icc(x)

    def theirs():
        return pg.intraclass_corr(long, targets="index", raters="rater", ratings="y")

    ours()
    t_ours, res = best_of(ours, _at_least(repeat, 20))
    t_pg, table = best_of(theirs, max(1, repeat // 2))
    ref = table.set_index("Type").loc["ICC(A,1)", "ICC"]
    if abs(res.icc_a1 - ref) > 1e-9:
        sys.exit(f"ICC mismatch: {res.icc_a1} vs pingouin {ref}")
    return {"ours": t_ours, "pingouin": t_pg}


def bench_alpha(repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 100, size=(5000, 1)) + rng.normal(scale=10, size=(5000, 12))
    x[rng.random(x.shape) < 0.1] = np.nan  # some missing ratings, as in real exports
    krippendorff_alpha(x, level="interval")
    t_interval, _ = best_of(lambda: krippendorff_alpha(x, level="interval"), _at_least(repeat, 20))
    t_ordinal, _ = best_of(lambda: krippendorff_alpha(x, level="ordinal"), _at_least(repeat, 5))
    t_nominal, _ = best_of(lambda: krippendorff_alpha(x, level="nominal"), _at_least(repeat, 5))
    return {"interval": t_interval, "ordinal": t_ordinal, "nominal": t_nominal}


def main() -> None:
    global QUICK
    parser = arguments(__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing (best of)")
    args = parser.parse_args()
    QUICK = args.quick
    if args.quick:
        args.repeat = 1
    recorder = Recorder("metrics", args)

    alt = bench_alttest(args.repeat)
    ratio = alt["slow"] / alt["fast"]
    print(f"alt-test, {alt['pairs']} (dataset, LLM) pairs from the JSON dicts")
    print(f"  vectorised alt_test   {alt['fast'] * 1e3:9.1f} ms")
    print(f"  per-item loop         {alt['slow'] * 1e3:9.1f} ms")
    print(
        f"  ratio                 {ratio:9.1f}x   (goal >= 30x: {'met' if ratio >= 30 else 'NOT met'})"
    )

    res = bench_icc(args.repeat)
    ratio = icc_ratio = res["pingouin"] / res["ours"]
    print("icc, 5,000 items x 12 raters")
    print(f"  annotator.metrics.icc {res['ours'] * 1e3:9.2f} ms")
    print(f"  pingouin              {res['pingouin'] * 1e3:9.1f} ms")
    print(
        f"  ratio                 {ratio:9.1f}x   (goal >= 50x: {'met' if ratio >= 50 else 'NOT met'})"
    )

    res = bench_alpha(args.repeat)
    ok = res["interval"] < 0.05
    print("Krippendorff's alpha, 5,000 items x 12 raters, continuous scores, 10% missing")
    print(
        f"  interval              {res['interval'] * 1e3:9.2f} ms   (goal < 50 ms: {'met' if ok else 'NOT met'})"
    )
    print(f"  ordinal               {res['ordinal'] * 1e3:9.2f} ms")
    print(f"  nominal               {res['nominal'] * 1e3:9.2f} ms")
    recorder.record(
        "alt-test, 18 pairs, against the per-item loop",
        alt["slow"] / alt["fast"],
        "x faster",
        goal=">= 30",
        ratio_of="benchmarks/alttest_baseline.py",
        rounds=_at_least(args.repeat, 10),
    )
    recorder.record(
        "icc, 5,000 x 12, against pingouin",
        icc_ratio,
        "x faster",
        goal=">= 50",
        ratio_of="pingouin.intraclass_corr",
        rounds=_at_least(args.repeat, 20),
    )
    recorder.record(
        "interval Krippendorff's alpha, 5,000 x 12",
        res["interval"] * 1000,
        "ms",
        goal="< 50",
        rounds=_at_least(args.repeat, 20),
    )
    recorder.save()


if __name__ == "__main__":
    main()
