"""Human-LLM, inter-scale and grouped agreement, and the bootstrap intervals.

Expected values come from pingouin's intraclass_corr and from the formulas written
out here, never from annotator.metrics itself.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

from annotator.metrics import (
    bootstrap_icc_difference,
    bootstrap_nmae,
    grouped_agreement,
    human_llm_agreement,
    inter_scale_agreement,
)


def pingouin_icc(matrix, kind: str = "ICC(A,1)") -> tuple[float, tuple[float, float]]:
    """ICC of an items x raters array by pingouin (``kind`` "ICC(A,1)" or "ICC(A,k)")."""
    matrix = np.asarray(matrix, dtype=float)
    n, k = matrix.shape
    long = pd.DataFrame(
        {
            "item": np.repeat(np.arange(n), k),
            "rater": np.tile(np.arange(k), n),
            "score": matrix.ravel(),
        }
    )
    saved = pg.options.get("round.column.CI95")
    pg.options["round.column.CI95"] = None  # full precision instead of 2 decimals
    try:
        with warnings.catch_warnings():
            # pingouin 0.7 uses a pandas keyword that pandas 3.1 deprecates; not ours.
            warnings.filterwarnings("ignore", message="The inplace keyword")
            table = pg.intraclass_corr(long, targets="item", raters="rater", ratings="score")
    finally:
        pg.options["round.column.CI95"] = saved
    row = table.set_index("Type").loc[kind]
    return float(row["ICC"]), tuple(float(v) for v in row["CI95"])


def nmae_by_hand(a, b, low, high) -> float:
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / len(a) / (high - low)


@pytest.fixture
def panel():
    rng = np.random.default_rng(7)
    n = 40
    truth = rng.uniform(1, 4, n)
    humans = pd.DataFrame(
        {f"h{j}": np.clip(truth + rng.normal(0, 0.4, n), 0, 5) for j in range(5)},
        index=[f"i{i}" for i in range(n)],
    )
    llm = pd.DataFrame(
        {
            "gpt": np.clip(truth + 0.2 + rng.normal(0, 0.3, n), 0, 5),
            "llama": np.clip(truth - 0.3 + rng.normal(0, 0.6, n), 0, 5),
        },
        index=humans.index,
    )
    return humans, llm


def test_human_llm_agreement_matches_pingouin_and_the_formulas(panel):
    humans, llm = panel
    res = human_llm_agreement(humans, llm, scale_min=0, scale_max=5)
    human_mean = humans.to_numpy().mean(axis=1)
    ensemble = llm.to_numpy().mean(axis=1)
    value, ci = pingouin_icc(np.column_stack([human_mean, ensemble]))
    assert res.ensemble.icc_a1 == pytest.approx(value, abs=1e-9)
    assert res.ensemble.ci_a1 == pytest.approx(ci, abs=1e-9)
    assert res.ensemble.nmae == pytest.approx(nmae_by_hand(human_mean, ensemble, 0, 5), abs=1e-12)
    assert res.ensemble.pearson_r == pytest.approx(
        stats.pearsonr(human_mean, ensemble).statistic, abs=1e-12
    )
    assert res.ensemble.n_items == 40 and res.n_raters == 5
    for model in ("gpt", "llama"):
        row = res.model(model)
        value, _ = pingouin_icc(np.column_stack([human_mean, llm[model]]))
        assert row.icc_a1 == pytest.approx(value, abs=1e-9)
        assert row.nmae == pytest.approx(nmae_by_hand(human_mean, llm[model], 0, 5), abs=1e-12)


def test_human_llm_agreement_pairs_pandas_inputs_by_item(panel):
    humans, llm = panel
    shuffled = llm.sample(frac=1.0, random_state=1)
    a = human_llm_agreement(humans, llm, scale_min=0, scale_max=5)
    b = human_llm_agreement(humans, shuffled, scale_min=0, scale_max=5)
    assert a.ensemble.icc_a1 == pytest.approx(b.ensemble.icc_a1, abs=1e-12)
    assert a.model("llama").nmae == pytest.approx(b.model("llama").nmae, abs=1e-12)


def test_omit_drops_items_per_model_and_from_the_ensemble(panel):
    humans, llm = panel
    llm = llm.copy()
    llm.iloc[:5, 1] = np.nan  # llama misses five items
    res = human_llm_agreement(humans, llm, scale_min=0, scale_max=5, nan_policy="omit")
    assert res.ensemble.n_items == 35
    assert res.model("gpt").n_items == 40
    assert res.model("llama").n_items == 35
    human_mean = humans.to_numpy().mean(axis=1)
    value, _ = pingouin_icc(np.column_stack([human_mean[5:], llm.iloc[5:, 1]]))
    assert res.model("llama").icc_a1 == pytest.approx(value, abs=1e-9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda h, m: human_llm_agreement(h, m, scale_min=5, scale_max=0), "scale_max"),
        (
            lambda h, m: human_llm_agreement(h, m, scale_min=0, scale_max=5, confidence=2),
            "confidence",
        ),
        (
            lambda h, m: human_llm_agreement(h, m, scale_min=0, scale_max=5, nan_policy="x"),
            "nan_policy",
        ),
        (
            lambda h, m: human_llm_agreement(h, m.iloc[:10], scale_min=0, scale_max=5),
            "llm has no row",
        ),
        (
            lambda h, m: human_llm_agreement(h, m * 10, scale_min=0, scale_max=5),
            "outside the scale",
        ),
        (
            lambda h, m: human_llm_agreement(h.where(h > 1), m, scale_min=0, scale_max=5),
            "nan_policy='omit'",
        ),
    ],
)
def test_human_llm_agreement_rejects_bad_input(panel, call, message):
    humans, llm = panel
    with pytest.raises(ValueError, match=message):
        call(humans, llm)


def test_inter_scale_agreement_matches_pingouin_on_rescaled_scores():
    rng = np.random.default_rng(3)
    latent = rng.uniform(0, 1, 30)
    scores = pd.DataFrame(
        {
            "0-5": np.round(np.clip(latent + rng.normal(0, 0.05, 30), 0, 1) * 5, 1),
            "0-10": np.round(np.clip(latent + 0.05 + rng.normal(0, 0.05, 30), 0, 1) * 10, 1),
            "0-100": np.round(np.clip(latent + rng.normal(0, 0.08, 30), 0, 1) * 100),
        }
    )
    bounds = {"0-5": (0, 5), "0-10": (0, 10), "0-100": (0, 100)}
    res = inter_scale_agreement(scores, bounds=bounds)
    shares = np.column_stack([scores["0-5"] / 5, scores["0-10"] / 10, scores["0-100"] / 100])
    assert res.icc_a1 == pytest.approx(pingouin_icc(shares)[0], abs=1e-9)
    assert res.n_items == 30
    expected = {
        ("0-5", "0-10"): pingouin_icc(shares[:, [0, 1]])[0],
        ("0-5", "0-100"): pingouin_icc(shares[:, [0, 2]])[0],
        ("0-10", "0-100"): pingouin_icc(shares[:, [1, 2]])[0],
    }
    assert {(p.scale_a, p.scale_b): p.icc_a1 for p in res.pairs} == pytest.approx(
        expected, abs=1e-9
    )


def test_inter_scale_agreement_omits_pairwise():
    scores = pd.DataFrame(
        {"a": [1.0, 2, 3, 4, np.nan], "b": [2.0, 2, 4, 4, 5], "c": [1.0, 3, 3, 5, 4]}
    )
    bounds = {"a": (0, 5), "b": (0, 5), "c": (0, 5)}
    with pytest.raises(ValueError, match="nan_policy"):
        inter_scale_agreement(scores, bounds=bounds)
    res = inter_scale_agreement(scores, bounds=bounds, nan_policy="omit")
    assert res.n_items == 4
    assert {(p.scale_a, p.scale_b): p.n_items for p in res.pairs} == {
        ("a", "b"): 4,
        ("a", "c"): 4,
        ("b", "c"): 5,
    }
    bc = scores[["b", "c"]].to_numpy() / 5
    assert res.pairs[2].icc_a1 == pytest.approx(pingouin_icc(bc)[0], abs=1e-9)


@pytest.mark.parametrize(
    ("scores", "bounds", "message"),
    [
        (pd.DataFrame({"a": [1.0, 2]}), {"a": (0, 5)}, "at least 2 scale columns"),
        (pd.DataFrame({"a": [1.0, 2], "b": [1.0, 2]}), {"a": (0, 5)}, "bounds has no entry"),
        (pd.DataFrame({"a": [1.0, 2], "b": [1.0, 2]}), {"a": (0, 5), "b": (5, 5)}, "max > min"),
        (pd.DataFrame({"a": [1.0, 9], "b": [1.0, 2]}), {"a": (0, 5), "b": (0, 5)}, "outside"),
        ([[1, 2], [3, 4]], {}, "DataFrame"),
    ],
)
def test_inter_scale_agreement_rejects_bad_input(scores, bounds, message):
    with pytest.raises(ValueError, match=message):
        inter_scale_agreement(scores, bounds=bounds)


def test_grouped_agreement_matches_pingouin_per_group(panel):
    humans, llm = panel
    groups = {"h0": "female", "h1": "male", "h2": "female", "h3": "male", "h4": "female"}
    res = grouped_agreement(humans, llm, groups=groups, scale_min=0, scale_max=5)
    assert [g.group for g in res] == ["female", "male"]
    ensemble = llm.to_numpy().mean(axis=1)
    for g, raters in zip(res, (["h0", "h2", "h4"], ["h1", "h3"]), strict=True):
        assert list(g.raters) == raters
        sub = humans[raters].to_numpy()
        mean = sub.mean(axis=1)
        assert g.agreement.ensemble.icc_a1 == pytest.approx(
            pingouin_icc(np.column_stack([mean, ensemble]))[0], abs=1e-9
        )
        assert g.agreement.ensemble.nmae == pytest.approx(
            nmae_by_hand(mean, ensemble, 0, 5), abs=1e-12
        )
        assert g.within.icc_a1 == pytest.approx(pingouin_icc(sub)[0], abs=1e-9)
        assert g.within.icc_ak == pytest.approx(pingouin_icc(sub, "ICC(A,k)")[0], abs=1e-9)


def test_grouped_agreement_single_rater_group_has_no_within_icc(panel):
    humans, llm = panel
    res = grouped_agreement(
        humans, llm, groups={"h0": "a", "h1": "a", "h2": "b"}, scale_min=0, scale_max=5
    )
    lone = res[1]
    assert lone.group == "b" and lone.within is None and "1 rater" in lone.reason
    # Raters without a group (h3, h4) are left out of every group.
    assert sum(len(g.raters) for g in res) == 3


def test_grouped_agreement_needs_a_group(panel):
    humans, llm = panel
    with pytest.raises(ValueError, match="groups"):
        grouped_agreement(humans, llm, groups={}, scale_min=0, scale_max=5)


def _loop_intervals(statistic, n, n_resamples, seed, confidence):
    index = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    values = np.array([statistic(row) for row in index])
    values = values[~np.isnan(values)]
    return np.quantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])


def test_bootstrap_nmae_is_the_percentile_interval_of_resampled_items(panel):
    humans, llm = panel
    h = humans.to_numpy().mean(axis=1)
    m = llm["gpt"].to_numpy()
    res = bootstrap_nmae(h, m, scale_min=0, scale_max=5, n_resamples=500, seed=4)
    low, high = _loop_intervals(
        lambda idx: nmae_by_hand(h[idx], m[idx], 0, 5), len(h), 500, 4, 0.95
    )
    assert (res.low, res.high) == pytest.approx((low, high), abs=1e-12)
    assert res.estimate == pytest.approx(nmae_by_hand(h, m, 0, 5), abs=1e-12)
    assert res.n_resamples == 500 and res.n_items == 40 and res.n_undefined == 0
    # Against scipy's own percentile bootstrap (other draws): the same interval up to
    # Monte Carlo error.
    ref = stats.bootstrap(
        (np.abs(h - m) / 5,),
        np.mean,
        n_resamples=5000,
        method="percentile",
        random_state=np.random.default_rng(0),
    ).confidence_interval
    wide = bootstrap_nmae(h, m, scale_min=0, scale_max=5, n_resamples=5000)
    assert wide.low == pytest.approx(ref.low, abs=0.004)
    assert wide.high == pytest.approx(ref.high, abs=0.004)


def test_bootstrap_icc_difference_matches_a_loop_over_pingouin(panel):
    humans, llm = panel
    h = humans.to_numpy().mean(axis=1)
    a, b = llm["gpt"].to_numpy(), llm["llama"].to_numpy()
    res = bootstrap_icc_difference(h, a, h, b, n_resamples=60, seed=2)

    def diff(idx):
        if np.ptp(h[idx]) == 0:
            return np.nan
        return (
            pingouin_icc(np.column_stack([h[idx], a[idx]]))[0]
            - pingouin_icc(np.column_stack([h[idx], b[idx]]))[0]
        )

    low, high = _loop_intervals(diff, len(h), 60, 2, 0.95)
    assert (res.low, res.high) == pytest.approx((low, high), abs=1e-9)
    assert res.estimate == pytest.approx(diff(np.arange(len(h))), abs=1e-9)
    assert res.low < res.estimate < res.high


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"confidence": 1.0}, "confidence"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bootstrap_rejects_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_nmae([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], scale_min=0, scale_max=5, **options)
    with pytest.raises(ValueError, match=message):
        bootstrap_icc_difference([1, 2, 3], [1, 2, 3], [1, 2, 4], [2, 2, 3], **options)


def test_bootstrap_rejects_mismatched_or_missing_items():
    with pytest.raises(ValueError, match="same items"):
        bootstrap_nmae([1.0, 2.0, 3.0], [1.0, 2.0], scale_min=0, scale_max=5)
    with pytest.raises(ValueError, match="llm has 1 missing"):
        bootstrap_nmae([1.0, 2.0, 3.0], [1.0, np.nan, 2.0], scale_min=0, scale_max=5)
    with pytest.raises(ValueError, match="same items"):
        bootstrap_icc_difference([1, 2, 3], [1, 2, 3], [1, 2], [2, 2])


def test_human_llm_agreement_says_when_no_item_has_every_raters_rating():
    humans = pd.DataFrame(
        {"a": [1.0, np.nan, 3.0], "b": [np.nan, 2.0, 3.0], "c": [1.0, 2.0, np.nan]},
        index=["i1", "i2", "i3"],
    )
    llm = pd.DataFrame({"m1": [1.0, 2.0, 3.0]}, index=humans.index)
    with pytest.raises(ValueError, match=r"0 of 3 items have every one of the 3 raters"):
        human_llm_agreement(humans, llm, scale_min=0, scale_max=5, nan_policy="omit")
