"""In Debian's Chromium: the lead watches the dashboard during collection and after, and
downloads the report; screenshots at 1280 px and 390 px.

Screenshots go to $ANNOTATOR_SCREENSHOT_DIR (default: test-artifacts/dashboard).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import session_scope
from annotator.study.studies import create_lead

from .conftest import ARTIFACTS
from .layout import assert_no_sideways_scroll

LEAD_EMAIL = "lead@example.org"
LEAD_PASSWORD = "lead-password-1"
WIDTHS = {"desktop": 1280, "phone": 390}


def _shots() -> Path:
    folder = Path(os.environ.get("ANNOTATOR_SCREENSHOT_DIR", ARTIFACTS / "dashboard"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _screenshot(page, name: str, width: int) -> Path:
    """A full-page screenshot, checked to be of the page at ``width`` and painted."""
    from PIL import Image

    path = _shots() / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width == width, (image.format, image.size)
        # Text, tables and figures, not a blank page: many colours (anti-aliased text).
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
        assert colours is None or len(colours) > 16, f"{name}: {len(colours)} colours"
    return path


@pytest.mark.browser
def test_lead_watches_the_dashboard_and_downloads_the_report(served_app, browser, tmp_path):
    from playwright.sync_api import expect

    app, base = served_app
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
        # During collection: few items rated, two raters' last blocks still open.
        build_synthetic_study(
            session, SyntheticSpec(slug="during", n_items=12, unfinished_raters=2, seed=1)
        )
        build_synthetic_study(session, SyntheticSpec(slug="after", n_items=40, seed=2))

    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "response",
        lambda r: (
            errors.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico")
            else None
        ),
    )
    page.goto(f"{base}/login")
    page.get_by_label("Email or rater code").fill(LEAD_EMAIL)
    page.get_by_label("Password").fill(LEAD_PASSWORD)
    page.get_by_role("button", name="Log in").click()

    for slug in ("during", "after"):
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(f"{base}/lead/studies/{slug}")
        dashboard = page.locator("#dashboard")
        expect(dashboard.get_by_role("heading", name="Validation dashboard")).to_be_visible()
        expect(dashboard.get_by_role("heading", name="Scale 0-5")).to_be_visible()
        for width_name, width in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": 900})
            assert_no_sideways_scroll(page)
            _screenshot(page, f"dashboard-{slug}-{width_name}", width)

        # htmx swaps in the partial (the same request its 45 s timer makes).
        page.set_viewport_size({"width": 1280, "height": 900})
        target = f"{base}/lead/studies/{slug}"
        with page.expect_response(target) as info:
            page.evaluate(
                "htmx.ajax('GET', location.pathname, {target: '#dashboard', swap: 'outerHTML'})"
            )
        response = info.value
        assert response.request.headers.get("hx-request") == "true"
        assert "<h1>" not in response.text() and 'id="dashboard"' in response.text()
        expect(page.locator("#dashboard")).to_have_count(1)
        expect(page.get_by_role("heading", name="Scale 0-5")).to_be_visible()

    during = context.new_page()
    during.goto(f"{base}/lead/studies/during")
    assert "not" in during.locator("#dashboard").inner_text()

    # The report, downloaded from the study page (through its job's page; this app
    # runs jobs at once, tests/browser/test_jobs_browser.py through a queue), opened offline.
    page.goto(f"{base}/lead/studies/after")
    # Built in the POST here: on a busy machine that takes longer than a click.
    page.get_by_role("button", name="Download report").first.click(timeout=120_000)
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download after-report.html").click()
    download = download_info.value
    assert download.suggested_filename == "after-report.html"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    text = saved.read_text("utf-8")
    assert "Table 2" in text and "data:image/png;base64," in text

    offline = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
    report = offline.new_page()
    requests: list[str] = []
    report.on("request", lambda r: requests.append(r.url))
    report.goto(saved.as_uri())
    expect(
        report.get_by_role("heading", name="Table 2: reliability and agreement per scale")
    ).to_be_visible()
    images = report.locator("img")
    assert images.count() >= 3
    for i in range(images.count()):
        # Every figure decoded (a broken data URI has no natural width).
        assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 0")
    for width_name, width in WIDTHS.items():
        report.set_viewport_size({"width": width, "height": 900})
        assert_no_sideways_scroll(report)
        _screenshot(report, f"report-{width_name}", width)
    assert requests == [saved.as_uri()], requests
    offline.close()
    context.close()
    assert errors == []
