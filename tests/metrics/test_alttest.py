from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
from scipy import stats

from annotator.metrics import AltTestResult, AnnotatorResult, alt_test
from tests.metrics.references import random_study

from .conftest import ALTTEST_SETTINGS, REPO_ROOT, published_cases


def _load_baseline():
    path = REPO_ROOT / "benchmarks" / "alttest_baseline.py"
    spec = importlib.util.spec_from_file_location("alttest_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


baseline = _load_baseline()


@pytest.mark.parametrize(("dataset", "model"), published_cases())
def test_reproduces_published_results(alttest_data, published, dataset, model):
    humans, llms = alttest_data[dataset]
    scoring, epsilon = ALTTEST_SETTINGS[dataset]
    res = alt_test(humans=humans, llm=llms[model], scoring=scoring, epsilon=epsilon)
    expected = published[f"{dataset}/{model}"]
    assert [round(res.winning_rate, 2), round(res.advantage_probability, 2)] == expected
    assert res.passed == (expected[0] >= 0.5)


@pytest.mark.parametrize("dataset", list(ALTTEST_SETTINGS))
def test_matches_loop_baseline_per_annotator(alttest_data, dataset):
    humans, llms = alttest_data[dataset]
    scoring, epsilon = ALTTEST_SETTINGS[dataset]
    for model in llms:
        res = alt_test(humans=humans, llm=llms[model], scoring=scoring, epsilon=epsilon)
        wr, ap, rows = baseline.alt_test_loop(humans, llms[model], scoring=scoring, epsilon=epsilon)
        assert res.winning_rate == wr
        assert res.advantage_probability == pytest.approx(ap, abs=1e-12)
        tested = [row for row in res.annotators if row.tested]
        assert [r.annotator for r in tested] == [row[0] for row in rows]
        for mine, ref in zip(tested, rows, strict=True):
            assert mine.n_items == ref[1]
            assert (mine.rho_f, mine.rho_h) == pytest.approx(ref[2:4], abs=1e-12)
            assert mine.statistic == pytest.approx(ref[4], rel=1e-9, nan_ok=True)
            assert mine.p_value == pytest.approx(ref[5], rel=1e-9, abs=1e-300, nan_ok=True)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("scoring", ["neg_rmse", "accuracy"])
def test_random_studies_match_loop_baseline(seed, scoring):
    humans, llm = random_study(seed, labels=scoring == "accuracy")
    kwargs = {"scoring": scoring, "epsilon": 0.1, "min_items_per_human": 20}
    res = alt_test(humans=humans, llm=llm, **kwargs)
    wr, ap, rows = baseline.alt_test_loop(humans, llm, **kwargs)
    assert (res.winning_rate, res.advantage_probability) == pytest.approx((wr, ap), abs=1e-12)
    tested = [row for row in res.annotators if row.tested]
    assert [(r.annotator, r.n_items) for r in tested] == [(row[0], row[1]) for row in rows]
    assert [r.p_value for r in tested] == pytest.approx([row[5] for row in rows], rel=1e-9)


def test_fractional_scores_match_loop_baseline():
    rng = np.random.default_rng(3)
    truth = rng.uniform(0, 10, 80)
    humans = {
        f"h{h}": {f"i{i}": round(float(v + rng.normal()), 1) for i, v in enumerate(truth)}
        for h in range(4)
    }
    # Repeat some human scores as LLM scores to create exact ties on fractional data.
    llm = {
        i: (humans["h0"][i] if n % 3 == 0 else round(float(v), 1))
        for n, (i, v) in enumerate(zip(humans["h0"], truth, strict=True))
    }
    res = alt_test(humans=humans, llm=llm, epsilon=0.1)
    wr, ap, rows = baseline.alt_test_loop(humans, llm, epsilon=0.1)
    assert (res.winning_rate, res.advantage_probability) == (wr, pytest.approx(ap, abs=1e-12))
    assert [r.rho_f for r in res.annotators] == pytest.approx([row[2] for row in rows], abs=1e-12)


def test_t_test_is_scipys():
    humans, llm = random_study(11)
    res = alt_test(humans=humans, llm=llm, epsilon=0.15, min_items_per_human=10)
    # Recompute each annotator's test from the per-item indicators with scipy.
    for row in res.annotators:
        d = []
        for item, value in humans[row.annotator].items():
            others = [humans[k][item] for k in humans if k != row.annotator and item in humans[k]]
            if item not in llm or not others:
                continue
            s_h = -math.sqrt(np.mean([(value - o) ** 2 for o in others]))
            s_f = -math.sqrt(np.mean([(llm[item] - o) ** 2 for o in others]))
            d.append(int(s_h >= s_f) - int(s_f >= s_h))
        ref = stats.ttest_1samp(d, 0.15, alternative="less")
        assert row.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-9)


