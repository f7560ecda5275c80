"""The rating page's markup for screen readers: the title and the live region that
rate.js keeps current, and the note on repeated items (the browser side is in
tests/browser/test_accessibility_browser.py)."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from tests.data.studies import study_toml

from .conftest import blocks_of, item_url, join, start

RETEST = "[test_retest]\nshare = 0.2\nmin_distance = 3\n"


@pytest.mark.parametrize("repeats", [True, False])
def test_the_rating_page_names_the_position_and_says_when_items_come_back(
    app, client, make_study, repeats
):
    study = make_study(study_toml(slug="marks", extra=RETEST if repeats else ""), n_items=10)
    rater = join(app, client, study.slug)
    start(client, blocks_of(app, rater)[0].id)
    block = blocks_of(app, rater)[0]
    total = len(block.item_order)
    assert total == (12 if repeats else 10)

    page = lxml_html.fromstring(client.get(item_url(block.id, 1)).text)
    assert page.findtext(".//title") == f"Item 1 of {total} · Rating test study"
    # The live region sits outside the part htmx replaces, so it is never swapped out.
    (announcer,) = page.xpath("//*[@id='item-announcer']")
    assert announcer.get("role") == "status"
    assert not announcer.xpath("ancestor::*[@id='rating-item']")
    note = page.xpath("//*[contains(@class, 'instructions')]//p[contains(@class, 'repeat-note')]")
    assert len(note) == (1 if repeats else 0)

    # The fragment htmx swaps in after a score carries the next position.
    swapped = client.post(
        item_url(block.id, 1), data={"score": "2.5"}, headers={"HX-Request": "true"}
    )
    assert swapped.status_code == 200
    fragment = lxml_html.fromstring(swapped.text)
    (head,) = fragment.xpath("//*[contains(@class, 'rating-head')]")
    assert head.get("data-announce") == f"Item 2 of {total}"
    assert head.get("data-title") == f"Item 2 of {total} · Rating test study"
    assert not fragment.xpath("//*[@id='item-announcer']")
