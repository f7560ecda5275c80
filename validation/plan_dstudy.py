"""Check the planner's predictions (one-facet D-study) against fresh simulated studies.

Run from the repository root (about 15 s on one core):

    .venv/bin/python validation/plan_dstudy.py [--reps 200] [--seed 20261122]

Studies are drawn from the items x raters random-effects model
y = mu + item + rater + error with stated variance components (the truth). For each
pilot size, ``reps`` pilots are drawn and each is fitted with ``variance_components``;
``d_study`` then predicts ICC(A,k') of the mean of k' raters. Fresh studies of 80 items
with k' raters are drawn from the truth (never from a pilot) and scored with ``icc``
(for k' = 1, ICC(A,1) of 2-rater studies).
The table prints, per k': the true Phi(k'), the fresh studies' mean ICC(A,k'), and the
pilots' mean prediction with its 5-95 % range; and for a target of 0.8 the true
number of raters needed against the pilots' median plan (``raters_needed``).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotator.metrics import (  # noqa: E402
    VarianceComponents,
    d_study,
    icc,
    raters_needed,
    variance_components,
)

TRUTHS = {"A (1.0, 0.25, 1.5)": (1.0, 0.25, 1.5), "B (0.5, 0.05, 1.0)": (0.5, 0.05, 1.0)}
PILOTS = ((30, 3), (80, 4), (200, 6))
KS = (1, 2, 4, 8)
TARGET = 0.8


def study(rng: np.random.Generator, n: int, k: int, comps: tuple[float, float, float]):
    s_i, s_r, s_e = comps
    return (
        rng.normal(0, math.sqrt(s_i), (n, 1))
        + rng.normal(0, math.sqrt(s_r), (1, k))
        + rng.normal(0, math.sqrt(s_e), (n, k))
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"pilots and fresh studies per cell {args.reps}, seed {args.seed}\n")
    for label, truth in TRUTHS.items():
        true = d_study(VarianceComponents(*truth), raters=list(KS)).absolute
        # k' = 1: a single rater has no ICC of its own; ICC(A,1) of 2-rater studies.
        fresh = [
            np.mean(
                [
                    icc(study(rng, 80, 2, truth)).icc_a1
                    if k == 1
                    else icc(study(rng, 80, k, truth)).icc_ak
                    for _ in range(args.reps)
                ]
            )
            for k in KS
        ]
        true_needed = raters_needed(true[0], target=TARGET)
        print(f"truth {label} (items, raters, residual)")
        print()
        print("| pilot | " + " | ".join(f"k'={k}" for k in KS) + f" | raters for {TARGET} |")
        print("|---|" + "---|" * (len(KS) + 1))
        print("| true Phi | " + " | ".join(f"{v:.3f}" for v in true) + f" | {true_needed} |")
        print("| fresh studies, mean ICC(A,k') | " + " | ".join(f"{v:.3f}" for v in fresh) + " | |")
        for n, k in PILOTS:
            preds, plans = [], []
            for _ in range(args.reps):
                comps = variance_components(study(rng, n, k, truth))
                table = d_study(comps, raters=list(KS))
                preds.append(table.absolute)
                single = table.absolute[0]
                plans.append(raters_needed(single, target=TARGET) if 0 < single < 1 else 99)
            preds = np.array(preds)
            cells = [
                f"{preds[:, c].mean():.3f} [{np.quantile(preds[:, c], 0.05):.2f}, "
                f"{np.quantile(preds[:, c], 0.95):.2f}]"
                for c in range(len(KS))
            ]
            plan = np.array(plans)
            print(
                f"| predicted from {n} x {k} | "
                + " | ".join(cells)
                + f" | median {np.median(plan):.0f} "
                f"[{np.quantile(plan, 0.05):.0f}, {np.quantile(plan, 0.95):.0f}] |"
            )
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
