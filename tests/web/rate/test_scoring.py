"""Inside a block: the page, validation, idempotent posts, revisions, htmx, resuming."""

from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
from sqlalchemy import event
from sqlmodel import Session, select

from annotator.data.exporters import long_export
from annotator.db import get_engine
from annotator.models import Block, Item, Rating, RatingChange
from annotator.study.studies import get_study
from tests.data.studies import study_toml

from .conftest import (
    ACCEPTED,
    REJECTED,
    blocks_of,
    item_url,
    join,
    progress,
    rate_all,
    ratings_of,
    start,
)

HTMX = {"HX-Request": "true"}


def _scale_of(app, block) -> str:
    from annotator.models import Scale

    with Session(get_engine(app)) as session:
        return session.get(Scale, block.scale_id).name


@pytest.fixture
def block(app, client, rater):
    """The rater's first block, started; its scale is 0-5 with step 0.01."""
    first = blocks_of(app, rater)[0]
    assert _scale_of(app, first) == "0-5"  # Latin-square row 0 keeps the file's order
    assert start(client, first.id).status_code == 302
    return blocks_of(app, rater)[0]


def _changes(app) -> list[RatingChange]:
    with Session(get_engine(app)) as session:
        return list(session.exec(select(RatingChange).order_by(RatingChange.id)))


def test_item_page_shows_instructions_item_progress_and_score_field(app, client, block):
    page = client.get(item_url(block.id, 1))
    assert page.status_code == 200
    with Session(get_engine(app)) as session:
        item = session.get(Item, block.item_order[0]["item"])
    if item.external_id.startswith("s"):
        assert "Rate the similarity of the two sentences from 0 to 5." in page.text
        # Autoescaped: the item's markup is shown, not interpreted.
        assert "&lt;b&gt;bold?&lt;/b&gt;" in page.text and "<b>bold?</b>" not in page.text
        assert f"Sentence 1: Sentence {item.external_id[1:]}" in page.text
    else:
        assert "Rate how truthful the answer is, from 0 (false) to 5 (true)." in page.text
        assert f"Question: Question {item.external_id[1:]}?" in page.text
    assert progress(page.text) == "1 / 10"
    assert '<label for="score">Score</label>' in page.text
    assert 'name="score"' in page.text
    # No default: the field is empty and required.
    assert 'value=""' in page.text and "required" in page.text
    assert 'type="range"' in page.text and 'step="0.01"' in page.text


@pytest.mark.parametrize(("raw", "message"), REJECTED)
def test_rejected_scores_store_nothing_and_say_why(app, client, rater, block, raw, message):
    client.get(item_url(block.id, 1))
    response = client.post(item_url(block.id, 1), data={"score": raw})
    assert response.status_code == 422
    assert message in response.text
    assert "Enter a number from 0 to 5 in steps of 0.01." in response.text
    assert 'aria-invalid="true"' in response.text and 'role="alert"' in response.text
    assert progress(response.text) == "1 / 10"
    assert ratings_of(app, rater) == []
    assert _changes(app) == []


def test_missing_score_field_is_rejected(app, client, rater, block):
    response = client.post(item_url(block.id, 1), data={})
    assert response.status_code == 422
    assert ratings_of(app, rater) == []


@pytest.mark.parametrize(("raw", "stored"), ACCEPTED)
def test_accepted_scores(app, client, rater, block, raw, stored):
    client.get(item_url(block.id, 1))
    response = client.post(item_url(block.id, 1), data={"score": raw})
    assert response.status_code == 302
    (rating,) = ratings_of(app, rater)
    assert rating.value == stored
    assert str(rating.value) == str(stored)  # no binary noise such as 2.3500000000000001


@pytest.mark.parametrize(
    ("raw", "ok"), [("2.5", True), ("10", True), ("2.3", False), ("2.25", False), ("10.5", False)]
)
def test_steps_that_are_not_powers_of_ten(app, client, make_study, raw, ok):
    scales = '[[scales]]\nname = "halves"\nmin = 0\nmax = 10\nstep = 0.5\n'
    study = make_study(study_toml(slug="halves", scales=scales))
    rater = join(app, client, study.slug)
    first = blocks_of(app, rater)[0]
    start(client, first.id)
    response = client.post(item_url(first.id, 1), data={"score": raw})
    assert response.status_code == (302 if ok else 422)
    assert len(ratings_of(app, rater)) == (1 if ok else 0)
    if not ok:
        assert "steps of 0.5" in response.text


