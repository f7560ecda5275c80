"""The whole way of a rater: invite, consent, questionnaire, three blocks, thanks."""

from __future__ import annotations

from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.exporters import demographics_export, long_export
from annotator.models import Demographics, Invite, RatingChange, Scale, User
from annotator.studies import get_study

from .conftest import (
    ANSWERS,
    blocks_of,
    item_url,
    new_invite,
    progress,
    rate_all,
    ratings_of,
    start,
    study_toml,
)


def test_invite_opens_the_consent_page(app, client, study):
    token = new_invite(app, study.slug)
    response = client.get(f"/invite/{token}")
    assert response.status_code == 200
    assert "You agree to rate ten short texts." in response.text
    assert ">I agree</button>" in response.text
    with Session(get_engine(app)) as session:
        # Opening the link stores nothing: no rater exists until they answer.
        assert session.exec(select(User).where(User.role == "rater")).all() == []


def test_unknown_invite_is_404(client, study):
    assert client.get("/invite/no-such-token").status_code == 404


def test_declining_stores_only_the_refusal(app, client, study):
    token = new_invite(app, study.slug)
    response = client.post(f"/invite/{token}", data={"decision": "decline", "confirmed": "yes"})
    assert response.status_code == 302
    assert client.get(response.headers["Location"]).status_code == 200
    with Session(get_engine(app)) as session:
        (user,) = session.exec(select(User).where(User.role == "rater")).all()
        assert user.declined_at is not None and user.consented_at is None
        assert user.password_hash is None
        assert session.exec(select(Demographics)).all() == []
        invite = session.exec(select(Invite).where(Invite.token == token)).one()
        assert invite.used_at is not None and invite.user_id == user.id
        frame = demographics_export(session, get_study(session, study.slug))
        assert list(frame["rater"]) == [user.rater_code]
    assert blocks_of(app, user.id) == []
    # Not logged in: the study ended there.
    assert client.get("/rate/").status_code == 302
    # And the link cannot be used again.
    assert client.get(f"/invite/{token}").status_code == 410


def test_consent_form_without_a_decision_is_refused(app, client, study):
    token = new_invite(app, study.slug)
    response = client.post(f"/invite/{token}", data={})
    assert response.status_code == 400
    with Session(get_engine(app)) as session:
        assert session.exec(select(User).where(User.role == "rater")).all() == []


def test_agreeing_leads_to_the_questionnaire_then_the_dashboard(app, client, study):
    token = new_invite(app, study.slug)
    response = client.post(f"/invite/{token}", data={"decision": "agree"})
    assert response.status_code == 302
    # The dashboard sends the rater to the questionnaire first.
    response = client.get("/rate/")
    assert response.headers["Location"].endswith("/rate/demographics")
    page = client.get("/rate/demographics")
    assert ">Continue</button>" in page.text
    assert "Gender (self-reported)" in page.text
    response = client.post("/rate/demographics", data=ANSWERS)
    assert response.headers["Location"].endswith("/rate/")
    dashboard = client.get("/rate/")
    assert dashboard.status_code == 200
    assert ">Start</button>" in dashboard.text
    # The link now belongs to this rater: following it again goes home.
    assert client.get(f"/invite/{token}").headers["Location"].endswith("/rate/")


def test_the_same_invite_cannot_enrol_two_raters(app, client, study):
    token = new_invite(app, study.slug)
    assert client.post(f"/invite/{token}", data={"decision": "agree"}).status_code == 302
    other = app.test_client()
    assert other.post(f"/invite/{token}", data={"decision": "agree"}).status_code == 410
    with Session(get_engine(app)) as session:
        assert len(session.exec(select(User).where(User.role == "rater")).all()) == 1


def test_one_block_stores_every_rating_with_position_and_times(app, client, rater, clock):
    block = blocks_of(app, rater)[0]
    response = start(client, block.id)
    assert response.headers["Location"].endswith(f"/rate/blocks/{block.id}")
    page = client.get(item_url(block.id, 1))
    assert progress(page.text) == "1 / 10"
    served = clock()
    clock.advance(seconds=30)
    rate_all(client, block.id, 10, value="3.25")
    ratings = ratings_of(app, rater)
    assert [r.position for r in ratings] == list(range(1, 11))
    assert all(r.value == 3.25 for r in ratings)
    assert ratings[0].served_at == served
    assert ratings[0].submitted_at == served.replace() + (clock() - served)
    (block,) = [b for b in blocks_of(app, rater) if b.id == block.id]
    assert block.completed_at is not None
    assert [r.item_id for r in ratings] == [e["item"] for e in block.item_order]
    with Session(get_engine(app)) as session:
        changes = session.exec(select(RatingChange)).all()
        assert {c.reason for c in changes} == {"create"} and len(changes) == 10


def test_three_blocks_a_week_apart_end_in_the_export(app, client, make_study, clock):
    toml = study_toml(slug="three", extra='completion_code = "THANKS-42"')
    study = make_study(toml)
    from .conftest import join

    rater = join(app, client, study.slug)
    blocks = blocks_of(app, rater)
    assert [b.position for b in blocks] == [1, 2, 3]
    for index, block in enumerate(blocks):
        if index:
            # The gap is still running: Start is refused, saying when the
            # block opens, and nothing changes.
            response = start(client, block.id)
            assert response.status_code == 403 and "opens on" in response.text
            assert blocks_of(app, rater)[index].started_at is None
            clock.advance(days=7)
        assert start(client, block.id).status_code == 302
        rate_all(client, block.id, 10, value=["1.5", "7", "42.5"][index])
        done = client.get(f"/rate/blocks/{block.id}/done", follow_redirects=True)
        if index < 2:
            assert "opens on" in done.text
        else:
            assert "THANKS-42" in done.text
    with Session(get_engine(app)) as session:
        frame = long_export(session, get_study(session, study.slug))
    human = frame[frame["kind"] == "human"]
    assert len(human) == 30
    assert sorted(human["block_position"].unique()) == [1, 2, 3]
    for _position, group in human.groupby("block_position"):
        assert sorted(group["presentation_position"]) == list(range(1, 11))
        # One scale per block.
        assert group["scale"].nunique() == 1
        assert group["served_at"].notna().all() and group["submitted_at"].notna().all()
    assert set(human["scale"]) == {"0-5", "0-10", "0-100"}
    # The export's block positions are the rater's stored block order.
    with Session(get_engine(app)) as session:
        names = {s.id: s.name for s in session.exec(select(Scale))}
    exported = dict(zip(human["block_position"], human["scale"], strict=True))
    assert exported == {b.position: names[b.scale_id] for b in blocks}
