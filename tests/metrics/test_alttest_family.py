"""The alt-test's family of hypotheses (who counts in m) and its input messages (issue 39)."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from annotator.metrics import alt_test, alt_test_domains, alt_test_sequential

from .conftest import ALTTEST_SETTINGS, REPO_ROOT


def _load_baseline():
    path = REPO_ROOT / "benchmarks" / "alttest_baseline.py"
    spec = importlib.util.spec_from_file_location("alttest_baseline_family", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A loop written from the paper that skips an annotator below the minimum before the
# Benjamini-Yekutieli step, as the authors' code (nitaytech/AltTest) does.
baseline = _load_baseline()


def _late_raters_study(seed=12, judge_sd=0.6):
    """4 raters x 60 items, plus two late raters with 10 and 12 of the items."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, 60)

    def noisy(sd):
        return np.clip(np.rint(truth + rng.normal(0, sd, 60)), 1, 5).tolist()

    humans = {f"r{j}": dict(enumerate(noisy(0.9))) for j in range(4)}
    llm = dict(enumerate(noisy(judge_sd)))
    humans["late10"] = {i: v for i, v in enumerate(noisy(0.9)) if i < 10}
    humans["late12"] = {i: v for i, v in enumerate(noisy(0.9)) if 10 <= i < 22}
    return humans, llm


def test_skipped_raters_are_not_counted_in_the_correction():
    humans, llm = _late_raters_study()
    ref_rate, _, rows = baseline.alt_test_loop(humans, llm, epsilon=0.15)
    # The scenario of the issue: the reference passes 3 of the 4 tested raters.
    assert ref_rate == 0.75 and len(rows) == 4
    res = alt_test(humans=humans, llm=llm, epsilon=0.15)
    assert res.winning_rate == ref_rate and res.passed
    assert [r.annotator for r in res.annotators if r.tested] == [row[0] for row in rows]
    ref_rejected = baseline.benjamini_yekutieli([row[5] for row in rows], 0.05)
    tested = [r for r in res.annotators if r.tested]
    assert [r.rejected for r in tested] == [i in ref_rejected for i in range(len(rows))]
    assert not any(r.rejected for r in res.annotators if not r.tested)
    # Counting the two skipped raters in m (the old behaviour) would fail the judge.
    with_skipped = baseline.benjamini_yekutieli([row[5] for row in rows] + [math.nan] * 2, 0.05)
    assert len(with_skipped) == 1


def test_skipped_raters_across_domains_are_not_counted():
    humans, llm = _late_raters_study()
    other, other_llm = _late_raters_study(seed=13)
    res = alt_test_domains(
        {"a": {"humans": humans, "llm": llm}, "b": {"humans": other, "llm": other_llm}},
        epsilon=0.15,
    )
    p = [row.p_value for part in res.domains.values() for row in part.annotators if row.tested]
    rejected = baseline.benjamini_yekutieli(p, 0.05)
    got = [row.rejected for part in res.domains.values() for row in part.annotators if row.tested]
    assert got == [i in rejected for i in range(len(p))]


@pytest.mark.parametrize("dataset", list(ALTTEST_SETTINGS))
@pytest.mark.parametrize("minimum", [60, 150])
def test_golden_data_with_raters_below_the_minimum(alttest_data, dataset, minimum):
    # A minimum that leaves some of the public data's raters out of the test.
    humans, llms = alttest_data[dataset]
    scoring, epsilon = ALTTEST_SETTINGS[dataset]
    for model, llm in llms.items():
        try:
            ref_rate, ref_adv, rows = baseline.alt_test_loop(
                humans, llm, scoring=scoring, epsilon=epsilon, min_items_per_human=minimum
            )
        except ZeroDivisionError:
            continue  # nobody reaches the minimum
        res = alt_test(
            humans=humans, llm=llm, scoring=scoring, epsilon=epsilon, min_items_per_human=minimum
        )
        assert res.winning_rate == pytest.approx(ref_rate), model
        assert res.advantage_probability == pytest.approx(ref_adv), model


def test_sequential_family_counts_every_rater_given():
    # The sequential test's threshold m / (q ceil(m/2)) counts every rater listed,
    # tested or not: a family fixed before the data keeps a reached threshold reached.
    humans, llm = _late_raters_study(judge_sd=0.2)
    humans["not yet"] = {}
    verdict = alt_test_sequential(humans=humans, llm=llm, epsilon=0.15, min_items_per_human=30)
    m = len(humans)
    for row in verdict.result.annotators:
        assert row.secured == (row.tested and row.statistic >= m / (0.05 * 4))
    # Seven raters in the family: four secured decide it, whatever the others do.
    assert verdict.decided == (sum(r.secured for r in verdict.result.annotators) >= 4)
    more = alt_test_sequential(
        humans=humans, llm=llm, epsilon=0.15, min_items_per_human=30, n_annotators=9
    )
    for row in more.result.annotators:
        assert row.secured == (row.tested and row.statistic >= 9 / (0.05 * 5))
    with pytest.raises(ValueError, match="n_annotators must be at least the 7"):
        alt_test_sequential(humans=humans, llm=llm, n_annotators=6)


@pytest.mark.parametrize(
    ("llm", "message"),
    [
        ({0: [1, 2], 1: [3, 4], 2: [2, 2]}, r"llm must hold one annotation per item.*list.*0"),
        ({0: 1, 1: np.array([3, 4]), 2: 2}, r"llm must hold one annotation per item.*1"),
        ({0: 1, 1: [3, 4, 5], 2: 2}, r"llm must hold one annotation per item.*1"),
        ({0: 1, 1: {"a": 3}, 2: 2}, r"llm must hold one annotation per item.*dict"),
    ],
)
@pytest.mark.parametrize("scoring", ["neg_rmse", "accuracy"])
def test_list_valued_llm_annotations_name_llm(llm, message, scoring):
    humans = {h: {0: 1, 1: 2, 2: 3} for h in ("a", "b", "c")}
    with pytest.raises(ValueError, match=message):
        alt_test(humans=humans, llm=llm, scoring=scoring, min_items_per_human=1)


def test_list_valued_human_annotation_names_the_rater_and_item():
    humans = {h: {0: 1, 1: 2, 2: 3} for h in ("a", "b", "c")}
    humans["b"][2] = [3, 3]
    with pytest.raises(ValueError, match=r"humans\['b'\] must hold one annotation.*item 2"):
        alt_test(humans=humans, llm={0: 1, 1: 2, 2: 3}, min_items_per_human=1)


def test_a_frame_of_two_models_says_to_pick_one():
    pd = pytest.importorskip("pandas")
    humans = {h: {0: 1, 1: 2, 2: 3} for h in ("a", "b", "c")}
    frame = pd.DataFrame({"gpt": [1, 2, 3], "llama": [2, 2, 3]})
    with pytest.raises(ValueError, match=r"llm is a DataFrame with 2 columns.*llm=frame\['gpt'\]"):
        alt_test(humans=humans, llm=frame, min_items_per_human=1)
    one = alt_test(humans=humans, llm=frame[["gpt"]], min_items_per_human=1)
    assert one == alt_test(humans=humans, llm=frame["gpt"], min_items_per_human=1)
