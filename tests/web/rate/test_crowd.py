"""Crowd entry (``/s/<slug>``): Prolific and MTurk participants, bad links,
the cap, screening out, completion codes per wave and the next wave's allowlist."""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from sqlmodel import Session

from annotator.db import get_engine, session_scope
from annotator.models import Block, User
from annotator.study.studies import create_study
from annotator.study.studyfile import parse_study_file
from tests.data.studies import study_toml

from .conftest import (
    ANSWERS,
    CONFIRMED,
    PID,
    blocks_of,
    crowd_toml,
    enter_and_consent,
    entry,
    item_url,
    rate_all,
    start,
    users,
)

OTHER_PID = "60aa11bb22cc33dd44ee55ff"


@pytest.fixture
def prolific(make_study):
    return make_study(crowd_toml())


def test_a_new_participant_consents_and_is_keyed_by_their_id(app, client, prolific):
    page = client.get(entry())
    assert page.status_code == 200
    assert "Information and consent" in page.text
    # Showing the consent stores nothing, and the id is nowhere on the page.
    assert users(app) == []
    assert PID not in re.search(r"<title>(.*?)</title>", page.text, re.S).group(1)
    response = enter_and_consent(client)
    assert response.headers["Location"].endswith("/rate/")
    (user,) = users(app)
    assert user.platform_id == PID and user.source == "crowd"
    assert user.consented_at is not None and user.password_hash is None
    # The questionnaire first, then the dashboard.
    assert client.get("/rate/").headers["Location"].endswith("/rate/demographics")
    assert client.post("/rate/demographics", data=ANSWERS).status_code == 302
    dashboard = client.get("/rate/")
    assert "Block 1 of 3" in dashboard.text and PID not in dashboard.text


def test_a_returning_participant_is_logged_in_again(app, client, prolific):
    enter_and_consent(client)
    client.post("/rate/demographics", data=ANSWERS)
    other_browser = app.test_client()
    response = other_browser.get(entry(session_id="SESSION2"))
    assert response.status_code == 302 and response.headers["Location"].endswith("/rate/")
    assert "Block 1 of 3" in other_browser.get("/rate/").text
    assert len(users(app)) == 1


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ({"STUDY_ID": "S1", "SESSION_ID": "X1"}, "has no PROLIFIC_PID parameter"),
        ({"PROLIFIC_PID": "", "STUDY_ID": "S1"}, "PROLIFIC_PID parameter is empty"),
        ({"PROLIFIC_PID": "   "}, "PROLIFIC_PID parameter is empty"),
        ({"PROLIFIC_PID": "{{%PROLIFIC_PID%}}"}, "PROLIFIC_PID parameter is malformed"),
        ({"PROLIFIC_PID": PID[:-1]}, "PROLIFIC_PID parameter is malformed"),
        ({"PROLIFIC_PID": PID + "0"}, "PROLIFIC_PID parameter is malformed"),
        ({"PROLIFIC_PID": PID[:-1] + "!"}, "PROLIFIC_PID parameter is malformed"),
        ({"PROLIFIC_PID": PID, "SESSION_ID": "a b"}, "SESSION_ID parameter is malformed"),
        ({"PROLIFIC_PID": PID, "STUDY_ID": "x" * 101}, "STUDY_ID parameter is malformed"),
    ],
)
@pytest.mark.parametrize("method", ["get", "post"])
def test_a_bad_entry_link_stores_nothing(app, client, prolific, query, problem, method):
    url = "/s/crowd?" + urlencode(query)
    response = getattr(client, method)(url, data={"decision": "agree"})
    assert response.status_code == 400
    assert problem in response.text and "Nothing was recorded" in response.text
    assert users(app) == []
    # The malformed value is not echoed back.
    for value in query.values():
        if len(value) > 3:
            assert value not in response.text


def test_a_study_without_crowd_table_has_no_entry_link(client, make_study):
    make_study(study_toml(slug="plain"))
    assert client.get("/s/plain?PROLIFIC_PID=" + PID).status_code == 404
    assert client.get("/s/nope?PROLIFIC_PID=" + PID).status_code == 404


def test_a_full_study_turns_new_participants_away(app, client, make_study):
    make_study(crowd_toml('platform = "prolific"\nmax_raters = 1\n'))
    enter_and_consent(client)
    newcomer = app.test_client()
    for method in ("get", "post"):
        response = getattr(newcomer, method)(entry(OTHER_PID), data={"decision": "agree"})
        assert response.status_code == 403
        assert "This study is full" in response.text
        assert "return your submission" in response.text
    assert [u.platform_id for u in users(app)] == [PID]
    # The one who is in may still come back.
    assert app.test_client().get(entry()).status_code == 302


