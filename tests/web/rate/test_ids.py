"""Numbers in URLs beyond the database's integers are a 404, never a 500."""

from __future__ import annotations

import pytest
from werkzeug.routing import IntegerConverter

from annotator.web.converters import MAX_ID, IdConverter

from .conftest import join

# Above PostgreSQL's integer, above SQLite's (OverflowError), and far above.
TOO_LARGE = [MAX_ID + 1, 2**63, 10**30]

RATER_URLS = [
    "/rate/blocks/{n}",
    "/rate/blocks/{n}/done",
    "/rate/blocks/{n}/items/1",
    "/rate/blocks/1/items/{n}",
]
LEAD_URLS = ["/lead/studies/{slug}/versions/{n}.toml"]
LEAD_POSTS = [
    "/lead/studies/{slug}/raters/{n}/withdraw",
    "/lead/studies/{slug}/raters/{n}/exclude",
    "/lead/studies/{slug}/raters/{n}/include",
    "/lead/studies/{slug}/raters/{n}/lift-gap",
    "/lead/studies/{slug}/raters/{n}/rotate-link",
]


def test_every_number_in_a_route_is_an_id(app):
    """No route takes Werkzeug's unbounded ``int`` (a route added later included)."""
    numbered = [
        rule.rule
        for rule in app.url_map.iter_rules()
        for converter in rule._converters.values()
        if isinstance(converter, IntegerConverter) and not isinstance(converter, IdConverter)
    ]
    assert numbered == []


@pytest.mark.parametrize("number", TOO_LARGE)
@pytest.mark.parametrize("url", RATER_URLS)
def test_rater_pages(app, client, study, url, number):
    join(app, client, study.slug)
    assert client.get(url.format(n=number)).status_code == 404
    assert client.post(url.format(n=number), data={"score": "1"}).status_code in (404, 405)


@pytest.mark.parametrize("number", TOO_LARGE)
def test_lead_pages(lead_client, small_study, number):
    for url in LEAD_URLS:
        assert lead_client.get(url.format(slug=small_study, n=number)).status_code == 404
    for url in LEAD_POSTS:
        response = lead_client.post(url.format(slug=small_study, n=number))
        assert response.status_code == 404, url


def test_the_largest_id_is_still_a_route(lead_client, small_study):
    """MAX_ID itself reaches the view, which finds no such rater."""
    url = f"/lead/studies/{small_study}/versions/{MAX_ID}.toml"
    assert lead_client.get(url).status_code == 404
    url = f"/lead/studies/{small_study}/raters/{MAX_ID}/withdraw"
    assert lead_client.post(url).status_code == 404
