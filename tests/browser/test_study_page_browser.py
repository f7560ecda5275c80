"""In Debian's Chromium: the demo's study page for daily work, at 1280 and 360 px.

Every part of the page (the answer, the report, the settings, the judges, the raters,
the export) is one link away from the first screen, with and without JavaScript; at
360 px nothing is wider than the screen and no word of the dashboard is split across
lines; at 1280 px no table of the dashboard scrolls in its box; the report's figures
open at full size on a tap.
"""

from __future__ import annotations

import pytest

from annotator.db import session_scope
from annotator.demo import load_demo
from annotator.study.studies import create_lead

from .layout import assert_no_sideways_scroll

LEAD_EMAIL = "lead@example.org"
LEAD_PASSWORD = "lead-password-1"
SECTIONS = [
    "Answer",
    "Report",
    "Analysis settings",
    "LLM judges",
    "Raters and invites",
    "Export",
    "Scales and benchmarks",
]

# The words of the dashboard's table cells that the browser laid out on more than one
# line: a word is a run of letters and digits (a space, hyphen or bracket between two
# is a place where a line may break).
_SPLIT_WORDS = """() => {
    const split = [];
    for (const cell of document.querySelectorAll('#dashboard th, #dashboard td')) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.data.matchAll(/[A-Za-z0-9]+/g)) {
                const range = document.createRange();
                range.setStart(node, m.index);
                range.setEnd(node, m.index + m[0].length);
                const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                if (lines.size > 1) split.push(m[0]);
            }
        }
    }
    return split;
}"""

# Boxes of tables (.table-wrap) whose table is wider than the box, by the table's class.
_OVERFLOWING_TABLES = """(root) => [...document.querySelectorAll(root + ' .table-wrap')]
    .filter(box => box.scrollWidth > box.clientWidth + 1)
    .map(box => (box.querySelector('table') || {}).className || '?')"""


def _log_in(context, base: str):
    page = context.new_page()
    page.goto(f"{base}/login")
    page.get_by_label("Email or rater code").fill(LEAD_EMAIL)
    page.get_by_label("Password").fill(LEAD_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/lead/")
    return page


def _each_part_one_link_away(page, base: str) -> None:
    """Every link of the page's parts is on the first screen and opens its part."""
    height = page.viewport_size["height"]
    nav = page.get_by_role("navigation", name="Parts of this study page")
    names = [" ".join(a.split()) for a in nav.get_by_role("link").all_inner_texts()]
    assert names == SECTIONS
    for name in SECTIONS:
        page.goto(f"{base}/lead/studies/demo")
        link = nav.get_by_role("link", name=name, exact=True)
        box = link.bounding_box()
        # On the first screen, without scrolling.
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, name
        target = link.get_attribute("href")
        assert target.startswith("#"), (name, target)
        link.click()
        assert page.evaluate("location.hash") == target
        top = page.evaluate(
            "id => document.getElementById(id).getBoundingClientRect().top", target[1:]
        )
        # The part's heading is now on the screen (the page scrolled to it).
        assert 0 <= top < height / 2, (name, top)


@pytest.mark.browser
def test_the_study_page_for_daily_work(served_app, browser, tmp_path):
    app, base = served_app
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    with app.app_context(), session_scope(app) as session:
        load_demo(session, base_url=base, instance_path=app.instance_path)

    for javascript in (True, False):
        context = browser.new_context(
            viewport={"width": 1280, "height": 800}, java_script_enabled=javascript
        )
        context.set_default_timeout(30_000)
        page = _log_in(context, base)
        for width in (1280, 360):
            page.set_viewport_size({"width": width, "height": 800})
            page.goto(f"{base}/lead/studies/demo")
            _each_part_one_link_away(page, base)
        context.close()

    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    context.set_default_timeout(30_000)
    page = _log_in(context, base)
    page.goto(f"{base}/lead/studies/demo")
    # One report button, in the Report part; the settings are headed.
    assert page.get_by_role("button", name="report").count() == 1
    assert page.get_by_role("heading", name="Analysis settings").count() == 1
    assert page.evaluate(_OVERFLOWING_TABLES, "#dashboard") == []

    page.set_viewport_size({"width": 360, "height": 800})
    page.goto(f"{base}/lead/studies/demo")
    assert_no_sideways_scroll(page)
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    assert page.evaluate(_SPLIT_WORDS) == []
    page.goto(f"{base}/lead/")
    assert_no_sideways_scroll(page)
    assert page.evaluate(_OVERFLOWING_TABLES, "main") == []

    # The report, opened at 360 px: a tap on a figure shows it at full size in a box
    # of its own (the page stays as wide as the screen).
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{base}/lead/studies/demo")
    page.get_by_role("button", name="Download report").click(timeout=180_000)
    with page.expect_download() as info:
        page.get_by_role("link", name="Download demo-report.html").click()
    saved = tmp_path / "demo-report.html"
    info.value.save_as(saved)
    report = context.new_page()
    report.set_viewport_size({"width": 360, "height": 800})
    report.goto(saved.as_uri())
    figures = report.locator("figure")
    assert figures.count() >= 1
    for i in range(figures.count()):
        figure = figures.nth(i)
        assert figure.locator("a.zoom").get_attribute("href") == "#" + figure.get_attribute("id")
    figure = figures.first
    image = figure.locator("img")
    full = int(image.get_attribute("width"))
    assert full > 360 and image.bounding_box()["width"] <= 360
    image.click()
    assert report.evaluate("location.hash") == "#" + figure.get_attribute("id")
    assert image.bounding_box()["width"] == pytest.approx(full, abs=1)
    assert_no_sideways_scroll(report)
    figure.get_by_role("link", name="Fit to the screen").click()
    assert image.bounding_box()["width"] <= 360
    context.close()
