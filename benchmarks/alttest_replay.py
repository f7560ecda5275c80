"""Replay the public alt-test data through the sequential alt-test: ratings spent.

Run from the repository root (seconds with --chance off; with the chance bound, its
per-order loop takes minutes of CPU per 20 orders; --quick: 10 orders per pair, the
library's own rule only):

    .venv/bin/python benchmarks/alttest_replay.py [--orders 100] [--seed 39] [--quick]
        [--strategy agrapa ons mixture] [--chance off|rater|items]
        [--data ../shared/data/alttest]

(the data folder defaults to $ANNOTATOR_SHARED_DIR/data/alttest, else ../shared/...)

Each (data set, LLM) pair of ``../shared/data/alttest`` (the data of Calderon, Reichart
and Dror 2025, "The Alternative Annotator Test for LLM-as-a-Judge") is replayed in
random orders of its items: the items arrive one by one with all their ratings (the
data are complete, so each item enters complete and fixed, as
:func:`annotator.analysis.stop_rule.complete_items` feeds the app's check), and the
stop rule looks after every item. Per pair the classic alt-test on the full data
(t-test, Benjamini-Yekutieli, 30 items per rater) says whether the judge passes. The
table gives, for the judges the classic test passes, the share of orders in which the
sequential rule passes and the median share of the full design's ratings spent until
then (over the decided orders); for the judges it fails, the share of orders stopped
for futility and the median share spent until the stop (1.0 when never stopped). The
last column counts orders decided against the classic verdict (a futility stop of a
judge the classic test passes, or a pass of one it fails); the next, the orders stopped
for futility that the pass rule would have passed later within the data. Futility is the
library's bet (margin 0.1 on d, level 0.025 per rater), with either strategy, and with
``--chance rater`` (default: what the app's check does, each rater's own items not
arrived yet, ``rater_items_left``) or ``items`` (every item not arrived yet) the
conditional-power stop of
:func:`annotator.analysis.stop_rule.judge_verdict` (the mixture only).

Betting strategies (per rater, on ``x = (W_h - W_f + 1) / 2`` against ``m0 = (1 +
epsilon)/2``; Waudby-Smith and Ramdas 2023, "Estimating means of bounded random
variables by betting", section 5): ``agrapa`` (the library's), ``ons`` (online Newton
step), ``mixture`` (the mean of the capitals of fixed stakes on a grid). Each is a
nonnegative supermartingale under the rater's null, so each keeps the level.

The level at the null boundary comes from ``validation/stop_when_decided.py``'s
simulation (a judge exactly at the boundary, every item looked at) run with the same
rule, at the end of the output.

Without the data the script says so and exits 0 (skipped).

Goals (issue 39), for the library's rule (``SEQUENTIAL_STRATEGY``, secured at ``half``):
judges the classic test passes decided after a median of at most 0.35 of the full
design's ratings, every such pair decided in at least 80% of the orders, judges it
fails stopped after at most 0.6, and the level at the null boundary at most q; in
benchmarks/results.json beside their figures.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import Recorder, arguments  # noqa: E402

from annotator.metrics import alt_test  # noqa: E402
from annotator.metrics.alttest._betting import (  # noqa: E402
    BET_CAP,
    MIXTURE_SHARES,
    sequential_log_capital,
)
from annotator.metrics.alttest._futility import (  # noqa: E402
    FUTILITY_CHANCE,
    FUTILITY_COVER,
    bernoulli_upper_bounds,
    hit_chance_bound,
)
from annotator.metrics.alttest._sequential import (  # noqa: E402
    SEQUENTIAL_STRATEGY,
    secure_threshold,
)

SETTINGS = {
    "10k_prompts": ("neg_rmse", 0.15),
    "cebab_stars": ("neg_rmse", 0.1),
    "mtbench": ("accuracy", 0.2),
}
Q = 0.05
FUTILITY_BETA = 0.025
FUTILITY_MARGIN = 0.1


def _score(kind: str, prediction, others) -> float:
    if kind == "accuracy":
        return float(np.mean([prediction == o for o in others]))
    return -math.sqrt(float(np.mean([(prediction - o) ** 2 for o in others])))


def winning_x(humans: dict, llm: dict, scoring: str):
    """Rater names, and per kept item (in the order of ``items``, the third value) its
    raters' positions in ``names`` and their x = (W_h - W_f + 1)/2."""
    raters_of: dict = {}
    for h, anns in humans.items():
        for i in anns:
            raters_of.setdefault(i, []).append(h)
    items = [i for i, hs in raters_of.items() if len(hs) >= 2 and i in llm]
    names = sorted(humans)
    index = {h: j for j, h in enumerate(names)}
    rows = []
    for i in items:
        hs = raters_of[i]
        xs = []
        for h in hs:
            others = [humans[o][i] for o in hs if o != h]
            own, model = _score(scoring, humans[h][i], others), _score(scoring, llm[i], others)
            xs.append(((own >= model) - (model >= own) + 1) / 2)
        rows.append(([index[h] for h in hs], xs))
    return names, rows, items