def test_declining_records_the_refusal_and_sends_the_screen_out_code(app, client, prolific):
    url = entry()
    ask = client.post(url, data={"decision": "decline"})
    assert ask.status_code == 200 and "Decline to take part?" in ask.text
    assert users(app) == []
    response = client.post(url, data={"decision": "decline", **CONFIRMED})
    assert response.status_code == 302
    end = client.get(response.headers["Location"])
    assert "SCREENED" in end.text
    assert 'http-equiv="refresh"' in end.text
    assert "https://app.prolific.com/submissions/complete?cc=SCREENED" in end.text
    (user,) = users(app)
    assert user.declined_at is not None and user.consented_at is None
    # Coming back with the same id leads to the same end, not to the consent again.
    again = app.test_client().get(url)
    assert again.status_code == 302 and "/s/crowd/end" in again.headers["Location"]


@pytest.mark.parametrize("query", ["", "?why=screened-out", "?why=declined"])
def test_the_end_page_tells_nothing_to_whom_it_did_not_end(app, client, prolific, query):
    unknown = app.test_client().get(f"/s/no-such-study/end{query}")
    assert unknown.status_code == 404
    # Anyone: as for a study that does not exist (issue 36: the name and the
    # screen-out code were shown to anonymous visitors).
    anonymous = app.test_client().get(f"/s/crowd/end{query}")
    assert anonymous.status_code == 404 and "SCREENED" not in anonymous.text
    token = re.compile(r'name="csrf-token" content="[^"]*"')
    assert token.sub("", anonymous.text) == token.sub("", unknown.text)
    # A participant still taking part.
    enter_and_consent(client)
    taking_part = client.get(f"/s/crowd/end{query}")
    assert taking_part.status_code == 404 and "SCREENED" not in taking_part.text
    # The one who declined does see it, in the browser they declined in.
    other = app.test_client()
    url = entry(OTHER_PID)
    declined = other.post(url, data={"decision": "decline", **CONFIRMED})
    end = other.get(declined.headers["Location"])
    assert end.status_code == 200 and "SCREENED" in end.text and "You declined" in end.text
    assert end.headers["Cache-Control"] == "no-store"
    # Their end page is theirs: another browser gets the 404.
    assert app.test_client().get(declined.headers["Location"]).status_code == 404


def _join_and_finish_block_1(app, client) -> int:
    enter_and_consent(client)
    client.post("/rate/demographics", data=ANSWERS)
    (user,) = [u for u in users(app) if u.platform_id == PID]
    first = blocks_of(app, user.id)[0]
    assert start(client, first.id).status_code == 302
    rate_all(client, first.id, 10)
    return user.id


def test_each_wave_gets_its_code_and_records_its_platform_session(
    app, client, prolific, clock, runner
):
    user_id = _join_and_finish_block_1(app, client)
    first = blocks_of(app, user_id)[0]
    assert (first.platform_study_id, first.platform_session_id) == ("WAVE1STUDY", "SESSION1")
    done = client.get(f"/rate/blocks/{first.id}/done")
    assert done.status_code == 200
    assert "WAVE1CODE" in done.text
    assert (
        '<meta http-equiv="refresh" content="0; url=https://app.prolific.com/submissions/'
        'complete?cc=WAVE1CODE">' in done.text
    )
    assert "opens on" in done.text

    # Back before the gap: told when block 2 opens; not yet on the allowlist.
    assert client.get(entry(study_id="WAVE2STUDY", session_id="SESSION2")).status_code == 302
    assert "Available from" in client.get("/rate/").text
    result = runner.invoke(args=["raters", "eligible", "crowd"])
    assert result.exit_code == 0 and result.output == ""

    clock.advance(days=7)
    result = runner.invoke(args=["raters", "eligible", "crowd"])
    assert result.output == f"{PID}\n"
    second = blocks_of(app, user_id)[1]
    assert start(client, second.id).status_code == 302
    second = blocks_of(app, user_id)[1]
    assert (second.platform_study_id, second.platform_session_id) == ("WAVE2STUDY", "SESSION2")
    rate_all(client, second.id, 10)
    assert "WAVE2CODE" in client.get(f"/rate/blocks/{second.id}/done").text

    export = runner.invoke(args=["export", "crowd", "--format", "long", "--out", "-"])
    assert export.exit_code == 0, export.output
    lines = [line for line in export.output.splitlines() if line.startswith("human")]
    assert len(lines) == 20
    assert sum("WAVE1STUDY,SESSION1" in line for line in lines) == 10
    assert sum("WAVE2STUDY,SESSION2" in line for line in lines) == 10


