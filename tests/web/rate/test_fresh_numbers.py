"""A completed block queues the dashboard's job (not each score): the lead's next
view of the study shows the numbers with the block. Crossed and rubric studies."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.jobs import Job, JobStatus, version_key
from annotator.study.studies import get_study
from tests.data.studies import CRITERIA_TOML, study_toml

from .conftest import blocks_of, item_url, join, start


def _dashboard_jobs(app, slug: str) -> tuple[list[Job], str]:
    with Session(get_engine(app)) as session:
        jobs = list(session.exec(select(Job).where(Job.kind == "dashboard").order_by(Job.id)))
        return jobs, version_key(session, get_study(session, slug))


def _post(client, block_id: int, position: int, form: dict) -> None:
    assert client.get(item_url(block_id, position)).status_code == 200
    response = client.post(item_url(block_id, position), data=form)
    assert response.status_code == 302, response.text


@pytest.mark.parametrize("rubric", [False, True], ids=["one-criterion", "rubric"])
def test_the_last_score_of_a_block_queues_the_dashboard(
    app, client, lead_client, make_study, rubric
):
    toml = study_toml() + (CRITERIA_TOML if rubric else "")
    info = make_study(toml, n_items=4)
    rater = join(app, client, info.slug)
    # The lead has seen the study once: its dashboard is stored.
    assert lead_client.get(f"/lead/studies/{info.slug}").status_code == 200
    (seen,), _ = _dashboard_jobs(app, info.slug)
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    total = len(blocks_of(app, rater)[0].item_order)
    assert total >= 4
    names = ["fluency", "coherence", "relevance"] if rubric else []
    form = {f"score:{n}": "2" for n in names} if rubric else {"score": "2"}
    for position in range(1, total):
        _post(client, block.id, position, form)
    # A score that leaves the block open queues nothing.
    assert [j.id for j in _dashboard_jobs(app, info.slug)[0]] == [seen.id]
    _post(client, block.id, total, form)
    jobs, current = _dashboard_jobs(app, info.slug)
    assert len(jobs) == 2 and jobs[-1].status == JobStatus.DONE
    assert jobs[-1].data_version == current != seen.data_version
    page = lead_client.get(f"/lead/studies/{info.slug}").get_data(as_text=True)
    assert "updating…" not in page
