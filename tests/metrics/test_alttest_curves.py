"""Alt-test curves: each point is the mean of alt_test on the drawn subsets."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

from annotator.metrics import TooFewItemsError, alt_test, alt_test_curve, alt_test_domains


def _data(n_items=80, n_humans=5, llm_noise=0.5, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 5, n_items)
    humans = {
        f"h{j}": {f"i{i}": float(truth[i] + rng.normal(0, 0.8)) for i in range(n_items)}
        for j in range(n_humans)
    }
    llm = {f"i{i}": float(truth[i] + rng.normal(0, llm_noise)) for i in range(n_items)}
    return humans, llm


def test_items_curve_is_the_mean_of_alt_tests_on_the_drawn_subsets():
    humans, llm = _data()
    curve = alt_test_curve(
        humans=humans,
        llm=llm,
        against="items",
        values=[40, 80],
        n_resamples=6,
        n_annotators=3,
        random_state=4,
        min_items_per_human=30,
    )
    # Redo the draws with the same generator, calling alt_test directly.
    rng = np.random.default_rng(4)
    names, items = list(humans), list(llm)
    for point in curve.points:
        wr, ap = [], []
        for _ in range(6):
            chosen = [names[j] for j in sorted(rng.choice(5, 3, replace=False))]
            picked = {items[j] for j in rng.choice(80, int(point.x), replace=False)}
            kept = set(picked)
            sub = {h: {i: v for i, v in humans[h].items() if i in kept} for h in chosen}
            res = alt_test(humans=sub, llm={i: llm[i] for i in picked}, min_items_per_human=30)
            wr.append(res.winning_rate)
            ap.append(res.advantage_probability)
        assert point.winning_rate == pytest.approx(np.mean(wr), abs=1e-12)
        assert point.advantage_probability == pytest.approx(np.mean(ap), abs=1e-12)
        assert point.advantage_low == pytest.approx(np.quantile(ap, 0.05), abs=1e-12)
        assert point.n_undefined == 0
    # Same seed, same curve.
    again = alt_test_curve(
        humans=humans,
        llm=llm,
        against="items",
        values=[40, 80],
        n_resamples=6,
        n_annotators=3,
        random_state=4,
        min_items_per_human=30,
    )
    assert again == curve


def test_epsilon_curve_is_monotone_and_matches_the_full_test():
    humans, llm = _data(llm_noise=0.9)
    curve = alt_test_curve(humans=humans, llm=llm, against="epsilon", n_resamples=3, n_annotators=5)
    assert [p.x for p in curve.points] == [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    rates = [p.winning_rate for p in curve.points]
    assert rates == sorted(rates)
    # All annotators and all items: each point is the plain alt-test, with no spread.
    for p in curve.points:
        full = alt_test(humans=humans, llm=llm, epsilon=p.x)
        assert p.winning_rate == pytest.approx(full.winning_rate, abs=1e-12)
        assert p.winning_rate_low == pytest.approx(full.winning_rate, abs=1e-12)
        assert p.winning_rate_high == pytest.approx(full.winning_rate, abs=1e-12)


def test_too_few_items_is_undefined_not_an_error():
    humans, llm = _data(n_items=40)
    curve = alt_test_curve(humans=humans, llm=llm, values=[10, 40], n_resamples=3)
    small, full = curve.points
    assert small.n_undefined == 3 and math.isnan(small.winning_rate)
    assert full.n_undefined == 0
    with pytest.raises(ValueError, match="values"):
        alt_test_curve(humans=humans, llm=llm, values=[41])
    with pytest.raises(ValueError, match="against"):
        alt_test_curve(humans=humans, llm=llm, against="raters")
    with pytest.raises(ValueError, match="n_items"):
        alt_test_curve(humans=humans, llm=llm, against="epsilon", n_items=50)


def test_pass_threshold():
    humans, llm = _data(llm_noise=0.3)
    res = alt_test(humans=humans, llm=llm, pass_threshold=1.0)
    assert res.passed == (res.winning_rate >= 1.0)
    assert res.to_dict()["pass_threshold"] == 1.0
    loose = alt_test(humans=humans, llm=llm, pass_threshold=0.01)
    assert loose.passed == (loose.winning_rate >= 0.01)
    both = alt_test_domains(
        {"a": {"humans": humans, "llm": llm}, "b": {"humans": humans, "llm": llm}},
        pass_threshold=0.9,
    )
    assert all(r.pass_threshold == 0.9 for r in both.domains.values())
    with pytest.raises(ValueError, match="pass_threshold"):
        alt_test(humans=humans, llm=llm, pass_threshold=0)


@pytest.mark.parametrize("test", ["ttest", "betting"])
def test_epsilon_curve_on_subsets_equals_alt_test_on_the_same_draws(test):
    # The epsilon curve scores each subset once and reruns only the tests; redo the
    # draws by hand and call alt_test at every epsilon.
    humans, llm = _data(n_items=60)
    values = [0.0, 0.1, 0.2]
    curve = alt_test_curve(
        humans=humans,
        llm=llm,
        against="epsilon",
        values=values,
        n_resamples=4,
        n_annotators=3,
        n_items=40,
        random_state=2,
        test=test,
    )
    rng = np.random.default_rng(2)
    names, items = list(humans), list(llm)
    expected = {v: [] for v in values}
    advantage = {v: [] for v in values}
    passed = {v: [] for v in values}
    for _ in range(4):
        chosen = [names[j] for j in sorted(rng.choice(5, 3, replace=False))]
        picked = [items[j] for j in sorted(rng.choice(60, 40, replace=False))]
        sub = {h: {i: humans[h][i] for i in picked} for h in chosen}
        for v in values:
            res = alt_test(humans=sub, llm={i: llm[i] for i in picked}, epsilon=v, test=test)
            expected[v].append(res.winning_rate)
            advantage[v].append(res.advantage_probability)
            passed[v].append(res.passed)
    for p in curve.points:
        assert p.winning_rate == pytest.approx(np.mean(expected[p.x]), abs=1e-12)
        assert p.advantage_probability == pytest.approx(np.mean(advantage[p.x]), abs=1e-12)
        assert p.pass_share == pytest.approx(np.mean(passed[p.x]), abs=1e-12)
        assert p.winning_rate_low == pytest.approx(np.quantile(expected[p.x], 0.05), abs=1e-12)
    with pytest.raises(ValueError, match="unknown alt_test option"):
        alt_test_curve(humans=humans, llm=llm, against="epsilon", colour="red")


@pytest.mark.parametrize("scoring", ["neg_rmse", "accuracy"])
def test_alt_tests_by_epsilon_equal_alt_test_at_each_epsilon(scoring):
    # The report's alt-test table scores the items once for all epsilons; each result
    # must be the one alt_test gives alone, field for field.
    from annotator.metrics.alttest._curves import _alt_tests_by_epsilon

    humans, llm = _data(n_items=120, seed=4)
    if scoring == "accuracy":
        humans = {h: {i: round(v) for i, v in d.items()} for h, d in humans.items()}
        llm = {i: round(v) for i, v in llm.items()}
    epsilons = [0.0, 0.05, 0.1, 0.2, 0.3]
    options = {"scoring": scoring, "q": 0.05}
    tests = _alt_tests_by_epsilon(humans, llm, epsilons, options)
    for epsilon, test in zip(epsilons, tests, strict=True):
        assert test() == alt_test(humans=humans, llm=llm, epsilon=epsilon, **options)


def test_alt_tests_by_epsilon_raise_what_alt_test_raises():
    from annotator.metrics.alttest._curves import _alt_tests_by_epsilon

    humans, llm = _data(n_items=20)  # under the 30 items an annotator needs
    tests = _alt_tests_by_epsilon(humans, llm, [0.1, 0.2], {})
    with pytest.raises(ValueError) as expected:
        alt_test(humans=humans, llm=llm, epsilon=0.1)
    for test in tests:
        with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
            test()
    bad = _alt_tests_by_epsilon(humans, {}, [0.1], {})[0]
    with pytest.raises(ValueError) as expected:
        alt_test(humans=humans, llm={}, epsilon=0.1)
    with pytest.raises(ValueError, match=re.escape(str(expected.value))):
        bad()


def _sparse_data(seed=3, labels=False):
    """40 items, 7 annotators who skip items (missing, None or NaN), and an LLM that
    skips 3: annotators end up with different item counts, so some resamples test only
    some annotators and some test none."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 4, 40)

    def rate(x):
        return int(round(x)) if labels else float(x)

    humans = {}
    for j in range(7):
        anns = {}
        for i in rng.permutation(40):  # each annotator's own order
            u = rng.random()
            if u < 0.1 + 0.05 * j:
                continue
            anns[f"i{i}"] = (None, math.nan)[j % 2] if u > 0.95 else rate(truth[i] + rng.normal())
        humans[f"h{j}"] = anns
    llm = {f"i{i}": rate(truth[i] + rng.normal(0, 0.7)) for i in range(40)}
    for i in (3, 17, 28):
        llm[f"i{i}"] = None
    return humans, llm