def test_eligible_at_a_given_time_and_wave(app, client, prolific, clock, runner):
    _join_and_finish_block_1(app, client)
    finished = clock().replace(tzinfo=None)
    assert (
        runner.invoke(args=["raters", "eligible", "crowd", "--at", finished.isoformat()]).output
        == ""
    )
    later = finished + timedelta(days=7)
    out = runner.invoke(args=["raters", "eligible", "crowd", "--at", later.isoformat()]).output
    assert out == f"{PID}\n"
    out = runner.invoke(
        args=["raters", "eligible", "crowd", "--at", later.isoformat(), "--wave", "3"]
    ).output
    assert out == ""
    bad = runner.invoke(args=["raters", "eligible", "crowd", "--at", "next tuesday"])
    assert bad.exit_code != 0 and "not an ISO 8601" in bad.output


def test_lead_raters_page_lists_due_and_overdue(app, client, prolific, clock, lead_client):
    _join_and_finish_block_1(app, client)
    page = lead_client.get("/lead/studies/crowd/raters")
    assert "Waves on the crowd platform" in page.text
    assert "waiting: 1" in page.text and "Eligible for their next block now (0)" in page.text
    clock.advance(days=8)
    page = lead_client.get("/lead/studies/crowd/raters")
    assert "due: 1" in page.text and "Eligible for their next block now (1)" in page.text
    assert lead_client.get("/lead/studies/crowd/raters/eligible.txt").text == f"{PID}\n"
    clock.advance(days=7)
    assert "overdue: 1" in lead_client.get("/lead/studies/crowd/raters").text
    # A rater cannot download the list.
    assert client.get("/lead/studies/crowd/raters/eligible.txt").status_code in (302, 403)


def test_failed_attention_checks_screen_out(app, client, make_study):
    make_study(
        crowd_toml(extra="[attention_checks]\nper_session = 1\nscreen_out_after = 1\n"), gold=1
    )
    enter_and_consent(client)
    client.post("/rate/demographics", data=ANSWERS)
    (user,) = users(app)
    first = blocks_of(app, user.id)[0]
    start(client, first.id)
    order = blocks_of(app, user.id)[0].item_order
    check = next(i for i, e in enumerate(order, start=1) if e["attention"])
    # Regular items before the check, then the check given the bottom score (gold: top).
    for position in range(1, check + 1):
        client.get(item_url(first.id, position))
        response = client.post(item_url(first.id, position), data={"score": "0"})
    assert response.status_code == 302
    assert "/s/crowd/end?why=screened-out" in response.headers["Location"]
    end = client.get(response.headers["Location"])
    assert "SCREENED" in end.text and "check questions" in end.text
    with Session(get_engine(app)) as session:
        assert session.get(User, user.id).screened_out_at is not None
    # No way back into the blocks.
    assert "/s/crowd/end" in client.get("/rate/").headers["Location"]
    assert "/s/crowd/end" in app.test_client().get(entry()).headers["Location"]


# ------------------------------------------------------------------ MTurk

MTURK = 'platform = "mturk"\n'
WORKER = "A1B2C3D4E5F6G7"


def mturk_entry(**more) -> str:
    query = {
        "assignmentId": "3ASSIGN0001",
        "hitId": "3HIT0001",
        "workerId": WORKER,
        "turkSubmitTo": "https://workersandbox.mturk.com",
        **more,
    }
    return "/s/crowd?" + urlencode(query)


def test_mturk_preview_shows_consent_and_a_sample_and_stores_nothing(app, client, make_study):
    make_study(crowd_toml(MTURK))
    url = "/s/crowd?" + urlencode(
        {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3HIT0001"}
    )
    page = client.get(url)
    assert page.status_code == 200
    assert "This is a preview" in page.text
    assert "You agree to rate ten short texts." in page.text
    assert "A sample item" in page.text and "Sentence 1 &lt;b&gt;bold?&lt;/b&gt;" in page.text
    assert "<form" not in page.text.split("<main", 1)[1]
    assert users(app) == []


def test_mturk_block_end_posts_the_assignment_back(app, client, make_study):
    make_study(crowd_toml(MTURK))
    enter_and_consent(client, mturk_entry())
    client.post("/rate/demographics", data=ANSWERS)
    (user,) = users(app)
    assert user.platform_id == WORKER
    first = blocks_of(app, user.id)[0]
    start(client, first.id)
    rate_all(client, first.id, 10)
    block = blocks_of(app, user.id)[0]
    assert (block.platform_study_id, block.platform_session_id) == ("3HIT0001", "3ASSIGN0001")
    done = client.get(f"/rate/blocks/{first.id}/done").text
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in done
    assert 'name="assignmentId" value="3ASSIGN0001"' in done
    assert "crowd-submit.js" in done


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"turkSubmitTo": "https://evil.example"}, "turkSubmitTo parameter must be"),
        ({"workerId": "a1b2"}, "workerId parameter is malformed"),
        ({"assignmentId": ""}, "no assignmentId parameter"),
    ],
)
def test_mturk_bad_entries_store_nothing(app, client, make_study, change, problem):
    make_study(crowd_toml(MTURK))
    response = client.post(mturk_entry(**change), data={"decision": "agree"})
    assert response.status_code == 400 and problem in response.text
    assert users(app) == []


