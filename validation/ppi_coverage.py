"""Coverage of the judge-assisted (PPI++) intervals of ``ppi_mean`` and ``ppi_share_above``.

Run from the repository root (5-7 minutes on one core; ``--quick`` about 20 s):

    .venv/bin/python validation/ppi_coverage.py [--reps 2000] [--unrated 1500]
        [--seed 20261127] [--quick]

Each repetition draws a benchmark of n + N items independently from one population:
an item's latent quality q on a 0-5 scale; its human score is the mean of three
raters, each q plus noise (sd 0.6), clipped to [0, 5] and rounded to 0.1 (fractional
ratings); the judge's score is rounded to 0.5 and clipped. Humans rate the first n
items, the judge all n + N. Two populations: "symmetric" (q = 5 Beta(2, 2)) and
"skewed" (q = 5 Beta(0.7, 3): most items poor, a long tail of good ones). Two judges:
"good" (q + 0.3 + noise sd 0.5: biased, but close) and "sharp" (q + 0.3 + noise sd 0.2) and "poor" (0.4 q + 1.5 + noise sd
1.2: weakly related). Estimands: the human mean score, and the share of items whose
human score is above 2.5 (the middle of the scale) and above 2.75 (``ppi_share_above``),
each the population value, from 2,000,000 items drawn once with the same seed.

Per cell the table shows the coverage of the 95 % intervals (the default "small-sample"
interval, the normal approximation of the paper and ``ppi_py``, and the human-only t
interval), the small-sample PPI width over the human-only width (means), the mean tuned ``lam`` and the mean
effective number of human ratings. The Monte Carlo standard error of a coverage of
0.95 is sqrt(0.95 * 0.05 / reps), 0.0049 at 2,000 repetitions.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotator.metrics import ppi_mean, ppi_share_above  # noqa: E402

POPULATIONS = {"symmetric": (2.0, 2.0), "skewed": (0.7, 3.0)}
# slope, offset, noise sd. "sharp" disagrees with the humans about a threshold on only
# 0-4 of 30 items: the case where the share's variance estimate collapsed (issue 39).
JUDGES = {"good": (1.0, 0.3, 0.5), "sharp": (1.0, 0.3, 0.2), "poor": (0.4, 1.5, 1.2)}
SIZES = (30, 100, 300)
THRESHOLDS = (2.5, 2.75)  # the middle of the 0-5 scale, and a share near 0.43
CONFIDENCE = 0.95


def draw(rng: np.random.Generator, size: int, population: str, judge: str):
    """``size`` items: (human score, judge score)."""
    a, b = POPULATIONS[population]
    quality = 5 * rng.beta(a, b, size)
    raters = np.round(np.clip(quality[:, None] + rng.normal(0, 0.6, (size, 3)), 0, 5), 1)
    slope, offset, noise = JUDGES[judge]
    judged = slope * quality + offset + rng.normal(0, noise, size)
    return raters.mean(axis=1), np.clip(np.round(judged * 2) / 2, 0, 5)


def truths(seed: int, size: int = 2_000_000) -> dict[str, list[tuple[float | None, float]]]:
    """Per population: (None, mean human score), then (threshold, share above it)."""
    rng = np.random.default_rng(seed)
    out = {}
    for population in POPULATIONS:
        human, _ = draw(rng, size, population, "good")
        out[population] = [(None, float(human.mean()))] + [
            (t, float((human > t).mean())) for t in THRESHOLDS
        ]
    return out


@dataclass
class Cell:
    coverage_t: float
    coverage_normal: float
    coverage_human: float
    width_ratio: float
    lam: float
    effective_n: float


def simulate(
    rng: np.random.Generator,
    *,
    population: str,
    judge: str,
    n: int,
    unrated: int,
    reps: int,
    truth: float,
    threshold: float | None,
) -> Cell:
    """Coverage and widths over ``reps`` benchmarks of one cell of the table."""
    hits_t = hits_normal = hits_human = 0
    widths, human_widths, lams, effective = [], [], [], []
    for _ in range(reps):
        human, judged = draw(rng, n + unrated, population, judge)
        args = (human[:n], judged[:n], judged[n:])
        t, normal = (
            ppi_share_above(*args, threshold=threshold, interval=kind)
            if threshold is not None
            else ppi_mean(*args, interval=kind)
            for kind in ("small-sample", "normal")
        )
        hits_t += t.interval[0] <= truth <= t.interval[1]
        hits_normal += normal.interval[0] <= truth <= normal.interval[1]
        hits_human += t.human_interval[0] <= truth <= t.human_interval[1]
        widths.append(t.width)
        human_widths.append(t.human_width)
        lams.append(t.lam)
        effective.append(t.effective_n)
    return Cell(
        coverage_t=hits_t / reps,
        coverage_normal=hits_normal / reps,
        coverage_human=hits_human / reps,
        width_ratio=float(np.mean(widths) / np.mean(human_widths)),
        lam=float(np.mean(lams)),
        effective_n=float(np.nanmean(effective)),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--unrated", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--quick", action="store_true", help="200 repetitions, n = 30 only")
    args = parser.parse_args(argv)
    reps, sizes = (200, (30,)) if args.quick else (args.reps, args.sizes)
    population_truths = truths(args.seed)
    rng = np.random.default_rng(args.seed + 1)
    print(f"repetitions {reps}, unrated items N = {args.unrated}, seed {args.seed}\n")
    print(
        "| population | estimand | judge | n | coverage small-sample | coverage normal (ppi_py) "
        "| coverage human-only | width / human-only | lam | effective n |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for population, estimands in population_truths.items():
        for threshold, truth in estimands:
            label = (
                f"share > {threshold:g} ({truth:.3f})"
                if threshold is not None
                else f"mean ({truth:.3f})"
            )
            for judge in JUDGES:
                for n in sizes:
                    cell = simulate(
                        rng,
                        population=population,
                        judge=judge,
                        n=n,
                        unrated=args.unrated,
                        reps=reps,
                        truth=truth,
                        threshold=threshold,
                    )
                    print(
                        f"| {population} | {label} | {judge} | {n} | {cell.coverage_t:.3f} "
                        f"| {cell.coverage_normal:.3f} | {cell.coverage_human:.3f} "
                        f"| {cell.width_ratio:.2f} | {cell.lam:.2f} | {cell.effective_n:.0f} |"
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
