"""The dashboard's self-consistency rows and their table on the lead's page."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from annotator.analysis.agreement_tables import consistency_rows
from annotator.analysis.dashboard import study_dashboard
from annotator.data.frames import study_frames

from .test_agreement_tables import two_judge_study
from .test_report_dashboard_page import _cards, _text, lead  # noqa: F401  (fixture)


@pytest.fixture
def study(session, make_study):
    return two_judge_study(session, make_study, "dash")


def test_dashboard_rows_are_the_report_table(session, study):
    frames = study_frames(session, study)
    card = study_dashboard(frames).scale("0-5")
    rows = {(r.model, r.temperature): r for r in card.consistency}
    assert rows["steady", "0.7"].alpha.value > rows["noisy", "0.7"].alpha.value
    table = consistency_rows(frames).set_index(["model", "scale", "temperature"])
    assert rows["noisy", "0.7"].icc_a1.value == pytest.approx(
        table.loc[("noisy", "0-5", 0.7), "icc_a1"]
    )
    assert rows["steady", "0.7"].n_runs == 3


def test_lead_page_shows_the_table(lead, study):  # noqa: F811
    page = lead.get("/lead/studies/dash").get_data(as_text=True)
    card = _cards(page)["0-5"]
    table = card.xpath(".//table[@class='consistency']")[0]
    cells = {
        _text(tr.xpath("./th")[0]): [_text(td) for td in tr.xpath("./td")]
        for tr in table.xpath("./tbody/tr")
        if _text(tr.xpath("./td")[0]) == "0.7"
    }
    assert cells["steady"][1] == "3"
    assert float(cells["steady"][3]) > float(cells["noisy"][3])
    assert lxml_html.fromstring(page) is not None
