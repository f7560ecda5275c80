"""End to end in Debian's Chromium: one Prolific participant over two waves.

The app runs in a thread on a free port with CSRF protection on and the
test's frozen clock, which the test moves past the gap between blocks.
Prolific's completion page is answered by Playwright, so nothing leaves
the machine.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import Block, User
from tests.data.studies import FINE_SCALES_TOML, STS_B_TOML, study_toml

from .conftest import ITEMS, add_study, serve, wait_until

PID = "5f1a2b3c4d5e6f708192a3b4"
STUDY = study_toml(
    name="Crowd browser study",
    slug="crowd",
    scales=FINE_SCALES_TOML,
    benchmarks=STS_B_TOML,
    extra='[crowd]\nplatform = "prolific"\n[crowd.completion_codes]\n'
    'waves = ["WAVE1CODE", "WAVE2CODE", "WAVE3CODE"]\nscreen_out = "SCREENED"\n',
)
COMPLETE = "https://app.prolific.com/submissions/complete"


@pytest.fixture
def crowd_app(make_app, tmp_path, clock):
    app = make_app(WTF_CSRF_ENABLED=True)
    add_study(app, STUDY, ITEMS, tmp_path)
    with serve(app) as base:
        yield app, base


def _blocks(app) -> list[Block]:
    with Session(get_engine(app)) as session:
        user = session.exec(select(User).where(User.platform_id == PID)).one()
        return list(
            session.exec(select(Block).where(Block.rater_id == user.id).order_by(Block.position))
        )


@pytest.mark.browser
def test_a_prolific_participant_over_two_waves(crowd_app, browser, clock):
    from playwright.sync_api import expect

    app, base = crowd_app

    def entry(study_id: str, session_id: str) -> str:
        query = {"PROLIFIC_PID": PID, "STUDY_ID": study_id, "SESSION_ID": session_id}
        return f"{base}/s/crowd?{urlencode(query)}"

    context = browser.new_context(viewport={"width": 360, "height": 780}, timezone_id="Asia/Tokyo")
    context.set_default_timeout(15_000)
    completions: list[str] = []
    # The page after a block refreshes to Prolific at once. The first of those
    # navigations is cancelled (ERR_ABORTED keeps the page), so the test can read
    # the page the participant sees if the redirect fails; the later ones arrive.
    held: list[str] = []

    def prolific(route) -> None:
        completions.append(route.request.url)
        if not held:
            held.append(route.request.url)
            route.abort("aborted")
            return
        route.fulfill(status=200, content_type="text/html", body="<title>Prolific</title>done")

    context.route(f"{COMPLETE}**", prolific)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # Wave 1: entry, consent, questionnaire.
    page.goto(entry("WAVE1STUDY", "SESSION1"))
    expect(page.get_by_text("You agree to rate ten short texts.")).to_be_visible()
    assert PID not in page.title()
    page.get_by_role("button", name="I agree").click()
    expect(page.get_by_role("heading", name="A few questions about you")).to_be_visible()
    page.get_by_label("Female", exact=True).check()
    page.get_by_label("Age in years").fill("34")
    page.get_by_role("button", name="Continue").click()

    # Block 1 by keyboard alone: Tab to Start, then type each score and press Enter.
    expect(page.get_by_text("Block 1 of 3")).to_be_visible()
    start = page.get_by_role("button", name="Start")
    for _ in range(30):
        page.keyboard.press("Tab")
        if start.evaluate("el => el === document.activeElement"):
            break
    expect(start).to_be_focused()
    page.keyboard.press("Enter")
    progress = page.locator(".progress-text")
    score = page.get_by_label("Score", exact=True)
    for position in range(1, 11):
        expect(progress).to_have_text(f"{position} / 10")
        wait_until(
            page,
            "!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')",
        )
        expect(score).to_be_focused()
        page.keyboard.type(f"{position % 5}.5")
        page.keyboard.press("Enter")

    # The page sends the participant to Prolific with the code at once, and names
    # the code and a link in case the redirect fails.
    expect(page.get_by_role("heading", name="Block 1 of 3 complete")).to_be_visible()
    expect(page.locator(".completion-code")).to_have_text("WAVE1CODE")
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(100)
    assert held == [f"{COMPLETE}?cc=WAVE1CODE"]
    page.get_by_role("link", name="return to Prolific").click()
    page.wait_for_url(f"{COMPLETE}?cc=WAVE1CODE")
    assert completions == [f"{COMPLETE}?cc=WAVE1CODE"] * 2
    first = _blocks(app)[0]
    assert first.completed_at is not None
    assert (first.platform_study_id, first.platform_session_id) == ("WAVE1STUDY", "SESSION1")

    # Back too early (through wave 2's study): told when block 2 opens, in local time.
    page.goto(entry("WAVE2STUDY", "SESSION2"))
    expect(page.get_by_text("Available from")).to_be_visible()
    opens = page.locator(".block-waiting time.local-time")
    expect(opens).to_have_attribute("data-local", "")
    assert "GMT+9" in opens.inner_text()
    runner = app.test_cli_runner()
    assert runner.invoke(args=["raters", "eligible", "crowd"]).output == ""

    # After the gap the participant is on the allowlist and starts block 2 in wave 2.
    clock.advance(days=7)
    assert runner.invoke(args=["raters", "eligible", "crowd"]).output == f"{PID}\n"
    page.goto(entry("WAVE2STUDY", "SESSION3"))
    page.get_by_role("button", name="Start").click()
    expect(page.locator(".progress-text")).to_have_text("1 / 10")
    second = _blocks(app)[1]
    assert second.started_at is not None
    assert (second.platform_study_id, second.platform_session_id) == ("WAVE2STUDY", "SESSION3")
    assert errors == []
    context.close()
