"""A rubric study's item page: the item once, one score per criterion, stored
together or not at all, each criterion with its own history."""

from __future__ import annotations

import re

from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import RatingChange
from tests.data.studies import BENCHMARKS_TOML, CRITERIA_TOML, study_toml

from .conftest import blocks_of, item_url, join, progress, ratings_of, start, statements

HTMX = {"HX-Request": "true"}
# The criteria of each benchmark (tests/data/studies.py CRITERIA_TOML).
CRITERIA = {"sts-b": ["fluency", "coherence", "relevance"], "truthfulqa": ["fluency", "coherence"]}


def _fields(html: str) -> list[str]:
    return re.findall(r'name="score:([^"]+)"', html)


def _value(html: str, criterion: str) -> str:
    tag = re.search(rf'<input[^>]*name="score:{criterion}"[^>]*>', html, re.S).group(0)
    return re.search(r'value="([^"]*)"', tag).group(1)


def _rubric_rater(app, client, make_study):
    study = make_study(study_toml(benchmarks=BENCHMARKS_TOML + CRITERIA_TOML), n_items=6)
    user_id = join(app, client, study.slug)
    block = blocks_of(app, user_id)[0]
    assert start(client, block.id).status_code == 302
    return user_id, blocks_of(app, user_id)[0]


def _benchmark(html: str) -> str:
    return "sts-b" if "Sentence 1" in html else "truthfulqa"


def test_the_item_shows_one_labelled_field_per_criterion(app, client, make_study):
    _, block = _rubric_rater(app, client, make_study)
    html = client.get(item_url(block.id, 1)).text
    names = CRITERIA[_benchmark(html)]
    assert _fields(html) == names
    assert html.count('class="item-text"') == 1
    for index, name in enumerate(names, start=1):
        assert f'<label for="score-{index}">{name}</label>' in html
        assert f'aria-describedby="score-{index}-definition score-hint"' in html
    # The definition is Markdown, shown beside its field.
    assert '<div id="score-1-definition" class="criterion-definition muted"><p>Is the text ' in html
    assert "<strong>well written</strong>" in html
    assert html.count("autofocus") == 1 and 'id="score-1"' in html


def test_all_criteria_are_stored_together_with_their_histories(app, client, make_study):
    user_id, block = _rubric_rater(app, client, make_study)
    html = client.get(item_url(block.id, 1)).text
    names = CRITERIA[_benchmark(html)]
    form = {f"score:{name}": str(index + 1) for index, name in enumerate(names)}
    response = client.post(item_url(block.id, 1), data=form)
    assert response.status_code == 302 and response.headers["Location"].endswith(
        item_url(block.id, 2)
    )
    stored = ratings_of(app, user_id)
    assert [(r.criterion, r.value, r.position) for r in stored] == [
        (name, float(index + 1), 1) for index, name in enumerate(names)
    ]
    # Progress counts items, not criterion scores.
    following = client.get(item_url(block.id, 2)).text
    assert progress(following) == f"2 / {len(block.item_order)}"
    assert f'value="1" aria-label="Rated 1 of {len(block.item_order)}"' in following
    # A revision of one criterion is in that criterion's history alone.
    revised = dict(form, **{f"score:{names[1]}": "4.5"})
    assert client.post(item_url(block.id, 1), data=revised).status_code == 302
    with Session(get_engine(app)) as session:
        changes = session.exec(select(RatingChange).order_by(RatingChange.id)).all()
    by_rating = {r.id: r.criterion for r in stored}
    assert [(by_rating[c.rating_id], c.reason, c.previous_value, c.value) for c in changes] == [
        *[(name, "create", None, float(index + 1)) for index, name in enumerate(names)],
        (names[1], "revise", 2.0, 4.5),
    ]
    # The item shows the stored scores again.
    again = client.get(item_url(block.id, 1)).text
    assert [_value(again, name) for name in names] == [revised[f"score:{n}"] for n in names]


def test_a_refused_score_stores_nothing_and_keeps_the_other_values(app, client, make_study):
    user_id, block = _rubric_rater(app, client, make_study)
    html = client.get(item_url(block.id, 1)).text
    names = CRITERIA[_benchmark(html)]
    form = {f"score:{name}": "2" for name in names}
    form[f"score:{names[-1]}"] = "7"
    response = client.post(item_url(block.id, 1), data=form, headers=HTMX)
    assert response.status_code == 422
    assert ratings_of(app, user_id) == []
    page = response.text
    last = len(names)
    assert f'id="score-{last}-error" class="error">{names[-1]}: ' in page
    assert f"({names[-1]})" in page and 'role="alert"' in page
    assert [_value(page, name) for name in names] == ["2"] * (last - 1) + ["7"]
    # The refused field is marked and takes the focus.
    tag = re.search(rf'<input id="score-{last}"[^>]*>', page, re.S).group(0)
    assert 'aria-invalid="true"' in tag and "autofocus" in tag
    assert page.count("autofocus") == 1


def test_an_empty_criterion_is_refused_by_name(app, client, make_study):
    user_id, block = _rubric_rater(app, client, make_study)
    names = CRITERIA[_benchmark(client.get(item_url(block.id, 1)).text)]
    response = client.post(item_url(block.id, 1), data={f"score:{names[0]}": "3"})
    assert response.status_code == 422
    assert ratings_of(app, user_id) == []
    for name in names[1:]:
        assert f'class="error">{name}: ' in response.text


def test_htmx_brings_the_next_item_with_its_criteria(app, client, make_study):
    user_id, block = _rubric_rater(app, client, make_study)
    names = CRITERIA[_benchmark(client.get(item_url(block.id, 1)).text)]
    with statements(app) as seen:
        response = client.post(
            item_url(block.id, 1), data={f"score:{n}": "3" for n in names}, headers=HTMX
        )
    assert response.status_code == 200
    # The study's criteria are read once for both items (each filtered by its benchmark).
    assert sum(s.lstrip().startswith("SELECT criterion.") for s in seen) == 1, seen
    assert response.headers["HX-Push-Url"].endswith(item_url(block.id, 2))
    assert _fields(response.text) == CRITERIA[_benchmark(response.text)]
    assert len(ratings_of(app, user_id)) == len(names)


def test_a_whole_block_completes(app, client, make_study):
    user_id, block = _rubric_rater(app, client, make_study)
    total = len(block.item_order)
    expected = 0
    for position in range(1, total + 1):
        names = _fields(client.get(item_url(block.id, position)).text)
        expected += len(names)
        response = client.post(
            item_url(block.id, position), data={f"score:{n}": "1" for n in names}
        )
        assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/rate/blocks/{block.id}/done")
    assert len(ratings_of(app, user_id)) == expected
    assert blocks_of(app, user_id)[0].completed_at is not None
    # The last post again (a retry) is acknowledged; other values are refused.
    same = {f"score:{n}": "1" for n in names}
    again = client.post(item_url(block.id, total), data=same, follow_redirects=True)
    assert "can no longer be changed" not in again.text
    other = dict(same, **{f"score:{names[-1]}": "2"})
    refused = client.post(item_url(block.id, total), data=other, follow_redirects=True)
    assert "This block is complete, so its ratings can no longer be changed." in refused.text
    assert len(ratings_of(app, user_id)) == expected
