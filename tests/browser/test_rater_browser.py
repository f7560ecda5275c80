"""End to end in Debian's Chromium: a rater joins and rates one whole block.

The app runs in a thread on a free port of 127.0.0.1 against the test
database, with CSRF protection on and the real clock.
"""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.data.exporters import long_export
from annotator.db import get_engine, session_scope
from annotator.models import Rating
from annotator.study.studies import create_invites, get_study

from .conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, PNG_SIGNATURE, wait_until


def _count_ratings(app) -> int:
    with Session(get_engine(app)) as session:
        return len(session.exec(select(Rating)).all())


@pytest.mark.browser
def test_a_rater_rates_a_block_in_chromium(served_app):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    app, base = served_app
    with session_scope(app) as session:
        token = create_invites(session, get_study(session, "browser"), 1)[0].token

    expected: dict[int, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 360, "height": 780})
            context.set_default_timeout(15_000)
            page = context.new_page()
            errors: list[str] = []

            def watch(page) -> None:
                # Script errors, and responses that are neither expected (the
                # 422 of a refused score) nor the browser's favicon probe.
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.on(
                    "response",
                    lambda r: (
                        errors.append(f"{r.status} {r.url}")
                        if r.status >= 400
                        and r.status != 422
                        and not r.url.endswith("/favicon.ico")
                        else None
                    ),
                )

            watch(page)

            # Invite link, consent, questionnaire.
            page.goto(f"{base}/invite/{token}")
            expect(page.get_by_text("You agree to rate ten short texts.")).to_be_visible()
            page.get_by_role("button", name="I agree").click()
            expect(page.get_by_role("heading", name="A few questions about you")).to_be_visible()
            page.get_by_label("Female", exact=True).check()
            page.get_by_label("Age in years").fill("34")
            page.get_by_label("Field of study or work").fill("linguistics")
            page.get_by_role("button", name="Continue").click()

            # Dashboard: start the first block.
            expect(page.get_by_text("Block 1 of 3")).to_be_visible()
            page.get_by_role("button", name="Start").click()

            progress = page.locator(".progress-text")
            score = page.get_by_label("Score", exact=True)
            slider = page.get_by_label("Score slider")
            expect(progress).to_have_text("1 / 10")
            expect(score).to_be_focused()
            expect(score).to_have_value("")
            # The field is focused before the page's scripts run: a key pressed before
            # htmx has taken the form over would be posted by the browser itself.
            wait_until(
                page, "typeof window.htmx !== 'undefined' && document.readyState === 'complete'"
            )
            # Marks this document: it survives only if htmx swaps the items in.
            page.evaluate("window.__sameDocument = true")

            def settled(position: int) -> None:
                # htmx moves the focus to the new Score field when the swap
                # settles; keys pressed before then would land elsewhere.
                expect(progress).to_have_text(f"{position} / 10")
                wait_until(
                    page,
                    "!document.querySelector('.htmx-request, .htmx-swapping, "
                    ".htmx-settling, .htmx-added')",
                )
                expect(score).to_be_focused()

            def submit_with_enter(text: str, position: int) -> None:
                score.fill(text)
                score.press("Enter")
                settled(position + 1)

            def slide(keys: list[str]) -> None:
                slider.focus()
                for key in keys:
                    slider.press(key)

            # 1: typed, Enter submits. An untouched field cannot be submitted.
            score.press("Enter")
            expect(progress).to_have_text("1 / 10")
            assert page.evaluate("document.getElementById('score').validity.valueMissing")
            assert _count_ratings(app) == 0
            submit_with_enter("2.75", 1)
            expected[1] = 2.75
            assert page.evaluate("window.__sameDocument") is True
            assert page.url.endswith("/items/2")

            # 2: set with the slider by keyboard; the field follows it.
            expect(slider).to_be_visible()
            slide(["Home"] + ["ArrowRight"] * 7)
            expect(score).to_have_value("0.07")
            page.get_by_role("button", name="Next").click()
            settled(3)
            expected[2] = 0.07

            # 3: an out-of-range score is refused by the browser (the field's max),
            # and by the server with the allowed range where the browser does not check.
            score.fill("7")
            score.press("Enter")
            assert page.evaluate("document.getElementById('score').validity.rangeOverflow")
            assert _count_ratings(app) == 2
            page.evaluate("document.querySelector('.score-form').noValidate = true")
            score.press("Enter")
            alert = page.get_by_role("alert")
            expect(alert).to_contain_text("outside the scale")
            expect(alert).to_contain_text("from 0 to 5 in steps of 0.01")
            settled(3)
            assert _count_ratings(app) == 2
            # Typing moves the slider too.
            score.fill("4.5")
            assert page.evaluate("document.getElementById('score-slider').value") == "4.5"
            ARTIFACTS.mkdir(exist_ok=True)
            shot = ARTIFACTS / "rating-page.png"
            page.screenshot(path=str(shot), full_page=True)
            score.press("Enter")
            settled(4)
            expected[3] = 4.5

            # The page fits 360 px without sideways scrolling.
            assert page.evaluate("document.documentElement.scrollWidth") <= 360

            # 4 typed, 5 with the slider from the top end.
            submit_with_enter("1.33", 4)
            expected[4] = 1.33
            slide(["End"] + ["ArrowLeft"] * 3)
            expect(score).to_have_value("4.97")
            score.press("Enter")
            settled(6)
            expected[5] = 4.97
            assert page.evaluate("window.__sameDocument") is True
            assert _count_ratings(app) == 5

            # Close the browser: only the persistent (remember-me) cookie stays.
            kept = [c for c in context.cookies() if c.get("expires", -1) > 0]
            assert any(c["name"] == "remember_token" for c in kept)
            context.close()
            # The rater is in Tokyo now: dates are shown in their time zone.
            context = browser.new_context(
                viewport={"width": 360, "height": 780}, timezone_id="Asia/Tokyo"
            )
            context.set_default_timeout(15_000)
            context.add_cookies(kept)
            page = context.new_page()
            watch(page)
            page.goto(base + "/")
            expect(page.get_by_text("In progress: 5 / 10 rated.")).to_be_visible()
            page.get_by_role("link", name="Resume").click()
            progress = page.locator(".progress-text")
            score = page.get_by_label("Score", exact=True)
            slider = page.get_by_label("Score slider")
            expect(progress).to_have_text("6 / 10")
            expect(score).to_be_focused()
            submit_with_enter("3.1", 6)
            expected[6] = 3.1
            slide(["Home"] + ["ArrowRight"] * 25)
            expect(score).to_have_value("0.25")
            score.press("Enter")
            settled(8)
            expected[7] = 0.25
            # A number field: the browser's locale decides the decimal mark (en-US
            # here); the server takes "2,5" as well (tests/web/rate).
            submit_with_enter("2.5", 8)
            expected[8] = 2.5
            submit_with_enter("0", 9)
            expected[9] = 0.0
            slide(["End"])
            expect(score).to_have_value("5")
            score.press("Enter")
            expected[10] = 5.0

            # After the block: the completion page says when the next one opens.
            expect(page.get_by_role("heading", name="Block 1 of 3 complete")).to_be_visible()
            expect(page.get_by_text("opens on")).to_be_visible()
            opens = page.locator("time.local-time")
            expect(opens).to_have_attribute("data-local", "")
            assert "GMT+9" in opens.inner_text() and "UTC" not in opens.inner_text()
            assert opens.get_attribute("title").endswith(" UTC")
            assert errors == []
        finally:
            browser.close()

    data = shot.read_bytes()
    assert len(data) > 1000 and data.startswith(PNG_SIGNATURE)

    with Session(get_engine(app)) as session:
        frame = long_export(session, get_study(session, "browser"))
    human = frame[frame["kind"] == "human"].sort_values("presentation_position")
    assert len(human) == 10
    assert list(human["presentation_position"]) == list(range(1, 11))
    assert dict(zip(human["presentation_position"], human["score"], strict=True)) == expected
    assert set(human["block_position"]) == {1}
    assert set(human["scale"]) == {"0-5"}
    assert human["served_at"].notna().all()
    assert (human["submitted_at"] >= human["served_at"]).all()
    assert not human["is_repeat"].any() and not human["is_attention_check"].any()
