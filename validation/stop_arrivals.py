"""Stop when decided with ratings arriving as they do in the app: the error rates.

Run from the repository root (a few minutes of CPU; --quick: about 20 s):

    .venv/bin/python validation/stop_arrivals.py [--reps 2000] [--seed 20261128] [--quick]

``validation/stop_when_decided.py`` feeds the sequential alt-test one complete item at a
time. In the app ratings come interleaved: several raters rate at once, each at their
own pace, an item gets its raters one by one, raters join late, and a rater who leaves
takes all their ratings with them (their shares go back to the pool,
:mod:`annotator.collect.dealing`; their ratings no longer count). The stop check
(:func:`annotator.collect.stopping.check_stop`) feeds the test only complete items,
each with its first ``k`` ratings, in the order the items became complete
(:func:`annotator.analysis.stop_rule.complete_items`), and counts in the family
``m`` every seat of the study (raters who rated and raters still to come).

The simulation, per replication: ``R`` seats; raters take them at staggered times
(uniform over the first 40% of a nominal study length), each rating at their own pace
(exponential gaps, a mean drawn per rater between 0.5 and 2). A third of the raters
leave early, after a uniform share of their work; their ratings are deleted then and a
newcomer takes the seat after a pause. Designs:

* overlap: ``N`` items, ``k`` raters per item; a rater asks for blocks of 10 items
  among those with open places that they have not rated, preferring items closest to
  complete (ties at random);
* crossed: every rater rates every item in their own shuffled order; an item enters
  the check with its first 3 ratings.

Scores in tenths of 0-5: an item's truth uniform on [0.5, 4.5], a rater adds N(0, 0.8),
the judge N(0, sd). The check looks after every rating (every look the study could
make). At the boundary of H0 the judge's sd is set (bisection, as in
stop_when_decided.py, with ``k`` raters per item) so that every rater's E[W_h - W_f] is
epsilon: a pass is a false pass (at most q: e-BH's false discovery rate, all nulls
true), and a secured rater is a false rejection, whose chance must stay at or below
1 / threshold = q ceil(m/2) / m (Ville's inequality for each rater's capital).

Between two departures the data only grow, so the verdict at every look of that
stretch is read off the paths at its end; a departure rewrites the past, and the next
stretch starts from the rewritten data. ``--check`` (on in --quick) runs
``complete_items`` and ``judge_verdict`` at every look of a few replications and
requires the same verdict.
"""

from __future__ import annotations

import argparse
import heapq
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotator.metrics.alttest._betting import sequential_log_capital  # noqa: E402
from annotator.metrics.alttest._sequential import (  # noqa: E402
    SEQUENTIAL_STRATEGY,
    secure_threshold,
)

Q = 0.05
EPSILON = 0.2
HUMAN_SD = 0.8
STEP = 10  # tenths: integer arithmetic, exact ties
BLOCK = 10
LEAVE_SHARE = 1 / 3
CROSSED_K = 3


@dataclass(frozen=True)
class Design:
    name: str
    crossed: bool
    seats: int  # R
    items: int  # N
    k: int  # raters per item (overlap) or ratings an item enters with (crossed)

    @property
    def full(self) -> int:
        """Ratings of the full design."""
        return self.items * (self.seats if self.crossed else self.k)


DESIGNS = (
    Design("overlap R=6, k=3, N=120", False, 6, 120, 3),
    Design("overlap R=10, k=3, N=200", False, 10, 200, 3),
    Design("overlap R=5, k=2, N=150", False, 5, 150, 2),
    Design("crossed R=5, N=80 (first 3 ratings)", True, 5, 80, CROSSED_K),
)


@dataclass
class Arrivals:
    """One replication's ratings: time, rater, item; and when each rater left."""

    time: np.ndarray
    rater: np.ndarray
    item: np.ndarray
    left_at: dict[int, float]  # rater -> departure time (their ratings vanish then)