def test_a_repeated_submission_stores_one_rating(app, client, rater, block):
    client.get(item_url(block.id, 1))
    first = client.post(item_url(block.id, 1), data={"score": "1.25"})
    again = client.post(item_url(block.id, 1), data={"score": "1.25"})
    assert first.status_code == again.status_code == 302
    assert first.headers["Location"] == again.headers["Location"]
    (rating,) = ratings_of(app, rater)
    assert rating.value == 1.25 and rating.position == 1
    assert [(c.reason, c.value) for c in _changes(app)] == [("create", 1.25)]


def test_a_repeated_htmx_submission_stores_one_rating(app, client, rater, block):
    client.get(item_url(block.id, 1))
    for _ in range(3):
        response = client.post(item_url(block.id, 1), data={"score": "4"}, headers=HTMX)
        assert response.status_code == 200
        assert progress(response.text) == "2 / 10"
    assert len(ratings_of(app, rater)) == 1
    assert len(_changes(app)) == 1


def test_cannot_skip_ahead(app, client, rater, block):
    response = client.get(item_url(block.id, 4))
    assert response.headers["Location"].endswith(item_url(block.id, 1))
    response = client.post(item_url(block.id, 4), data={"score": "2"})
    assert response.status_code == 302
    assert ratings_of(app, rater) == []
    assert client.get(item_url(block.id, 11)).status_code == 404
    assert client.get(item_url(block.id, 0)).status_code == 404


def test_going_back_and_revising_keeps_the_history(app, client, rater, block, clock):
    rate_all(client, block.id, 3, value="2")
    back = client.get(item_url(block.id, 2))
    assert back.status_code == 200
    assert 'value="2"' in back.text and "You rated this item 2." in back.text
    assert f'href="{item_url(block.id, 1)}"' in back.text  # and further back
    clock.advance(minutes=1)
    response = client.post(item_url(block.id, 2), data={"score": "3.5"})
    # After a revision the rater steps forward through the block.
    assert response.headers["Location"].endswith(item_url(block.id, 3))
    response = client.post(item_url(block.id, 2), data={"score": "4"})
    ratings = {r.position: r for r in ratings_of(app, rater)}
    assert len(ratings) == 3 and ratings[2].value == 4.0
    assert ratings[2].submitted_at < clock()  # the first submission's time is kept
    history = [
        (c.reason, c.value, c.previous_value) for c in _changes(app) if c.rating_id == ratings[2].id
    ]
    assert history == [("create", 2.0, None), ("revise", 3.5, 2.0), ("revise", 4.0, 3.5)]
    # Resuming still goes to the first unrated place.
    assert (
        client.get(f"/rate/blocks/{block.id}").headers["Location"].endswith(item_url(block.id, 4))
    )
    # An invalid revision changes nothing.
    assert client.post(item_url(block.id, 2), data={"score": "x"}).status_code == 422
    assert {r.position: r.value for r in ratings_of(app, rater)}[2] == 4.0


def test_served_and_submitted_times(app, client, rater, block, clock):
    shown = clock()
    client.get(item_url(block.id, 1))
    clock.advance(seconds=20)
    # Reloading the page keeps the first served time.
    client.get(item_url(block.id, 1))
    clock.advance(seconds=25)
    client.post(item_url(block.id, 1), data={"score": "1"})
    (rating,) = ratings_of(app, rater)
    assert rating.served_at == shown
    assert (rating.submitted_at - rating.served_at).total_seconds() == 45


