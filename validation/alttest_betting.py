"""Size and power of the alt-test's per-annotator tests: test by betting vs t-test.

Run from the repository root (about 10 s on one core):

    .venv/bin/python validation/alttest_betting.py [--reps 4000] [--seed 20261122]
        [--published ../shared/data/alttest]

Each replication draws i.i.d. differences d = W_h - W_f in {-1, 0, 1} for one annotator
and applies, at every sample size n from 10 to 200 on the first n draws:

* the paper's one-sided t-test of H0: E[d] >= epsilon (``scipy.stats.ttest_1samp``
  in closed form, as ``alt_test(test="ttest")``), rejecting when p <= alpha;
* the test by betting of ``alt_test(test="betting")`` (the library's own
  ``betting_log_capital``), rejecting when the capital has reached 1/alpha by n, which
  is what e-BH does with one annotator.

Size: at the boundary of H0 (E[d] = epsilon exactly) the rejection rate must stay at or
below alpha = 0.05 (Monte Carlo standard error sqrt(0.05 * 0.95 / reps), 0.0034 at 4000
replications). Two shapes of d: "sparse" (P(d = 1) = epsilon, else 0: humans agree with
each other and the LLM errs now and then, the case of issue 9) and "spread"
(P(d = -1) = 0.25, P(d = 1) = 0.25 + epsilon). A third table checks e-BH over m = 3
independent annotators all at the boundary: the probability of any rejection (the FDR
when every H0 is true) must stay at or below q = 0.05.

Power: the LLM as good as the humans (P(d = 1) = P(d = -1) = 0.2, E[d] = 0) and an LLM
that rarely loses (P(d = 1) = 0.05), tested at epsilon 0.1, 0.2 and 0.3.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotator.metrics.alttest._betting import betting_log_capital, e_bh  # noqa: E402

ALPHA = 0.05
SIZES = (10, 20, 30, 50, 100, 200)
EPSILONS = (0.0, 0.1, 0.2, 0.3)


def draw(rng: np.random.Generator, reps: int, n: int, p_plus: float, p_minus: float):
    u = rng.random((reps, n))
    return (u < p_plus).astype(float) - (u > 1.0 - p_minus).astype(float)


def t_test_rejects(d: np.ndarray, epsilon: float, n: int) -> np.ndarray:
    """One-sided one-sample t-test of mean(d[:, :n]) < epsilon, p <= alpha (NaN: no)."""
    x = d[:, :n]
    mean = x.mean(axis=1)
    sd = x.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - epsilon) / (sd / np.sqrt(n))
        p = special.stdtr(n - 1, t)
    return p <= ALPHA  # NaN compares False


def betting_rejects(log_k: np.ndarray, n: int, threshold: float) -> np.ndarray:
    return log_k[:, :n].max(axis=1) >= np.log(threshold)


def shapes(epsilon: float) -> dict[str, tuple[float, float]]:
    return {"sparse": (epsilon, 0.0), "spread": (0.25 + epsilon, 0.25)}


def size_table(rng: np.random.Generator, reps: int) -> list[str]:
    lines = [
        "Size at the boundary E[d] = epsilon, alpha = 0.05 (rejection rate; betting / t-test)",
        "",
        "| shape | epsilon | " + " | ".join(f"n={n}" for n in SIZES) + " |",
        "|---|---|" + "---|" * len(SIZES),
    ]
    worst = 0.0
    for name in ("sparse", "spread"):
        for eps in EPSILONS:
            p_plus, p_minus = shapes(eps)[name]
            d = draw(rng, reps, max(SIZES), p_plus, p_minus)
            log_k = betting_log_capital((d + 1) / 2, (1 + eps) / 2)
            cells = []
            for n in SIZES:
                bet = betting_rejects(log_k, n, 1 / ALPHA).mean()
                tt = t_test_rejects(d, eps, n).mean()
                worst = max(worst, bet)
                cells.append(f"{bet:.3f} / {tt:.3f}")
            lines.append(f"| {name} | {eps:.1f} | " + " | ".join(cells) + " |")
    lines += ["", f"largest betting rejection rate: {worst:.4f}"]
    return lines


def ebh_table(rng: np.random.Generator, reps: int, m: int = 3) -> list[str]:
    lines = [
        f"e-BH over m = {m} independent annotators, all at the boundary, q = 0.05:",
        "P(any rejection)",
        "",
        "| shape | epsilon | " + " | ".join(f"n={n}" for n in SIZES) + " |",
        "|---|---|" + "---|" * len(SIZES),
    ]
    for name in ("sparse", "spread"):
        for eps in EPSILONS:
            p_plus, p_minus = shapes(eps)[name]
            paths = [
                betting_log_capital(
                    (draw(rng, reps, max(SIZES), p_plus, p_minus) + 1) / 2, (1 + eps) / 2
                )
                for _ in range(m)
            ]
            cells = []
            for n in SIZES:
                # Each capital stopped at m/q, as alt_test(test="betting") does.
                stop = np.log(m / ALPHA)
                e = np.empty((reps, m))
                for j, lk in enumerate(paths):
                    head = lk[:, :n]
                    hit = head >= stop
                    first = np.where(hit.any(axis=1), hit.argmax(axis=1), n - 1)
                    e[:, j] = np.exp(head[np.arange(reps), first])
                any_rej = np.mean([e_bh(row, ALPHA).any() for row in e])
                cells.append(f"{any_rej:.3f}")
            lines.append(f"| {name} | {eps:.1f} | " + " | ".join(cells) + " |")
    return lines


def power_table(rng: np.random.Generator, reps: int) -> list[str]:
    truths = {
        "as good (P(+1) = P(-1) = 0.2)": (0.2, 0.2),
        "rarely loses (P(+1) = 0.05)": (0.05, 0.0),
    }
    lines = [
        "Power, alpha = 0.05 (rejection rate; betting / t-test)",
        "",
        "| truth | epsilon | " + " | ".join(f"n={n}" for n in SIZES) + " |",
        "|---|---|" + "---|" * len(SIZES),
    ]
    for label, (p_plus, p_minus) in truths.items():
        d = draw(rng, reps, max(SIZES), p_plus, p_minus)
        for eps in (0.1, 0.2, 0.3):
            log_k = betting_log_capital((d + 1) / 2, (1 + eps) / 2)
            cells = [
                f"{betting_rejects(log_k, n, 1 / ALPHA).mean():.3f} / "
                f"{t_test_rejects(d, eps, n).mean():.3f}"
                for n in SIZES
            ]
            lines.append(f"| {label} | {eps:.1f} | " + " | ".join(cells) + " |")
    return lines


def published_table(base: Path) -> list[str]:
    """Winning rates of the t-test and of the test by betting on the public datasets."""
    import json

    from annotator.metrics import alt_test, alt_test_sequential

    settings = {
        "10k_prompts": ("neg_rmse", 0.15),
        "cebab_stars": ("neg_rmse", 0.1),
        "mtbench": ("accuracy", 0.2),
    }
    lines = [
        f"Public datasets ({base}): winning rate, t-test / betting; sequential verdict",
        "",
        "| dataset | LLM | t-test WR | betting WR | sequential |",
        "|---|---|---|---|---|",
    ]
    for name, (scoring, eps) in settings.items():
        humans = json.loads((base / name / "human_annotations.json").read_text())
        llms = json.loads((base / name / "llm_annotations.json").read_text())
        for model, llm in llms.items():
            opts = {"humans": humans, "llm": llm, "scoring": scoring, "epsilon": eps}
            t = alt_test(**opts)
            b = alt_test(**opts, test="betting")
            v = alt_test_sequential(**opts)
            verdict = "passes for good" if v.decided else "not decided"
            lines.append(
                f"| {name} | {model} | {t.winning_rate:.2f} | {b.winning_rate:.2f} | {verdict} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument(
        "--published",
        type=Path,
        default=None,
        help="also run both tests on the public alt-test data (e.g. ../shared/data/alttest)",
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"replications {args.reps}, seed {args.seed}\n")
    for block in (
        size_table(rng, args.reps),
        ebh_table(rng, args.reps // 4),
        power_table(rng, args.reps),
    ):
        print("\n".join(block))
        print()
    if args.published is not None:
        print("\n".join(published_table(args.published)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
