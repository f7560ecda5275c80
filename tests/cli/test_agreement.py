"""``annotator consistency`` and ``annotator agreement`` on a generated study."""

from __future__ import annotations

import json

import pytest

from annotator.analysis.agreement_tables import consistency_rows, correlation_rows, kappa_rows
from annotator.analysis.matrices import Notes
from annotator.data.frames import study_frames
from tests.analysis.agreement_study import two_judge_study


@pytest.fixture
def study(session, make_study):
    return two_judge_study(session, make_study, "cons")


def test_consistency_json_ranks_the_steady_model_first(runner, session, study):
    result = runner.invoke(args=["consistency", "cons", "--scale", "0-5", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["consistency"]
    by = {(r["model"], r["temperature"]): r for r in rows}
    assert by["steady", 0.7]["alpha_interval"] > by["noisy", 0.7]["alpha_interval"]
    assert by["steady", 0.7]["identical_share"] > by["noisy", 0.7]["identical_share"]
    assert {r["scale"] for r in rows} == {"0-5"}
    # The same numbers as the report's table.
    table = consistency_rows(study_frames(session, study)).set_index(
        ["model", "scale", "temperature"]
    )
    assert by["noisy", 0.7]["icc_a1"] == pytest.approx(table.loc[("noisy", "0-5", 0.7), "icc_a1"])
    text = runner.invoke(args=["consistency", "cons", "--model", "steady"])
    assert text.exit_code == 0 and "alpha_interval" in text.output and "noisy" not in text.output


def test_agreement_json_holds_the_report_tables(runner, session, study):
    result = runner.invoke(args=["agreement", "cons", "--temperature", "0.7", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["temperature"] == 0.7
    frames = study_frames(session, study)
    corr = correlation_rows(frames, 0.7, Notes())
    kendall = corr[(corr["model"] == "steady") & (corr["method"] == "kendall")]
    printed = [
        r
        for r in payload["correlations"]
        if r["model"] == "steady" and r["method"] == "kendall" and r["scale"] == "0-5"
    ]
    assert printed[0]["estimate"] == pytest.approx(
        kendall[kendall["scale"] == "0-5"]["estimate"].iloc[0]
    )
    assert len(payload["kappa"]) == len(kappa_rows(frames, 0.7, Notes()))
    assert {r["comparison"] for r in payload["cross_alpha"]} >= {"human-LLM", "gender groups"}
    text = runner.invoke(args=["agreement", "cons"])
    assert text.exit_code == 0
    assert "Cross-group Krippendorff's alpha" in text.output


def test_unknown_study_and_scale_fail_clearly(runner, study):
    result = runner.invoke(args=["consistency", "nope"])
    assert result.exit_code != 0 and "no study with slug 'nope'" in result.output
    result = runner.invoke(args=["agreement", "cons", "--scale", "0-7"])
    assert result.exit_code != 0 and "unknown scale '0-7'" in result.output
