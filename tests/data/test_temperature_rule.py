"""One rule for the LLM scores analysed (annotator.data.temperatures): the dashboard,
the report, the CLI and the exports list the same judges with the same numbers."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from sqlalchemy import update

from annotator.analysis.model import REPORT_PARTS
from annotator.analysis.settings import study_settings
from annotator.analysis.study_analysis import analyse
from annotator.data.exporters import alttest_export, matrix_export
from annotator.data.frames import study_frames
from annotator.data.temperatures import (
    judge_temperatures,
    parse_judge_temperatures,
    temperature_label,
)
from annotator.metrics.matrix import LLM_PREFIX
from annotator.models import LLMScore
from annotator.services.dashboards import cached_dashboard

NAN = math.nan
JUDGES = ["judge-a", "judge-b", "judge-c"]


@pytest.mark.parametrize(
    ("temps", "expected"),
    [
        # The most common wins.
        ([1.0, 1.0, 0.1], 1.0),
        # A tie goes to the study's most common, here (one judge) the lowest.
        ([1.0, 1.0, 0.1, 0.1], 0.1),
        # Not recorded wins only when strictly the most common.
        ([NAN, NAN, 1.0], None),
        ([NAN, 1.0], 1.0),
        ([NAN, NAN], None),
    ],
)
def test_a_judge_is_at_its_most_common_temperature(temps, expected):
    chosen = judge_temperatures(["j"] * len(temps), ["s"] * len(temps), temps)
    assert chosen.of("j", "s") == expected


def test_a_tie_goes_to_the_study_s_most_common_temperature():
    # judge a: one score at 0.1, one at 1; judge b: two at 1. The study's most common
    # is 1, so a stays at 1 (as a single study-wide temperature had it).
    chosen = judge_temperatures(["a", "a", "b", "b"], ["s"] * 4, [0.1, 1.0, 1.0, 1.0])
    assert chosen.to_dict() == {"a": {"s": 1.0}, "b": {"s": 1.0}}


def test_the_lead_chooses_for_the_study_and_for_single_judges():
    judges = ["a", "a", "b", "b", "b"]
    temps = [NAN, 1.0, 0.5, 0.5, 1.0]
    chosen = judge_temperatures(judges, ["s"] * 5, temps, requested=1.0, per_judge={"a": None})
    assert chosen.to_dict() == {"a": {"s": None}, "b": {"s": 1.0}}
    assert chosen.label() == "a not recorded, b 1"
    # A judge without scores at the study's temperature is left out, and told.
    chosen = judge_temperatures(["a", "b"], ["s", "s"], [NAN, 1.0], requested=1.0)
    assert "none, so it is left out" in chosen.describe("s")
    assert temperature_label(None) == temperature_label(NAN) == "not recorded"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("judge-a=0, judge-c=1", (("judge-a", 0.0), ("judge-c", 1.0))),
        ("", ()),
        ("m=a=0.5", (("m=a", 0.5),)),
        ("judge-a=none, judge-b=Not recorded", (("judge-a", None), ("judge-b", None))),
    ],
)
def test_judge_temperatures_parse(text, expected):
    assert parse_judge_temperatures(text) == expected


@pytest.mark.parametrize("text", ["judge-a", "judge-a=", "=1", "judge-a=-1", "judge-a=x"])
def test_bad_judge_temperatures_name_the_clause(text):
    with pytest.raises(ValueError, match="is not JUDGE=TEMPERATURE"):
        parse_judge_temperatures(text)


@pytest.fixture
def mixed(make_study, session):
    """The issue's study: judge-a and judge-b imported without a temperature (one run),
    judge-c run from the web at temperature 1 (two runs): as many scores without a
    temperature as at 1, which made the old single main temperature drop a and b."""
    study = make_study(
        slug="mixed",
        n_items=10,
        n_raters=3,
        scales=(("0-5", 0.0, 5.0, 0.5),),
        benchmarks=("sts-b",),
        models=tuple(JUDGES),
        extra_temperatures=(),
        runs=2,
        repeats=0,
        attention_items=0,
        seed=7,
    )
    imported = LLMScore.model.in_(["judge-a", "judge-b"])
    session.execute(update(LLMScore).where(imported).values(temperature=None))
    session.execute(LLMScore.__table__.delete().where(imported, LLMScore.run == "t1-1"))
    session.commit()
    return study


def test_every_view_lists_the_same_judges_with_the_same_numbers(session, runner, mixed, tmp_path):
    frames = study_frames(session, mixed)
    # Independent of the rule's code: each judge's mean of its own runs, from the rows.
    llm = frames.llm
    direct = llm.groupby(["model", "item"])["value"].mean().unstack("model")

    analysis = analyse(frames, study_settings(mixed), parts=REPORT_PARTS)
    models = analysis.tables.models.set_index("model")
    assert sorted(models.index) == JUDGES
    assert models.loc["judge-a", "temperature"] != models.loc["judge-a", "temperature"]  # NaN
    assert models.loc["judge-c", "temperature"] == 1.0
    scale = analysis.scales[0]
    for judge in JUDGES:
        assert scale.llm[judge].to_dict() == pytest.approx(direct[judge].to_dict())

    dashboard = cached_dashboard(session, mixed)
    shown = {row.model: row for row in dashboard.scale("0-5").models}
    assert sorted(shown) == JUDGES
    for judge in JUDGES:
        assert shown[judge].icc_a1.value == pytest.approx(models.loc[judge, "icc_human_llm"])
        assert shown[judge].n_items == models.loc[judge, "n_items"]
    assert "not recorded" in dashboard.temperature_text
    assert "unknown" not in dashboard.temperature_text

    export = matrix_export(session, mixed, scale="0-5").frame.set_index("item_id")
    alt = alttest_export(session, mixed, scale="0-5")
    assert sorted(alt["llm"]) == JUDGES
    for judge in JUDGES:
        column = export[LLM_PREFIX + judge].dropna()
        assert column.to_dict() == pytest.approx(direct[judge].to_dict())
        assert alt["llm"][judge] == pytest.approx(direct[judge].to_dict())

    result = runner.invoke(args=["agreement", "mixed", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    correlations = pd.DataFrame(payload["correlations"])
    assert set(JUDGES) <= set(
        correlations["who"] if "who" in correlations else correlations["model"]
    )
    assert payload["temperatures"] == {
        "judge-a": {"0-5": None},
        "judge-b": {"0-5": None},
        "judge-c": {"0-5": 1.0},
    }

    out = tmp_path / "report.html"
    result = runner.invoke(
        args=["report", "mixed", "--out", str(out), "--tables", str(tmp_path / "tables")],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    written = pd.read_csv(tmp_path / "tables" / "models.csv").set_index("model")
    assert sorted(written.index) == JUDGES
    for judge in JUDGES:
        assert written.loc[judge, "icc_human_llm"] == pytest.approx(
            models.loc[judge, "icc_human_llm"]
        )


def test_a_setting_brings_a_judge_to_another_temperature(session, runner, mixed):
    # Only judge-c has scores at 1: the study's temperature leaves a and b out ...
    mixed.source_toml += "\n[validation]\ntemperature = 1\n"
    session.add(mixed)
    session.commit()
    models = analyse(study_frames(session, mixed), study_settings(mixed), parts=REPORT_PARTS)
    kept = models.tables.models.dropna(subset=["icc_human_llm"])
    assert sorted(kept["model"]) == ["judge-c"]
    assert sorted(alttest_export(session, mixed, scale="0-5")["llm"]) == ["judge-c"]
    # ... and choosing theirs brings them back, everywhere alike.
    mixed.source_toml += '[validation.temperatures]\n"judge-a" = "not recorded"\n'
    session.add(mixed)
    session.commit()
    models = analyse(study_frames(session, mixed), study_settings(mixed), parts=REPORT_PARTS)
    kept = models.tables.models.dropna(subset=["icc_human_llm"])
    assert sorted(kept["model"]) == ["judge-a", "judge-c"]
    assert sorted(alttest_export(session, mixed, scale="0-5")["llm"]) == ["judge-a", "judge-c"]
    result = runner.invoke(
        args=["export", "mixed", "--format", "alttest", "--scale", "0-5", "--out", "-"]
        + ["--judge-temperature", "judge-b=none"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    # The option replaces the study file's choices for single judges.
    assert sorted(json.loads(result.stdout)["llm"]) == ["judge-b", "judge-c"]
    result = runner.invoke(
        args=["agreement", "mixed", "--json", "--judge-temperature", "judge-a=none"]
        + ["--judge-temperature", "judge-b=none"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["temperatures"]["judge-b"] == {"0-5": None}


def test_the_dashboard_form_chooses_single_judges(session, lead_client, mixed):
    mixed.source_toml += "\n[validation]\ntemperature = 1\n"
    session.add(mixed)
    session.commit()
    page = lead_client.get("/lead/studies/mixed").get_data(as_text=True)
    assert "judge-a" in page and "none, so it is left out" in page
    chosen = lead_client.get("/lead/studies/mixed?temperatures=judge-a%3Dnone")
    text = chosen.get_data(as_text=True)
    assert chosen.status_code == 200
    assert "judge-a at not recorded (chosen for this judge; 10 of 10 scores)" in text
    assert 'name="temperatures" value="judge-a=none"' in text
    bad = lead_client.get("/lead/studies/mixed?temperatures=judge-a%3Dwarm")
    assert bad.status_code == 200
    assert "is not JUDGE=TEMPERATURE" in bad.get_data(as_text=True)
