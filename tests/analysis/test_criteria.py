"""A rubric study's analysis: each criterion as a study of its own, and across criteria.

The rubric study is made from a generated study by giving every rating and LLM score
two criteria: ``plain`` (the scores as generated) and ``mirrored`` (each score
reflected in its scale, ``min + max - score``). A criterion's analysis must then be
the analysis of a study holding that criterion's scores alone (computed without any
criterion), the dashboard's numbers must be the report's per criterion (the
invariant of test_one_analysis), and the criteria must correlate at -1.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pandas as pd
import pytest

from annotator.analysis.criteria import HUMANS, POOLED_CRITERIA, criterion_frames
from annotator.analysis.model import REPORT_PARTS
from annotator.analysis.settings import study_settings
from annotator.analysis.study_analysis import analyse
from annotator.data.frames import study_frames
from annotator.render.dashboard import study_dashboard
from tests.analysis import one_analysis

CRITERIA = ("plain", "mirrored")


def _mirrored(frame: pd.DataFrame, scales: pd.DataFrame) -> pd.Series:
    bounds = scales.set_index("scale")
    low = frame["scale"].map(bounds["min"])
    high = frame["scale"].map(bounds["max"])
    return low + high - frame["value"]


def rubric_of(frames):
    """``frames`` with each rating and score under both criteria."""
    ratings, llm = [], []
    for name in CRITERIA:
        r, s = frames.ratings.copy(), frames.llm.copy()
        if name == "mirrored":
            r["value"] = _mirrored(r, frames.scales)
            s["value"] = _mirrored(s, frames.scales)
        ratings.append(r.assign(criterion=name))
        llm.append(s.assign(criterion=name))
    criteria = pd.DataFrame(
        {"criterion": list(CRITERIA), "definition": ["", ""], "benchmarks": [None, None]}
    )
    return replace(
        frames,
        ratings=pd.concat(ratings, ignore_index=True),
        llm=pd.concat(llm, ignore_index=True),
        criteria=criteria,
    )


def alone(frames, name):
    """One criterion's scores as a study without criteria."""
    mine = criterion_frames(frames, name)
    return replace(
        mine,
        ratings=mine.ratings.drop(columns="criterion"),
        llm=mine.llm.drop(columns="criterion"),
        criteria=pd.DataFrame(),
    )


@pytest.fixture
def rubric(session, make_study):
    study = make_study(
        n_items=30, n_raters=4, models=("gpt", "llama"), repeats=3, missing=0.05, seed=7
    )
    settings = replace(study_settings(study), confidence=0.90, n_resamples=20)
    return rubric_of(study_frames(session, study)), settings


def test_a_criterion_is_analysed_as_a_study_of_its_own(rubric):
    frames, settings = rubric
    analysis = analyse(frames, settings, parts=REPORT_PARTS)
    assert analysis.criteria == CRITERIA and tuple(analysis.by_criterion) == CRITERIA
    for name in CRITERIA:
        mine = analysis.by_criterion[name].tables
        single_analysis = analyse(alone(frames, name), settings, parts=REPORT_PARTS)
        single = single_analysis.tables
        for table in ("scales", "models", "kappa", "alttest", "retest", "rater_quality"):
            pd.testing.assert_frame_equal(getattr(mine, table), getattr(single, table))
        # The report's --tables: every criterion's rows, each named.
        combined = analysis.tables.scales
        pd.testing.assert_frame_equal(
            combined[combined["criterion"] == name]
            .drop(columns="criterion")
            .reset_index(drop=True),
            single.scales,
        )
        # So are the agreement tables (annotator agreement) and the self-consistency.
        for key in ("kappa", "correlations"):
            table = analysis.agreement[key]
            pd.testing.assert_frame_equal(
                table[table["criterion"] == name].drop(columns="criterion").reset_index(drop=True),
                single_analysis.agreement[key],
            )
        assert set(analysis.consistency["criterion"]) == set(CRITERIA)
        # The LaTeX and HTML tables bold each criterion's best, as in its own table.
        from annotator.render.table_files import BEST_RULES

        for key, rule in BEST_RULES.items():
            table = getattr(analysis.tables, key)
            marked = rule.mark(table)[table["criterion"] == name].reset_index(drop=True)
            pd.testing.assert_frame_equal(marked, rule.mark(getattr(single, key)))


