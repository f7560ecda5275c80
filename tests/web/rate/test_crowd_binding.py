"""Crowd entry (issue 27): knowing a participant's id opens nothing.

A browser is bound to the participant at their first entry; from another
browser the id lets them continue only with the platform session of the
block in progress, or a new platform session for the wave they are due for.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import CrowdEntry, User
from annotator.web.rate.crowd import BROWSER_COOKIE
from tests.data.studies import study_toml

from .conftest import ANSWERS, CONFIRMED, blocks_of, item_url, rate_all, ratings_of, start

PID = "5f1a2b3c4d5e6f708192a3b4"
CODES = '[crowd.completion_codes]\nwaves = ["W1", "W2", "W3"]\nscreen_out = "OUT"\n'


@pytest.fixture
def prolific(make_study):
    return make_study(study_toml(slug="crowd", extra=f'\n[crowd]\nplatform = "prolific"\n{CODES}'))


def entry(session_id: str | None = "SESSION1", study_id: str = "WAVE1STUDY") -> str:
    query = {"PROLIFIC_PID": PID, "STUDY_ID": study_id}
    if session_id is not None:
        query["SESSION_ID"] = session_id
    return "/s/crowd?" + urlencode(query)


def participant(app) -> User:
    with Session(get_engine(app)) as session:
        return session.exec(select(User).where(User.platform_id == PID)).one()


def entries(app) -> list[CrowdEntry]:
    with Session(get_engine(app)) as session:
        return list(session.exec(select(CrowdEntry).order_by(CrowdEntry.id)))


def logged_in(client) -> bool:
    return client.get("/rate/").status_code == 200


@pytest.fixture
def joined(app, client, prolific) -> int:
    """The participant consented in ``client`` and answered the questionnaire."""
    assert client.get(entry()).status_code == 200
    assert client.post(entry(), data={"decision": "agree"}).status_code == 302
    assert client.post("/rate/demographics", data=ANSWERS).status_code == 302
    return participant(app).id


@pytest.fixture
def mid_block(app, client, joined) -> int:
    """Block 1 started under SESSION1, three items rated."""
    block = blocks_of(app, joined)[0]
    assert start(client, block.id).status_code == 302
    rate_all(client, block.id, 3, value="1")
    return block.id


@pytest.mark.parametrize("session_id", [None, "FORGED1", "SESSION1B"])
def test_the_id_alone_does_not_open_a_block_in_progress(app, mid_block, session_id):
    stranger = app.test_client()
    response = stranger.get(entry(session_id))
    assert response.status_code == 403
    assert "continue in the browser you started in" in response.text
    assert not logged_in(stranger)
    # Nor can the stranger post a score.
    stranger.post(item_url(mid_block, 4), data={"score": "5"})
    assert len(ratings_of(app, participant(app).id)) == 3
    assert entries(app)[-1].proof == "refused"


def test_the_bound_browser_comes_back_by_the_link_after_logging_out(app, client, mid_block):
    assert client.post("/logout", data=CONFIRMED).status_code == 302
    assert not logged_in(client)
    assert client.get(entry(session_id=None)).status_code == 302
    assert logged_in(client)
    assert entries(app)[-1].proof == "browser"


def test_a_tampered_binding_cookie_is_no_proof(app, client, mid_block):
    stranger = app.test_client()
    stranger.set_cookie(BROWSER_COOKIE, client.get_cookie(BROWSER_COOKIE).value + "x")
    assert stranger.get(entry(session_id=None)).status_code == 403
    assert not logged_in(stranger)


def test_another_browser_continues_with_the_session_in_progress(app, client, mid_block):
    other = app.test_client()
    response = other.get(entry("SESSION1"))
    assert response.status_code == 302
    resume = other.get(f"/rate/blocks/{mid_block}")
    assert resume.headers["Location"].endswith(item_url(mid_block, 4))
    assert entries(app)[-1].proof == "session"
    # Bound from now on: the id alone brings this browser back.
    other.post("/logout", data=CONFIRMED)
    assert other.get(entry(None)).status_code == 302


def test_a_new_platform_session_opens_only_a_wave_that_is_due(app, client, joined, clock):
    first = blocks_of(app, joined)[0]
    start(client, first.id)
    rate_all(client, first.id, 10)
    other = app.test_client()
    # Before the gap is over, a new session opens nothing.
    assert other.get(entry("SESSION2", "WAVE2STUDY")).status_code == 403
    clock.advance(days=7)
    # The session of the finished block is spent.
    assert other.get(entry("SESSION1")).status_code == 403
    assert other.get(entry("SESSION2", "WAVE2STUDY")).status_code == 302
    second = blocks_of(app, joined)[1]
    assert start(other, second.id).status_code == 302
    second = blocks_of(app, joined)[1]
    assert second.platform_session_id == "SESSION2"
    assert [e.proof for e in entries(app)] == [
        "consent",
        "refused",
        "refused",
        "new-session",
    ]


def test_every_entry_is_recorded_with_time_address_and_proof(app, client, mid_block):
    app.test_client().get(entry("FORGED1"), environ_base={"REMOTE_ADDR": "203.0.113.9"})
    consent, refused = entries(app)
    assert consent.proof == "consent" and refused.proof == "refused"
    assert refused.address == "203.0.113.9" and refused.created_at is not None
    assert refused.platform_session_id == "FORGED1"
    assert consent.browser != refused.browser and len(consent.browser) == 64


def test_the_lead_sees_a_participant_who_entered_from_several_browsers(
    app, client, mid_block, lead_client
):
    page = lead_client.get("/lead/studies/crowd/raters").text
    assert "several-browsers" not in page
    # A refused browser does not count.
    app.test_client().get(entry("FORGED1"))
    assert "several-browsers" not in lead_client.get("/lead/studies/crowd/raters").text
    app.test_client().get(entry("SESSION1"))
    page = lead_client.get("/lead/studies/crowd/raters").text
    assert "entered from 2 browsers" in page


def test_a_crowd_participant_has_no_return_link_and_no_password(app, client, joined):
    user = participant(app)
    assert user.return_token is None and user.password_hash is None
    dashboard = client.get("/rate/").text
    assert "/r/" not in dashboard and "set a password" not in dashboard
    response = client.post(
        "/rate/account", data={"password": "a new password", "confirm": "a new password"}
    )
    assert response.status_code == 302
    assert participant(app).password_hash is None
    # Logging out points to the platform's link, not to a return link.
    warning = client.post("/logout")
    assert "platform that sent you here" in warning.text and "/r/" not in warning.text
