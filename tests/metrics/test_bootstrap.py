"""The batched ICC bootstrap against the straightforward per-resample computation."""

import warnings

import numpy as np
import pytest

from annotator.metrics import bootstrap_icc_difference, icc
from annotator.metrics.bootstrap import _icc_a1_batch


@pytest.fixture
def scores():
    rng = np.random.default_rng(11)
    n = 9_000  # more than the 40,000-score chunk holds per resample pair: several chunks
    truth = rng.normal(5, 2, n)
    human = np.round(np.clip(truth + rng.normal(0, 1, n), 0, 10) * 12) / 12
    llm_a = np.clip(np.round(truth + rng.normal(0, 1.5, n)), 0, 10)
    llm_b = np.clip(np.round(truth + rng.normal(0.5, 2, n)), 0, 10)
    return human, llm_a, llm_b


def test_chunked_bootstrap_is_bit_identical_to_one_resample_at_a_time(scores):
    human, llm_a, llm_b = scores
    n_resamples, seed = 12, 5
    res = bootstrap_icc_difference(human, llm_a, human, llm_b, n_resamples=n_resamples, seed=seed)
    a, b = np.column_stack([human, llm_a]), np.column_stack([human, llm_b])
    index = np.random.default_rng(seed).integers(0, human.size, size=(n_resamples, human.size))
    one_by_one = np.array(
        [_icc_a1_batch(a[row][None])[0] - _icc_a1_batch(b[row][None])[0] for row in index]
    )
    low, high = np.quantile(one_by_one, [0.025, 0.975])
    assert (res.low, res.high) == (low, high)


def test_chunked_bootstrap_matches_icc_per_resample(scores):
    # The independent reference: the public icc() (two-way ANOVA) on each resample.
    human, llm_a, llm_b = (s[:300] for s in scores)
    n_resamples, seed = 200, 3
    res = bootstrap_icc_difference(human, llm_a, human, llm_b, n_resamples=n_resamples, seed=seed)
    index = np.random.default_rng(seed).integers(0, human.size, size=(n_resamples, human.size))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        loop = np.array(
            [
                icc(np.column_stack([human[i], llm_a[i]])).icc_a1
                - icc(np.column_stack([human[i], llm_b[i]])).icc_a1
                for i in index
            ]
        )
    low, high = np.quantile(loop, [0.025, 0.975])
    assert res.low == pytest.approx(low, abs=1e-12)
    assert res.high == pytest.approx(high, abs=1e-12)
    assert res.n_undefined == 0
