"""A rater scores a rubric study's items on three criteria by keyboard alone.

In Debian's Chromium: Enter moves from one criterion's field to the next and
submits from the last; a refused criterion keeps the other scores in the form
and takes the focus; the live region names each new item; axe-core finds no
serious violation on the page, refused or not.
"""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.models import Rating
from annotator.study.studies import create_invites, get_study
from tests.data.studies import CRITERIA_TOML, STS_B_TOML, study_toml

from .axe import assert_no_serious_violations
from .conftest import ITEMS, add_study, serve, wait_until

ONE_SCALE = '\n[[scales]]\nname = "0-5"\nmin = 0\nmax = 5\nstep = 0.5\n'
RUBRIC = study_toml(
    name="Rubric study", slug="rubric", scales=ONE_SCALE, benchmarks=STS_B_TOML + CRITERIA_TOML
)
CRITERIA = ["fluency", "coherence", "relevance"]


@pytest.fixture
def rubric_app(make_app, tmp_path):
    app = make_app(WTF_CSRF_ENABLED=True, CLOCK=None)
    add_study(app, RUBRIC, ITEMS[:4], tmp_path)
    with serve(app) as base:
        yield app, base


def _ratings(app) -> list[tuple[int, str, float]]:
    with Session(get_engine(app)) as session:
        rows = session.exec(select(Rating).order_by(Rating.position, Rating.id)).all()
        return [(r.position, r.criterion, r.value) for r in rows]


@pytest.mark.browser
def test_a_rater_scores_two_items_on_three_criteria_by_keyboard(rubric_app, browser):
    from playwright.sync_api import expect

    app, base = rubric_app
    with session_scope(app) as session:
        token = create_invites(session, get_study(session, "rubric"), 1)[0].token
    page = browser.new_page(viewport={"width": 360, "height": 780})
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}/invite/{token}")
    page.get_by_role("button", name="I agree").click()
    page.get_by_label("Female", exact=True).check()
    page.get_by_label("Age in years").fill("34")
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start").click()

    progress = page.locator(".progress-text")
    fields = [page.get_by_label(name, exact=True) for name in CRITERIA]
    expect(progress).to_have_text("1 / 4")
    # Each field is labelled with its criterion and described by its definition.
    expect(fields[0]).to_have_accessible_description(
        "Is the text well written? " + (page.locator("#score-hint").inner_text())
    )
    expect(fields[0]).to_be_focused()
    assert_no_serious_violations(page, "a rubric item")

    def settled() -> None:
        wait_until(
            page,
            "!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')",
        )

    # Item 1: type, Enter, type, Enter, type, Enter (the last submits).
    for index, score in enumerate(["3", "4.5", "2"]):
        expect(fields[index]).to_be_focused()
        page.keyboard.type(score)
        page.keyboard.press("Enter")
    expect(progress).to_have_text("2 / 4")
    settled()
    expect(page.locator("#item-announcer")).to_have_text("Item 2 of 4")
    expect(fields[0]).to_be_focused()
    for field in fields:
        expect(field).to_have_value("")
    assert _ratings(app) == [(1, "fluency", 3.0), (1, "coherence", 4.5), (1, "relevance", 2.0)]

    # Item 2: the second score is out of range. The browser refuses it (the
    # field's max): nothing is posted, the refused field has the focus.
    for score in ["1", "9", "5"]:
        page.keyboard.type(score)
        page.keyboard.press("Enter")
    expect(fields[1]).to_be_focused()
    assert page.evaluate(
        f"document.getElementById('{fields[1].get_attribute('id')}').validity.rangeOverflow"
    )
    assert len(_ratings(app)) == 3
    # Where the browser does not check, the server refuses it: nothing is stored,
    # the alert names the criterion, the others keep their values, the refused one
    # has the focus.
    page.evaluate("document.querySelector('.rubric-form').noValidate = true")
    fields[2].focus()
    page.keyboard.press("Enter")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("(coherence)")
    settled()
    expect(progress).to_have_text("2 / 4")
    assert len(_ratings(app)) == 3
    expect(fields[0]).to_have_value("1")
    expect(fields[1]).to_have_value("9")
    expect(fields[2]).to_have_value("5")
    expect(fields[1]).to_have_attribute("aria-invalid", "true")
    expect(fields[1]).to_be_focused()
    assert_no_serious_violations(page, "a rubric item with a refused score")
    page.keyboard.press("Control+A")
    page.keyboard.type("3.5")
    page.keyboard.press("Enter")
    expect(fields[2]).to_be_focused()
    page.keyboard.press("Enter")
    expect(progress).to_have_text("3 / 4")
    settled()
    expect(page.locator("#item-announcer")).to_have_text("Item 3 of 4")
    assert _ratings(app)[3:] == [(2, "fluency", 1.0), (2, "coherence", 3.5), (2, "relevance", 5.0)]
    assert errors == []