def arrivals(rng: np.random.Generator, d: Design) -> Arrivals:
    """Who rates which item when, as the app deals them (values come later)."""
    span = d.full / d.seats * 1.25  # a nominal study length, in mean rating gaps
    heap: list[tuple[float, int]] = []
    pace, cap, done, queue = {}, {}, {}, {}
    holders: list[set[int]] = [set() for _ in range(d.items)]  # raters holding a place
    log_t, log_r, log_i = [], [], []
    left_at: dict[int, float] = {}
    next_id = 0

    def join(at: float) -> None:
        nonlocal next_id
        r = next_id
        next_id += 1
        pace[r] = rng.uniform(0.5, 2.0)
        work = d.items if d.crossed else math.ceil(d.items * d.k / d.seats)
        cap[r] = int(rng.integers(1, work)) if rng.random() < LEAVE_SHARE else None
        done[r], queue[r] = 0, []
        if d.crossed:
            queue[r] = list(rng.permutation(d.items))
        heapq.heappush(heap, (at + rng.exponential(pace[r]), r))

    for _ in range(d.seats):
        join(rng.uniform(0, 0.4 * span))
    while heap:
        now, r = heapq.heappop(heap)
        if not d.crossed and not queue[r]:
            # A new block: open items this rater has not had, closest to complete first.
            open_items = [
                i for i in range(d.items) if len(holders[i]) < d.k and r not in holders[i]
            ]
            rng.shuffle(open_items)
            open_items.sort(key=lambda i: -len(holders[i]))
            queue[r] = open_items[:BLOCK]
            for i in queue[r]:
                holders[i].add(r)
        if not queue[r]:
            continue  # nothing left for this rater
        item = queue[r].pop(0)
        log_t.append(now)
        log_r.append(r)
        log_i.append(item)
        done[r] += 1
        if cap[r] is not None and done[r] >= cap[r]:
            left_at[r] = now
            for i in range(d.items):
                holders[i].discard(r)  # every share goes back, the rated ones too
            queue[r] = []
            join(now + rng.exponential(0.1 * span))  # a newcomer takes the seat
            continue
        heapq.heappush(heap, (now + rng.exponential(pace[r]), r))
    return Arrivals(np.array(log_t), np.array(log_r), np.array(log_i), left_at)


def scores(rng, d: Design, n_raters: int, judge_sd: float) -> tuple[np.ndarray, np.ndarray]:
    """Humans (raters, items) and judge (items), in tenths of the 0-5 scale."""
    truth = rng.uniform(0.5, 4.5, d.items)
    humans = truth + rng.normal(0, HUMAN_SD, (n_raters, d.items))
    judge = truth + rng.normal(0, judge_sd, d.items)

    def tenths(x):
        return np.clip(np.round(x * STEP), 0, 5 * STEP).astype(np.int64)

    return tenths(humans), tenths(judge)


def verdicts(a: Arrivals, d: Design, humans: np.ndarray, judge: np.ndarray):
    """Walk the looks: (first pass look's rating count or None, raters ever secured).

    A look is each rating (the check may run after any of them). The family m is the
    study's seats: raters who rated plus those still to come.
    """
    log_threshold = math.log(secure_threshold(d.seats, Q))
    needed = math.ceil(d.seats / 2)
    m0 = (1 + EPSILON) / 2
    cuts = sorted(set(a.left_at.values()))
    bounds = [*cuts, math.inf]
    ever_secured: set[int] = set()
    first_pass = None
    start = -math.inf
    for end in bounds:
        # The data as they stand during [start, end): leavers up to start are gone.
        gone = {r for r, t in a.left_at.items() if t <= start}
        mask = (a.time < end) & ~np.isin(a.rater, list(gone))
        time, rater, item = a.time[mask], a.rater[mask], a.item[mask]
        order = np.lexsort((rater, time))
        time, rater, item = time[order], rater[order], item[order]
        firsts: dict[int, list[int]] = {}
        entered: list[tuple[float, int]] = []
        for t, r, i in zip(time.tolist(), rater.tolist(), item.tolist(), strict=True):
            refs = firsts.setdefault(i, [])
            if len(refs) < d.k:
                refs.append(r)
                if len(refs) == d.k:
                    entered.append((t, i))
        # Each rater's x along the items in the order they entered.
        xs: dict[int, list[float]] = {}
        at: dict[int, list[float]] = {}
        for t, i in entered:
            refs = firsts[i]
            for r in refs:
                own = sum((humans[r, i] - humans[o, i]) ** 2 for o in refs if o != r)
                llm = sum((judge[i] - humans[o, i]) ** 2 for o in refs if o != r)
                x = (int(own <= llm) - int(llm <= own) + 1) / 2
                xs.setdefault(r, []).append(x)
                at.setdefault(r, []).append(t)
        secured_at = {}
        for r, x in xs.items():
            path = sequential_log_capital(np.array(x), m0, strategy=SEQUENTIAL_STRATEGY)
            hit = np.flatnonzero(path >= log_threshold)
            if hit.size:
                secured_at[r] = at[r][hit[0]]
        first_rating = {}
        for t, r in zip(time.tolist(), rater.tolist(), strict=True):
            first_rating.setdefault(r, t)
        looks = [t for t in time.tolist() if t >= start]
        for r, t in secured_at.items():
            if t < end:
                ever_secured.add(r)
        if first_pass is None and looks:
            secured_times = np.sort(np.array(list(secured_at.values()) or [math.inf]))
            joined = np.sort(np.array(list(first_rating.values())))
            for t in looks:
                n_secured = np.searchsorted(secured_times, t, side="right")
                present = np.searchsorted(joined, t, side="right")
                if n_secured >= needed and n_secured * 2 >= present:
                    first_pass = int(np.searchsorted(a.time, t, side="right"))
                    break
        start = end
    return first_pass, ever_secured


