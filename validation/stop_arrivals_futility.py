"""Stop when decided with futility on, ratings arriving as in the app: the error rates.

Run from the repository root (about 20 minutes of CPU at 200 replications; --quick,
two designs at 40 replications: about 40 s):

    .venv/bin/python validation/stop_arrivals_futility.py [--reps 200] [--seed 20261128]
        [--quick] [--check]

``validation/stop_arrivals.py`` checks the pass rule with ratings arriving as in the
app (interleaved, several raters an item, raters joining late, leavers whose ratings
vanish). This script runs the whole stop check of the app on the same arrivals, the
futility stops included (:func:`annotator.analysis.stop_rule.judge_verdict`: the
futility bet, the impossibility bound and the bounded chance to pass), with each
rater's own budget as ``services/stopping.py`` passes it
(:func:`~annotator.analysis.stop_rule.rater_items_left`: the items not complete yet
that the rater rated or still holds in their block).

Overlap designs are dealt as the app deals them (:mod:`annotator.collect.dealing`):
one block per seat and scale, taken when the rater starts, of ``ceil(T / s)`` open
places (``T`` open places, ``s`` seats without a block), the items that need every
remaining seat first, then those closest to complete (ties at random); a leaver's
places go back to the pool and the newcomer on their seat is dealt them. Crossed
designs: every rater every item, an item enters with its first 3 ratings. Arrival
times, paces, leavers and scores are those of ``stop_arrivals.py``.

The pass is checked after every rating (every look the study could make); the
futility stops at the cron-like checks, every 1/40 of the full design's ratings. Per
design and judge (``reps`` replications):

* at the boundary of H0 (each rater's E[W_h - W_f] = epsilon): *passes* is the
  false-pass rate (at most q), *secured* each rater's chance of being secured before
  the study stops (at most q ceil(m/2)/m, Ville);
* *would pass*: the share that passes within the whole run with futility off;
  *stopped, would pass* the share of all replications stopped for futility before
  that pass (the rule's stated chance: at most 0.05);
* *stopped* the share stopped for futility, and the median share of the full
  design's ratings spent until the decision (pass or stop; all of them when neither).

``--check`` (on in --quick) compares the shortcut with ``complete_items``,
``rater_items_left`` and ``judge_verdict`` at every futility check of a few
replications, and requires the same outcome.
"""

from __future__ import annotations

import argparse
import heapq
import importlib.util
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotator.analysis.stop_rule import FUTILITY_MARGIN, most_log_gain_per_item  # noqa: E402
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
from annotator.metrics.alttest._sequential import FUTILITY_BETA, secure_threshold  # noqa: E402


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "validation" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return sys.modules[spec.name]


arr = _load("stop_arrivals")
Q, EPSILON, STEP = arr.Q, arr.EPSILON, arr.STEP
M0 = (1 + EPSILON) / 2
STAKES = np.asarray(MIXTURE_SHARES) * BET_CAP / (1.0 - M0)
GAIN = most_log_gain_per_item(EPSILON)
CHECKS = 40

DESIGNS = (
    arr.Design("overlap R=6, k=3, N=120", False, 6, 120, 3),
    arr.Design("overlap R=10, k=3, N=200", False, 10, 200, 3),
    arr.Design("overlap R=5, k=2, N=150", False, 5, 150, 2),
    arr.Design("crossed R=5, N=80 (first 3 ratings)", True, 5, 80, arr.CROSSED_K),
)


@dataclass
class Dealt:
    """Arrivals (stop_arrivals.Arrivals) and each rater's block (overlap: their places)."""

    time: np.ndarray
    rater: np.ndarray
    item: np.ndarray
    left_at: dict[int, float]
    block: dict[int, frozenset[int]]