def test_every_dashboard_number_is_the_reports_per_criterion(rubric):
    frames, settings = rubric
    report = analyse(frames, settings, parts=REPORT_PARTS)
    for name in CRITERIA:
        dash = study_dashboard(frames, settings=settings, criterion=name)
        assert dash.criterion == name and dash.criteria == CRITERIA
        tables = report.by_criterion[name].tables
        one_analysis.assert_every_dashboard_number_is_the_reports(dash, tables, settings)
    # The dashboard shows the first criterion unless asked.
    assert study_dashboard(frames, settings=settings).criterion == "plain"


def test_mirrored_criteria_correlate_at_minus_one(rubric):
    frames, settings = rubric
    rubric_tables = analyse(frames, settings).rubric
    corr = rubric_tables.correlations
    assert set(corr["who"]) == {HUMANS, "gpt", "llama", "ensemble"} - {"ensemble"}
    # Up to ties among human means that the reflection's rounding (last bit) breaks.
    assert corr["spearman"].to_numpy() == pytest.approx(-1.0, abs=1e-3)
    assert (corr["high"] < -0.99).all()
    summary = rubric_tables.summary
    assert len(summary) == len(CRITERIA) * len(frames.scale_names)
    # Reflection changes no agreement: ICC, alpha and nMAE are those of the plain scores.
    plain = summary[summary["criterion"] == "plain"].set_index("scale")
    mirrored = summary[summary["criterion"] == "mirrored"].set_index("scale")
    for column in ("icc_a1_human", "alpha_human", "icc_human_llm", "nmae"):
        assert mirrored[column].to_numpy() == pytest.approx(plain[column].to_numpy(), rel=1e-9)
    alt = rubric_tables.alttest
    assert set(alt["criterion"]) >= {*CRITERIA, POOLED_CRITERIA}


def test_an_unknown_criterion_names_the_studys(rubric):
    frames, settings = rubric
    with pytest.raises(ValueError, match="'tone' is not a criterion of the study .*'plain'"):
        analyse(frames, settings, criterion="tone")


def test_the_report_has_the_tables_across_criteria_and_a_section_per_criterion(
    session, make_study, tmp_path
):
    from html.parser import HTMLParser

    from annotator.render.report import report_of

    study = make_study(n_items=12, n_raters=3, models=("gpt",), repeats=2, seed=5)
    settings = replace(study_settings(study), n_resamples=10)
    frames = rubric_of(study_frames(session, study))
    analysis = analyse(frames, settings, parts=REPORT_PARTS)
    report = report_of(analysis, title="Rubric", study="rubric", figure_format="png")
    ids: list[str] = []

    class Ids(HTMLParser):
        def handle_starttag(self, tag, attrs):
            ids.extend(value for name, value in attrs if name == "id")

    Ids().feed(report.html)
    assert len(ids) == len(set(ids)), "every anchor of the page is unique"
    for key in ("criteria-summary", "criteria-correlations"):
        assert f'id="table-{key}"' in report.html
    # 12 items, under the alt-test's 30 per annotator: its table has no row with a
    # result, so it is not drawn, and the list of what was not computed says why once.
    assert 'id="table-criteria-alttest"' not in report.html
    reasons = re.findall(r'<li data-reason="([^"]*)"', report.html)
    assert len(reasons) == len(set(reasons))
    assert any(r.startswith("no rater has yet rated") for r in reasons)
    # Each criterion has the sections of a study without criteria that hold a result,
    # folded under its name.
    per = [report.html.count(f'<section aria-labelledby="criterion-{i}-') for i in (1, 2)]
    assert per[0] == per[1] >= 6
    assert report.html.count('<section aria-labelledby="') == 2 + sum(per)
    for index, name in enumerate(CRITERIA, start=1):
        assert f'<details class="criterion" id="criterion-{index}">' in report.html
        assert f'id="criterion-{index}-table2"' in report.html
        assert f"<summary>Criterion {name}: " in report.html
    assert set(report.figure_files) >= {"plain-icc", "mirrored-icc"}
    # --tables: each table with the criterion of every row, and the tables across criteria.
    from annotator.render.table_files import write_csv_tables

    assert set(report.tables.scales["criterion"]) == set(CRITERIA)
    written = {p.name for p in write_csv_tables(report.tables, tmp_path, rubric=report.rubric)}
    assert {"criteria_summary.csv", "criteria_alttest.csv", "scales.csv"} <= written
    summary = pd.read_csv(tmp_path / "criteria_summary.csv")
    assert list(summary["criterion"]) == [c for c in CRITERIA for _ in frames.scale_names]
