"""An item whose template fails to render: a clear page, not a 500, and the lead is told."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import AuditAction, AuditEvent, Benchmark

from .conftest import blocks_of, item_url, ratings_of, start

FAILING = [
    # Stored before the study file's checks: the sandbox refuses at render time.
    "{{ sentence1.__class__.__mro__ }}",
    # Passes every check, fails on the item's fields.
    "{{ 1 // 0 }}",
    "{{ (question or sentence1) + 1 }}",
]


def _break_templates(app, slug: str, template: str) -> None:
    with Session(get_engine(app)) as session:
        for bench in session.exec(select(Benchmark)).all():
            bench.template = template
            session.add(bench)
        session.commit()


def _events(app) -> list[AuditEvent]:
    with Session(get_engine(app)) as session:
        return list(
            session.exec(select(AuditEvent).where(AuditEvent.action == AuditAction.ITEM_NOT_SHOWN))
        )


@pytest.mark.parametrize("template", FAILING)
def test_the_rater_reads_why_and_the_lead_is_told(app, client, rater, study, template):
    _break_templates(app, study.slug, template)
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    for _ in range(2):
        response = client.get(item_url(block.id, 1))
        assert response.status_code == 200
        page = response.get_data(as_text=True)
        assert "This item cannot be shown" in page
        assert "The study lead has been told" in page
        # No score can be given for an item not seen.
        assert 'name="score"' not in page
        assert 'href="/rate/"' in page
    events = _events(app)
    assert len(events) == 1
    details = events[0].details
    assert details["position"] == 1 and details["block"] == block.id
    assert events[0].subject_id == rater
    assert details["error"]
    assert ratings_of(app, rater) == []


def test_htmx_fragment_too(app, client, rater, study):
    _break_templates(app, study.slug, FAILING[1])
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    response = client.get(item_url(block.id, 1), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "This item cannot be shown" in response.get_data(as_text=True)
