"""The study page's runs and raters choices: dashboard, report download and export (no JS)."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from annotator.analysis.settings import AnalysisSettings, study_settings
from annotator.data.frames import study_frames
from annotator.data.selection import select_frames
from annotator.render.dashboard import study_dashboard
from tests.conftest import download_report

SPEC = {"slug": "ch", "n_items": 30, "n_raters": 4, "runs": 3, "extra_temperatures": ()}


@pytest.fixture
def lead(lead_client):
    return lead_client


def _text(page) -> str:
    return " ".join(lxml_html.fromstring(page.get_data(as_text=True)).text_content().split())


def test_the_dashboard_follows_the_chosen_runs_and_raters(lead, session, make_study):
    study = make_study(**SPEC)
    page = lead.get("/lead/studies/ch?runs=median&where=gender%3Dfemale")
    assert page.status_code == 200
    text = _text(page)
    assert "Runs aggregated by: median. Raters: gender=female." in text
    tree = lxml_html.fromstring(page.get_data(as_text=True))
    # htmx's refresh asks for the same choices.
    assert tree.xpath("//section[@id='dashboard']/@hx-get") == [
        "/lead/studies/ch?runs=median&where=gender%3Dfemale"
    ]
    assert tree.xpath("//select[@id='analysis-runs']/option[@selected]/@value") == ["median"]
    # The numbers are those of the dashboard computed on the selected frames.
    settings = study_settings(study, runs="median", where=(("gender", ("female",)),))
    expected = study_dashboard(study_frames(session, study), settings=settings)
    assert [r.rater for r in expected.scales[0].raters] == ["ch-r00", "ch-r02"]
    assert f"ICC(A,1) [95% CI] {expected.scales[0].icc_a1.text}" in text
    default = study_dashboard(study_frames(session, study), settings=study_settings(study))
    assert default.scales[0].models[0].icc_a1.text != expected.scales[0].models[0].icc_a1.text
    assert "Runs aggregated by: mean. Raters: all raters." in _text(lead.get("/lead/studies/ch"))


def test_an_unknown_choice_says_what_is_known(lead, make_study):
    make_study(**SPEC)
    page = lead.get("/lead/studies/ch?where=gender%3Drobot")
    assert page.status_code == 200
    tree = lxml_html.fromstring(page.get_data(as_text=True))
    alert = " ".join(tree.xpath("string(//*[@id='analysis-error'])").split())
    assert alert.startswith("No rater answered gender=robot (known values of gender: ")
    assert "Raters: all raters." in _text(page)
    report = lead.get("/lead/studies/ch/report?where=shoe%3D1")
    assert report.status_code == 302
    assert lead.post("/lead/studies/ch/report?where=shoe%3D1").status_code == 302


def test_the_report_download_uses_the_choices(lead, make_study):
    make_study(**SPEC)
    response = download_report(lead, "ch", "runs=first&where=gender%3Dmale")
    assert response.status_code == 200
    tree = lxml_html.fromstring(response.get_data(as_text=True))
    settings = dict(
        zip(
            [dt.text for dt in tree.xpath("//dl[@class='settings']/dt")],
            [dd.text for dd in tree.xpath("//dl[@class='settings']/dd")],
            strict=True,
        )
    )
    assert settings["runs"] == "first"
    assert settings["where"] == "gender=male"
    caption = tree.xpath("string(//*[@id='caption-table2'])")
    assert "Runs aggregated by: first." in caption
    raters = set(tree.xpath("//table[@data-table='raters']/tbody/tr/td[2]/text()"))
    assert raters == {"ch-r01", "ch-r03"}
    default = download_report(lead, "ch")
    assert "Runs aggregated by: mean." in default.get_data(as_text=True)


def test_the_export_form_takes_runs_and_raters(lead, make_study):
    make_study(**SPEC)
    response = lead.get(
        "/lead/studies/ch/export?format=matrix&scale=0-5&runs=each&where=gender%3Dmale"
    )
    assert response.status_code == 200
    header = response.get_data(as_text=True).splitlines()[0].split(",")
    assert [c for c in header if c.startswith("ch-")] == ["ch-r01", "ch-r03"]
    assert "llm:gpt#t1-2" in header
    bad = lead.get("/lead/studies/ch/export?format=matrix&scale=0-5&where=gender%3Drobot")
    assert bad.status_code == 422
    tree = lxml_html.fromstring(bad.get_data(as_text=True))
    assert "choose one under “Only raters where”" in tree.xpath("string(//*[@id='export-error'])")
    assert tree.xpath("//input[@id='export-where']/@aria-invalid") == ["true"]


def test_settings_where_accepts_a_mapping():
    settings = AnalysisSettings(where={"gender": ["female"]})
    assert settings.where == (("gender", ("female",)),)
    assert settings.to_dict()["where"] == {"gender": ["female"]}
    hash(settings)


def test_select_frames_keeps_llm_scores(session, make_study):
    study = make_study(**SPEC)
    frames = study_frames(session, study)
    chosen = select_frames(frames, {"gender": ("male",)})
    assert set(chosen.ratings["rater"]) == {"ch-r01", "ch-r03"}
    assert set(chosen.blocks["rater"]) == {"ch-r01", "ch-r03"}
    assert chosen.llm is frames.llm and chosen.items is frames.items
