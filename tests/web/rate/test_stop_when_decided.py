"""A study stopped when decided serves no new block: closed blocks, complete entry pages.

The decision itself is tested in tests/services/test_stopping.py; here the stop is
recorded as ``annotator validation check`` records it, and the pages follow.
"""

from __future__ import annotations

from sqlmodel import Session

from annotator.clock import now
from annotator.db import get_engine
from annotator.models import Study
from tests.data.studies import study_toml

from .conftest import (
    blocks_of,
    crowd_toml,
    enter_and_consent,
    entry,
    item_url,
    join,
    new_invite,
    ratings_of,
    start,
    users,
)

STOP = '[validation]\nstop_when_decided = true\njudges = ["gpt"]\n'


def _stop(app, study_id: int) -> None:
    with Session(get_engine(app)) as session:
        study = session.get(Study, study_id)
        study.stopped_at = now()
        study.stop_reason = "scale x, judge gpt: passes; test"
        session.add(study)
        session.commit()


def test_blocks_in_progress_finish_and_no_new_block_starts(app, client, make_study):
    study = make_study(study_toml(slug="stopper", gap_days=0, extra=STOP))
    rater = join(app, client, study.slug)
    first, second, *_ = blocks_of(app, rater)
    assert start(client, first.id).status_code == 302
    assert client.post(item_url(first.id, 1), data={"score": "2.5"}).status_code == 302
    _stop(app, study.id)

    # The block in progress goes on and its ratings are stored.
    assert client.get(item_url(first.id, 2)).status_code == 200
    assert client.post(item_url(first.id, 2), data={"score": "1.5"}).status_code == 302
    assert len(ratings_of(app, rater)) == 2
    dashboard = client.get("/rate/")
    assert "In progress: 2 / 10 rated." in dashboard.text
    assert "Not needed: the study is complete" in dashboard.text
    # The next block does not start, and nothing of it is stored.
    response = start(client, second.id)
    assert response.status_code == 302 and response.headers["Location"].endswith("/rate/")
    assert "This study is complete" in client.get("/rate/").text
    assert blocks_of(app, rater)[1].started_at is None
    assert client.get(f"/rate/blocks/{second.id}").headers["Location"].endswith("/rate/")


def test_an_unused_invite_says_the_study_is_complete(app, client, make_study):
    study = make_study(study_toml(slug="stopper", extra=STOP))
    token = new_invite(app, study.slug)
    _stop(app, study.id)
    for response in (
        client.get(f"/invite/{token}"),
        client.post(f"/invite/{token}", data={"decision": "agree"}),
    ):
        assert response.status_code == 410
        assert "This study is complete" in response.text
    assert users(app) == []


def test_the_crowd_entry_turns_newcomers_away_but_lets_participants_back(app, client, make_study):
    study = make_study(crowd_toml(extra=STOP))
    enter_and_consent(client)
    _stop(app, study.id)
    newcomer = app.test_client()
    other = entry(pid="60aa11bb22cc33dd44ee55ff")
    for response in (newcomer.get(other), newcomer.post(other, data={"decision": "agree"})):
        assert response.status_code == 403
        assert "This study is complete" in response.text
        assert "return your submission" in response.text
    assert len(users(app)) == 1
    # The participant who joined before the stop still gets in (to their closed blocks).
    back = client.get(entry())
    assert back.status_code == 302 and back.headers["Location"].endswith("/rate/")