def boundary_sd(rng, k: int, n_items: int) -> float:
    """The judge's sd at which each rater's E[W_h - W_f] = epsilon with k raters an item."""
    low, high = HUMAN_SD, 4 * HUMAN_SD
    for _ in range(30):
        mid = (low + high) / 2
        sub = np.random.default_rng(rng.integers(2**32))
        truth = sub.uniform(0.5, 4.5, n_items)
        h = np.clip(np.round((truth + sub.normal(0, HUMAN_SD, (k, n_items))) * STEP), 0, 50)
        f = np.clip(np.round((truth + sub.normal(0, mid, n_items)) * STEP), 0, 50)
        d = 0.0
        for r in range(k):
            others = [o for o in range(k) if o != r]
            own = sum((h[r] - h[o]) ** 2 for o in others)
            llm = sum((f - h[o]) ** 2 for o in others)
            d += np.mean((own <= llm) * 1.0 - (llm <= own))
        if d / k < EPSILON:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def check_against_library(rng, d: Design, judge_sd: float, reps: int) -> int:
    """Looks where complete_items + judge_verdict differ from :func:`verdicts` (0 expected)."""
    import pandas as pd

    from annotator.analysis.stop_rule import Outcome, complete_items, judge_verdict

    differ = 0
    for _ in range(reps):
        a = arrivals(rng, d)
        humans, judge = scores(rng, d, int(a.rater.max()) + 1, judge_sd)
        first_pass, _ = verdicts(a, d, humans, judge)
        for look in range(1, a.time.size + 1):
            t = a.time[look - 1]
            gone = {r for r, when in a.left_at.items() if when <= t}
            rows = [
                (a.item[j], a.rater[j], humans[a.rater[j], a.item[j]] / STEP, a.time[j])
                for j in range(look)
                if a.rater[j] not in gone
            ]
            frame = pd.DataFrame(rows, columns=["item", "rater", "value", "submitted_at"])
            people, order = complete_items(frame, raters_per_item=d.k)
            verdict = judge_verdict(
                scale="s",
                judge="j",
                humans=people,
                llm={i: judge[i] / STEP for i in order},
                budget_items=d.items,
                raters_to_come=d.seats - len(people),
                epsilon=EPSILON,
                q=Q,
            )
            passes = verdict.outcome == Outcome.PASSES
            if passes:
                differ += first_pass is None or first_pass > look
                break
        else:
            differ += first_pass is not None
    return differ


def simulate(rng, d: Design, judge_sd: float, reps: int) -> dict:
    passes, spent, secured, raters = 0, [], 0, 0
    for _ in range(reps):
        a = arrivals(rng, d)
        n_raters = int(a.rater.max()) + 1
        humans, judge = scores(rng, d, n_raters, judge_sd)
        first_pass, ever = verdicts(a, d, humans, judge)
        passes += first_pass is not None
        spent.append(first_pass if first_pass is not None else a.time.size)
        secured += len(ever)
        raters += n_raters
    return {
        "pass": passes / reps,
        "secured_per_rater": secured / raters,
        "median_share": float(np.median(spent)) / d.full,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--quick", action="store_true", help="200 replications, with --check")
    parser.add_argument("--check", action="store_true", help="compare with the library")
    args = parser.parse_args(argv)
    reps = 200 if args.quick else args.reps
    rng = np.random.default_rng(args.seed)
    print(f"replications {reps}, seed {args.seed}; epsilon {EPSILON}, q {Q}\n")
    if args.check or args.quick:
        differ = sum(check_against_library(rng, d, 0.5, reps=2) for d in DESIGNS)
        print(f"library check (complete_items and judge_verdict at every look): {differ} differ\n")
        if differ:
            return 1
    print(
        "| design | judge | passes | raters secured (share) | bound q h/m | "
        "median ratings spent / full design |"
    )
    print("|---|---|---|---|---|---|")
    for d in DESIGNS:
        at = boundary_sd(rng, d.k, 20_000 if args.quick else 200_000)
        cases = {f"at the boundary (sd {at:.2f})": at, "better (sd 0.4)": 0.4}
        for label, sd in cases.items():
            row = simulate(rng, d, sd, reps)
            print(
                f"| {d.name} | {label} | {row['pass']:.3f} | {row['secured_per_rater']:.4f} | "
                f"{1 / secure_threshold(d.seats, Q):.4f} | {row['median_share']:.2f} |"
            )
    print(
        f"\nMonte Carlo standard error of a pass rate at 0.05: {math.sqrt(0.05 * 0.95 / reps):.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
