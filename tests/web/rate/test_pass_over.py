"""Going on past an item that cannot be shown: the block goes on and completes,
an item that renders cannot be passed over, and the post needs its CSRF token."""

from __future__ import annotations

import re

from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import AuditAction, AuditEvent, Benchmark, Block, Item

from .conftest import blocks_of, item_url, ratings_of, start

# Fails on every item of its benchmark (an integer division by zero).
BROKEN = "{{ 1 // 0 }}"
NOT_SHOWN = "This item cannot be shown"


def _break(app, benchmark: str) -> None:
    with Session(get_engine(app)) as session:
        bench = session.exec(select(Benchmark).where(Benchmark.name == benchmark)).one()
        bench.template = BROKEN
        session.add(bench)
        session.commit()


def _benchmark_of_places(app, block_id: int) -> list[str]:
    """The benchmark of each place of the block, read from the database."""
    with Session(get_engine(app)) as session:
        block = session.get(Block, block_id)
        names = []
        for entry in block.item_order:
            item = session.get(Item, entry["item"])
            names.append(session.get(Benchmark, item.benchmark_id).name)
        return names


def _events(app, action: str) -> list[AuditEvent]:
    with Session(get_engine(app)) as session:
        return list(session.exec(select(AuditEvent).where(AuditEvent.action == action)))


def _pass_over_url(block_id: int, position: int) -> str:
    return f"{item_url(block_id, position)}/pass-over"


def test_passing_over_every_unshown_item_completes_the_block(
    app, client, rater, study, lead_client
):
    _break(app, "sts-b")
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    places = _benchmark_of_places(app, block.id)
    assert "sts-b" in places and "truthfulqa" in places
    for position, benchmark in enumerate(places, start=1):
        page = client.get(item_url(block.id, position)).get_data(as_text=True)
        if benchmark == "sts-b":
            assert NOT_SHOWN in page and 'name="score"' not in page
            assert f'action="{_pass_over_url(block.id, position)}"' in page
            response = client.post(_pass_over_url(block.id, position))
        else:
            assert NOT_SHOWN not in page and "pass-over" not in page
            response = client.post(item_url(block.id, position), data={"score": "2"})
        assert response.status_code == 302, response.text
    # The last place's post completed the block.
    assert response.headers["Location"].endswith(f"/rate/blocks/{block.id}/done")
    stored = blocks_of(app, rater)[0]
    assert stored.completed_at is not None
    passed = [p for p, entry in enumerate(stored.item_order, start=1) if "passed_over" in entry]
    assert passed == [p for p, name in enumerate(places, start=1) if name == "sts-b"]
    # A rating for each shown item only: the others are missing, not made up.
    ratings = ratings_of(app, rater)
    assert sorted(r.position for r in ratings) == [
        p for p, name in enumerate(places, start=1) if name == "truthfulqa"
    ]
    events = _events(app, AuditAction.ITEM_PASSED_OVER)
    assert sorted(e.details["position"] for e in events) == passed
    assert all(e.subject_id == rater and "ZeroDivisionError" in e.details["error"] for e in events)
    # The lead's study page lists them, each with one rater who passed it over.
    page = lead_client.get(f"/lead/studies/{study.slug}").get_data(as_text=True)
    assert "Items that could not be shown" in page
    table = page.split('class="unshown-items"')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>([^<]*)</td><td><code>([^<]*)</code>.*?</tr>", table, re.S)
    with Session(get_engine(app)) as session:
        bench = session.exec(select(Benchmark).where(Benchmark.name == "sts-b")).one()
        expected = set(
            session.exec(select(Item.external_id).where(Item.benchmark_id == bench.id)).all()
        )
    assert {item for _, item in rows} == expected
    assert {name for name, _ in rows} == {"sts-b"}
    assert table.count("<td>1</td><td>1</td>") == len(expected)


def _first_place_of(places: list[str], benchmark: str) -> int:
    return places.index(benchmark) + 1


