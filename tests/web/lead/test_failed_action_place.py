"""A refused lead action opens the study page where its form is, with the message
beside it: exports (made in the request or as a job) and the report's settings."""

from __future__ import annotations

import lxml.html
import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.jobs import Job

STUDY = "/lead/studies/small"


def _tree(response):
    return lxml.html.fromstring(response.get_data(as_text=True))


def _after(tree, anchor_id: str, element_id: str) -> bool:
    """Whether the element ``element_id`` comes after ``anchor_id`` in the page."""
    ids = [e.get("id") for e in tree.iter() if e.get("id")]
    return ids.index(anchor_id) < ids.index(element_id)


def test_the_forms_open_the_page_at_themselves(lead_client, small_study):
    tree = _tree(lead_client.get(STUDY))
    (export,) = tree.xpath("//form[.//select[@id='format']]")
    assert export.get("action") == f"{STUDY}/export#export"
    (notes,) = export.xpath(".//button[@name='notes']")
    assert notes.get("formaction") == f"{STUDY}/export#export-notes"
    # Applied, the analysis settings open the page at the dashboard they change.
    (settings,) = tree.xpath("//form[@id='analysis-settings']")
    assert settings.get("action") == f"{STUDY}#dashboard"


def test_refused_analysis_settings_are_named_above_the_dashboard(lead_client, small_study):
    # The page opens at the dashboard: a line above it says the settings were not
    # all applied and links to the form, where the message stands beside the field.
    tree = _tree(lead_client.get(f"{STUDY}?where=shoe%3D1"))
    assert _after(tree, "analysis-refused", "dashboard")
    (link,) = tree.get_element_by_id("analysis-refused").xpath(".//a")
    assert link.get("href") == "#analysis-settings"
    assert "shoe" in tree.get_element_by_id("analysis-error").text_content()
    assert tree.get_element_by_id("analysis-where").get("aria-invalid") == "true"
    assert "analysis-refused" not in lead_client.get(STUDY).get_data(as_text=True)


@pytest.mark.parametrize(
    "query, field",
    [
        ("format=matrix", "scale"),
        ("format=matrix&scale=0-5&temperature=hot", "temperature"),
    ],
    ids=["matrix-without-scale", "bad-temperature"],
)
def test_a_refused_export_shows_its_message_in_the_export_section(
    lead_client, small_study, query, field
):
    response = lead_client.get(f"{STUDY}/export?{query}")
    assert response.status_code == 422
    tree = _tree(response)
    assert _after(tree, "export", "export-error")
    assert tree.get_element_by_id(field).get("aria-invalid") == "true"
    # Not at the page's top: no flashed message there.
    assert not tree.xpath("//p[contains(@class, 'flash')]")


def test_a_refused_export_job_shows_its_message_in_the_export_section(
    app, lead_client, small_study
):
    app.config["EXPORT_JOB_MIN_RATINGS"] = 1
    offer = _tree(lead_client.get(f"{STUDY}/export?format=matrix&scale=0-5"))
    (form,) = offer.xpath("//form[.//button[starts-with(., 'Build')]]")
    assert form.get("action").endswith("#export")
    # A forged choice the GET would have refused: the study page, at the form.
    response = lead_client.post(f"{STUDY}/export?format=matrix&scale=0-5&temperature=-1")
    assert response.status_code == 422
    tree = _tree(response)
    assert _after(tree, "export", "export-error")
    assert "temperature" in tree.get_element_by_id("export-error").text_content()
    with Session(get_engine(app)) as session:
        assert session.exec(select(Job).where(Job.kind == "export")).all() == []


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_refused_report_opens_the_settings_form_with_the_message(
    lead_client, small_study, method
):
    response = getattr(lead_client, method)(f"{STUDY}/report?where=shoe%3D1")
    assert response.status_code == 302
    assert response.headers["Location"] == f"{STUDY}?where=shoe%3D1#analysis-settings"
    tree = _tree(lead_client.get(response.headers["Location"]))
    message = " ".join(tree.get_element_by_id("analysis-error").text_content().split())
    assert message.startswith("The report was not started. ")
    assert "shoe" in message
    assert not tree.xpath("//p[contains(@class, 'flash')]")