def _app_with_study(make_app, toml: str, **config):
    app = make_app(**config)
    with session_scope(app) as session:
        create_study(session, parse_study_file(toml))
    return app


def test_mturk_framing_allows_only_mturk_and_cookies_work_in_a_frame(make_app):
    client = _app_with_study(make_app, crowd_toml(MTURK), MTURK_FRAME=True).test_client()
    page = client.get(mturk_entry())
    assert (
        "; frame-ancestors https://www.mturk.com https://workersandbox.mturk.com"
        in page.headers["Content-Security-Policy"]
    )
    assert "X-Frame-Options" not in page.headers
    response = client.post(mturk_entry(), data={"decision": "agree"})
    cookies = response.headers.getlist("Set-Cookie")
    assert cookies and all("SameSite=None" in c and "Secure" in c for c in cookies)
    (session_cookie,) = [c for c in cookies if c.startswith("session=")]
    assert "Partitioned" in session_cookie


def test_without_mturk_framing_cookies_stay_lax(app, client, prolific):
    response = enter_and_consent(client)
    cookies = response.headers.getlist("Set-Cookie")
    assert cookies and all("SameSite=Lax" in c for c in cookies)
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


def test_entry_links_are_rate_limited(make_app):
    app = _app_with_study(
        make_app, crowd_toml(), RATELIMIT_ENABLED=True, CROWD_ENTRY_RATE_LIMIT="3 per minute"
    )
    client = app.test_client()
    codes = [client.get(entry(pid=f"{i:024d}")).status_code for i in range(4)]
    assert codes == [200, 200, 200, 429]


def test_access_log_lines_leave_out_the_entry_query(app, caplog):
    logger = logging.getLogger("werkzeug")
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        logger.info('%s - - [%s] "%s" %s %s', "127.0.0.1", "now", f"GET {entry()} HTTP/1.1", 200, 5)
    (line,) = [r.getMessage() for r in caplog.records]
    assert PID not in line and "SESSION1" not in line
    assert "GET /s/crowd?[redacted] HTTP/1.1" in line


def test_study_links_prints_the_entry_link(runner, prolific):
    result = runner.invoke(args=["study", "links", "crowd", "--base-url", "https://rate.example"])
    assert result.exit_code == 0, result.output
    assert "Entry link:\thttps://rate.example/s/crowd\n" in result.output
    assert (
        "https://rate.example/s/crowd?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}" in result.output
    )
    plain = runner.invoke(args=["study", "links", "nothing"])
    assert plain.exit_code != 0


def test_study_page_shows_the_entry_link(lead_client, prolific):
    page = lead_client.get("/lead/studies/crowd")
    assert "Entry link for prolific" in page.text and "/s/crowd" in page.text


def test_rated_blocks_are_not_changed_by_entry(app, client, prolific):
    """Coming back with a new session does not rewrite a block already started."""
    enter_and_consent(client)
    client.post("/rate/demographics", data=ANSWERS)
    (user,) = users(app)
    first = blocks_of(app, user.id)[0]
    start(client, first.id)
    client.get(entry(session_id="LATERSESSION"))
    start(client, first.id)
    with Session(get_engine(app)) as session:
        block = session.get(Block, first.id)
        assert block.platform_session_id == "SESSION1"