# ----------------------------------------------------------------- edge behaviour


def _crossed(values_by_human, llm_values):
    humans = {h: {f"i{i}": v for i, v in enumerate(vals)} for h, vals in values_by_human.items()}
    llm = {f"i{i}": v for i, v in enumerate(llm_values)}
    return humans, llm


def test_ties_count_for_both_sides():
    # The LLM copies annotator a; against b and c it ties with a on every item.
    a = [1, 2, 3, 4, 5] * 8
    b = [2, 2, 3, 4, 4] * 8
    c = [1, 3, 3, 5, 5] * 8
    humans, llm = _crossed({"a": a, "b": b, "c": c}, a)
    res = alt_test(humans=humans, llm=llm)
    row_a = res.annotators[0]
    assert row_a.rho_f == 1.0 and row_a.rho_h == 1.0
    # d = 0 everywhere: zero variance, t = -inf and p = 0 as scipy gives, so rejected.
    assert row_a.statistic == -math.inf and row_a.p_value == 0.0 and row_a.rejected


def test_annotators_with_too_few_items_are_skipped():
    humans, llm = random_study(5, n_items=60, missing=0.0)
    humans["few"] = {i: v for i, v in humans["h0"].items() if i in llm}
    humans["few"] = dict(list(humans["few"].items())[:29])
    res = alt_test(humans=humans, llm=llm, epsilon=0.1)
    few = [row for row in res.annotators if row.annotator == "few"][0]
    assert (few.tested, few.n_items, few.rejected, few.test) == (False, 29, False, None)
    assert math.isnan(few.p_value)
    assert res.n_tested == len(humans) - 1
    rejected = sum(row.rejected for row in res.annotators)
    assert res.winning_rate == rejected / (len(humans) - 1)
    tested_rho = [row.rho_f for row in res.annotators if row.tested]
    assert res.advantage_probability == pytest.approx(np.mean(tested_rho))


def test_items_need_enough_humans_and_the_llm():
    humans, llm = random_study(6, n_items=50, missing=0.0, llm_missing=0.0)
    humans["h0"]["only_h0"] = 3  # a single human: dropped
    del llm["i0"]  # no LLM annotation: dropped
    res = alt_test(humans=humans, llm=llm, min_items_per_human=10)
    assert res.n_items == 49
    assert all(row.n_items == 49 for row in res.annotators)
    humans["h1"]["only_h0"] = 4
    llm["only_h0"] = 3  # now two humans and the LLM: kept
    assert alt_test(humans=humans, llm=llm, min_items_per_human=10).n_items == 50
    with pytest.raises(ValueError, match="no annotator"):
        alt_test(humans=humans, llm=llm, min_items_per_human=10, min_humans_per_item=6)


def test_nan_p_value_is_never_rejected():
    # mean(d) == epsilon with zero variance: t = 0/0, the p-value is NaN.
    a = [1, 2, 3] * 10
    humans, llm = _crossed({"a": a, "b": a, "c": a}, [5, 5, 5] * 10)
    res = alt_test(humans=humans, llm=llm, epsilon=1.0)
    assert all(math.isnan(row.p_value) and not row.rejected for row in res.annotators)
    assert res.winning_rate == 0.0 and not res.passed
    # One item per annotator: no variance, no p-value, no rejection.
    res1 = alt_test(humans=humans, llm=llm, epsilon=0.2, min_items_per_human=1)
    assert res1.n_tested == 3


def test_single_item_annotator_has_nan_p_value():
    humans, llm = random_study(8, n_items=40, missing=0.0)
    humans["once"] = {"i0": 3}
    res = alt_test(humans=humans, llm=llm, min_items_per_human=1)
    once = res.annotators[-1]
    assert once.tested and once.n_items == 1 and math.isnan(once.p_value) and not once.rejected


