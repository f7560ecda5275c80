"""In Debian's Chromium: the demo's dashboard and report open with the answer. At 1280 x 800
and 360 x 740, their first screen names each judge's verdict on each scale in words.

Screenshots go to $ANNOTATOR_SCREENSHOT_DIR (default: test-artifacts/verdict).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotator.db import session_scope
from annotator.demo import load_demo
from annotator.services.dashboards import cached_dashboard
from annotator.services.report import build_report
from annotator.study.studies import get_study

from .conftest import ARTIFACTS, serve
from .layout import assert_no_sideways_scroll

VIEWPORTS = {"desktop": (1280, 800), "phone": (360, 740)}
# annotator/demo.py's story: judge-a passes on 0-5 and 0-10, judge-b on none.
EXPECTED = {
    (scale, judge): "may replace the raters"
    if judge == "judge-a" and scale in ("0-5", "0-10")
    else "may not replace the raters"
    for scale in ("0-5", "0-10", "0-100")
    for judge in ("judge-a", "judge-b")
}


def _shots() -> Path:
    folder = Path(os.environ.get("ANNOTATOR_SCREENSHOT_DIR", ARTIFACTS / "verdict"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _first_screen_names_every_verdict(page, cell: str, width: int, height: int) -> None:
    """Every judge x scale's verdict cell says its words and lies within the screen
    as it opened (not scrolled since)."""
    for (scale, judge), words in EXPECTED.items():
        found = page.locator(f"#verdict-{scale}-{judge} {cell}")
        assert found.inner_text().strip() == words, (scale, judge)
        box = found.bounding_box()
        assert box is not None, (scale, judge)
        inside = (
            box["x"] >= 0
            and box["y"] >= 0
            and box["x"] + box["width"] <= width
            and box["y"] + box["height"] <= height
        )
        if not inside:
            page.screenshot(path=str(_shots() / f"failed-{width}.png"))
        assert inside, f"{judge} on {scale} at {box}, outside the first {width}x{height} screen"


@pytest.fixture
def demo_app(make_app):
    app = make_app(WTF_CSRF_ENABLED=True, CLOCK=None)
    with app.app_context(), session_scope(app) as session:
        lines = load_demo(session, base_url="http://127.0.0.1", instance_path=app.instance_path)
    with app.app_context(), session_scope(app) as session:
        # Computed before the page asks (a first view computes it in the request,
        # which takes longer than a page load on a busy machine).
        cached_dashboard(session, get_study(session, "demo"))
    login = next(line for line in lines if line.startswith("Lead login:"))
    email, password = login.split(": ", 1)[1].split(" (")[0].split(" / ")
    with serve(app) as base:
        yield app, base, email, password


@pytest.mark.browser
def test_the_demo_dashboard_opens_with_every_verdict(demo_app, browser):
    app, base, email, password = demo_app
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(120_000)
    page = context.new_page()
    page.goto(f"{base}/login")
    page.get_by_label("Email or rater code").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/lead/")
    for name, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        # The study page as the lead opens it, unscrolled: its first part is the answer.
        page.goto(f"{base}/lead/studies/demo")
        assert page.evaluate("window.scrollY") == 0
        _first_screen_names_every_verdict(page, ".verdict", width, height)
        assert_no_sideways_scroll(page)
        page.screenshot(path=str(_shots() / f"dashboard-{name}.png"))


@pytest.mark.browser
def test_the_demo_report_opens_with_every_verdict(demo_app, browser, tmp_path):
    app, _base, _email, _password = demo_app
    with app.app_context(), session_scope(app) as session:
        html = build_report(session, get_study(session, "demo")).html
    path = tmp_path / "demo-report.html"
    path.write_text(html, "utf-8")
    for name, (width, height) in VIEWPORTS.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(path.as_uri())
        assert page.evaluate("window.scrollY") == 0
        _first_screen_names_every_verdict(page, "td.verdict", width, height)
        assert_no_sideways_scroll(page)
        page.screenshot(path=str(_shots() / f"report-{name}.png"))
        # Each part is linkable: the contents link to the verdict and every section.
        toc = page.locator("nav.toc a")
        targets = toc.evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert targets[0] == "#verdict"
        for target in targets:
            assert page.locator(target).count() == 1, target
        page.close()


@pytest.mark.browser
def test_the_demo_dashboards_temperatures_take_two_lines_at_most(demo_app, browser):
    """Issue 34: the temperature sentence went scale by scale, 5 lines at 1280 px."""
    app, base, email, password = demo_app
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(120_000)
    page.goto(f"{base}/login")
    page.get_by_label("Email or rater code").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/lead/")
    page.goto(f"{base}/lead/studies/demo")
    paragraph = page.locator("#dashboard p", has_text="LLM scores at").first
    # The lines the paragraph is laid out in: its text's line boxes, by their tops.
    tops = paragraph.evaluate(
        """p => { const r = document.createRange(); r.selectNodeContents(p);
                  return [...new Set([...r.getClientRects()].map(b => Math.round(b.top)))]; }"""
    )
    text = paragraph.inner_text()
    assert "judge-a" in text and "of" in text, text
    assert len(tops) <= 2, (len(tops), text)