def replay(
    names,
    rows,
    epsilon: float,
    strategy: str,
    orders: np.ndarray,
    threshold_kind: str,
    margin: float,
    chance: str = "off",
):
    """Per order: (item count at the pass or None, item count at futility or None).

    ``chance``: the conditional-power stop (``judge_verdict``'s bound on the chance to
    pass within the budget, at most FUTILITY_CHANCE; mixture only), checked every 1/40
    of the items, with each rater's items left taken as ``"rater"`` (their own items not
    arrived yet: what the app's check passes, ``rater_items_left``) or ``"items"``
    (every item not arrived yet: what it passed before); ``"off"``.
    """
    m = len(names)
    m0 = (1 + epsilon) / 2
    needed = math.ceil(m / 2)
    log_secure = math.log(secure_threshold(m, Q) if threshold_kind == "half" else m / Q)
    log_give_up = math.log(1 / FUTILITY_BETA)
    n_orders, n = orders.shape
    secured_at = np.full((n_orders, m), np.inf)
    given_up_at = np.full((n_orders, m), np.inf)
    paths = []
    for j in range(m):
        # Rater j's items (positions in rows) and x; per order, their arrival ranks.
        mine = [(pos, xs[hs.index(j)]) for pos, (hs, xs) in enumerate(rows) if j in hs]
        if not mine:
            continue
        positions = np.array([p for p, _ in mine])
        x = np.array([v for _, v in mine])
        rank = np.argsort(orders, axis=1)[:, positions]  # when each of j's items arrives
        sort = np.argsort(rank, axis=1)
        arrive = np.take_along_axis(rank, sort, axis=1)
        path = sequential_log_capital(x[sort], m0, strategy=strategy)
        hit = path >= log_secure
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
        secured_at[:, j] = np.where(first >= 0, arrive[np.arange(n_orders), first], np.inf)
        # Futility: a bet that the judge is good enough against rater j (on 1 - x).
        back = sequential_log_capital(1.0 - x[sort], 1.0 - (m0 - margin / 2), strategy=strategy)
        hit = back >= log_give_up
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
        given_up_at[:, j] = np.where(first >= 0, arrive[np.arange(n_orders), first], np.inf)
        paths.append((j, arrive, x[sort]))
    pass_at = np.sort(secured_at, axis=1)[:, needed - 1]  # the needed-th secured rater
    # Futility: more than m - needed raters given up (and not secured before).
    lost = np.where(given_up_at < secured_at, given_up_at, np.inf)
    stop_at = np.sort(lost, axis=1)[:, m - needed] if m - needed < m else np.full(n_orders, np.inf)
    if chance != "off" and strategy == "mixture":
        stop_at = np.minimum(
            stop_at, _chance_stops(paths, m0, secured_at, pass_at, math.exp(log_secure), chance)
        )
    return pass_at, np.where(stop_at < pass_at, stop_at, np.inf)