def test_screening_out_also_ends_invited_raters_of_other_studies(app, client, make_study):
    from .conftest import join

    study = make_study(
        study_toml(
            slug="plain", extra="[attention_checks]\nper_session = 1\nscreen_out_after = 1\n"
        ),
        gold=1,
    )
    user_id = join(app, client, study.slug)
    first = blocks_of(app, user_id)[0]
    start(client, first.id)
    order = blocks_of(app, user_id)[0].item_order
    check = next(i for i, e in enumerate(order, start=1) if e["attention"])
    for position in range(1, check + 1):
        client.get(item_url(first.id, position))
        # Regular items get the top score; so does the check (gold: top): nobody is out.
        response = client.post(item_url(first.id, position), data={"score": "5"})
    assert "/end" not in response.headers["Location"]
    with Session(get_engine(app)) as session:
        assert session.get(User, user_id).screened_out_at is None

    # A second rater who fails the check is out, with a page that names no platform.
    rater = app.test_client()
    user_id = join(app, rater, study.slug)
    first = blocks_of(app, user_id)[0]
    start(rater, first.id)
    order = blocks_of(app, user_id)[0].item_order
    check = next(i for i, e in enumerate(order, start=1) if e["attention"])
    for position in range(1, check + 1):
        rater.get(item_url(first.id, position))
        response = rater.post(item_url(first.id, position), data={"score": "0"})
    assert response.headers["Location"].endswith("/s/plain/end?why=screened-out")
    end = rater.get(response.headers["Location"])
    assert end.status_code == 200 and "participation in" in end.text
    assert 'http-equiv="refresh"' not in end.text


def test_a_block_started_without_a_new_entry_records_no_stale_session(app, client, prolific, clock):
    user_id = _join_and_finish_block_1(app, client)
    clock.advance(days=7)
    # Back by the remembered login, not through the platform's link.
    second = blocks_of(app, user_id)[1]
    assert start(client, second.id).status_code == 302
    second = blocks_of(app, user_id)[1]
    assert (second.platform_study_id, second.platform_session_id) == (None, None)


def test_wave_statuses_of_every_kind_of_participant(app, client, make_study, clock):
    from annotator.collect.waves import WaveStatus, eligible_ids, wave_rows
    from annotator.study.studies import get_study

    make_study(crowd_toml(gap_days=1))
    # In wave 1: consented, block 1 not done.
    enter_and_consent(app.test_client(), entry("A" * 24))
    # Declined.
    refuser = app.test_client()
    refuser.post(entry("B" * 24), data={"decision": "decline", **CONFIRMED})
    # Block 1 done, block 2 in progress.
    user_id = _join_and_finish_block_1(app, client)
    clock.advance(days=1)
    second = blocks_of(app, user_id)[1]
    start(client, second.id)
    with Session(get_engine(app)) as session:
        study = get_study(session, "crowd")
        statuses = {row.user.platform_id: row.status for row in wave_rows(session, study)}
        assert statuses == {
            "A" * 24: WaveStatus.FIRST,
            "B" * 24: WaveStatus.DECLINED,
            PID: WaveStatus.IN_PROGRESS,
        }
        assert eligible_ids(session, study) == []
    rate_all(client, second.id, 10)
    with Session(get_engine(app)) as session:
        study = get_study(session, "crowd")
        assert eligible_ids(session, study, at=clock() + timedelta(hours=23)) == []
        assert eligible_ids(session, study, at=clock() + timedelta(days=1)) == [PID]
        assert eligible_ids(session, study, at=clock() + timedelta(days=1), wave=3) == [PID]
        assert eligible_ids(session, study, at=clock() + timedelta(days=1), wave=2) == []
    third = blocks_of(app, user_id)[2]
    clock.advance(days=1)
    start(client, third.id)
    rate_all(client, third.id, 10)
    with Session(get_engine(app)) as session:
        study = get_study(session, "crowd")
        rows = {row.user.platform_id: row.status for row in wave_rows(session, study)}
        assert rows[PID] == WaveStatus.FINISHED
        assert eligible_ids(session, study, at=clock() + timedelta(days=30)) == []
    # The last block's page: the third code, and no next part.
    done = client.get(f"/rate/blocks/{third.id}/done").text
    assert "WAVE3CODE" in done and "You have completed every part of the study." in done


def test_a_participant_who_left_mid_block_resumes_where_they_stopped(app, client, prolific):
    enter_and_consent(client)
    client.post("/rate/demographics", data=ANSWERS)
    (user,) = users(app)
    first = blocks_of(app, user.id)[0]
    start(client, first.id)
    for position in range(1, 4):
        client.get(item_url(first.id, position))
        client.post(item_url(first.id, position), data={"score": "1"})
    # Another browser continues with the platform session of the block in
    # progress (any other session is refused: tests/web/test_crowd_binding.py).
    elsewhere = app.test_client()
    assert elsewhere.get(entry(session_id="SESSION1")).status_code == 302
    dashboard = elsewhere.get("/rate/").text
    assert "In progress: 3 / 10 rated." in dashboard and ">Resume</a>" in dashboard
    resume = elsewhere.get(f"/rate/blocks/{first.id}")
    assert resume.headers["Location"].endswith(item_url(first.id, 4))
