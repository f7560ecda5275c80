"""The rater's pages say what they count in words: "1 block", "7 days", never
"block(s)" or a Python value, on a study with one scale and on a rubric study, and
with a gap between blocks and without."""

from __future__ import annotations

import re

import pytest

from tests.data.studies import BENCHMARKS_TOML, CRITERIA_TOML, study_toml
from tests.helpers import code_words

from .conftest import blocks_of, item_url, join, start

STUDIES = {
    "scales, a week apart": study_toml(gap_days=7),
    "scales, one after another": study_toml(gap_days=0),
    "rubric, half a day apart": study_toml(
        gap_days=0.5, benchmarks=BENCHMARKS_TOML + CRITERIA_TOML
    ),
}


def _rate_block(client, block_id: int) -> None:
    """Every item of the block, each field (one per criterion in a rubric) at 2.5."""
    for position in range(1, 100):
        html = client.get(item_url(block_id, position)).get_data(as_text=True)
        fields = dict.fromkeys(re.findall(r'<input[^>]*name="(score[^"]*)"', html), "2.5")
        response = client.post(item_url(block_id, position), data=fields)
        assert response.status_code == 302, response.get_data(as_text=True)[:500]
        if response.headers["Location"].endswith("/done"):
            return
    raise AssertionError("the block never ended")


@pytest.mark.parametrize("toml", STUDIES.values(), ids=STUDIES.keys())
def test_every_rater_page_speaks_in_words(app, client, make_study, toml):
    slug = make_study(toml).slug
    visited, problems = [], []

    def look(url: str, response=None, status: int = 200) -> str:
        response = response or client.get(url, follow_redirects=True)
        assert response.status_code == status, (url, response.status_code)
        html = response.get_data(as_text=True)
        visited.append(url)
        problems.extend(f"{url}: {words!r}" for words in code_words(html))
        return html

    user_id = join(app, client, slug)
    look("/rate/")
    first, second = blocks_of(app, user_id)[:2]
    # The second block before the first is done: locked, with the gap said in words.
    look(f"/rate/blocks/{second.id}", status=403)
    look(f"/rate/blocks/{first.id}")
    start(client, first.id)
    look(f"/rate/blocks/{first.id}/items/1")
    # A refused score: the form again, with its message.
    refused = client.post(f"/rate/blocks/{first.id}/items/1", data={"score": "many"})
    look("refused score", refused, status=422)
    _rate_block(client, first.id)
    look(f"/rate/blocks/{first.id}/done")
    look("/rate/")
    # Open at once without a gap; else waiting, the page saying until when.
    look(f"/rate/blocks/{second.id}", status=200 if "session_gap_days = 0\n" in toml else 403)
    look("/rate/account")
    assert len(visited) == 9
    assert not problems, "\n".join(problems)
