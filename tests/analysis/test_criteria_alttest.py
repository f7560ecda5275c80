"""Must-show: a rubric study's pooled alt-test is the alt-test of the reference layout.

SummEval-shaped data (summaries x four criteria, three raters, six judges) goes
through the app's analysis (:func:`annotator.analysis.study_analysis.analyse`); the
same scores, laid out as the alt-test paper's repository lays out its datasets
(``human_annotations.json``: ``{annotator: {instance: annotation}}``,
``llm_annotations.json``: ``{llm: {instance: annotation}}``, see
/work/shared/data/alttest/README.md) with one instance per (summary, criterion) pair
(SummEval's 6,400 instances of 1,600 summaries), are tested by
:func:`annotator.metrics.alt_test` directly. Both must agree for every judge.
"""

from __future__ import annotations

import json

import pytest

from annotator.analysis.criteria import DOMAINS, POOLED_CRITERIA
from annotator.analysis.settings import AnalysisSettings
from annotator.analysis.study_analysis import analyse
from annotator.metrics import alt_test, alt_test_domains
from tests.analysis.summeval_shape import CRITERIA, JUDGES, summeval_shape

SETTINGS = AnalysisSettings(epsilon=0.2, scoring="neg_rmse", q=0.05)


def _reference_layout(shape, tmp_path):
    """The two JSON files of the reference layout, written and read back."""
    humans: dict = {}
    for row in shape.humans.itertuples():
        humans.setdefault(row.who, {})[f"{row.summary}|{row.criterion}"] = row.value
    llms: dict = {}
    for row in shape.judges.itertuples():
        llms.setdefault(row.who, {})[f"{row.summary}|{row.criterion}"] = row.value
    (tmp_path / "human_annotations.json").write_text(json.dumps(humans))
    (tmp_path / "llm_annotations.json").write_text(json.dumps(llms))
    return (
        json.loads((tmp_path / "human_annotations.json").read_text()),
        json.loads((tmp_path / "llm_annotations.json").read_text()),
    )


def _check_pooled(shape, tmp_path):
    analysis = analyse(shape.frames, SETTINGS, parts=("alttest",))
    assert analysis.criteria == CRITERIA
    table = analysis.rubric.alttest
    pooled = table[table["criterion"] == POOLED_CRITERIA].set_index("model")
    assert sorted(pooled.index) == sorted(JUDGES)
    humans, llms = _reference_layout(shape, tmp_path)
    n_instances = 4 * shape.frames.items.shape[0]
    for judge in JUDGES:
        expected = alt_test(humans=humans, llm=llms[judge], scoring="neg_rmse", epsilon=0.2, q=0.05)
        row = pooled.loc[judge]
        assert expected.n_items == n_instances == row["n_items"]
        assert row["n_tested"] == expected.n_tested == 3
        assert row["passed"] == expected.passed
        # Equal to the last bit: the same instances, the same statistic.
        assert row["winning_rate"] == expected.winning_rate
        assert row["advantage_probability"] == expected.advantage_probability
    return analysis, humans, llms


def test_the_pooled_alttest_equals_the_reference_layouts(tmp_path):
    shape = summeval_shape(200, seed=3)
    analysis, humans, llms = _check_pooled(shape, tmp_path)
    table = analysis.rubric.alttest
    # The judges differ, so the test can tell them apart: the closest passes, the
    # farthest fails.
    pooled = table[table["criterion"] == POOLED_CRITERIA].set_index("model")
    assert pooled.loc["judge-1", "passed"] and not pooled.loc["judge-6", "passed"]
    # Per criterion: the reference layout's instances of that criterion alone.
    for criterion in CRITERIA:
        mine = {
            h: {k: v for k, v in d.items() if k.endswith("|" + criterion)}
            for h, d in humans.items()
        }
        for judge in ("judge-1", "judge-4"):
            llm = {k: v for k, v in llms[judge].items() if k.endswith("|" + criterion)}
            expected = alt_test(humans=mine, llm=llm, scoring="neg_rmse", epsilon=0.2, q=0.05)
            row = table[(table["criterion"] == criterion) & (table["model"] == judge)].iloc[0]
            assert row["winning_rate"] == pytest.approx(expected.winning_rate, rel=1e-12)
            assert row["n_items"] == expected.n_items
    # As domains: one BY family over the 12 (criterion, rater) tests.
    domains = {
        c: {
            "humans": {
                h: {k: v for k, v in d.items() if k.endswith("|" + c)} for h, d in humans.items()
            },
            "llm": {k: v for k, v in llms["judge-4"].items() if k.endswith("|" + c)},
        }
        for c in CRITERIA
    }
    expected = alt_test_domains(domains, scoring="neg_rmse", epsilon=0.2, q=0.05)
    row = table[(table["criterion"] == DOMAINS) & (table["model"] == "judge-4")].iloc[0]
    assert (row["n_passed"], row["n_domains"]) == (expected.n_passed, expected.n_domains)
    assert row["n_domains"] == 4


def test_the_pooled_alttest_at_summevals_full_shape(tmp_path):
    # 1,600 summaries x 4 criteria = SummEval's 6,400 instances (about 4 s).
    _check_pooled(summeval_shape(1600, seed=5), tmp_path)
