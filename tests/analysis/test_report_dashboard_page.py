"""The lead's study page: the dashboard (whole page, or the partial htmx asks for) shows
the Dashboard's fields, and the report downloads."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from annotator.services.dashboards import cached_dashboard
from annotator.study.studies import create_lead
from tests.analysis.dashboard_page import cell_text, scale_cards
from tests.conftest import download_report

LEAD = ("lead@example.org", "lead-password-1")


@pytest.fixture
def lead(client, session):
    create_lead(session, *LEAD)
    session.commit()
    response = client.post("/login", data={"username": LEAD[0], "password": LEAD[1]})
    assert response.status_code == 302
    return client


def test_page_and_partial_show_the_dashboard(lead, session, make_study):
    study = make_study(slug="done", n_items=40, n_raters=4, seed=3)
    page = lead.get("/lead/studies/done")
    assert page.status_code == 200 and "HX-Request" in page.headers["Vary"]
    partial = lead.get("/lead/studies/done", headers={"HX-Request": "true"})
    assert partial.status_code == 200 and "HX-Request" in partial.headers["Vary"]
    body = partial.get_data(as_text=True)
    assert body.lstrip().startswith('<section id="dashboard"')
    assert "<html" not in body and "<h1>" not in body and "Export" not in body
    full = page.get_data(as_text=True)
    assert "<h1>Synthetic done</h1>" in full and "Export" in full

    dashboard = cached_dashboard(session, study)
    for html in (full, body):
        cards = scale_cards(html)
        assert list(cards) == [part.scale for part in dashboard.scales]
        for part in dashboard.scales:
            card = cards[part.scale]
            stats = {
                cell_text(s.xpath("./span[@class='name']")[0]): cell_text(
                    s.xpath("./span[@class='value']")[0]
                )
                for s in card.xpath(".//div[contains(concat(' ', @class, ' '), ' stat ')]")
            }
            assert stats["ICC(A,1) [95% CI]"] == part.icc_a1.text
            assert stats["ICC(A,k) [95% CI]"] == part.icc_ak.text
            assert stats["Krippendorff's alpha (interval)"] == part.alpha.text
            rows = card.xpath(".//table[@class='agreement']/tbody/tr")
            assert len(rows) == 1 + len(part.models)
            for row, agreement in zip(rows, [part.ensemble, *part.models], strict=True):
                cells = [cell_text(td) for td in row.xpath("./td")]
                assert cells == [agreement.icc_a1.text, agreement.nmae.text, str(agreement.n_items)]
            verdicts = card.xpath(".//table[@class='alttest']/tbody/tr[not(@class)]")
            assert len(verdicts) == len(part.alttest)
            for row, alt in zip(verdicts, part.alttest, strict=True):
                assert cell_text(row.xpath("./th")[0]) == alt.model
                assert alt.verdict in cell_text(row)
                if alt.passed is not None:
                    assert [cell_text(td) for td in row.xpath("./td")][:2] == [
                        alt.winning_rate.text,
                        alt.advantage_probability.text,
                    ]
    # Without JS: a plain link reloads the page; the partial refreshes itself by htmx.
    tree = lxml_html.fromstring(body)
    (section,) = tree.xpath("//section[@id='dashboard']")
    assert section.get("hx-get") == "/lead/studies/done"
    assert section.get("hx-swap") == "outerHTML" and section.get("hx-trigger").startswith("every")
    assert tree.xpath("//a[text()='Refresh now']/@href") == ["/lead/studies/done"]


def test_during_collection_the_dashboard_says_what_cannot_run_yet(lead, session, make_study):
    study = make_study(slug="early", n_items=8, n_raters=3, unfinished_raters=1, seed=2)
    dashboard = cached_dashboard(session, study)
    page = lead.get("/lead/studies/early").get_data(as_text=True)
    cards = scale_cards(page)
    reasons = [row.reason for part in dashboard.scales for row in part.alttest if row.reason]
    assert reasons, "a study of 8 items cannot run the alt-test"
    for part in dashboard.scales:
        text = cell_text(cards[part.scale])
        for row in part.alttest:
            if row.reason:
                assert row.reason in text and "cannot run yet" in text
        for state, count in part.block_counts.items():
            assert f"{count} {state}" in text
    # Nothing shows a number where the dashboard has none.
    assert "nan" not in page.lower().replace("nmae", "")


def test_report_downloads_from_the_study_page(lead, make_study):
    make_study(slug="dl", n_items=30, n_raters=4, seed=9)
    page = lead.get("/lead/studies/dl").get_data(as_text=True)
    tree = lxml_html.fromstring(page)
    form = tree.xpath("//form[.//button[text()='Download report']]")[0]
    assert form.get("method") == "post" and form.get("action") == "/lead/studies/dl/report"
    response = download_report(lead, "dl")
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert response.headers["Content-Disposition"] == 'attachment; filename="dl-report.html"'
    report = lxml_html.fromstring(response.get_data(as_text=True))
    assert report.xpath("//h1")[0].text == "Report: Synthetic dl"
    assert lead.get("/lead/studies/nope/report").status_code == 404
    assert lead.post("/lead/studies/nope/report").status_code == 404


def test_raters_and_strangers_get_no_report(client, make_study):
    make_study(slug="private", n_items=5, n_raters=2)
    response = client.get("/lead/studies/private/report")
    assert response.status_code in (302, 401, 403)
    assert client.post("/lead/studies/private/report").status_code in (302, 401, 403)
    assert b"Table 2" not in response.data
