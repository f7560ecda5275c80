"""Judge-assisted estimates (PPI++) against ``ppi_py`` and scipy's t intervals.

``interval="normal"`` is checked against ``ppi_py`` (ppi-python 0.2: normal quantile,
standard deviations with divisor n, ``lam`` from ``_calc_lam_glm`` clipped to [0, 1]);
``interval="small-sample"`` with a given ``lam`` against scipy's Welch interval, and
its coverage by a small run of ``validation/ppi_coverage.py`` (the full tables are in
docs/metrics.md).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from functools import partial

import numpy as np
import ppi_py
import pytest
from scipy import stats

from annotator.metrics import ppi_mean, ppi_share_above
from tests.metrics.conftest import REPO_ROOT


def _dataset(seed: int, n: int, big_n: int, kind: str):
    rng = np.random.default_rng(seed)
    quality = 5 * (rng.beta(0.7, 3, n + big_n) if kind == "skewed" else rng.random(n + big_n))
    human = np.clip(quality + rng.normal(0, 0.6, n + big_n), 0, 5)
    noise = 0.4 if kind == "good" else 1.5
    judge = np.clip(np.round(2 * (quality + 0.3 + rng.normal(0, noise, n + big_n))) / 2, 0, 5)
    return human[:n], judge[:n], judge[n:]


DATASETS = [
    (1, 30, 1000, "good"),
    (2, 100, 2000, "good"),
    (3, 300, 1500, "poor"),
    (4, 50, 40, "skewed"),
    (5, 12, 600, "poor"),
    (6, 200, 1000, "skewed"),
]


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda d: f"seed{d[0]}-n{d[1]}-{d[3]}")
@pytest.mark.parametrize("lam", [None, 0.0, 0.35, 1.0])
@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_normal_interval_matches_ppi_py(dataset, lam, confidence):
    human, rated, unrated = _dataset(*dataset)
    ours = ppi_mean(human, rated, unrated, confidence=confidence, lam=lam, interval="normal")
    estimate = ppi_py.ppi_mean_pointestimate(human, rated, unrated, lam=lam)
    low, high = ppi_py.ppi_mean_ci(human, rated, unrated, alpha=1 - confidence, lam=lam)
    assert ours.estimate == pytest.approx(float(np.squeeze(estimate)), abs=1e-10)
    assert ours.interval == pytest.approx((float(low[0]), float(high[0])), abs=1e-10)
    # The lam ppi_py used, recovered from its estimate: mean(Y) + lam (mean f~ - mean f).
    recovered = (float(np.squeeze(estimate)) - human.mean()) / (unrated.mean() - rated.mean())
    assert ours.lam == pytest.approx(recovered if lam is None else lam, abs=1e-8)
    assert 0.0 <= ours.lam <= 1.0
    c_low, c_high = ppi_py.classical_mean_ci(human, alpha=1 - confidence)
    assert ours.human_interval == pytest.approx((c_low, c_high), abs=1e-10)
    assert ours.human_estimate == pytest.approx(human.mean(), abs=1e-12)
    # n times the ratio of the variances, from ppi_py's own interval widths.
    widths = (c_high - c_low) / (float(high[0]) - float(low[0]))
    assert ours.effective_n == pytest.approx(human.size * widths**2, rel=1e-9)


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda d: f"seed{d[0]}-n{d[1]}-{d[3]}")
@pytest.mark.parametrize("lam", [0.0, 0.35, 0.8, 1.0])
def test_small_sample_interval_with_given_lam_is_welchs(dataset, lam):
    human, rated, unrated = _dataset(*dataset)
    ours = ppi_mean(human, rated, unrated, lam=lam, confidence=0.9)
    # theta = mean(Y - lam f) - mean(-lam f~): Welch's two-sample interval.
    if lam == 0:
        welch = stats.ttest_1samp(human, 0.0).confidence_interval(0.9)
    else:
        welch = stats.ttest_ind(human - lam * rated, -lam * unrated, equal_var=False)
        welch = welch.confidence_interval(0.9)
    assert ours.interval == pytest.approx((welch.low, welch.high), abs=1e-10)
    human_t = stats.ttest_1samp(human, 0.0).confidence_interval(0.9)
    assert ours.human_interval == pytest.approx((human_t.low, human_t.high), abs=1e-10)


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda d: f"seed{d[0]}-n{d[1]}-{d[3]}")
def test_small_sample_tunes_lam_on_the_other_half(dataset):
    human, rated, unrated = _dataset(*dataset)
    ours = ppi_mean(human, rated, unrated)
    even, odd = np.arange(human.size) % 2 == 0, np.arange(human.size) % 2 == 1
    # ppi_py's tuned lam on one half (recovered from its estimate) corrects the other.
    lams = {}
    for name, half in (("even", even), ("odd", odd)):
        estimate = float(
            np.squeeze(ppi_py.ppi_mean_pointestimate(human[half], rated[half], unrated))
        )
        lams[name] = (estimate - human[half].mean()) / (unrated.mean() - rated[half].mean())
    per_item = np.where(even, lams["odd"], lams["even"])
    expected = (human - per_item * rated).mean() + per_item.mean() * unrated.mean()
    assert ours.estimate == pytest.approx(expected, abs=1e-9)
    assert ours.lam == pytest.approx(per_item.mean(), abs=1e-9)


def test_share_above_is_the_mean_of_indicators():
    human, rated, unrated = _dataset(7, 80, 900, "good")
    ours = ppi_share_above(human, rated, unrated, threshold=2.5, interval="normal")
    above = [(x > 2.5).astype(float) for x in (human, rated, unrated)]
    low, high = ppi_py.ppi_mean_ci(*above, alpha=0.05)
    assert ours.interval == pytest.approx((low[0], high[0]), abs=1e-10)
    assert ours.human_estimate == pytest.approx(np.mean(human > 2.5))


def test_a_good_judge_narrows_the_interval_a_constant_one_does_not():
    human, rated, unrated = _dataset(8, 60, 2000, "good")
    good = ppi_mean(human, rated, unrated)
    assert good.width < 0.8 * good.human_width
    assert good.effective_n > 1.5 * human.size
    constant = ppi_mean(human, np.full(60, 3.0), np.full(2000, 3.0))
    assert constant.lam == 0.0
    assert constant.interval == pytest.approx(constant.human_interval)
    assert constant.effective_n == pytest.approx(60)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"human": [1, 2, 3]}, "human and judge_on_rated must score the same items: 3 != 4"),
        ({"human": [1, 2, math.nan, 4]}, "human has 1 missing"),
        ({"judge_on_rated": [1, 2, "x", 4]}, "judge_on_rated must hold numbers"),
        ({"judge_on_unrated": [1]}, "judge_on_unrated needs at least 2"),
        ({"human": [1], "judge_on_rated": [1]}, "human needs at least 2"),
        ({"human": [[1, 2], [3, 4]]}, "human must be 1-D"),
        ({"confidence": 1.0}, "confidence must be strictly between 0 and 1"),
        ({"confidence": 0}, "confidence must be strictly between 0 and 1"),
        ({"lam": 1.5}, r"lam must be in \[0, 1\], got 1.5"),
        ({"lam": -0.1}, r"lam must be in \[0, 1\]"),
        ({"lam": "half"}, "lam must be a number"),
        ({"interval": "z"}, "interval must be 'small-sample' or 'normal'"),
        ({"judge_on_unrated": [1, math.inf]}, "judge_on_unrated contains infinite"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, message):
    args = {
        "human": [1.0, 2.5, 3.0, 4.5],
        "judge_on_rated": [1.0, 2.0, 3.5, 4.0],
        "judge_on_unrated": [2.0, 3.0, 4.0],
    }
    args.update(kwargs)
    options = {k: args.pop(k) for k in ("confidence", "lam", "interval") if k in args}
    with pytest.raises(ValueError, match=message):
        ppi_mean(args["human"], args["judge_on_rated"], args["judge_on_unrated"], **options)


@pytest.mark.parametrize("threshold", [math.nan, "high", None])
def test_share_above_needs_a_finite_threshold(threshold):
    with pytest.raises(ValueError, match="threshold must be"):
        ppi_share_above([1, 2], [1, 2], [1, 2], threshold=threshold)


def test_to_dict_is_json_ready():
    out = ppi_mean([1, 2, 3, 5], [1, 2, 4, 4], [2, 3, 3]).to_dict()
    assert isinstance(out["interval"], list) and out["interval_kind"] == "small-sample"
    assert all(isinstance(v, float) for v in out["interval"])


def _simulation():
    path = REPO_ROOT / "validation" / "ppi_coverage.py"
    spec = importlib.util.spec_from_file_location("ppi_coverage", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("population", ["symmetric", "skewed"])
def test_coverage_at_30_human_ratings(population):
    """200 repetitions of the validation at n = 30, the good judge: coverage of the
    95 % small-sample interval not below what a true 0.95 gives with probability
    0.999 (binomial), and the interval narrower than the human-only one."""
    sim = _simulation()
    reps = 200
    # 200,000 items: the truth within 0.005, a 60th of the interval's half-width.
    truth = sim.truths(11, size=200_000)[population][0][1]
    cell = sim.simulate(
        np.random.default_rng(12),
        population=population,
        judge="good",
        n=30,
        unrated=1000,
        reps=reps,
        truth=truth,
        threshold=None,
    )
    assert cell.coverage_t >= stats.binom.ppf(0.001, reps, 0.95) / reps
    assert cell.width_ratio < 0.8
    assert cell.effective_n > 45


def test_share_coverage_with_a_judge_that_rarely_disagrees():
    """Issue 39: a sharp judge disagrees about the threshold on 0-4 of 30 items, where
    the share's variance estimate collapsed (coverage 0.91-0.93 for a share near 0.43).
    300 repetitions: coverage not below the 0.001 binomial quantile of a true 0.95."""
    sim = _simulation()
    reps = 300
    threshold, truth = sim.truths(11, size=200_000)["symmetric"][2]
    cell = sim.simulate(
        np.random.default_rng(13),
        population="symmetric",
        judge="sharp",
        n=30,
        unrated=1000,
        reps=reps,
        truth=truth,
        threshold=threshold,
    )
    assert 0.40 < truth < 0.46
    assert cell.coverage_t >= stats.binom.ppf(0.001, reps, 0.95) / reps
    assert cell.width_ratio < 0.9


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("share", [False, True])
def test_a_judge_that_does_not_help_never_widens_the_interval(seed, share):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 60))
    truth = rng.uniform(0, 5, n + 200)
    human = np.clip(np.round(truth[:n] + rng.normal(0, 0.8, n), 1), 0, 5)
    judge = np.clip(np.round(rng.uniform(0, 5, n + 200) * 2) / 2, 0, 5)  # unrelated
    call = partial(ppi_share_above, threshold=2.5) if share else ppi_mean
    res = call(human, judge[:n], judge[n:])
    assert res.width <= res.human_width * (1 + 1e-12)
    if res.width == res.human_width:
        assert res.lam == 0.0 and res.interval == res.human_interval


def test_poor_real_judge_does_not_widen_the_interval(alttest_data):
    """10k_prompts with llama-31 (a poor judge there) at n = 30, 50 draws of the rated items."""
    humans, llms = alttest_data["10k_prompts"]
    llm = llms["llama-31"]
    items = sorted(i for i in llm if sum(i in h for h in humans.values()) >= 2)
    mean = {i: np.mean([h[i] for h in humans.values() if i in h]) for i in items}
    rng = np.random.default_rng(39)
    for _ in range(50):
        order = rng.permutation(len(items))
        rated, unrated = order[:30], order[30:]
        res = ppi_mean(
            [mean[items[i]] for i in rated],
            [llm[items[i]] for i in rated],
            [llm[items[i]] for i in unrated],
        )
        assert res.width <= res.human_width * (1 + 1e-12)