def _chance_stops(paths, m0, secured_at, pass_at, threshold, budget):
    """Per order: the first check at which the bounded chance to pass is small."""
    n_orders, m = secured_at.shape
    n = int(max(a.max() for _, a, _ in paths)) + 1
    needed = math.ceil(m / 2)
    stakes = np.asarray(MIXTURE_SHARES) * BET_CAP / (1.0 - m0)
    alpha = FUTILITY_COVER / (2 * m)
    checks = np.unique(np.linspace(0, n - 1, 41).astype(int))[1:-1]
    out = np.full(n_orders, np.inf)
    for o in range(n_orders):
        state = []
        for j, arrive, xs in paths:
            x = xs[o]
            logs = np.cumsum(np.log1p(stakes[:, None] * (m0 - x)[None, :]), axis=1)
            state.append(
                (
                    j,
                    arrive[o],
                    logs,
                    bernoulli_upper_bounds(x == 0.0, alpha),
                    1.0 - bernoulli_upper_bounds(x < 1.0, alpha),
                )
            )
        for t in checks:
            if t >= pass_at[o]:
                break
            open_ = [s for s in state if not secured_at[o, s[0]] <= t]
            need = needed - (m - len(open_))
            total = 0.0
            for _, arrive, logs, u0, p1 in open_:
                k = int(np.searchsorted(arrive, t, side="right"))  # j's items so far
                left = arrive.size - k if budget == "rater" else n - 1 - t
                if k == 0:
                    total += 1.0 if left else 0.0
                else:
                    total += hit_chance_bound(
                        logs[:, k - 1], stakes, m0, u0[k - 1], p1[k - 1], left, math.log(threshold)
                    )
                if total > FUTILITY_CHANCE * need:
                    break
            if total <= FUTILITY_CHANCE * need:
                out[o] = t
                break
    return out