def test_an_item_that_renders_cannot_be_passed_over(app, client, rater, study):
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    assert client.get(item_url(block.id, 1)).status_code == 200
    before = blocks_of(app, rater)[0].item_order
    response = client.post(_pass_over_url(block.id, 1), follow_redirects=True)
    assert response.status_code == 200
    assert "cannot be passed over; nothing was changed" in response.get_data(as_text=True)
    assert blocks_of(app, rater)[0].item_order == before
    assert _events(app, AuditAction.ITEM_PASSED_OVER) == []
    assert ratings_of(app, rater) == []


def test_only_the_place_reached_can_be_passed_over(app, client, rater, study):
    _break(app, "sts-b")
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    places = _benchmark_of_places(app, block.id)
    # A later unshown place, not reached yet: refused.
    later = next(p for p, name in enumerate(places, start=1) if name == "sts-b" and p > 1)
    before = blocks_of(app, rater)[0].item_order
    response = client.post(_pass_over_url(block.id, later), follow_redirects=True)
    assert "Only the item you are at can be passed over" in response.get_data(as_text=True)
    assert blocks_of(app, rater)[0].item_order == before
    # A place passed over stays so: neither again, nor rated afterwards.
    first = _first_place_of(places, "sts-b")
    for position in range(1, first):
        client.post(item_url(block.id, position), data={"score": "2"})
    assert client.post(_pass_over_url(block.id, first)).status_code == 302
    assert client.post(_pass_over_url(block.id, first)).status_code == 302
    assert len(_events(app, AuditAction.ITEM_PASSED_OVER)) == 1
    _unbreak(app, "sts-b")
    page = client.get(item_url(block.id, first)).get_data(as_text=True)
    assert "You passed over this item" in page and 'name="score"' not in page
    response = client.post(item_url(block.id, first), data={"score": "2"}, follow_redirects=True)
    assert "it stays passed over" in response.get_data(as_text=True)
    assert first not in {r.position for r in ratings_of(app, rater)}


def _unbreak(app, benchmark: str) -> None:
    with Session(get_engine(app)) as session:
        bench = session.exec(select(Benchmark).where(Benchmark.name == benchmark)).one()
        bench.template = "{{ sentence1 }}"
        session.add(bench)
        session.commit()


def test_passing_over_needs_the_csrf_token(app, client, rater, study):
    _break(app, "sts-b")
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    places = _benchmark_of_places(app, block.id)
    first = _first_place_of(places, "sts-b")
    for position in range(1, first):
        client.post(item_url(block.id, position), data={"score": "2"})
    # Checked as in production from here on (Flask-WTF reads it per request).
    app.config["WTF_CSRF_ENABLED"] = True
    page = client.get(item_url(block.id, first)).get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    before = blocks_of(app, rater)[0].item_order
    assert client.post(_pass_over_url(block.id, first)).status_code == 400
    assert client.post(_pass_over_url(block.id, first), data={"csrf_token": "x"}).status_code == 400
    assert blocks_of(app, rater)[0].item_order == before
    assert _events(app, AuditAction.ITEM_PASSED_OVER) == []
    response = client.post(_pass_over_url(block.id, first), data={"csrf_token": token})
    assert response.status_code == 302
    assert "passed_over" in blocks_of(app, rater)[0].item_order[first - 1]


def test_a_score_for_an_item_that_cannot_be_shown_is_refused(app, client, rater, study):
    # The ordinary score post, not the pass-over: stored, revisable and exported
    # before (issue 36, finding 3).
    _break(app, "sts-b")
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    places = _benchmark_of_places(app, block.id)
    first = _first_place_of(places, "sts-b")
    for position in range(1, first):
        client.post(item_url(block.id, position), data={"score": "2"})
    before = blocks_of(app, rater)[0].item_order
    response = client.post(item_url(block.id, first), data={"score": "2"}, follow_redirects=True)
    assert "This item cannot be shown, so it cannot be rated; nothing was stored" in response.text
    assert first not in {r.position for r in ratings_of(app, rater)}
    assert blocks_of(app, rater)[0].item_order == before
    # So is any later place of the broken benchmark, reached or not.
    later = [p for p, name in enumerate(places, start=1) if name == "sts-b" and p > first]
    for position in later:
        client.post(item_url(block.id, position), data={"score": "2"})
    assert not set(later) & {r.position for r in ratings_of(app, rater)}
