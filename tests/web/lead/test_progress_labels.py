"""The lead's counts say what they count: imported ratings are called so, attention-check
items are named apart on the study list, and no label says "rating(s)"."""

from __future__ import annotations

import lxml.html
import pytest

from annotator.db import session_scope
from annotator.demo import load_demo
from annotator.web.templating import plural


def _text(response) -> str:
    return " ".join(lxml.html.fromstring(response.get_data(as_text=True)).text_content().split())


@pytest.mark.parametrize(
    "count, words, expected",
    [
        (0, ("rating",), "0 ratings"),
        (1, ("rating",), "1 rating"),
        (2, ("rater",), "2 raters"),
        (3, ("check", "checks"), "3 checks"),
        (1, ("analysis", "analyses"), "1 analysis"),
    ],
)
def test_plural(count, words, expected):
    assert plural(count, *words) == expected


def test_imported_ratings_are_called_so_and_checks_counted_apart(app, lead_client):
    # The demo study: 41 items (one an attention check), 5 raters' ratings imported.
    with app.app_context(), session_scope(app) as session:
        load_demo(session, base_url="http://localhost", instance_path=app.instance_path)
    listed = lead_client.get("/lead/").get_data(as_text=True)
    row = lxml.html.fromstring(listed).xpath("//tr[.//a[contains(@href, '/studies/demo')]]")[0]
    assert " ".join(row.xpath("string(td[2])").split()) == "41 (1 of them an attention check)"
    page = _text(lead_client.get("/lead/studies/demo"))
    assert "Blocks: none (the ratings were imported)." in page
    assert "0 done" not in page
    assert "of the study's 40 items (attention checks are counted apart)" in page
    # The labels of this page's own and the analysis' notes.
    for label in ("rating(s)", "rater(s)", "day(s)", "block(s)", "item(s)"):
        assert label not in page
