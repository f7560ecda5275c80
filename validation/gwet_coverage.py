"""Coverage of the confidence intervals of ``gwet_ac1`` and ``gwet_ac2`` at the app's sizes.

Run from the repository root (4 minutes at the default 1,000 repetitions, 8 at the
2,000 of docs/metrics.md, on one core; ``--quick`` about 15 s):

    .venv/bin/python validation/gwet_coverage.py [--reps 1000] [--seed 20261128] [--quick]
        [--drop-single]

Gwet's (2008) variance is over items with the raters held fixed, so each cell fixes
its k raters (biases evenly spread over -0.06 to +0.06 of the scale's range, noise sd
0.12 of the range) and draws n items per repetition: an item's latent quality is
``low + range * Beta(a, b)``, "symmetric" Beta(2, 2) or "skewed" Beta(6, 1.3) (most
items near the top, the high-agreement case AC1 was made for); a rater's score is the
quality plus bias plus noise, rounded to the scale's step and clipped to it. Each
rating is missing with probability 0 or 0.2 (items with fewer than 2 ratings stay in,
as in the app). The coefficient uses the whole scale as ``categories``. The true value
is the coefficient of 200,000 complete items of the same raters, drawn once per cell.

Per cell the table shows the true value, the mean and standard deviation of the
estimates, the mean standard error, the coverage of the 95 % interval (upper end capped
at 1, as irrCAC), how often the truth falls below or above it, its mean width, and
the correlation of the estimates and their standard errors.
``--drop-single`` leaves out the items rated once before each call. The Monte Carlo
standard error of a coverage of 0.95 is sqrt(0.95 * 0.05 / reps), 0.0069 at 1,000.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotator.metrics import gwet_ac2  # noqa: E402

# name -> (low, high, step, weights)
SCALES = {
    "0-5 by 1, AC1": (0.0, 5.0, 1.0, "identity"),
    "0-5 by 1, quadratic": (0.0, 5.0, 1.0, "quadratic"),
    "0-5 by 0.5, linear": (0.0, 5.0, 0.5, "linear"),
    "0-10 by 1, quadratic": (0.0, 10.0, 1.0, "quadratic"),
    "0-100 by 1, quadratic": (0.0, 100.0, 1.0, "quadratic"),
}
POPULATIONS = {"symmetric": (2.0, 2.0), "skewed": (6.0, 1.3)}
SIZES = (30, 100)
RATERS = (3, 5)
MISSING = (0.0, 0.2)
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Cell:
    scale: str
    population: str
    raters: int
    missing: float
    n: int
    truth: float
    mean: float  # of the estimates
    sd: float  # of the estimates
    se: float  # mean standard error
    coverage: float
    below: float  # share of intervals wholly above the truth (the truth below them)
    above: float  # share wholly below it
    width: float
    correlation: float  # of the estimates and their standard errors


def draw(rng, n, scale, population, raters, *, missing):
    """``n`` items x ``raters`` scores of one scale and population, NaN for missing."""
    low, high, step, _ = SCALES[scale]
    span = high - low
    a, b = POPULATIONS[population]
    quality = low + span * rng.beta(a, b, n)
    bias = np.linspace(-0.06, 0.06, raters) * span
    noisy = quality[:, None] + bias[None, :] + rng.normal(0.0, 0.12 * span, (n, raters))
    scores = np.clip(low + np.round((noisy - low) / step) * step, low, high)
    return np.where(rng.random((n, raters)) < missing, np.nan, scores)


def categories(scale):
    low, high, step, _ = SCALES[scale]
    return low + step * np.arange(round((high - low) / step) + 1)


def _stream(seed, *parts):
    return np.random.default_rng([seed, *parts])


def truth(seed, scale, population, raters, size=200_000):
    rng = _stream(seed, raters, list(SCALES).index(scale), list(POPULATIONS).index(population))
    x = draw(rng, size, scale, population, raters, missing=0.0)
    return gwet_ac2(x, weights=SCALES[scale][3], categories=categories(scale)).coefficient


def run_cell(seed, scale, population, raters, missing, n, reps, *, drop_single=False):
    """``reps`` studies of one cell; ``drop_single`` leaves out items rated once."""
    true = truth(seed, scale, population, raters)
    rng = _stream(
        seed,
        raters,
        n,
        list(SCALES).index(scale),
        list(POPULATIONS).index(population),
        round(missing * 100),
    )
    cats, weights = categories(scale), SCALES[scale][3]
    rows = []
    for _ in range(reps):
        x = draw(rng, n, scale, population, raters, missing=missing)
        if drop_single:
            x = x[(~np.isnan(x)).sum(axis=1) >= 2]
        r = gwet_ac2(x, weights=weights, categories=cats, confidence=CONFIDENCE)
        rows.append((r.coefficient, r.se, *r.ci))
    value, se, low, high = np.array(rows).T
    return Cell(
        scale,
        population,
        raters,
        missing,
        n,
        true,
        mean=float(value.mean()),
        sd=float(value.std(ddof=1)),
        se=float(se.mean()),
        coverage=float(np.mean((low <= true) & (true <= high))),
        below=float(np.mean(true < low)),
        above=float(np.mean(true > high)),
        width=float(np.mean(high - low)),
        correlation=float(np.corrcoef(value, se)[0, 1]),
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--quick", action="store_true", help="200 repetitions at n = 30")
    parser.add_argument("--drop-single", action="store_true", help="leave out the items rated once")
    args = parser.parse_args(argv)
    reps, sizes = (200, (30,)) if args.quick else (args.reps, SIZES)
    print(
        "| scale, weights | population | raters | missing | n | true | mean | sd | mean se "
        "| coverage | truth below | truth above | width | corr(estimate, se) |"
    )
    print("|---" * 14 + "|")
    for scale in SCALES:
        for population in POPULATIONS:
            for raters in RATERS:
                for missing in MISSING:
                    for n in sizes:
                        c = run_cell(
                            args.seed,
                            scale,
                            population,
                            raters,
                            missing,
                            n,
                            reps,
                            drop_single=args.drop_single,
                        )
                        print(
                            f"| {c.scale} | {c.population} | {c.raters} | {c.missing:g} | {c.n} "
                            f"| {c.truth:.3f} | {c.mean:.3f} | {c.sd:.4f} | {c.se:.4f} "
                            f"| {c.coverage:.3f} | {c.below:.3f} | {c.above:.3f} | {c.width:.3f} "
                            f"| {c.correlation:.2f} |",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
