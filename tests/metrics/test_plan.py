"""Study planning: Spearman-Brown, the one-facet D-study, and fresh simulated studies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotator.metrics import (
    VarianceComponents,
    d_study,
    icc,
    raters_needed,
    spearman_brown,
    variance_components,
)
from tests.metrics.references import pingouin_icc


def _study(rng, n, k, comps):
    s_i, s_r, s_e = comps
    return (
        rng.normal(0, math.sqrt(s_i), (n, 1))
        + rng.normal(0, math.sqrt(s_r), (1, k))
        + rng.normal(0, math.sqrt(s_e), (n, k))
    )


@pytest.mark.parametrize(
    ("rho", "factor", "expected"),
    [(0.5, 3, 0.75), (0.2, 4, 0.5), (0.0, 5, 0.0), (0.6, 0.5, 0.6 * 0.5 / (1 - 0.5 * 0.6))],
)
def test_spearman_brown_values(rho, factor, expected):
    assert spearman_brown(rho, factor=factor) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(4))
def test_spearman_brown_of_icc_a1_is_pingouins_icc_ak(seed):
    x = _study(np.random.default_rng(seed), 30, 4, (1.0, 0.3, 0.7))
    ref = pingouin_icc(x)
    assert spearman_brown(ref["ICC(A,1)"][0], factor=4) == pytest.approx(ref["ICC(A,k)"][0])


@pytest.mark.parametrize("seed", range(4))
def test_d_study_at_the_pilot_size_is_pingouins_icc(seed):
    x = _study(np.random.default_rng(seed), 40, 3, (1.0, 0.2, 0.8))
    comps = variance_components(x)
    assert (comps.n, comps.k) == (40, 3)
    ref = pingouin_icc(x)
    table = d_study(comps, raters=[1, 3])
    assert table.absolute == pytest.approx([ref["ICC(A,1)"][0], ref["ICC(A,k)"][0]])
    assert table.relative == pytest.approx([ref["ICC(C,1)"][0], ref["ICC(C,k)"][0]])


@pytest.mark.parametrize("rho", [0.05, 0.2, 0.35, 0.5, 0.7, 0.9])
@pytest.mark.parametrize("target", [0.7, 0.8, 0.9])
def test_raters_needed_is_the_smallest_k_reaching_the_target(rho, target):
    k = raters_needed(rho, target=target)
    assert spearman_brown(rho, factor=k) >= target - 1e-12
    if k > 1:
        assert spearman_brown(rho, factor=k - 1) < target


def test_raters_needed_exact_integer():
    # 0.5 -> 0.8: exactly 4 raters (4 * 0.5 / (1 + 3 * 0.5) = 0.8).
    assert raters_needed(0.5, target=0.8) == 4


@pytest.mark.parametrize("truth", [(1.0, 0.25, 1.5), (0.5, 0.05, 1.0)])
def test_predictions_hold_in_fresh_studies(truth):
    # 60 pilots of 80 items x 4 raters, each fitted and used to predict ICC(A,k') for
    # k' = 2, 6, 10; then fresh studies (80 items, k' raters) drawn from the true
    # components, not from any pilot. A single pilot's prediction carries the pilot's
    # sampling error (4 raters say little about rater variance), so the check is that
    # predictions are right on average and their spread covers the fresh studies.
    rng = np.random.default_rng(7)
    ks = [2, 6, 10]
    preds = np.array(
        [
            d_study(variance_components(_study(rng, 80, 4, truth)), raters=ks).absolute
            for _ in range(60)
        ]
    )
    for col, k in enumerate(ks):
        fresh = np.array([icc(_study(rng, 80, k, truth)).icc_ak for _ in range(60)])
        assert abs(preds[:, col].mean() - fresh.mean()) < 0.03, (k, preds[:, col].mean())
        low, high = np.quantile(preds[:, col], [0.05, 0.95])
        assert low < np.median(fresh) < high


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: spearman_brown(1.2, factor=2), "reliability"),
        (lambda: spearman_brown(0.5, factor=0), "factor"),
        (lambda: raters_needed(0.0, target=0.8), "reliability"),
        (lambda: raters_needed(0.5, target=1.0), "target"),
        (lambda: d_study(VarianceComponents(1, 0, 1), raters=[0]), "raters"),
        (lambda: d_study(VarianceComponents(-1, 0, 1), raters=2), "components"),
    ],
)
def test_input_checks(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_interval_widths_shrink_with_items_and_raters_and_cover():
    from annotator.metrics import icc_interval_widths

    comps = VarianceComponents(items=1.0, raters=0.2, residual=0.8)
    table = icc_interval_widths(comps, n_items=[20, 80], n_raters=[3, 8], reps=150, seed=1)
    width = {(r["n_raters"], r["n_items"]): r for r in table.rows}
    assert width[(3, 80)]["width_a1"] < width[(3, 20)]["width_a1"]
    assert width[(8, 20)]["width_ak"] < width[(3, 20)]["width_ak"]
    for row in table.rows:
        # 95 % intervals; 150 studies give a standard error of 0.018.
        assert abs(row["coverage_a1"] - 0.95) < 0.07, row
    again = icc_interval_widths(comps, n_items=[20, 80], n_raters=[3, 8], reps=150, seed=1)
    assert again == table


def test_interval_widths_from_a_pilot_match_fresh_studies():
    from annotator.metrics import icc_interval_widths

    # The median width predicted from a pilot's components against the median width of
    # fresh studies drawn from the true components (not from the pilot).
    truth = (1.0, 0.25, 1.5)
    rng = np.random.default_rng(21)
    comps = variance_components(_study(rng, 150, 5, truth))
    predicted = icc_interval_widths(comps, n_items=60, n_raters=4, reps=150, seed=2)
    fresh = np.median([np.diff(icc(_study(rng, 60, 4, truth)).ci_a1)[0] for _ in range(150)])
    assert predicted.rows[0]["width_a1"] == pytest.approx(fresh, rel=0.15)


def test_interval_widths_input_checks():
    from annotator.metrics import icc_interval_widths

    comps = VarianceComponents(items=1.0, raters=0.2, residual=0.8)
    with pytest.raises(ValueError, match="n_items"):
        icc_interval_widths(comps, n_items=[1], n_raters=3)
    with pytest.raises(ValueError, match="reps"):
        icc_interval_widths(comps, n_items=10, n_raters=3, reps=0)
