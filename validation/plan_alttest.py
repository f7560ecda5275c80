"""Check ``alt_test_power`` (resampling a pilot) against fresh simulated studies.

Run from the repository root (about 30 s on one core):

    .venv/bin/python validation/plan_alttest.py [--pilots 30] [--reps 100] [--seed 20261122]

The study model: each item has a true score uniform on [1, 5]; humans add normal noise
(sd 0.8), the LLM adds its own (sd 0.5, 0.7 or 1.0); scores are rounded to 0.1 and
clipped to [0, 5]. A pilot is 60 items x 5 raters. Each of ``pilots`` pilots predicts,
by ``alt_test_power`` with ``reps`` resampled studies, the probability that the LLM
passes the alt-test (epsilon 0.15, t-test, min_items_per_human 20) in a study of 3
raters and n items; ``reps`` fresh studies of that size drawn from the model (never
from a pilot) give the actual pass rate. Printed: the actual rate, and the pilots' mean
prediction with its 10-90 % range.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotator.metrics import alt_test, alt_test_power  # noqa: E402

SIZES = (30, 60, 120)
OPTIONS = {"epsilon": 0.15, "min_items_per_human": 20}


def study(rng: np.random.Generator, n: int, r: int, sd_f: float, sd_h: float = 0.8):
    t = rng.uniform(1, 5, n)

    def noisy(sd: float) -> list[float]:
        return np.clip(np.round(t + rng.normal(0, sd, n), 1), 0, 5).tolist()

    humans = {f"h{j}": dict(enumerate(noisy(sd_h))) for j in range(r)}
    return humans, dict(enumerate(noisy(sd_f)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pilots", type=int, default=30)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"pilots {args.pilots}, resampled and fresh studies {args.reps}, seed {args.seed}")
    print()
    print("| LLM noise sd | " + " | ".join(f"n={n}: actual / predicted" for n in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for sd_f in (0.5, 0.7, 1.0):
        actual = []
        for n in SIZES:
            passes = [
                alt_test(
                    **dict(zip(("humans", "llm"), study(rng, n, 3, sd_f), strict=True)), **OPTIONS
                ).passed
                for _ in range(args.reps)
            ]
            actual.append(np.mean(passes))
        preds = np.array(
            [
                [
                    row["pass_probability"]
                    for row in alt_test_power(
                        **dict(zip(("humans", "llm"), study(rng, 60, 5, sd_f), strict=True)),
                        n_items=list(SIZES),
                        n_raters=3,
                        reps=args.reps,
                        seed=int(rng.integers(2**31)),
                        **OPTIONS,
                    ).rows
                ]
                for _ in range(args.pilots)
            ]
        )
        cells = [
            f"{actual[c]:.2f} / {preds[:, c].mean():.2f} "
            f"[{np.quantile(preds[:, c], 0.1):.2f}, {np.quantile(preds[:, c], 0.9):.2f}]"
            for c in range(len(SIZES))
        ]
        print(f"| {sd_f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