def _curve_by_alt_test(
    humans,
    llm,
    *,
    against,
    values,
    n_resamples,
    n_annotators,
    n_items=None,
    epsilon=0.2,
    interval=0.9,
    random_state=0,
    **options,
):
    """The curve's points the plain way: the same draws, one alt_test per resample and
    epsilon, and numpy's mean and quantiles over each point's resamples."""
    rng = np.random.default_rng(random_state)
    names = list(humans)
    items = [i for i, v in llm.items() if v is not None]
    sizes = values if against == "items" else [n_items]
    epsilons = [epsilon] if against == "items" else values
    runs = []  # per size, per resample: per epsilon, an AltTestResult or None
    for size in sizes:
        runs.append([])
        for _ in range(n_resamples):
            chosen = [names[j] for j in sorted(rng.choice(len(names), n_annotators, replace=False))]
            picked = [items[j] for j in sorted(rng.choice(len(items), size, replace=False))]
            kept = set(picked)
            sub = {h: {i: v for i, v in humans[h].items() if i in kept} for h in chosen}
            sub_llm = {i: llm[i] for i in picked}
            per_epsilon = []
            for e in epsilons:
                try:
                    per_epsilon.append(alt_test(humans=sub, llm=sub_llm, epsilon=e, **options))
                except TooFewItemsError:
                    per_epsilon.append(None)
            runs[-1].append(per_epsilon)
    if against == "items":
        by_point = [[r[0] for r in size_runs] for size_runs in runs]
    else:
        by_point = [[r[j] for r in runs[0]] for j in range(len(epsilons))]
    tail = (1.0 - interval) / 2.0
    points = []
    for x, results in zip(values, by_point, strict=True):
        done = [r for r in results if r is not None]
        if not done:
            points.append((x, *[math.nan] * 7, n_resamples, n_resamples))
            continue
        wr = np.array([r.winning_rate for r in done])
        ap = np.array([r.advantage_probability for r in done])
        points.append(
            (
                x,
                wr.mean(),
                np.quantile(wr, tail),
                np.quantile(wr, 1.0 - tail),
                ap.mean(),
                np.quantile(ap, tail),
                np.quantile(ap, 1.0 - tail),
                np.mean([r.passed for r in done]),
                n_resamples,
                n_resamples - len(done),
            )
        )
    return points


