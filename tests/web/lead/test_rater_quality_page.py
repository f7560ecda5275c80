"""The raters page's rater quality partial: flags shown, the where filter without JS."""

from __future__ import annotations

from lxml import html as lxml_html

SPEC = {"slug": "careless", "n_items": 30, "n_raters": 6, "straight_liners": 1, "speeders": 1}


def _rows(response) -> dict[tuple[str, str], str]:
    tree = lxml_html.fromstring(response.get_data(as_text=True))
    return {
        (tr.get("data-scale"), tr.get("data-rater")): tr.xpath(
            "string(./td[@class='flags'])"
        ).strip()
        for tr in tree.xpath("//table[@class='rater-quality']/tbody/tr")
    }


def test_the_raters_page_flags_the_careless_raters(lead_client, make_study):
    make_study(**SPEC)
    response = lead_client.get("/lead/studies/careless/raters")
    assert response.status_code == 200
    rows = _rows(response)
    assert len(rows) == 18
    assert "straight-lining" in rows[("0-5", "careless-r00")]
    assert "speeding" in rows[("0-100", "careless-r01")]
    assert "straight-lining" not in rows[("0-5", "careless-r02")]
    assert "speeding" not in rows[("0-5", "careless-r02")]


def test_the_where_filter_is_a_plain_get_form(lead_client, make_study):
    make_study(**SPEC)
    response = lead_client.get("/lead/studies/careless/raters?where=gender%3Dmale")
    assert {rater for _, rater in _rows(response)} == {
        "careless-r01",
        "careless-r03",
        "careless-r05",
    }
    tree = lxml_html.fromstring(response.get_data(as_text=True))
    assert tree.xpath("//input[@id='quality-where']/@value") == ["gender=male"]
    bad = lead_client.get("/lead/studies/careless/raters?where=gender%3Drobot")
    assert bad.status_code == 200
    alert = lxml_html.fromstring(bad.get_data(as_text=True)).xpath(
        "string(//*[@id='quality-error'])"
    )
    assert "no rater answered gender=robot (known values of gender: " in alert
    assert _rows(bad) == {}
