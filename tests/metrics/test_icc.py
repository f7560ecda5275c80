from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from annotator.metrics import ICCResult, icc
from tests.metrics.references import pingouin_icc

# Shrout and Fleiss (1979), Table 2: 6 targets x 4 judges.
SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
    dtype=float,
)


@pytest.mark.parametrize(
    ("field", "ci_field", "value", "low", "high"),
    [
        # Published values (Shrout and Fleiss 1979; R psych::ICC on the same table).
        ("icc_a1", "ci_a1", 0.2898, 0.0188, 0.7611),
        ("icc_ak", "ci_ak", 0.6201, 0.0711, 0.9272),
        ("icc_c1", "ci_c1", 0.7148, 0.3425, 0.9459),
        ("icc_ck", "ci_ck", 0.9093, 0.6757, 0.9859),
    ],
)
def test_shrout_fleiss_table(field, ci_field, value, low, high):
    res = icc(SHROUT_FLEISS)
    assert getattr(res, field) == pytest.approx(value, abs=5e-5)
    ci = getattr(res, ci_field)
    assert ci[0] == pytest.approx(low, abs=5e-5)
    assert ci[1] == pytest.approx(high, abs=5e-5)


def test_shrout_fleiss_mean_squares():
    res = icc(SHROUT_FLEISS)
    # Shrout and Fleiss (1979), Table 3: BMS 11.24, JMS 32.49, EMS 1.02.
    assert (res.ms_items, res.ms_raters, res.ms_error) == pytest.approx(
        (11.2417, 32.4861, 1.0194), abs=1e-4
    )
    assert (res.n, res.k, res.n_omitted) == (6, 4, 0)
    assert isinstance(res, ICCResult)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(5, 2), (20, 4), (60, 12)])
def test_agrees_with_pingouin(seed, shape):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(shape[0], 1)) * 2 + rng.normal(size=shape) + rng.normal(size=shape[1])
    ref = pingouin_icc(x)
    res = icc(x)
    for kind, field, ci_field in (
        ("ICC(A,1)", "icc_a1", "ci_a1"),
        ("ICC(A,k)", "icc_ak", "ci_ak"),
        ("ICC(C,1)", "icc_c1", "ci_c1"),
        ("ICC(C,k)", "icc_ck", "ci_ck"),
    ):
        value, ci = ref[kind]
        assert getattr(res, field) == pytest.approx(value, abs=1e-9)
        assert np.allclose(getattr(res, ci_field), ci, atol=1e-9, rtol=0)


def test_confidence_level_widens_interval():
    narrow = icc(SHROUT_FLEISS, confidence=0.8)
    wide = icc(SHROUT_FLEISS, confidence=0.99)
    assert wide.ci_a1[0] < narrow.ci_a1[0] < narrow.icc_a1 < narrow.ci_a1[1] < wide.ci_a1[1]


def test_dataframe_input_and_omit():
    frame = pd.DataFrame(SHROUT_FLEISS, columns=list("abcd"))
    frame.loc[len(frame)] = [1.0, np.nan, 3.0, 4.0]
    with pytest.raises(ValueError, match="missing"):
        icc(frame)
    res = icc(frame, nan_policy="omit")
    assert res.n_omitted == 1
    assert res.icc_a1 == pytest.approx(icc(SHROUT_FLEISS).icc_a1, abs=1e-12)


@pytest.mark.parametrize(
    ("ratings", "kwargs", "message"),
    [
        ([1, 2, 3], {}, "2-D"),
        ([[1, 2]], {}, "at least 2 complete items"),
        ([[1], [2]], {}, "at least 2 raters"),
        ([["a", "b"], ["c", "d"]], {}, "numbers"),
        ([[1, 2], [3, np.inf]], {}, "infinite"),
        (SHROUT_FLEISS, {"nan_policy": "drop"}, "nan_policy"),
        (SHROUT_FLEISS, {"confidence": 1.5}, "confidence"),
    ],
)
def test_input_checks(ratings, kwargs, message):
    with pytest.raises(ValueError, match=message):
        icc(ratings, **kwargs)


def test_to_dict_is_json_ready():
    import json

    payload = icc(SHROUT_FLEISS).to_dict()
    assert json.loads(json.dumps(payload))["ci_a1"] == pytest.approx([0.0188, 0.7611], abs=5e-5)


matrices = arrays(
    np.float64,
    st.tuples(st.integers(3, 8), st.integers(2, 5)),
    elements=st.integers(0, 10).map(float),
).filter(lambda x: np.ptp(x.mean(axis=1)) > 0 and np.ptp(x) > 0)


@settings(max_examples=50, deadline=None)
@given(x=matrices, shift=st.integers(-50, 50), data=st.data())
def test_invariant_to_shift_and_permutation(x, shift, data):
    base = icc(x)
    fields = ("icc_a1", "icc_ak", "icc_c1", "icc_ck")
    # Some small integer tables put a denominator at exactly zero (ICC = +-inf in exact
    # arithmetic, rounding noise in floating point): not a meaningful comparison.
    assume(all(abs(getattr(base, f)) < 1e3 for f in fields))
    rows = data.draw(st.permutations(range(x.shape[0])))
    cols = data.draw(st.permutations(range(x.shape[1])))
    for other in (icc(x + shift), icc(x[np.ix_(rows, cols)])):
        for field in ("icc_a1", "icc_ak", "icc_c1", "icc_ck"):
            assert getattr(other, field) == pytest.approx(
                getattr(base, field), abs=1e-9, nan_ok=True
            )


def test_constant_matrix_warns_and_is_nan():
    with pytest.warns(RuntimeWarning, match="constant"):
        res = icc(np.full((4, 3), 2.0))
    assert np.isnan(res.icc_a1) and np.isnan(res.icc_c1) and np.isnan(res.ci_a1).all()


@pytest.mark.parametrize(
    ("ratings", "icc_a1"),
    [
        ([[1, 1], [2, 2], [4, 4]], 1.0),
        # A constant offset per rater: consistency is perfect, absolute agreement is not.
        ([[1, 2], [2, 3], [4, 5]], None),
    ],
)
def test_perfect_agreement_warns_that_the_interval_is_undefined(ratings, icc_a1):
    with pytest.warns(RuntimeWarning, match="no residual variance"):
        res = icc(np.array(ratings, dtype=float))
    assert res.icc_c1 == 1.0 and res.icc_ck == 1.0
    if icc_a1 is not None:
        assert res.icc_a1 == icc_a1
    else:
        # Independent reference: pingouin's ICC(A,1) (which warns about MS_E = 0 itself).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = pingouin_icc(np.array(ratings, float))["ICC(A,1)"][0]
        assert res.icc_a1 == pytest.approx(ref)
    assert all(np.isnan(bound) for bound in res.ci_a1 + res.ci_c1)