def app_arrivals(rng: np.random.Generator, d, *, shared_order: bool = False) -> Dealt:
    """Who rates which item when, one block per seat dealt as the app deals (module doc).

    ``shared_order``: each block's items in one study-wide random order instead of a
    shuffle per block, so the raters of an item reach it at about the same point of
    their blocks (not the app's rule: what it would change, ``--shared-order``).
    """
    rank = rng.permutation(d.items) if shared_order else None
    span = d.full / d.seats * 1.25
    heap: list[tuple[float, int]] = []
    pace, cap, done, queue, block = {}, {}, {}, {}, {}
    holders: list[set[int]] = [set() for _ in range(d.items)]
    started: set[int] = set()  # raters present with a block
    log_t, log_r, log_i, left_at = [], [], [], {}
    next_id = 0

    def join(at: float) -> None:
        nonlocal next_id
        r, next_id = next_id, next_id + 1
        pace[r] = rng.uniform(0.5, 2.0)
        work = d.items if d.crossed else math.ceil(d.items * d.k / d.seats)
        cap[r] = int(rng.integers(1, work)) if rng.random() < arr.LEAVE_SHARE else None
        done[r] = 0
        heapq.heappush(heap, (at + rng.exponential(pace[r]), r))

    def deal(r: int) -> list[int]:
        if d.crossed:
            return (
                sorted(range(d.items), key=rank.__getitem__)
                if shared_order
                else list(rng.permutation(d.items))
            )
        seats_free = d.seats - len(started)
        open_places = np.array([d.k - len(h) for h in holders])
        take = math.ceil(open_places.sum() / max(seats_free, 1))
        tie = rng.random(d.items)
        chosen = [i for i in range(d.items) if open_places[i] > 0]
        # Needing every free seat first, then closest to complete, ties at random.
        chosen.sort(key=lambda i: (open_places[i] < seats_free, open_places[i], tie[i]))
        chosen = chosen[:take]
        for i in chosen:
            holders[i].add(r)
        if shared_order:
            return sorted(chosen, key=rank.__getitem__)
        return [chosen[i] for i in rng.permutation(len(chosen))]

    for _ in range(d.seats):
        join(rng.uniform(0, 0.4 * span))
    while heap:
        now, r = heapq.heappop(heap)
        if r not in block:
            queue[r] = deal(r)
            block[r] = frozenset(queue[r])
            started.add(r)
        if not queue[r]:
            continue
        item = queue[r].pop(0)
        log_t.append(now)
        log_r.append(r)
        log_i.append(item)
        done[r] += 1
        if cap[r] is not None and done[r] >= cap[r]:
            left_at[r] = now
            for h in holders:
                h.discard(r)
            queue[r] = []
            started.discard(r)
            join(now + rng.exponential(0.1 * span))
            continue
        heapq.heappush(heap, (now + rng.exponential(pace[r]), r))
    return Dealt(np.array(log_t), np.array(log_r), np.array(log_i), left_at, block)


@dataclass
class Outcome:
    first_pass: int | None  # ratings at the first pass look
    stop: int | None  # ratings at the futility stop (None: never)
    secured: dict[int, float]  # rater -> time secured (before the end of the data)