def boundary_level(rng: np.random.Generator, reps: int) -> float:
    """The library's rule at the null boundary (validation/stop_when_decided.py)."""
    import importlib.util

    path = ROOT / "validation" / "stop_when_decided.py"
    spec = importlib.util.spec_from_file_location("stop_when_decided", path)
    sim = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, sim)
    spec.loader.exec_module(sim)
    at = sim.boundary_sd(rng, 5, 50_000)
    row = sim.simulate(rng, reps, 200, 5, at)
    print(
        f"\nLevel at the null boundary (5 raters x 200 items, judge sd {at:.2f}, E[d] "
        f"{row['d']:.3f}, every item looked at, {reps} studies): passes {row['pass_item']:.4f} "
        f"(q = {Q}; Monte Carlo s.e. {math.sqrt(Q * (1 - Q) / reps):.4f})"
    )
    return float(row["pass_item"])


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--orders", type=int, default=100)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--margin", type=float, default=FUTILITY_MARGIN)
    parser.add_argument("--strategy", nargs="+", default=["agrapa", "ons", "mixture"])
    parser.add_argument("--threshold", nargs="+", default=["m/q", "half"])
    parser.add_argument(
        "--chance",
        choices=["off", "rater", "items"],
        default="rater",
        help="the conditional-power futility stop and each rater's items left",
    )
    shared = Path(os.environ.get("ANNOTATOR_SHARED_DIR") or ROOT.parent / "shared")
    parser.add_argument("--data", type=Path, default=shared / "data" / "alttest")
    args = parser.parse_args(argv)
    if not (args.data / "published_results.json").is_file():
        print(f"skipped: the alt-test data are not at {args.data} (clone ../shared)")
        return 0
    n_orders = 10 if args.quick else args.orders
    if args.quick:
        # --quick proves the script runs (tests/test_benchmarks.py): the library's own
        # rule only, since the chance bound's per-order loop takes minutes of CPU.
        args.strategy, args.threshold = [SEQUENTIAL_STRATEGY], ["half"]
    recorder = Recorder("alttest_replay", args)
    rng = np.random.default_rng(args.seed)
    pairs = []
    for dataset, (scoring, epsilon) in SETTINGS.items():
        humans = json.loads((args.data / dataset / "human_annotations.json").read_text())
        llms = json.loads((args.data / dataset / "llm_annotations.json").read_text())
        for model, llm in llms.items():
            classic = alt_test(humans=humans, llm=llm, scoring=scoring, epsilon=epsilon)
            names, rows, _ = winning_x(humans, llm, scoring)
            counts = np.array([len(hs) for hs, _ in rows])
            orders = np.stack([rng.permutation(len(rows)) for _ in range(n_orders)])
            pairs.append((dataset, model, epsilon, classic.passed, names, rows, counts, orders))
    print(
        f"orders per pair {n_orders}, seed {args.seed}, q {Q}, futility beta {FUTILITY_BETA}, "
        f"conditional-power stop {args.chance} (chance {FUTILITY_CHANCE})\n"
    )
    print(
        "| strategy | secure at | classic passes: decided (orders) | median share spent | "
        "pairs decided in >= 80% of orders | classic fails: stopped (orders) | "
        "median share spent | against the classic verdict | stopped, would pass |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    detail = []
    for strategy in args.strategy:
        for kind in args.threshold:
            good_spent, good_done, bad_spent, bad_done, wrong = [], [], [], [], 0
            would = 0  # orders stopped for futility that would have passed later
            per_pair = 0
            n_good = 0
            for dataset, model, epsilon, passed, names, rows, counts, orders in pairs:
                pass_at, stop_at = replay(
                    names, rows, epsilon, strategy, orders, kind, args.margin, args.chance
                )
                total = counts.sum()
                cum = np.cumsum(counts[orders], axis=1)
                spent_to = np.concatenate([np.zeros((len(orders), 1)), cum], axis=1)
                idx = np.arange(len(orders))
                would += int((np.isfinite(pass_at) & np.isfinite(stop_at)).sum())
                pass_at = np.where(np.isfinite(stop_at), np.inf, pass_at)  # stopped first

                def share(at, spent_to=spent_to, idx=idx, total=total):
                    done = np.isfinite(at)
                    out = np.ones(len(at))
                    out[done] = spent_to[idx[done], at[done].astype(int) + 1] / total
                    return out, done

                if passed:
                    n_good += 1
                    s, done = share(pass_at)
                    good_spent += s[done].tolist()
                    good_done += done.tolist()
                    per_pair += done.mean() >= 0.8
                    wrong += int(np.isfinite(stop_at).sum())
                    detail.append(
                        (strategy, kind, dataset, model, "passes", done.mean(), np.median(s))
                    )
                else:
                    s, done = share(stop_at)
                    bad_spent += s.tolist()
                    bad_done += done.tolist()
                    wrong += int(np.isfinite(pass_at).sum())
                    detail.append(
                        (strategy, kind, dataset, model, "fails", done.mean(), np.median(s))
                    )
            print(
                f"| {strategy} | {kind} | {np.mean(good_done):.2f} | "
                f"{np.median(good_spent) if good_spent else float('nan'):.2f} | {per_pair} of {n_good} | "
                f"{np.mean(bad_done):.2f} | {np.median(bad_spent):.2f} | {wrong} | {would} |"
            )
            if (strategy, kind) == (SEQUENTIAL_STRATEGY, "half"):
                for measure, value, goal in (
                    (
                        "classic passes: median share of ratings spent",
                        np.median(good_spent),
                        "<= 0.35",
                    ),
                    ("classic passes: pairs decided in >= 80% of orders", per_pair, f">= {n_good}"),
                    ("classic passes: share of orders decided", np.mean(good_done), None),
                    (
                        "classic fails: median share of ratings spent",
                        np.median(bad_spent),
                        "<= 0.6",
                    ),
                ):
                    recorder.record(
                        f"{strategy}, {kind}: {measure}",
                        float(value),
                        "pairs" if "pairs" in measure else "share",
                        goal=goal,
                        rounds=n_orders,
                    )
    level = boundary_level(rng, 200 if args.quick else 2000)
    recorder.record(
        "level at the null boundary",
        level,
        "share",
        goal=f"<= {Q}",
        rounds=200 if args.quick else 2000,
    )
    print("\nPer pair (share of orders decided, median share of ratings spent):\n")
    print("| strategy | secure at | data set | LLM | classic | decided | median spent |")
    print("|---|---|---|---|---|---|---|")
    for strategy, kind, dataset, model, classic, done, spent in detail:
        print(
            f"| {strategy} | {kind} | {dataset} | {model} | {classic} | {done:.2f} | {spent:.2f} |"
        )
    recorder.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