@pytest.mark.parametrize(
    ("against", "values", "labels", "options"),
    [
        ("items", [8, 20, 30, 37], False, {"min_items_per_human": 12}),
        ("epsilon", [0.0, 0.1, 0.15, 0.3], False, {"min_items_per_human": 20}),
        (
            "epsilon",
            [0.05, 0.2],
            False,
            {"inverse_probability_weighting": True, "min_items_per_human": 20},
        ),
        ("epsilon", [0.0, 0.1, 0.2], True, {"scoring": "accuracy", "min_items_per_human": 20}),
        (
            "items",
            [15, 37],
            True,
            {"scoring": "accuracy", "min_humans_per_item": 3, "min_items_per_human": 5},
        ),
    ],
)
def test_batched_curve_equals_alt_test_on_each_resample_bit_for_bit(
    monkeypatch, against, values, labels, options
):
    # The curve computes all resamples at once (_core._batched); each point must
    # be exactly, not approximately, what alt_test on each drawn subset gives.
    from annotator.metrics.alttest import _core

    def unbatched(*args, **kwargs):
        raise AssertionError("the batched path declined these options")

    monkeypatch.setattr(_core, "_per_resample", unbatched)
    humans, llm = _sparse_data(labels=labels)
    draws = {"against": against, "values": values, "n_resamples": 9, "n_annotators": 5}
    if against == "epsilon":
        draws["n_items"] = 30
    curve = alt_test_curve(humans=humans, llm=llm, random_state=5, interval=0.8, **draws, **options)
    expected = _curve_by_alt_test(humans, llm, random_state=5, interval=0.8, **draws, **options)
    got = [tuple(p.__dict__.values()) for p in curve.points]
    assert np.array_equal(
        np.array(got, dtype=float), np.array(expected, dtype=float), equal_nan=True
    )
    # The data reaches every case: untested annotators, undefined and defined points.
    undefined = [p.n_undefined for p in curve.points]
    assert any(n < 9 for n in undefined)


def _neg_mae(prediction, annotations, weights=None):
    """A callable scoring: negative mean absolute error, weighted when asked."""
    return -float(np.average(np.abs(np.asarray(annotations) - prediction), weights=weights))


