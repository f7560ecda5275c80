"""In Debian's Chromium: the lead downloads the report through its job page, with
JavaScript (htmx polls the job's fragment) and without (the page refreshes itself).

The jobs go through a real queue (the SQLite file of the embedded default) and a
consumer started only once the job page is shown, so the page is seen waiting.
"""

from __future__ import annotations

import uuid

import pytest

from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import session_scope
from annotator.study.studies import create_lead
from tests.jobs.conftest import ThreadConsumer

from .conftest import serve

LEAD_EMAIL = "lead@example.org"
LEAD_PASSWORD = "lead-password-1"


@pytest.fixture
def queued_app(make_app):
    app = make_app(
        WTF_CSRF_ENABLED=True,
        CLOCK=None,
        JOBS_IMMEDIATE=False,
        JOBS_QUEUE_NAME=f"browser-{uuid.uuid4().hex[:8]}",
    )
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
        build_synthetic_study(session, SyntheticSpec(slug="js", n_items=30, seed=3))
        build_synthetic_study(session, SyntheticSpec(slug="nojs", n_items=30, seed=4))
    with serve(app) as base:
        yield app, base


@pytest.mark.browser
@pytest.mark.parametrize("javascript", [True, False], ids=["htmx", "no-js"])
def test_the_lead_downloads_the_report_through_the_job_page(
    queued_app, browser, tmp_path, javascript
):
    from playwright.sync_api import expect

    app, base = queued_app
    slug = "js" if javascript else "nojs"
    context = browser.new_context(accept_downloads=True, java_script_enabled=javascript)
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    polls: list[str] = []
    page.on(
        "request",
        lambda r: polls.append(r.url) if r.headers.get("hx-request") == "true" else None,
    )
    loads: list[str] = []
    page.on("load", lambda p: loads.append(p.url))
    page.goto(f"{base}/login")
    page.get_by_label("Email or rater code").fill(LEAD_EMAIL)
    page.get_by_label("Password").fill(LEAD_PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.goto(f"{base}/lead/studies/{slug}")
    page.get_by_role("button", name="Download report").click()
    expect(page.locator(".job-status")).to_have_text("queued")
    job_url = page.url
    assert "/jobs/" in job_url
    consumer = ThreadConsumer(app)
    try:
        link = page.get_by_role("link", name=f"Download {slug}-report.html")
        expect(link).to_be_visible(timeout=180_000)
        with page.expect_download() as download_info:
            link.click()
    finally:
        consumer.close()
    download = download_info.value
    assert download.suggested_filename == f"{slug}-report.html"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    text = saved.read_text("utf-8")
    assert "Table 2" in text and "data:image/png;base64," in text
    if javascript:
        # htmx polled the fragment; the page itself was loaded once.
        assert polls and all(url == job_url for url in polls)
        assert loads.count(job_url) == 1
    else:
        # No script ran: the page reloaded itself until the job was done.
        assert polls == [] and loads.count(job_url) >= 2
    context.close()
    assert errors == []
