"""The alt-test planner: resampling a pilot, checked against fresh simulated studies."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.metrics import alt_test, alt_test_power


def _study(rng, n, r, sd_h=0.8, sd_f=0.7):
    """True scores on a 1-5 scale, human and LLM noise, rounded to 0.1 steps."""
    t = rng.uniform(1, 5, n)

    def noisy(sd):
        return np.clip(np.round(t + rng.normal(0, sd, n), 1), 0, 5)

    humans = {f"h{j}": dict(enumerate(noisy(sd_h).tolist())) for j in range(r)}
    return humans, dict(enumerate(noisy(sd_f).tolist()))


def test_predictions_hold_in_fresh_studies():
    # 12 pilots of 60 items x 5 raters each predict the pass probability of a study of
    # 3 raters and 30 or 120 items; 150 fresh studies of that size, drawn from the model
    # (not from a pilot), give the actual pass rate. One pilot's prediction carries its
    # sampling error, so the check is on the average over pilots.
    rng = np.random.default_rng(11)
    opts = {"epsilon": 0.15, "min_items_per_human": 20}
    sizes = [30, 120]
    fresh = [
        np.mean(
            [
                alt_test(
                    **dict(zip(("humans", "llm"), _study(rng, n, 3), strict=True)), **opts
                ).passed
                for _ in range(150)
            ]
        )
        for n in sizes
    ]
    preds = np.array(
        [
            [
                row["pass_probability"]
                for row in alt_test_power(
                    **dict(zip(("humans", "llm"), _study(rng, 60, 5), strict=True)),
                    n_items=sizes,
                    n_raters=3,
                    reps=40,
                    seed=p,
                    **opts,
                ).rows
            ]
            for p in range(12)
        ]
    )
    assert fresh[1] > fresh[0] + 0.2  # the design is informative about the size
    for col, actual in enumerate(fresh):
        assert abs(preds[:, col].mean() - actual) < 0.15, (sizes[col], preds[:, col].mean(), actual)


def test_same_seed_same_table_and_rows_per_size():
    humans, llm = _study(np.random.default_rng(3), 40, 4)
    a = alt_test_power(
        humans=humans,
        llm=llm,
        n_items=[20, 40],
        n_raters=[2, 3],
        reps=10,
        seed=5,
        min_items_per_human=10,
    )
    b = alt_test_power(
        humans=humans,
        llm=llm,
        n_items=[20, 40],
        n_raters=[2, 3],
        reps=10,
        seed=5,
        min_items_per_human=10,
    )
    assert a == b
    assert [(r["n_raters"], r["n_items"]) for r in a.rows] == [(2, 20), (2, 40), (3, 20), (3, 40)]


def test_llm_equal_to_the_truth_passes_and_a_random_one_fails():
    rng = np.random.default_rng(4)
    humans, _ = _study(rng, 80, 4, sd_h=0.5)
    mean = {i: float(np.mean([humans[h][i] for h in humans])) for i in range(80)}
    noise = {i: float(rng.uniform(0, 5)) for i in range(80)}
    good = alt_test_power(humans=humans, llm=mean, n_items=80, n_raters=3, reps=20, epsilon=0.2)
    bad = alt_test_power(humans=humans, llm=noise, n_items=80, n_raters=3, reps=20, epsilon=0.2)
    assert good.rows[0]["pass_probability"] >= 0.9
    assert bad.rows[0]["pass_probability"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_items": [0]}, "n_items"),
        ({"n_raters": [1]}, "n_raters"),
        ({"n_raters": [9]}, "at most"),
        ({"reps": 0}, "reps"),
        ({"epsilon": 2.0}, "epsilon"),
    ],
)
def test_input_checks(kwargs, message):
    humans, llm = _study(np.random.default_rng(6), 30, 3)
    args = {"humans": humans, "llm": llm, "n_items": [30], "n_raters": [2], "reps": 2} | kwargs
    with pytest.raises(ValueError, match=message):
        alt_test_power(**args)