def _nan_below_one(prediction, annotations):
    """A callable scoring that cannot score a prediction below 1 (NaN)."""
    return (
        math.nan
        if prediction < 1
        else -float(np.mean(np.abs(np.asarray(annotations) - prediction)))
    )


_EXPERT = {f"i{i}": float(i % 4) for i in range(40) if i % 9}


@pytest.mark.parametrize(
    ("against", "n_annotators", "labels", "options"),
    [
        ("epsilon", 5, False, {"test": "betting", "min_items_per_human": 5}),
        ("items", 4, False, {"ranks": True, "min_items_per_human": 10}),
        ("epsilon", 5, False, {"scoring": _neg_mae, "min_items_per_human": 20}),
        ("epsilon", 4, False, {"expert": _EXPERT, "min_items_per_human": 15}),
        ("epsilon", 4, True, {"expert": _EXPERT, "scoring": "accuracy", "ranks": False}),
        ("epsilon", 7, False, {"annotator_weights": {f"h{j}": 1.0 + j / 3 for j in range(7)}}),
        (
            "epsilon",
            7,
            False,
            {
                "annotator_weights": {f"h{j}": 0.5 + j for j in range(7)},
                "scoring": _neg_mae,
                "min_items_per_human": 20,
            },
        ),
        (
            "epsilon",
            5,
            True,
            {
                "scoring": "accuracy",
                "inverse_probability_weighting": True,
                "min_items_per_human": 20,
            },
        ),
        ("epsilon", 5, False, {"scoring": _nan_below_one, "nan_scores": "omit"}),
    ],
)
def test_every_option_is_batched_bit_for_bit(monkeypatch, against, n_annotators, labels, options):
    # The options the curves used to run one resample at a time: the core now batches
    # them, and each point is still exactly what alt_test on each drawn subset gives.
    from annotator.metrics.alttest import _core

    def unbatched(*args, **kwargs):
        raise AssertionError("the batched path declined these options")

    monkeypatch.setattr(_core, "_per_resample", unbatched)
    humans, llm = _sparse_data(labels=labels)
    values = [15, 37] if against == "items" else [0.0, 0.1, 0.25]
    draws = {"against": against, "values": values, "n_resamples": 7}
    draws["n_annotators"] = n_annotators
    if against == "epsilon":
        draws["n_items"] = 30
    options = {"min_items_per_human": 12, **options}
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        curve = alt_test_curve(humans=humans, llm=llm, random_state=2, **draws, **options)
        expected = _curve_by_alt_test(humans, llm, random_state=2, **draws, **options)
    got = [tuple(p.__dict__.values()) for p in curve.points]
    assert np.array_equal(
        np.array(got, dtype=float), np.array(expected, dtype=float), equal_nan=True
    )
    assert any(p.n_undefined < 7 for p in curve.points)


def _mixed_labels(humans, llm):
    """Label 0 as a string: labels that do not sort, so codes follow their appearance."""

    def relabel(v):
        return "zero" if v == 0 else v

    return (
        {h: {i: relabel(v) for i, v in anns.items()} for h, anns in humans.items()},
        {i: relabel(v) for i, v in llm.items()},
    )


@pytest.mark.parametrize(
    ("labels", "options"),
    [
        (False, {"expert": "h1", "min_items_per_human": 15}),
        (
            True,
            {
                "scoring": "accuracy",
                "inverse_probability_weighting": True,
                "min_items_per_human": 15,
            },
        ),
    ],
)
def test_what_a_subset_changes_goes_to_the_one_fallback(monkeypatch, labels, options):
    # An expert given as a key of humans (a resample may draw it or not) and labels that
    # do not sort under IPW (the majority vote's ties follow the order labels appear in):
    # the core runs each resample's subset as a batch of one; the points still equal
    # alt_test's on each drawn subset.
    from annotator.metrics.alttest import _core

    calls = []
    fallback = _core._per_resample

    def counted(*args, **kwargs):
        calls.append(1)
        return fallback(*args, **kwargs)

    monkeypatch.setattr(_core, "_per_resample", counted)
    humans, llm = _sparse_data(labels=labels)
    if labels:
        humans, llm = _mixed_labels(humans, llm)
    draws = {"against": "epsilon", "values": [0.1, 0.3], "n_resamples": 5, "n_annotators": 7}
    curve = alt_test_curve(humans=humans, llm=llm, n_items=30, **draws, **options)
    expected = _curve_by_alt_test(humans, llm, n_items=30, **draws, **options)
    got = [tuple(p.__dict__.values()) for p in curve.points]
    assert np.array_equal(
        np.array(got, dtype=float), np.array(expected, dtype=float), equal_nan=True
    )
    assert calls == [1]
