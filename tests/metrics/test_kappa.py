"""Cohen's kappa against scikit-learn, Fleiss' kappa against statsmodels, percent agreement
against a brute-force count of rater pairs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotator.metrics import cohen_kappa, fleiss_kappa, percent_agreement
from annotator.metrics.kappa import round_half_up

TOL = 1e-9


@pytest.mark.parametrize("weights", ["quadratic", "linear", "none"])
@pytest.mark.parametrize("seed", range(4))
def test_cohen_kappa_equals_scikit_learn(weights, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, 50)
    b = np.clip(a + rng.integers(-2, 3, 50), 0, 5)
    labels = list(range(6))
    ref = cohen_kappa_score(a, b, labels=labels, weights=None if weights == "none" else weights)
    assert cohen_kappa(a, b, weights=weights, categories=labels) == pytest.approx(ref, abs=TOL)


def test_default_categories_weigh_by_the_scores_distances():
    # Nobody gave 2-4: the weights still count 1 vs 5 as four points apart.
    a, b = [1, 5, 1, 5, 1], [1, 5, 5, 5, 1]
    ref = cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert cohen_kappa(a, b) == pytest.approx(ref, abs=TOL)


def test_rounded_consensus_against_an_llm():
    humans = np.array([[2, 3], [4, 4], [0, 1], [5, 4], [1, 2]])
    consensus = round_half_up(humans.mean(axis=1))
    assert consensus.tolist() == [3, 4, 1, 5, 2]  # 2.5 -> 3, 0.5 -> 1, 4.5 -> 5
    llm = [3, 4, 0, 5, 2]
    ref = cohen_kappa_score(consensus, llm, labels=list(range(6)), weights="quadratic")
    assert cohen_kappa(consensus, llm, categories=range(6)) == pytest.approx(ref, abs=TOL)


def test_cohen_kappa_degenerate_and_bad_input():
    with pytest.warns(RuntimeWarning, match="undefined"):
        assert math.isnan(cohen_kappa([3, 3, 3], [3, 3, 3]))
    # Two items.
    ref = cohen_kappa_score([1, 2], [1, 3], labels=[1, 2, 3], weights="quadratic")
    assert cohen_kappa([1, 2], [1, 3]) == pytest.approx(ref, abs=TOL)
    with pytest.raises(ValueError, match="integer"):
        cohen_kappa([1.5, 2], [1, 2])
    with pytest.raises(ValueError, match="missing"):
        cohen_kappa([1, np.nan], [1, 2])
    with pytest.raises(ValueError, match="categories"):
        cohen_kappa([1, 7], [1, 2], categories=range(6))
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_equals_statsmodels(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, (40, 1))
    x = np.clip(truth + rng.integers(-1, 2, (40, 4)), 1, 5)
    ref = sm_fleiss_kappa(aggregate_raters(x)[0], method="fleiss")
    assert fleiss_kappa(x) == pytest.approx(ref, abs=TOL)


def test_fleiss_kappa_degenerate_and_bad_input():
    with pytest.warns(RuntimeWarning, match="undefined"):
        assert math.isnan(fleiss_kappa([[2, 2], [2, 2]]))
    two = np.array([[1, 2, 2], [3, 3, 3]])
    assert fleiss_kappa(two) == pytest.approx(sm_fleiss_kappa(aggregate_raters(two)[0]), abs=TOL)
    with pytest.raises(ValueError, match="missing"):
        fleiss_kappa([[1, 2], [np.nan, 2]])
    with pytest.raises(ValueError, match="2 raters"):
        fleiss_kappa([[1], [2]])
    with pytest.raises(ValueError, match="integer"):
        fleiss_kappa([[1, 2.5], [2, 2]])


def _brute_force(x):
    shares, unanimous = [], []
    for row in x:
        v = [s for s in row if not np.isnan(s)]
        if len(v) < 2:
            continue
        pairs = list(itertools.permutations(range(len(v)), 2))
        shares.append(sum(v[i] == v[j] for i, j in pairs) / len(pairs))
        unanimous.append(len(set(v)) == 1)
    return np.mean(shares), np.mean(unanimous), len(shares)


@pytest.mark.parametrize("seed", range(4))
def test_percent_agreement_counts_agreeing_pairs(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, (30, 5)).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    res = percent_agreement(x)
    pairwise, unanimous, n = _brute_force(x)
    assert res.pairwise == pytest.approx(pairwise, abs=TOL)
    assert res.unanimous == pytest.approx(unanimous, abs=TOL)
    assert res.n_items == n


def test_percent_agreement_is_fleiss_p_bar_on_complete_data():
    x = np.array([[1, 1, 2], [3, 3, 3], [1, 2, 3], [2, 2, 1]])
    counts = aggregate_raters(x)[0]
    p_bar = np.mean((np.sum(counts * counts, axis=1) - 3) / (3 * 2))
    assert percent_agreement(x).pairwise == pytest.approx(p_bar, abs=TOL)
    assert percent_agreement([[4, 4], [4, 4]]).unanimous == 1.0
    with pytest.raises(ValueError, match="at least 2 ratings"):
        percent_agreement([[1, np.nan], [np.nan, 2]])


@pytest.mark.parametrize("seed", range(4))
def test_labels_with_no_weights_equal_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    labels = np.array(["yes", "no", "unsure"])
    a = rng.choice(labels, 40)
    b = np.where(rng.random(40) < 0.6, a, rng.choice(labels, 40))
    ref = cohen_kappa_score(a, b)
    assert cohen_kappa(a, b, weights="none") == pytest.approx(ref, abs=TOL)
    # Lists, pandas Series, and a category nobody used among the given ones.
    assert cohen_kappa(list(a), pd.Series(b), weights="none") == pytest.approx(ref, abs=TOL)
    given = ["yes", "no", "unsure", "never used"]
    ref = cohen_kappa_score(a, b, labels=given)
    assert cohen_kappa(a, b, weights="none", categories=given) == pytest.approx(ref, abs=TOL)


def test_the_issue_s_two_labels_and_a_label_outside_categories():
    assert cohen_kappa(["yes", "no"], ["no", "no"], weights="none") == pytest.approx(
        cohen_kappa_score(["yes", "no"], ["no", "no"]), abs=TOL
    )
    with pytest.raises(ValueError, match="label 'maybe', which is not among categories"):
        cohen_kappa(["yes", "maybe"], ["no", "no"], weights="none", categories=["yes", "no"])
    with pytest.raises(ValueError, match="missing"):
        cohen_kappa(["yes", None], ["no", "no"], weights="none")


@pytest.mark.parametrize("weights", ["quadratic", "linear", "none"])
@pytest.mark.parametrize("seed", range(3))
def test_default_categories_equal_scikit_learn_over_the_integer_range(weights, seed):
    # Sparse scores over a wide range: scikit-learn given every integer between the
    # lowest and highest score is the reference for the default.
    rng = np.random.default_rng(seed)
    points = rng.choice(np.arange(100, 400), 8, replace=False)
    a = rng.choice(points, 30)
    b = np.where(rng.random(30) < 0.5, a, rng.choice(points, 30))
    labels = list(range(min(a.min(), b.min()), max(a.max(), b.max()) + 1))
    ref = cohen_kappa_score(a, b, labels=labels, weights=None if weights == "none" else weights)
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(ref, abs=TOL)


def _pairwise_kappa(a, b, distance) -> float:
    """Weighted kappa from first principles: the mean disagreement of the rated pairs
    against the mean over every pairing of a's and b's scores (chance, with the
    observed margins)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    observed = np.mean(distance(a - b))
    chance = np.mean(distance(a[:, None] - b[None, :]))
    return 1.0 - observed / chance


@pytest.mark.parametrize(
    ("weights", "distance"), [("quadratic", np.square), ("linear", np.abs)], ids=["q", "l"]
)
def test_scores_spread_over_a_wide_range_take_little_memory(weights, distance):
    """17 items with scores between 990 and 4230: a table of the scores given, not of
    the 3,241 integers between (411 MiB before)."""
    import tracemalloc

    rng = np.random.default_rng(7)
    a = np.concatenate([[990, 4230], rng.integers(990, 4231, 15)])
    b = np.clip(a + rng.integers(-300, 301, 17), 990, 4230)
    tracemalloc.start()
    try:
        value = cohen_kappa(a, b, weights=weights)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak / 2**20:.1f} MiB"
    assert value == pytest.approx(_pairwise_kappa(a, b, distance), abs=TOL)
