"""End to end in Debian's Chromium: a rater logs out and comes back through
their return link; the lead replaces the link and the old one is refused."""

from __future__ import annotations

import pytest

from annotator.db import session_scope
from annotator.study.studies import create_invites, create_lead, get_study

LEAD_EMAIL = "lead@example.org"
LEAD_PASSWORD = "lead-password-1"


def _context(browser):
    context = browser.new_context(viewport={"width": 360, "height": 780})
    context.set_default_timeout(15_000)
    return context


@pytest.mark.browser
def test_a_rater_comes_back_through_the_return_link(served_app, browser):
    from playwright.sync_api import expect

    app, base = served_app
    with app.app_context(), session_scope(app) as session:
        token = create_invites(session, get_study(session, "browser"), 1)[0].token
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)

    context = _context(browser)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # Invite, consent, questionnaire (choices read as labels).
    page.goto(f"{base}/invite/{token}")
    page.get_by_role("button", name="I agree").click()
    expect(page.get_by_label("Prefer not to say", exact=True)).to_be_visible()
    page.get_by_label("Female", exact=True).check()
    page.get_by_label("Age in years").fill("29")
    page.get_by_role("button", name="Continue").click()

    # The dashboard shows the return link.
    expect(page.get_by_text("Keep this link to come back")).to_be_visible()
    link = page.locator("code.return-url").inner_text().strip()
    assert link.startswith(f"{base}/r/")

    # Two items; the slider is marked untouched (no thumb, see style.css)
    # until it is used.
    page.get_by_role("button", name="Start").click()
    progress = page.locator(".progress-text")
    score = page.get_by_label("Score", exact=True)
    slider = page.get_by_label("Score slider")
    expect(progress).to_have_text("1 / 10")
    expect(slider).to_be_visible()
    expect(slider).to_have_class("untouched")
    score.fill("1.25")
    score.press("Enter")
    expect(progress).to_have_text("2 / 10")
    expect(slider).to_have_class("untouched")
    slider.focus()
    slider.press("End")
    expect(slider).not_to_have_class("untouched")
    expect(score).to_have_value("5")
    page.get_by_role("button", name="Next").click()
    expect(progress).to_have_text("3 / 10")

    # Log out warns (no password set) and shows the link; then logs out.
    page.locator("header").get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log out?")).to_be_visible()
    expect(page.get_by_text("only way back to your blocks")).to_be_visible()
    assert page.locator("code.return-url").inner_text().strip() == link
    page.locator("main").get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.goto(f"{base}/rate/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()

    # The link brings the rater back; Resume continues at the third item.
    page.goto(link)
    expect(page.get_by_text("In progress: 2 / 10 rated.")).to_be_visible()
    page.get_by_role("link", name="Resume").click()
    expect(page.locator(".progress-text")).to_have_text("3 / 10")
    context.close()

    # The lead replaces the link, confirming first.
    lead = _context(browser).new_page()
    lead.goto(f"{base}/login")
    lead.get_by_label("Email or rater code").fill(LEAD_EMAIL)
    lead.get_by_label("Password").fill(LEAD_PASSWORD)
    lead.get_by_role("button", name="Log in").click()
    lead.goto(f"{base}/lead/studies/browser/raters")
    lead.get_by_text("Show link").click()
    assert lead.locator("code.return-url").inner_text().strip() == link
    lead.get_by_role("button", name="Replace link of").click()
    expect(lead.get_by_role("heading", name="Replace the return link")).to_be_visible()
    lead.get_by_role("button", name="Replace the link").click()
    flash = lead.locator(".flash.info")
    expect(flash).to_contain_text("has a new return link")
    new_link = next(word for word in flash.inner_text().split() if word.startswith(f"{base}/r/"))
    assert new_link != link

    # The old link is refused with a clear page; the new one works.
    visitor = _context(browser).new_page()
    response = visitor.goto(link)
    assert response.status == 404
    expect(visitor.get_by_role("heading", name="This return link is not valid")).to_be_visible()
    visitor.goto(new_link)
    expect(visitor.get_by_text("In progress: 2 / 10 rated.")).to_be_visible()
    assert errors == []
