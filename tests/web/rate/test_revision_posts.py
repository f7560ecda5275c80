"""A rater's writes change the study's data version; serving a page does not.

The score post on PostgreSQL is one statement (a CTE) that bumps the study's
revision itself; SQLite's three statements bump it with a fourth.
"""

from __future__ import annotations

import pytest
from sqlmodel import Session

from annotator.data.data_version import data_version
from annotator.db import get_engine
from annotator.study.studies import get_study
from tests.data.studies import CRITERIA_TOML, study_toml

from .conftest import blocks_of, item_url, join, start


def _version(app, slug: str) -> tuple:
    with Session(get_engine(app)) as session:
        return data_version(session, get_study(session, slug))


@pytest.mark.parametrize("rubric", [False, True], ids=["one-criterion", "rubric"])
def test_each_score_changes_the_version_and_a_page_view_does_not(app, client, make_study, rubric):
    toml = study_toml() + (CRITERIA_TOML if rubric else "")
    info = make_study(toml, n_items=4)
    before_join = _version(app, info.slug)
    rater = join(app, client, info.slug)
    joined = _version(app, info.slug)
    # A new rater (with their demographic answers) is new data.
    assert joined != before_join
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    started = _version(app, info.slug)
    assert started != joined
    assert client.get(item_url(block.id, 1)).status_code == 200
    assert client.get(item_url(block.id, 1)).status_code == 200
    assert _version(app, info.slug) == started
    names = ["fluency", "coherence", "relevance"] if rubric else []
    form = {f"score:{n}": "3" for n in names} if rubric else {"score": "3"}
    response = client.post(item_url(block.id, 1), data=form)
    assert response.status_code == 302, response.text
    scored = _version(app, info.slug)
    assert scored != started
    # Serving the next place stores when it was shown, which no analysis reads.
    assert client.get(item_url(block.id, 2)).status_code == 200
    assert _version(app, info.slug) == scored
    # Revising the first score is a change of the data.
    revised = {k: "4" for k in form}
    response = client.post(item_url(block.id, 1), data=revised)
    assert response.status_code == 302, response.text
    assert _version(app, info.slug) != scored
