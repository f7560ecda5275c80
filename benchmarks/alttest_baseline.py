"""A straightforward per-item loop implementation of the alt-test, for benchmarking.

Written from the paper (Calderon, Reichart and Dror, ACL 2025, section 3) as the
simplest correct program: for every annotator, loop over their items, score the
annotator and the LLM against the remaining annotators of the item, collect the
indicators, run one ``scipy.stats.ttest_1samp`` per annotator, then the
Benjamini-Yekutieli step-up procedure written out as in the paper's Algorithm 1.
It follows the reference implementation's conventions (items need at least
``min_humans_per_item`` humans and an LLM annotation; annotators need at least
``min_items_per_human`` such items; ties count for both sides; a NaN p-value is
never rejected). ``annotator.metrics.alt_test`` must give the same numbers, faster.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def _neg_rmse(prediction, annotations):
    return -math.sqrt(np.mean([(prediction - a) ** 2 for a in annotations]))


def _accuracy(prediction, annotations):
    return float(np.mean([prediction == a for a in annotations]))


def benjamini_yekutieli(p_values, q):
    """Indices rejected by the BY step-up procedure (a NaN p-value is never rejected)."""
    m = len(p_values)
    c_m = sum(1.0 / i for i in range(1, m + 1))
    order = sorted(range(m), key=lambda i: (math.isnan(p_values[i]), p_values[i]))
    largest = -1
    for rank, idx in enumerate(order, start=1):
        if p_values[idx] <= rank / (m * c_m) * q:
            largest = rank
    return set(order[:largest]) if largest > 0 else set()


def alt_test_loop(
    humans,
    llm,
    *,
    scoring="neg_rmse",
    epsilon=0.2,
    q=0.05,
    min_humans_per_item=2,
    min_items_per_human=30,
):
    """Return ``(winning_rate, advantage_probability, rows)``; rows are per tested annotator.

    Each row is ``(annotator, n_items, rho_f, rho_h, t, p_value)``.
    """
    score = {"neg_rmse": _neg_rmse, "accuracy": _accuracy}.get(scoring, scoring)
    annotators_of = {}
    for h, anns in humans.items():
        for item in anns:
            annotators_of.setdefault(item, []).append(h)
    kept = {
        item for item, hs in annotators_of.items() if len(hs) >= min_humans_per_item and item in llm
    }

    rows = []
    for h, anns in humans.items():
        items = [item for item in anns if item in kept]
        if len(items) < min_items_per_human:
            continue
        llm_wins, human_wins = [], []
        for item in items:
            others = [humans[k][item] for k in annotators_of[item] if k != h]
            s_h = score(anns[item], others)
            s_f = score(llm[item], others)
            llm_wins.append(1 if s_f >= s_h else 0)
            human_wins.append(1 if s_h >= s_f else 0)
        diffs = [wh - wf for wh, wf in zip(human_wins, llm_wins, strict=True)]
        res = stats.ttest_1samp(diffs, epsilon, alternative="less")
        rows.append(
            (
                h,
                len(items),
                float(np.mean(llm_wins)),
                float(np.mean(human_wins)),
                float(res.statistic),
                float(res.pvalue),
            )
        )
    rejected = benjamini_yekutieli([row[5] for row in rows], q)
    winning_rate = len(rejected) / len(rows)
    advantage_probability = float(np.mean([row[2] for row in rows]))
    return winning_rate, advantage_probability, rows
