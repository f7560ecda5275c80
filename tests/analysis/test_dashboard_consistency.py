"""The dashboard's self-consistency rows and their table on the lead's page."""

from __future__ import annotations

import pytest

from annotator.analysis.agreement_tables import consistency_rows
from annotator.data.frames import study_frames
from annotator.render.dashboard import study_dashboard
from tests.analysis.agreement_study import two_judge_study
from tests.analysis.dashboard_page import cell_text, scale_cards


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


def test_lead_page_shows_the_table(lead_client, session, study):
    page = lead_client.get("/lead/studies/dash").get_data(as_text=True)
    card = scale_cards(page)["0-5"]
    table = card.xpath(".//table[@class='consistency']")[0]
    cells = {
        cell_text(tr.xpath("./th")[0]): [cell_text(td) for td in tr.xpath("./td")]
        for tr in table.xpath("./tbody/tr")
        if cell_text(tr.xpath("./td")[0]) == "0.7"
    }
    assert cells["steady"][1] == "3"
    assert float(cells["steady"][3]) > float(cells["noisy"][3])
    # Each row prints the report table's numbers (computed apart, from the frames).
    table = consistency_rows(study_frames(session, study)).set_index(["model", "scale"])
    for model in ("steady", "noisy"):
        row = table.loc[(model, "0-5")]
        assert cells[model][2] == str(int(row["n_items"]))
        assert float(cells[model][3]) == pytest.approx(row["alpha_interval"], abs=0.0005)
        assert cells[model][4].startswith(f"{row['icc_a1']:.3f} [")
