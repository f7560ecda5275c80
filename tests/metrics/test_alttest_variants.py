"""The paper's variants (Appendix A FAQ and Appendix C), each against a direct loop.

The loops below are written from the paper's formulas, item by item, and share no
code with annotator.metrics.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from annotator.metrics import MultiDomainAltTestResult, alt_test, alt_test_domains
from tests.metrics.references import random_study


def _others(humans, j, item):
    return [(k, humans[k][item]) for k in humans if k != j and item in humans[k]]


def _kept_items(humans, llm, j, min_humans=2):
    return [
        item
        for item in humans[j]
        if item in llm and sum(item in humans[k] for k in humans) >= min_humans
    ]


def _indicators(s_f, s_h):
    return int(s_f >= s_h), int(s_h >= s_f)


# ------------------------------------------------------------ C.3 annotator quality


def test_annotator_weights_match_weighted_loop():
    humans, llm = random_study(21, n_items=70, n_humans=5, missing=0.3)
    q_weights = {"h0": 3.0, "h1": 1.0, "h2": 0.5, "h3": 2.0, "h4": 1.0}
    res = alt_test(
        humans=humans, llm=llm, epsilon=0.1, annotator_weights=q_weights, min_items_per_human=20
    )

    def wrmse(pred, others):
        num = sum(q_weights[k] * (pred - v) ** 2 for k, v in others)
        return -math.sqrt(num / sum(q_weights[k] for k, _ in others))

    p_values = []
    for row in res.annotators:
        j = row.annotator
        d, wf = [], []
        for item in _kept_items(humans, llm, j):
            others = _others(humans, j, item)
            f, h = _indicators(wrmse(llm[item], others), wrmse(humans[j][item], others))
            d.append(h - f)
            wf.append(f)
        assert row.rho_f == pytest.approx(np.mean(wf))
        ref = stats.ttest_1samp(d, 0.1, alternative="less")
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        p_values.append(ref.pvalue)
    rejected = stats.false_discovery_control(p_values, method="by") <= 0.05
    expected = sum(
        q_weights[r.annotator] * rej for r, rej in zip(res.annotators, rejected, strict=True)
    )
    assert res.winning_rate == pytest.approx(expected / sum(q_weights.values()))


def test_equal_weights_change_nothing():
    humans, llm = random_study(22)
    plain = alt_test(humans=humans, llm=llm, min_items_per_human=10)
    equal = alt_test(
        humans=humans, llm=llm, min_items_per_human=10, annotator_weights={h: 2.5 for h in humans}
    )
    assert [r.p_value for r in plain.annotators] == [r.p_value for r in equal.annotators]
    assert plain.winning_rate == equal.winning_rate


def test_weighted_winning_rate_favours_heavy_annotators():
    # Three annotators; the LLM copies h0 so it can only beat h1 and h2 clearly.
    rng = np.random.default_rng(23)
    truth = rng.integers(1, 6, 60)
    humans = {
        f"h{j}": {f"i{i}": int(np.clip(v + rng.integers(-1, 2), 1, 5)) for i, v in enumerate(truth)}
        for j in range(3)
    }
    llm = {f"i{i}": int(v) for i, v in enumerate(truth)}
    plain = alt_test(humans=humans, llm=llm, epsilon=0.2)
    rejected = {r.annotator for r in plain.annotators if r.rejected}
    weights = {h: (10.0 if h in rejected else 1.0) for h in humans}
    heavy = alt_test(humans=humans, llm=llm, epsilon=0.2, annotator_weights=weights)
    if 0 < len(rejected) < 3:
        assert heavy.winning_rate > plain.winning_rate


@pytest.mark.parametrize("bad", [{"h0": 0.0}, {"h0": -1.0}, {"h0": float("nan")}])
def test_weights_must_be_positive(bad):
    humans, llm = random_study(24)
    weights = {h: 1.0 for h in humans} | bad
    with pytest.raises(ValueError, match="positive"):
        alt_test(humans=humans, llm=llm, annotator_weights=weights, min_items_per_human=10)


def test_weights_for_unknown_annotator():
    humans, llm = random_study(24)
    weights = {h: 1.0 for h in humans} | {"ghost": 1.0}
    with pytest.raises(ValueError, match="unknown"):
        alt_test(humans=humans, llm=llm, annotator_weights=weights, min_items_per_human=10)


# ------------------------------------------------------------ C.1 inverse probability weighting


def _majority(labels):
    values, counts = np.unique(labels, return_counts=True)
    return values[np.argmax(counts)]  # np.unique sorts: ties go to the smallest label


def _ipw_loop(humans, llm, j, epsilon, scoring):
    items = _kept_items(humans, llm, j)
    rows = []
    for item in items:
        others = [v for _, v in _others(humans, j, item)]
        if scoring == "accuracy":
            s_h = np.mean([humans[j][item] == v for v in others])
            s_f = np.mean([llm[item] == v for v in others])
        else:
            s_h = -math.sqrt(np.mean([(humans[j][item] - v) ** 2 for v in others]))
            s_f = -math.sqrt(np.mean([(llm[item] - v) ** 2 for v in others]))
        f, h = _indicators(s_f, s_h)
        rows.append((_majority(others), f, h))
    gold = [g for g, _, _ in rows]
    pi = np.array([len(items) / gold.count(g) for g in gold])
    w_f = np.array([f for _, f, _ in rows], dtype=float)
    w_h = np.array([h for _, _, h in rows], dtype=float)
    d = w_h - w_f
    d_bar = np.sum(pi * d) / np.sum(pi)
    s = math.sqrt(np.sum(pi * (d - d_bar) ** 2) / np.sum(pi))
    n_pi = np.sum(pi) ** 2 / np.sum(pi**2)
    t = (d_bar - epsilon) / (s / math.sqrt(n_pi))
    return {
        "rho_f": np.sum(pi * w_f) / np.sum(pi),
        "rho_h": np.sum(pi * w_h) / np.sum(pi),
        "t": t,
        "p": stats.t.cdf(t, n_pi - 1),
    }


@pytest.mark.parametrize("scoring", ["accuracy", "neg_rmse"])
@pytest.mark.parametrize("seed", [31, 32])
def test_ipw_matches_loop(scoring, seed):
    humans, llm = random_study(seed, n_items=80, labels=scoring == "accuracy", missing=0.2)
    res = alt_test(
        humans=humans,
        llm=llm,
        scoring=scoring,
        epsilon=0.15,
        inverse_probability_weighting=True,
        min_items_per_human=20,
    )
    for row in res.annotators:
        ref = _ipw_loop(humans, llm, row.annotator, 0.15, scoring)
        assert row.rho_f == pytest.approx(ref["rho_f"], rel=1e-12)
        assert row.rho_h == pytest.approx(ref["rho_h"], rel=1e-12)
        assert row.statistic == pytest.approx(ref["t"], rel=1e-9)
        assert row.p_value == pytest.approx(ref["p"], rel=1e-9)


def test_ipw_penalises_always_predicting_the_majority_class():
    # The paper's C.1 example: labels mostly '5'; an LLM that always says 5 ties often.
    rng = np.random.default_rng(33)
    truth = np.where(rng.random(150) < 0.85, 5, rng.integers(1, 5, 150))
    humans = {
        f"h{j}": {
            f"i{i}": int(v if rng.random() < 0.8 else rng.integers(1, 6))
            for i, v in enumerate(truth)
        }
        for j in range(4)
    }
    llm = dict.fromkeys(humans["h0"], 5)
    plain = alt_test(humans=humans, llm=llm, scoring="accuracy")
    ipw = alt_test(humans=humans, llm=llm, scoring="accuracy", inverse_probability_weighting=True)
    assert ipw.advantage_probability < plain.advantage_probability - 0.1


# ------------------------------------------------------------ C.2 single expert


@pytest.mark.parametrize("scoring", ["neg_rmse", "accuracy"])
def test_single_expert_matches_loop(scoring):
    humans, llm = random_study(
        41, n_items=70, n_humans=4, labels=scoring == "accuracy", missing=0.2
    )
    expert = humans["h0"]
    res = alt_test(humans=humans, llm=llm, scoring=scoring, expert="h0", min_items_per_human=20)
    assert [r.annotator for r in res.annotators] == ["h1", "h2", "h3"]
    for row in res.annotators:
        j = row.annotator
        d = []
        for item, value in humans[j].items():
            if item not in llm or item not in expert:
                continue
            if scoring == "accuracy":
                s_h, s_f = float(value == expert[item]), float(llm[item] == expert[item])
            else:
                s_h, s_f = -abs(value - expert[item]), -abs(llm[item] - expert[item])
            f, h = _indicators(s_f, s_h)
            d.append(h - f)
        assert row.n_items == len(d)
        ref = stats.ttest_1samp(d, 0.2, alternative="less")
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    # The expert as a mapping instead of a key: same numbers.
    others = {h: v for h, v in humans.items() if h != "h0"}
    as_map = alt_test(
        humans=others, llm=llm, scoring=scoring, expert=expert, min_items_per_human=20
    )
    assert as_map == res


def test_single_expert_gold_labels_with_zero_epsilon():
    # Appendix C.5: gold labels as the "expert" and epsilon = 0. The LLM is always right.
    gold = {f"i{i}": i % 3 for i in range(40)}
    rng = np.random.default_rng(42)
    humans = {
        f"h{j}": {k: (v if rng.random() < 0.7 else (v + 1) % 3) for k, v in gold.items()}
        for j in range(3)
    }
    res = alt_test(humans=humans, llm=gold, scoring="accuracy", expert=gold, epsilon=0.0)
    assert res.advantage_probability == 1.0
    assert res.passed


def test_single_expert_needs_one_other_annotator():
    with pytest.raises(ValueError, match="besides the expert"):
        alt_test(humans={"e": {"i": 1}}, llm={"i": 1}, expert="e")


# ------------------------------------------------------------ FAQ: ranks


def test_ranks_on_crossed_design_equal_alt_test_on_rank_data():
    rng = np.random.default_rng(51)
    truth = rng.normal(size=60)
    humans = {
        f"h{j}": {f"i{i}": float(v + rng.normal(scale=0.5)) for i, v in enumerate(truth)}
        for j in range(4)
    }
    llm = {f"i{i}": float(2 * v + 7) for i, v in enumerate(truth)}  # right order, wrong scale
    ranked_humans = {
        h: dict(zip(anns, stats.rankdata(list(anns.values())), strict=True))
        for h, anns in humans.items()
    }
    ranked_llm = dict(zip(llm, stats.rankdata(list(llm.values())), strict=True))
    by_option = alt_test(humans=humans, llm=llm, ranks=True)
    by_hand = alt_test(humans=ranked_humans, llm=ranked_llm)
    assert [r.rho_f for r in by_option.annotators] == [r.rho_f for r in by_hand.annotators]
    assert [r.p_value for r in by_option.annotators] == pytest.approx(
        [r.p_value for r in by_hand.annotators], rel=1e-12
    )
    # On raw scores the rescaled LLM loses; on ranks it is fine.
    assert by_option.advantage_probability > alt_test(humans=humans, llm=llm).advantage_probability


def test_ranks_with_missing_ratings_are_scaled_per_annotator():
    humans, llm = random_study(52, missing=0.4)
    res = alt_test(humans=humans, llm=llm, ranks=True, min_items_per_human=10)
    # By hand: mid-ranks over the kept items, each annotator's stretched to the LLM's range.
    kept = {i for i in llm if sum(i in a for a in humans.values()) >= 2}

    def scaled(mapping):
        keys = [k for k in mapping if k in kept]
        r = stats.rankdata([mapping[k] for k in keys])
        return dict(zip(keys, (r - 0.5) * len(kept) / len(keys) + 0.5, strict=True))

    by_hand = alt_test(
        humans={h: scaled(a) for h, a in humans.items()}, llm=scaled(llm), min_items_per_human=10
    )
    assert [r.p_value for r in res.annotators] == pytest.approx(
        [r.p_value for r in by_hand.annotators], rel=1e-12
    )


# ------------------------------------------------------------ FAQ: several domains


def test_domains_share_one_by_correction():
    domains = {}
    for n, seed in enumerate([61, 62, 63]):
        humans, llm = random_study(seed, n_items=70, n_humans=4, missing=0.2)
        domains[f"d{n}"] = {"humans": humans, "llm": llm}
    res = alt_test_domains(domains, epsilon=0.2, min_items_per_human=20)
    assert isinstance(res, MultiDomainAltTestResult)
    assert list(res.domains) == ["d0", "d1", "d2"]
    single = {
        name: alt_test(humans=d["humans"], llm=d["llm"], epsilon=0.2, min_items_per_human=20)
        for name, d in domains.items()
    }
    all_p = []
    for name in domains:
        mine = [r.p_value for r in res.domains[name].annotators]
        assert mine == [r.p_value for r in single[name].annotators]
        all_p.extend(mine)
    expected = iter(stats.false_discovery_control(all_p, method="by") <= 0.05)
    for name in domains:
        rows = res.domains[name].annotators
        flags = [next(expected) for _ in rows]
        assert [r.rejected for r in rows] == flags
        assert res.domains[name].winning_rate == sum(flags) / len(flags)
    assert res.n_domains == 3
    assert res.n_passed == sum(d.passed for d in res.domains.values())
    assert res.to_dict()["n_domains"] == 3


def test_one_domain_equals_alt_test():
    humans, llm = random_study(64)
    one = alt_test_domains({"only": {"humans": humans, "llm": llm}}, min_items_per_human=10)
    assert one.domains["only"] == alt_test(humans=humans, llm=llm, min_items_per_human=10)


@pytest.mark.parametrize(
    ("domains", "message"),
    [
        ({}, "empty"),
        ({"x": {"humans": {}}}, "'humans' and 'llm'"),
        ({"x": 3}, "'humans' and 'llm'"),
    ],
)
def test_domains_input_checks(domains, message):
    with pytest.raises(ValueError, match=message):
        alt_test_domains(domains)


def test_domain_error_names_the_domain():
    humans, llm = random_study(65)
    with pytest.raises(ValueError, match="domain 'small'"):
        alt_test_domains({"small": {"humans": humans, "llm": llm}}, min_items_per_human=500)


@pytest.mark.parametrize("seed", [0, 1])
def test_mid_ranks_per_group_are_scipys_rankdata_of_each_group(seed):
    # The core ranks every (resample, annotator) group in one sort; each group must get
    # exactly scipy's average ranks of that group alone.
    from scipy import stats

    from annotator.metrics.alttest._scores import _mid_ranks

    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 6, 200)
    values = rng.integers(0, 5, 200).astype(float)  # many ties
    ranks = _mid_ranks(values, groups)
    for g in range(6):
        mine = groups == g
        assert np.array_equal(ranks[mine], stats.rankdata(values[mine]))
