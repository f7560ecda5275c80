"""The gap between blocks: moved by the clock, enforced on every route, liftable by a lead."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import AuditEvent, User

from .conftest import (
    CONFIRMED,
    blocks_of,
    item_url,
    join,
    rate_all,
    ratings_of,
    start,
    study_toml,
)


def _finish_first_block(app, client, rater):
    first = blocks_of(app, rater)[0]
    assert start(client, first.id).status_code == 302
    rate_all(client, first.id, 10)
    return blocks_of(app, rater)


def test_second_block_cannot_start_before_the_first_is_done(app, client, rater):
    blocks = blocks_of(app, rater)
    assert start(client, blocks[0].id).status_code == 302
    response = start(client, blocks[1].id)
    # Not a silent redirect: the page says what to do first.
    assert response.status_code == 403
    assert "Please complete block 1 (scale" in response.text
    assert "Back to your blocks" in response.text
    assert blocks_of(app, rater)[1].started_at is None


def test_gap_opens_exactly_after_session_gap_days(app, client, rater, clock):
    blocks = _finish_first_block(app, client, rater)
    completed = blocks[0].completed_at
    assert completed == clock()
    dashboard = client.get("/rate/")
    # The date and time the block opens, spelled out.
    assert "Available from" in dashboard.text
    assert "Monday 9 March 2026 at 09:00 UTC" in dashboard.text
    done = client.get(f"/rate/blocks/{blocks[0].id}/done")
    assert "opens on" in done.text and "Monday 9 March 2026 at 09:00 UTC" in done.text

    clock.advance(days=7, seconds=-1)
    response = start(client, blocks[1].id)
    assert response.status_code == 403
    assert "opens on" in response.text and "Monday 9 March 2026 at 09:00 UTC" in response.text
    assert blocks_of(app, rater)[1].started_at is None

    clock.advance(seconds=1)
    assert clock() == completed + timedelta(days=7)
    assert ">Start</button>" in client.get("/rate/").text
    assert start(client, blocks[1].id).headers["Location"].endswith(f"/rate/blocks/{blocks[1].id}")
    assert blocks_of(app, rater)[1].started_at == clock()


def test_direct_urls_and_posts_cannot_get_around_the_gap(app, client, rater, clock):
    blocks = _finish_first_block(app, client, rater)
    second = blocks[1].id
    before = len(ratings_of(app, rater))
    clock.advance(days=3)
    for url in (f"/rate/blocks/{second}", item_url(second, 1)):
        # Opening a block whose gap is not over says when it opens.
        response = client.get(url)
        assert response.status_code == 403
        assert "Block 2 is not open yet" in response.text
        assert "Monday 9 March 2026 at 09:00 UTC" in response.text
    response = client.post(item_url(second, 1), data={"score": "3"})
    assert response.status_code == 302
    assert len(ratings_of(app, rater)) == before
    assert blocks_of(app, rater)[1].started_at is None
    # The third block is further still.
    third = start(client, blocks[2].id)
    assert third.status_code == 403 and "Please complete block 2" in third.text
    assert blocks_of(app, rater)[2].started_at is None


def test_fractional_gap_days(app, client, make_study, clock):
    study = make_study(study_toml(slug="half", gap_days=0.5))
    rater = join(app, client, study.slug)
    blocks = _finish_first_block(app, client, rater)
    clock.advance(hours=11, minutes=59)
    start(client, blocks[1].id)
    assert blocks_of(app, rater)[1].started_at is None
    clock.advance(minutes=1)
    start(client, blocks[1].id)
    assert blocks_of(app, rater)[1].started_at is not None


def test_lead_lifts_the_gap_for_one_rater_and_it_is_logged(app, client, study, lead_client, clock):
    rater = join(app, client, study.slug)
    other_client = app.test_client()
    other = join(app, other_client, study.slug)
    blocks = _finish_first_block(app, client, rater)
    _finish_first_block(app, other_client, other)
    page = lead_client.get(f"/lead/studies/{study.slug}/raters")
    assert page.status_code == 200
    with Session(get_engine(app)) as session:
        code = session.get(User, rater).rater_code
        lead = session.exec(select(User).where(User.role == "lead")).one()
    assert code in page.text and "Lift gap" in page.text

    response = lead_client.post(
        f"/lead/studies/{study.slug}/raters/{rater}/lift-gap", data=CONFIRMED
    )
    assert response.status_code == 302
    assert "may start block 2 now" in lead_client.get(response.headers["Location"]).text
    with Session(get_engine(app)) as session:
        (event,) = session.exec(select(AuditEvent).where(AuditEvent.action == "gap-lifted")).all()
        assert (event.actor_id, event.subject_id, event.study_id) == (lead.id, rater, study.id)
        assert event.details["block_position"] == 2
        assert event.created_at == clock()

    # Only this rater may start now.
    assert start(client, blocks[1].id).headers["Location"].endswith(f"/rate/blocks/{blocks[1].id}")
    other_second = blocks_of(app, other)[1]
    start(other_client, other_second.id)
    assert blocks_of(app, other)[1].started_at is None
    # The lift covers one block: the third still waits for the gap.
    rate_all(client, blocks[1].id, 10)
    start(client, blocks[2].id)
    assert blocks_of(app, rater)[2].started_at is None


def test_lift_gap_when_nothing_waits(app, client, study, lead_client):
    rater = join(app, client, study.slug)
    for block in blocks_of(app, rater):
        with Session(get_engine(app)) as session:
            stored = session.get(type(block), block.id)
            stored.started_at = stored.created_at
            session.add(stored)
            session.commit()
    response = lead_client.post(
        f"/lead/studies/{study.slug}/raters/{rater}/lift-gap", data=CONFIRMED
    )
    assert response.status_code == 302
    page = lead_client.get(response.headers["Location"])
    assert "has no block waiting" in page.text
    with Session(get_engine(app)) as session:
        assert session.exec(select(AuditEvent).where(AuditEvent.action == "gap-lifted")).all() == []


def test_lift_gap_for_a_rater_of_another_study_is_404(app, make_study, lead_client):
    first = make_study(study_toml(slug="first"))
    second = make_study(study_toml(slug="second"))
    rater = join(app, app.test_client(), first.slug)
    response = lead_client.post(
        f"/lead/studies/{second.slug}/raters/{rater}/lift-gap", data=CONFIRMED
    )
    assert response.status_code == 404
    assert (
        lead_client.post(
            f"/lead/studies/{first.slug}/raters/99999/lift-gap", data=CONFIRMED
        ).status_code
        == 404
    )
    assert lead_client.get("/lead/studies/nope/raters").status_code == 404