def walk(a: Dealt, d, humans: np.ndarray, judge: np.ndarray, *, futility: bool) -> Outcome:
    """The stop check along the arrivals: the pass at every rating, futility at checks."""
    log_thr = math.log(secure_threshold(d.seats, Q))
    needed = math.ceil(d.seats / 2)
    every = max(d.full // CHECKS, 1)
    cuts = sorted(set(a.left_at.values()))
    first_pass, stop, secured_ever = None, None, {}
    start = -math.inf
    for end in [*cuts, math.inf]:
        gone = {r for r, t in a.left_at.items() if t <= start}
        mask = (a.time < end) & ~np.isin(a.rater, list(gone))
        state = _stretch(a, d, humans, judge, mask)
        for r, t in state["secured_at"].items():
            if t < end:
                secured_ever.setdefault(r, t)
        idx = np.flatnonzero((a.time >= start) & (a.time < end))
        for g in idx.tolist():
            t = a.time[g]
            look = g + 1
            secured = [r for r, s in state["secured_at"].items() if s <= t]
            present = sum(1 for r, s in state["first"].items() if s <= t)
            if first_pass is None and len(secured) >= needed and 2 * len(secured) >= present:
                first_pass = look
            if first_pass is not None:
                break
            if futility and look % every == 0 and _futile(state, d, t, log_thr):
                stop = look
                break
        if first_pass is not None or stop is not None:
            break
        start = end
    last = a.time[(first_pass or stop or a.time.size) - 1]
    secured = {r: t for r, t in secured_ever.items() if t <= last}
    return Outcome(first_pass, stop, secured)


def _stretch(a: Dealt, d, humans, judge, mask) -> dict:
    """The data of one stretch between departures: each rater's x along the items in
    the order they became complete, and what the checks read off them."""
    order = np.lexsort((a.rater[mask], a.time[mask]))
    time, rater, item = (v[mask][order] for v in (a.time, a.rater, a.item))
    firsts: dict[int, list[int]] = {}
    entered: dict[int, float] = {}
    first: dict[int, float] = {}
    for t, r, i in zip(time.tolist(), rater.tolist(), item.tolist(), strict=True):
        first.setdefault(r, t)
        refs = firsts.setdefault(i, [])
        if len(refs) < d.k:
            refs.append(r)
            if len(refs) == d.k:
                entered[i] = t
    xs: dict[int, list[float]] = {r: [] for r in first}
    at: dict[int, list[float]] = {r: [] for r in first}
    for i, t in sorted(entered.items(), key=lambda p: p[1]):
        refs = firsts[i]
        for r in refs:
            own = sum((humans[r, i] - humans[o, i]) ** 2 for o in refs if o != r)
            llm = sum((judge[i] - humans[o, i]) ** 2 for o in refs if o != r)
            xs[r].append((int(own <= llm) - int(llm <= own) + 1) / 2)
            at[r].append(t)
    state = {"first": first, "entered": entered, "secured_at": {}, "gone_at": {}, "rows": {}}
    log_thr = math.log(secure_threshold(d.seats, Q))
    for r in first:
        x = np.array(xs[r])
        logs = np.cumsum(np.log1p(STAKES[:, None] * (M0 - x)[None, :]), axis=1)
        mixture = sequential_log_capital(x, M0, strategy="mixture")
        back = sequential_log_capital(1.0 - x, 1.0 - (M0 - FUTILITY_MARGIN / 2), strategy="mixture")
        hit = np.flatnonzero(mixture >= log_thr)
        if hit.size:
            state["secured_at"][r] = at[r][hit[0]]
        up = np.flatnonzero(back >= math.log(1 / FUTILITY_BETA))
        if up.size:
            state["gone_at"][r] = at[r][up[0]]
        # The items the rater may still enter: their block's (crossed: every item).
        mine = np.array(sorted(entered[i] for i in a.block[r] if i in entered))
        state["rows"][r] = (x, np.array(at[r]), logs, mixture, mine, len(a.block[r]), {})
    return state


def _futile(state: dict, d, t: float, log_thr: float) -> bool:
    """judge_verdict's futility stops at time ``t`` (impossibility, then the chance)."""
    present = [r for r, s in state["first"].items() if s <= t]
    to_come = max(d.seats - len(present), 0)
    left = d.items - sum(1 for s in state["entered"].values() if s <= t)
    secured = {r for r, s in state["secured_at"].items() if s <= t}
    reachable, budgets = 0.0, {}
    for r in present:
        x, at, logs, mixture, mine, size, _ = state["rows"][r]
        k = int(np.searchsorted(at, t, side="right"))
        budgets[r] = min(size - int(np.searchsorted(mine, t, side="right")), left)
        log_e = min(float(mixture[k - 1]), log_thr) if k else 0.0
        given_up = state["gone_at"].get(r, math.inf) <= t
        if r in secured or (not given_up and log_e + budgets[r] * GAIN >= log_thr):
            reachable += 1
    total = float(len(present))
    able = to_come if left * GAIN >= log_thr else 0
    reachable, total = reachable + able, total + able
    if total > 0 and reachable / total < 0.5:
        return True
    need = math.ceil(d.seats / 2) - len(secured)
    if need <= 0:
        return False  # passes (judge_verdict reads the pass first)
    alpha = FUTILITY_COVER / (2 * max(len(present), 1))
    chance = float(able)
    for r in present:
        if r in secured or chance >= need:
            continue
        x, at, logs, _, _, _, cache = state["rows"][r]
        k = int(np.searchsorted(at, t, side="right"))
        if k == 0:
            chance += hit_chance_bound(
                np.zeros(STAKES.size), STAKES, M0, 1.0, 0.0, budgets[r], log_thr
            )
            continue
        if alpha not in cache:
            cache[alpha] = (
                bernoulli_upper_bounds(x == 0.0, alpha),
                1.0 - bernoulli_upper_bounds(x < 1.0, alpha),
            )
        u0, p1 = cache[alpha]
        chance += hit_chance_bound(
            logs[:, k - 1], STAKES, M0, u0[k - 1], p1[k - 1], budgets[r], log_thr
        )
    return min(chance / need, 1.0) <= FUTILITY_CHANCE


def check_against_library(rng, d, judge_sd: float, reps: int) -> int:
    """Futility checks where the shortcut and the app's functions disagree (0 expected)."""
    import pandas as pd

    from annotator.analysis.stop_rule import (
        Outcome as Verdict,
    )
    from annotator.analysis.stop_rule import complete_items, judge_verdict, rater_items_left

    differ = 0
    every = max(d.full // CHECKS, 1)
    log_thr = math.log(secure_threshold(d.seats, Q))
    for _ in range(reps):
        a = app_arrivals(rng, d)
        humans, judge = arr.scores(rng, d, int(a.rater.max()) + 1, judge_sd)
        for look in range(every, a.time.size + 1, every):
            t = a.time[look - 1]
            gone = {r for r, when in a.left_at.items() if when <= t}
            keep = [j for j in range(look) if a.rater[j] not in gone]
            frame = pd.DataFrame(
                {
                    "item": a.item[keep],
                    "rater": a.rater[keep],
                    "value": humans[a.rater[keep], a.item[keep]] / STEP,
                    "submitted_at": a.time[keep],
                }
            )
            people, order = complete_items(frame, raters_per_item=d.k)
            rated = frame.groupby("rater")["item"].agg(set).to_dict()
            still = {r: set(a.block[r]) - rated[r] for r in rated}
            verdict = judge_verdict(
                scale="s",
                judge="j",
                humans=people,
                llm={i: judge[i] / STEP for i in order},
                budget_items=d.items,
                raters_to_come=max(d.seats - len(people), 0),
                epsilon=EPSILON,
                q=Q,
                items_left=rater_items_left(rated, order, range(d.items), still),
            )
            mask = a.time <= t
            mask &= ~np.isin(a.rater, list(gone))
            state = _stretch(a, d, humans, judge, mask)
            ours = _futile(state, d, t, log_thr)
            if verdict.outcome == Verdict.PASSES:
                break
            differ += ours != (verdict.outcome == Verdict.CANNOT_PASS)
            if ours:
                break
    return differ


def simulate(rng, d, judge_sd: float, reps: int, *, shared_order: bool = False) -> dict:
    out = {"pass": 0, "would": 0, "wrong": 0, "stopped": 0, "secured": 0, "raters": 0}
    spent = []
    for _ in range(reps):
        a = app_arrivals(rng, d, shared_order=shared_order)
        n_raters = int(a.rater.max()) + 1
        humans, judge = arr.scores(rng, d, n_raters, judge_sd)
        on = walk(a, d, humans, judge, futility=True)
        off = walk(a, d, humans, judge, futility=False) if on.stop is not None else on
        out["pass"] += on.first_pass is not None
        out["would"] += off.first_pass is not None
        out["wrong"] += on.stop is not None and off.first_pass is not None
        out["stopped"] += on.stop is not None
        out["secured"] += len(on.secured)
        out["raters"] += n_raters
        spent.append((on.first_pass or on.stop or a.time.size) / d.full)
    share = {key: out[key] / reps for key in ("pass", "would", "wrong", "stopped")}
    return {**share, "secured": out["secured"] / out["raters"], "spent": float(np.median(spent))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--quick", action="store_true", help="two designs, 40 replications")
    parser.add_argument("--check", action="store_true", help="compare with the library")
    parser.add_argument(
        "--shared-order", action="store_true", help="blocks in one study-wide item order"
    )
    args = parser.parse_args(argv)
    reps = 40 if args.quick else args.reps
    designs = DESIGNS[::3] if args.quick else DESIGNS
    rng = np.random.default_rng(args.seed)
    order = "one study-wide item order" if args.shared_order else "the app's: a shuffle per block"
    print(f"replications {reps}, seed {args.seed}; epsilon {EPSILON}, q {Q}; block order {order}\n")
    if args.check or args.quick:
        differ = sum(check_against_library(rng, d, sd, 1) for d in designs for sd in (0.4, 2.0))
        print(f"library check (judge_verdict at every futility check): {differ} differ\n")
        if differ:
            return 1
    print(
        "| design | judge sd | passes | raters secured (share) | bound q h/m | would pass | "
        "stopped, would pass | stopped | median ratings spent / full design |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for d in designs:
        at = arr.boundary_sd(rng, d.k, 20_000 if args.quick else 200_000)
        judges = (("boundary", at), ("0.4", 0.4), ("0.6", 0.6), ("0.8", 0.8), ("2.0", 2.0))
        for label, sd in judges:
            row = simulate(rng, d, sd, reps, shared_order=args.shared_order)
            name = f"{sd:.2f} (boundary)" if label == "boundary" else label
            print(
                f"| {d.name} | {name} | {row['pass']:.3f} | {row['secured']:.4f} | "
                f"{1 / secure_threshold(d.seats, Q):.4f} | {row['would']:.3f} | "
                f"{row['wrong']:.3f} | {row['stopped']:.3f} | {row['spent']:.2f} |"
            )
    print(f"\nMonte Carlo standard error of a rate at 0.05: {math.sqrt(0.05 * 0.95 / reps):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