@pytest.mark.parametrize(
    ("p_values", "expected"),
    [
        # Without the NaN (m = 2) both would be rejected; the reference keeps the NaN in
        # m = 3, which raises the thresholds above both p-values.
        ([0.01, 0.02, np.nan], [False, False, False]),
        ([0.01, 0.02], [True, True]),
        ([np.nan, 0.001, 0.5], [False, True, False]),
        ([np.nan, np.nan], [False, False]),
    ],
)
def test_nan_p_values_count_in_m_but_are_never_rejected(p_values, expected):
    from annotator.metrics.alttest import _by_rejections

    assert list(_by_rejections(np.array(p_values), 0.05)) == expected
    rejected = baseline.benjamini_yekutieli(p_values, 0.05)
    assert [i in rejected for i in range(len(p_values))] == expected


def test_by_correction_uses_scipy():
    humans, llm = random_study(9, n_items=80, n_humans=6, missing=0.1)
    res = alt_test(humans=humans, llm=llm, epsilon=0.2, min_items_per_human=10)
    p = np.array([row.p_value for row in res.annotators])
    expected = stats.false_discovery_control(p, method="by") <= 0.05
    assert [row.rejected for row in res.annotators] == list(expected)


@pytest.mark.parametrize("seed", range(20))
def test_by_rejections_by_row_equal_scipys_one_family_at_a_time(seed):
    # The curves correct every epsilon's family in one call: each row must get the
    # rejections scipy gives that row alone.
    from annotator.metrics.alttest import _by_rejections

    rng = np.random.default_rng(seed)
    rows, m = int(rng.integers(1, 8)), int(rng.integers(1, 40))
    p = rng.uniform(0.0, 0.2, (rows, m)) ** 2
    # Ties, zeros, ones and NaNs, as the t-tests give them (a NaN is never rejected).
    p[:, rng.integers(0, m, m // 3)] = p[:, :1]
    p[:, rng.integers(0, m, m // 5)] = rng.choice([0.0, 1.0, np.nan])
    got = _by_rejections(p, 0.05)
    for row, rejected in zip(p, got, strict=True):
        finite = ~np.isnan(row)
        adjusted = stats.false_discovery_control(np.where(finite, row, 1.0), method="by")
        assert list(rejected) == list(finite & (adjusted <= 0.05))


def _agreeing_humans_and_an_llm_that_differs_on_three_items():
    # Issue 9's example: 20 items, 3 humans who always agree, an LLM that differs on 3.
    scores = [1, 2, 3, 4, 5] * 4
    llm = {f"i{i}": v + (1 if i < 3 else 0) for i, v in enumerate(scores)}
    humans = {h: {f"i{i}": v for i, v in enumerate(scores)} for h in ("a", "b", "c")}
    return humans, llm


def test_issue_example_t_test():
    humans, llm = _agreeing_humans_and_an_llm_that_differs_on_three_items()
    res = alt_test(humans=humans, llm=llm, epsilon=0.1, min_items_per_human=20)
    # d = W_h - W_f is 1 on the 3 items and 0 on the 17 others, for each annotator.
    ref = stats.ttest_1samp([1] * 3 + [0] * 17, 0.1, alternative="less")
    for row in res.annotators:
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-12)
        assert round(row.p_value, 2) == 0.73
    assert not res.passed


@pytest.mark.parametrize("test", ["wilcoxon", "auto"])
def test_signed_rank_options_are_refused(test):
    # They tested a pseudo-median: on the example above "auto" gave p = 0.026 and passed
    # an LLM whose d has mean 0.15 > epsilon = 0.1.
    humans, llm = _agreeing_humans_and_an_llm_that_differs_on_three_items()
    with pytest.raises(ValueError, match="pseudo-median"):
        alt_test(humans=humans, llm=llm, epsilon=0.1, min_items_per_human=20, test=test)


def _nan_on(bad_item):
    def neg_rmse(prediction, annotations):
        if prediction is bad_item:
            return float("nan")
        return -math.sqrt(np.mean([(prediction - a) ** 2 for a in annotations]))

    return neg_rmse


def test_nan_alignment_score_raises_naming_the_item():
    humans, llm = random_study(20, missing=0.0, llm_missing=0.0)
    marker = 3.0  # a float object only the LLM's item i5 holds
    llm["i5"] = marker
    with pytest.raises(ValueError, match=r"NaN.*'i5'.*nan_scores='omit'"):
        alt_test(humans=humans, llm=llm, scoring=_nan_on(marker), min_items_per_human=10)


def test_nan_alignment_score_omitted_with_a_warning():
    humans, llm = random_study(20, missing=0.0, llm_missing=0.0)
    marker = 3.0
    llm["i5"] = marker
    with pytest.warns(RuntimeWarning, match="i5"):
        res = alt_test(
            humans=humans,
            llm=llm,
            scoring=_nan_on(marker),
            min_items_per_human=10,
            nan_scores="omit",
        )
    without = {h: {i: v for i, v in anns.items() if i != "i5"} for h, anns in humans.items()}
    ref = alt_test(humans=without, llm=llm, min_items_per_human=10)
    assert res.n_items == ref.n_items == 59
    assert [r.p_value for r in res.annotators] == pytest.approx(
        [r.p_value for r in ref.annotators], rel=1e-12
    )
    assert res.winning_rate == ref.winning_rate


def _mirrored_study(seed, n_items=30):
    """12 raters in 0.01 steps: on each item the LLM mirrors rater h0 about the centre of
    the other 11 (which are symmetric about it), so S(f) = S(h0) exactly in decimals."""
    rng = np.random.default_rng(seed)
    humans = {f"h{k}": {} for k in range(12)}
    llm = {}
    for i in range(n_items):
        centre = int(rng.integers(100, 400))
        offsets = rng.integers(1, 100, size=5)
        others = [centre + o for o in offsets] + [centre - o for o in offsets] + [centre]
        rng.shuffle(others)
        delta = int(rng.integers(1, 100))
        for k, v in enumerate([centre + delta, *others]):
            humans[f"h{k}"][f"i{i}"] = int(v) / 100
        llm[f"i{i}"] = (centre - delta) / 100
    return humans, llm


def _exact_rhos(humans, llm, annotator):
    # Mean squared errors in exact decimal arithmetic (sqrt is monotone).
    from fractions import Fraction

    wins_f = wins_h = 0
    for item, value in humans[annotator].items():
        others = [Fraction(str(humans[k][item])) for k in humans if k != annotator]
        mse_h = sum((Fraction(str(value)) - o) ** 2 for o in others) / len(others)
        mse_f = sum((Fraction(str(llm[item])) - o) ** 2 for o in others) / len(others)
        wins_f += mse_f <= mse_h
        wins_h += mse_h <= mse_f
    n = len(humans[annotator])
    return wins_f / n, wins_h / n


@pytest.mark.parametrize("seed", range(3))
def test_fractional_ties_with_many_raters_are_ties(seed):
    humans, llm = _mirrored_study(seed)
    res = alt_test(humans=humans, llm=llm, epsilon=0.1, min_items_per_human=10)
    for row in res.annotators:
        assert (row.rho_f, row.rho_h) == pytest.approx(_exact_rhos(humans, llm, row.annotator))
    assert (res.annotators[0].rho_f, res.annotators[0].rho_h) == (1.0, 1.0)


def _indicator_diffs(humans, llm, annotator):
    d = []
    for item, value in humans[annotator].items():
        others = [humans[k][item] for k in humans if k != annotator and item in humans[k]]
        if item not in llm or not others:
            continue
        s_h = -math.sqrt(np.mean([(value - o) ** 2 for o in others]))
        s_f = -math.sqrt(np.mean([(llm[item] - o) ** 2 for o in others]))
        d.append(int(s_h >= s_f) - int(s_f >= s_h))
    return d


def test_callable_scoring_matches_builtin():
    humans, llm = random_study(12)

    def neg_rmse(prediction, annotations):
        return -math.sqrt(np.mean([(prediction - a) ** 2 for a in annotations]))

    custom = alt_test(humans=humans, llm=llm, scoring=neg_rmse, min_items_per_human=10)
    builtin = alt_test(humans=humans, llm=llm, min_items_per_human=10)
    assert custom.scoring == "neg_rmse"
    assert [r.p_value for r in custom.annotators] == [r.p_value for r in builtin.annotators]


def test_callable_scoring_sees_original_labels():
    humans, llm = random_study(13, labels=True)
    seen = set()

    def accuracy(prediction, annotations):
        seen.add(prediction)
        return float(np.mean([prediction == a for a in annotations]))

    custom = alt_test(humans=humans, llm=llm, scoring=accuracy, min_items_per_human=10)
    builtin = alt_test(humans=humans, llm=llm, scoring="accuracy", min_items_per_human=10)
    assert seen <= set("abcde")
    assert custom.winning_rate == builtin.winning_rate
    assert custom.advantage_probability == builtin.advantage_probability


def test_missing_annotations_are_ignored():
    humans, llm = random_study(14, missing=0.0)
    with_none = {h: dict(v) for h, v in humans.items()}
    with_none["h0"]["i1"] = None
    with_none["h1"]["i2"] = float("nan")
    without = {h: dict(v) for h, v in humans.items()}
    del without["h0"]["i1"], without["h1"]["i2"]
    a = alt_test(humans=with_none, llm=llm, min_items_per_human=10)
    b = alt_test(humans=without, llm=llm, min_items_per_human=10)
    assert a == b


def test_dataframe_input():
    pd = pytest.importorskip("pandas")
    humans, llm = random_study(15, missing=0.2)
    frame = pd.DataFrame(humans)
    res = alt_test(humans=frame, llm=pd.Series(llm), min_items_per_human=10)
    ref = alt_test(humans=humans, llm=llm, min_items_per_human=10)
    assert res.winning_rate == ref.winning_rate
    assert res.advantage_probability == pytest.approx(ref.advantage_probability)


def test_result_types_and_json():
    import json

    humans, llm = random_study(16)
    res = alt_test(humans=humans, llm=llm, min_items_per_human=10)
    assert isinstance(res, AltTestResult)
    assert all(isinstance(row, AnnotatorResult) for row in res.annotators)
    payload = json.loads(json.dumps(res.to_dict()))
    assert payload["winning_rate"] == res.winning_rate
    assert len(payload["annotators"]) == len(humans)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scoring": "mae"}, "scoring"),
        ({"epsilon": -0.1}, "epsilon"),
        ({"epsilon": "x"}, "epsilon"),
        ({"q": 0}, "q"),
        ({"q": 1.0}, "q"),
        ({"min_humans_per_item": 1}, "min_humans_per_item"),
        ({"min_items_per_human": 0}, "min_items_per_human"),
        ({"min_items_per_human": 2.5}, "min_items_per_human"),
        ({"test": "ztest"}, "test"),
        ({"min_items_per_human": 1000}, "no annotator"),
        ({"humans": {"a": {"i0": 1}}}, "at least 2 annotator"),
        ({"humans": [1, 2]}, "humans must be a mapping"),
        ({"llm": {"i0": "high"}}, "numbers"),
        ({"annotator_weights": {"h0": 1.0}}, "lacks"),
        ({"expert": "nobody"}, "expert"),
        ({"inverse_probability_weighting": True, "test": "wilcoxon"}, "wilcoxon"),
        ({"nan_scores": "ignore"}, "nan_scores"),
        ({"ranks": True, "scoring": "accuracy"}, "ranks"),
    ],
)
def test_input_checks(kwargs, message):
    humans, llm = random_study(17)
    args = {"humans": humans, "llm": llm, "min_items_per_human": 10} | kwargs
    with pytest.raises(ValueError, match=message):
        alt_test(**args)


def test_keyword_only():
    with pytest.raises(TypeError):
        alt_test({}, {})  # type: ignore[misc]


def test_too_few_items_error_names_the_option_and_the_papers_advice():
    humans, llm = random_study(18, n_items=25, missing=0.0, llm_missing=0.0)
    with pytest.raises(ValueError, match="no annotator") as info:
        alt_test(humans=humans, llm=llm)
    message = str(info.value)
    assert "Lower min_items_per_human" in message
    assert "the most any annotator has is 25" in message
    # Calderon et al. (2025), section 5.1 and the FAQ of Appendix A.
    assert "at least 30 items per annotator" in message and "50-100" in message
    assert "section 5.1" in message


def test_too_few_items_error_in_a_domain_keeps_its_type():
    from annotator.metrics.alttest import TooFewItemsError, alt_test_domains

    humans, llm = random_study(19, n_items=25, missing=0.0, llm_missing=0.0)
    with pytest.raises(TooFewItemsError, match="domain 'small'") as info:
        alt_test_domains({"small": {"humans": humans, "llm": llm}})
    assert info.value.domain == "small" and info.value.most_items == 25