def test_htmx_swaps_the_next_item_and_pushes_its_url(app, client, rater, block, clock):
    client.get(item_url(block.id, 1))
    response = client.post(item_url(block.id, 1), data={"score": "2"}, headers=HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text  # a fragment, not a page
    assert progress(response.text) == "2 / 10"
    assert response.headers["HX-Push-Url"] == item_url(block.id, 2)
    assert "HX-Request" in response.headers["Vary"]
    # Serving through htmx records the served time of the next item too.
    served = clock()
    clock.advance(seconds=9)
    client.post(item_url(block.id, 2), data={"score": "2"}, headers=HTMX)
    second = [r for r in ratings_of(app, rater) if r.position == 2][0]
    assert second.served_at == served
    invalid = client.post(item_url(block.id, 3), data={"score": "99"}, headers=HTMX)
    assert invalid.status_code == 422 and "<html" not in invalid.text
    assert "is outside the scale" in invalid.text
    # A history restore asks for the whole page.
    restore = client.get(
        item_url(block.id, 3), headers={**HTMX, "HX-History-Restore-Request": "true"}
    )
    assert "<html" in restore.text
    rate_all(client, block.id, 9, first=3)
    last = client.post(item_url(block.id, 10), data={"score": "1"}, headers=HTMX)
    assert last.headers["HX-Redirect"].endswith(f"/rate/blocks/{block.id}/done")


def test_resume_after_coming_back_with_a_password(app, client, rater, block):
    rate_all(client, block.id, 4, value="1.5")
    response = client.post(
        "/rate/account", data={"password": "my-secret-pw", "confirm": "my-secret-pw"}
    )
    assert response.status_code == 302
    with Session(get_engine(app)) as session:
        from annotator.models import User

        code = session.get(User, rater).rater_code
    fresh = app.test_client()
    response = fresh.post("/login", data={"username": code, "password": "my-secret-pw"})
    assert response.headers["Location"].endswith("/rate/")
    dashboard = fresh.get("/rate/")
    assert "In progress: 4 / 10 rated." in dashboard.text and ">Resume</a>" in dashboard.text
    response = fresh.get(f"/rate/blocks/{block.id}")
    assert response.headers["Location"].endswith(item_url(block.id, 5))
    page = fresh.get(item_url(block.id, 5))
    assert progress(page.text) == "5 / 10"
    with Session(get_engine(app)) as session:
        expected = session.get(Item, block.item_order[4]["item"])
    assert expected.fields.get("sentence2", expected.fields.get("answer")) in page.text
    assert blocks_of(app, rater)[0].item_order == block.item_order


@pytest.mark.parametrize(
    ("password", "confirm", "message"),
    [("short", "short", "at least 8"), ("long-enough", "different!", "differ")],
)
def test_password_problems(app, client, rater, password, confirm, message):
    response = client.post("/rate/account", data={"password": password, "confirm": confirm})
    assert response.status_code == 422 and message in response.text


def test_break_reminder_after_n_items(app, client, make_study):
    study = make_study(study_toml(slug="breaks", extra="break_every = 3"))
    rater = join(app, client, study.slug)
    first = blocks_of(app, rater)[0]
    start(client, first.id)
    shown = {}
    for position in range(1, 11):
        page = client.get(item_url(first.id, position))
        shown[position] = "good moment for a short break" in page.text
        client.post(item_url(first.id, position), data={"score": "1"})
    assert [p for p, s in shown.items() if s] == [4, 7, 10]


def test_posting_again_to_a_completed_block(app, client, rater, block):
    rate_all(client, block.id, 10, value="2")
    before = len(_changes(app))
    same = client.post(item_url(block.id, 10), data={"score": "2"})
    assert same.headers["Location"].endswith(f"/rate/blocks/{block.id}/done")
    changed = client.post(item_url(block.id, 10), data={"score": "3"}, follow_redirects=True)
    assert "can no longer be changed" in changed.text
    assert len(_changes(app)) == before
    assert all(r.value == 2 for r in ratings_of(app, rater))


ATTENTION = """
[attention_checks]
per_session = 2

[test_retest]
share = 0.2
min_distance = 3
"""


def test_attention_checks_and_repeats(app, client, make_study):
    study = make_study(study_toml(slug="checks", extra=ATTENTION), n_items=10, gold=3)
    rater = join(app, client, study.slug)
    first = blocks_of(app, rater)[0]
    start(client, first.id)
    block = blocks_of(app, rater)[0]
    order = block.item_order
    assert len(order) == 10 + 2 + 2
    with Session(get_engine(app)) as session:
        gold = {i.id for i in session.exec(select(Item).where(Item.gold_score.is_not(None)))}
    checks = [e for e in order if e["attention"]]
    assert len(checks) == 2 and {e["item"] for e in checks} <= gold
    assert not any(e["item"] in gold for e in order if not e["attention"])
    passed_check = True
    for position, entry in enumerate(order, start=1):
        client.get(item_url(block.id, position))
        if entry["attention"]:
            value = "5" if passed_check else "0"  # gold 1.0 (the top), tolerance 0.05
            passed_check = False
        elif entry["repeat"]:
            value = "4.4"
        else:
            value = "1.1"
        response = client.post(item_url(block.id, position), data={"score": value})
        assert response.status_code == 302, response.text
    ratings = ratings_of(app, rater)
    assert len(ratings) == 14
    repeats = [r for r in ratings if r.is_repeat]
    assert len(repeats) == 2
    for repeat in repeats:
        original = next(r for r in ratings if r.item_id == repeat.item_id and not r.is_repeat)
        assert original.value == 1.1 and repeat.value == 4.4  # never overwritten
    with Session(get_engine(app)) as session:
        frame = long_export(session, get_study(session, "checks"))
    human = frame[frame["kind"] == "human"]
    flagged = human[human["is_attention_check"] == True]  # noqa: E712
    assert len(flagged) == 2
    assert sorted(flagged["attention_passed"].tolist()) == [False, True]
    assert int((human["is_repeat"] == True).sum()) == 2  # noqa: E712
    assert sorted(human["presentation_position"]) == list(range(1, 15))


def test_ratings_never_mix_between_blocks(app, client, rater, block, clock):
    rate_all(client, block.id, 10, value="1")
    clock.advance(days=7)
    second = blocks_of(app, rater)[1]
    start(client, second.id)
    rate_all(client, second.id, 10, value="9.5")
    with Session(get_engine(app)) as session:
        rows = session.exec(
            select(Rating.value, Block.position).join(Block, Block.id == Rating.block_id)
        ).all()
    assert sorted(set(rows)) == [(1.0, 1), (9.5, 2)]


def test_a_twin_request_that_wins_the_race_leaves_one_rating(
    app, client, rater, block, monkeypatch
):
    # rate_item (annotator.collect.scoring) looks the function up there.
    from annotator.collect import scoring as blocks_module

    client.get(item_url(block.id, 1))
    assert client.post(item_url(block.id, 1), data={"score": "2.2"}).status_code == 302
    real = blocks_module.ratings_by_position
    calls = {"n": 0}
    later_looks: list = []

    def stale_first_look(session, the_block, positions=None):
        # The first look misses the twin's rating, as if it committed just after.
        calls["n"] += 1
        if calls["n"] == 1:
            return {}
        later_looks.append(positions)
        return real(session, the_block, positions)

    monkeypatch.setattr(blocks_module, "ratings_by_position", stale_first_look)
    response = client.post(item_url(block.id, 1), data={"score": "2.2"})
    assert response.status_code == 302
    assert response.headers["Location"].endswith(item_url(block.id, 2))
    assert calls["n"] >= 2
    # The rerun reads the rated places afresh, not those read with the block.
    assert later_looks and all(positions is None for positions in later_looks)
    assert [(r.position, r.value) for r in ratings_of(app, rater)] == [(1, 2.2)]
    assert len(_changes(app)) == 1


@contextmanager
def _rating_selects(app):
    """The SELECT statements that read the rating table while the block runs."""
    engine = get_engine(app)
    seen: list[str] = []

    def listener(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT") and re.search(
            r"\bFROM rating\b", statement, re.IGNORECASE
        ):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", listener)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", listener)


@pytest.mark.parametrize("position", [1, 9])
def test_an_htmx_score_reads_the_block_ratings_once(app, client, rater, block, position):
    rate_all(client, block.id, position - 1)
    client.get(item_url(block.id, position))
    with _rating_selects(app) as selects:
        response = client.post(item_url(block.id, position), data={"score": "2"}, headers=HTMX)
    assert response.status_code == 200
    assert response.headers["HX-Push-Url"].endswith(item_url(block.id, position + 1))
    assert len(selects) == 1, selects
    assert [r.position for r in ratings_of(app, rater)] == list(range(1, position + 1))
