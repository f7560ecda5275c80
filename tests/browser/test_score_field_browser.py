"""In Debian's Chromium: the score field and the slider on one-criterion and rubric items.

A refused value (by the browser's min/max/step, or by the server) is selected when
its field takes the focus, so typing replaces it; a refused field and its message are
scrolled into view; the slider's track shows no fill before the first value (checked
on a screenshot); and the pages work without JavaScript.
"""

from __future__ import annotations

import io

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.models import Rating
from annotator.study.studies import create_invites, get_study
from tests.data.studies import CRITERIA_TOML, STS_B_TOML, study_toml

from .conftest import ARTIFACTS, ITEMS, add_study, serve, wait_until

IN_VIEW = """(id) => {
  const box = document.getElementById(id).getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight;
}"""
SETTLED = "!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')"
ONE_SCALE = '\n[[scales]]\nname = "0-5"\nmin = 0\nmax = 5\nstep = 0.5\n'
RUBRIC = study_toml(
    name="Rubric study", slug="rubric", scales=ONE_SCALE, benchmarks=STS_B_TOML + CRITERIA_TOML
)


def after_refusal(page) -> None:
    """Wait until the page has run what it queued on a refusal: static/rate.js selects
    a value the browser refused in a timer of 0 ms after the "invalid" event, and
    timers of the same delay run in order, so one queued now runs after it. The
    browser focuses the field before that timer, so focus alone does not say the
    value is selected yet (under load a typed key landed first: "92")."""
    page.evaluate("new Promise(resolve => window.setTimeout(resolve, 0))")


def _join(base: str, page, token: str) -> None:
    page.goto(f"{base}/invite/{token}")
    page.get_by_role("button", name="I agree").click()
    page.get_by_label("Female", exact=True).check()
    page.get_by_label("Age in years").fill("34")
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start").click()


def _token(app, slug: str) -> str:
    with session_scope(app) as session:
        return create_invites(session, get_study(session, slug), 1)[0].token


def _n_ratings(app) -> int:
    with Session(get_engine(app)) as session:
        return len(session.exec(select(Rating)).all())


def _painted(png: bytes) -> int:
    """Pixels of the slider's screenshot in a saturated blue (the thumb, or a track
    painted up to it); the track itself is grey."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(1 for r, g, b in image.getdata() if b > 140 and b - r > 80)


@pytest.mark.browser
def test_one_criterion_refusals_select_the_value_and_the_slider_starts_blank(served_app, browser):
    from playwright.sync_api import expect

    app, base = served_app
    page = browser.new_page(viewport={"width": 360, "height": 780})
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _join(base, page, _token(app, "browser"))
    progress = page.locator(".progress-text")
    score = page.get_by_label("Score", exact=True)
    expect(progress).to_have_text("1 / 10")
    # The browser knows the scale.
    assert [score.get_attribute(a) for a in ("type", "min", "max", "step")] == [
        "number",
        "0",
        "5",
        "0.01",
    ]

    # The slider before any value: no thumb and no fill; after one, a thumb.
    slider = page.get_by_label("Score slider")
    ARTIFACTS.mkdir(exist_ok=True)
    blank = slider.screenshot(path=str(ARTIFACTS / "slider-untouched.png"))
    assert _painted(blank) == 0
    slider.focus()
    slider.press("Home")
    for _ in range(250):
        slider.press("ArrowRight")
    expect(score).to_have_value("2.5")
    assert _painted(slider.screenshot(path=str(ARTIFACTS / "slider-set.png"))) > 50

    # Refused by the browser (above max): nothing is posted, the value is selected.
    score.focus()
    score.fill("9")
    score.press("Enter")
    assert page.evaluate("document.getElementById('score').validity.rangeOverflow")
    expect(score).to_be_focused()
    after_refusal(page)
    page.keyboard.type("2")
    expect(score).to_have_value("2")
    assert _n_ratings(app) == 0

    # Refused by the server (a browser that does not check): the same.
    page.evaluate("document.querySelector('.score-form').noValidate = true")
    score.fill("9")
    score.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("outside the scale")
    wait_until(page, SETTLED)
    expect(score).to_be_focused()
    assert page.evaluate(IN_VIEW, "score-error") and page.evaluate(IN_VIEW, "score")
    page.keyboard.type("3")
    expect(score).to_have_value("3")
    page.keyboard.press("Enter")
    expect(progress).to_have_text("2 / 10")
    assert _n_ratings(app) == 1
    assert errors == []


@pytest.mark.browser
def test_one_criterion_without_javascript(served_app, browser):
    from playwright.sync_api import expect

    app, base = served_app
    context = browser.new_context(viewport={"width": 360, "height": 780}, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(15_000)
    _join(base, page, _token(app, "browser"))
    score = page.get_by_label("Score", exact=True)
    expect(page.locator(".progress-text")).to_have_text("1 / 10")
    # No slider without JavaScript; the browser still checks the range.
    expect(page.locator(".slider")).to_be_hidden()
    score.fill("9")
    score.press("Enter")
    expect(page.locator(".progress-text")).to_have_text("1 / 10")
    assert _n_ratings(app) == 0
    score.fill("3.25")
    score.press("Enter")
    expect(page.locator(".progress-text")).to_have_text("2 / 10")
    assert _n_ratings(app) == 1
    context.close()


@pytest.fixture
def rubric_app(make_app, tmp_path):
    app = make_app(WTF_CSRF_ENABLED=True, CLOCK=None)
    add_study(app, RUBRIC, ITEMS[:4], tmp_path)
    with serve(app) as base:
        yield app, base


@pytest.mark.browser
@pytest.mark.parametrize("checked_by", ["browser", "server"])
def test_a_refused_last_criterion_is_brought_into_view_and_selected(
    rubric_app, browser, checked_by
):
    from playwright.sync_api import expect

    app, base = rubric_app
    # A short screen: the last criterion is below the fold.
    page = browser.new_page(viewport={"width": 360, "height": 560})
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _join(base, page, _token(app, "rubric"))
    progress = page.locator(".progress-text")
    expect(progress).to_have_text("1 / 4")
    last = page.get_by_label("relevance", exact=True)
    last_id = last.get_attribute("id")
    assert not page.evaluate(IN_VIEW, last_id)
    if checked_by == "server":
        page.evaluate("document.querySelector('.rubric-form').noValidate = true")
    for name, value in (("fluency", "1"), ("coherence", "2"), ("relevance", "9")):
        page.get_by_label(name, exact=True).fill(value)
    page.mouse.wheel(0, -2000)
    page.get_by_label("fluency", exact=True).press("Enter")
    page.get_by_label("coherence", exact=True).press("Enter")
    # Enter in the last field submits.
    page.keyboard.press("Enter")
    if checked_by == "server":
        expect(page.locator(f"#{last_id}-error")).to_contain_text("relevance")
        wait_until(page, SETTLED)
        assert page.evaluate(IN_VIEW, f"{last_id}-error")
    else:
        assert page.evaluate(f"document.getElementById('{last_id}').validity.rangeOverflow")
    expect(last).to_be_focused()
    after_refusal(page)
    assert page.evaluate(IN_VIEW, last_id)
    page.screenshot(path=str(ARTIFACTS / f"rubric-refused-{checked_by}.png"))
    page.keyboard.type("4")
    expect(last).to_have_value("4")
    assert _n_ratings(app) == 0
    page.keyboard.press("Enter")
    expect(progress).to_have_text("2 / 4")
    assert _n_ratings(app) == 3
    assert errors == []


@pytest.mark.browser
def test_without_javascript_a_refused_last_criterion_opens_in_view(rubric_app, browser):
    from playwright.sync_api import expect

    app, base = rubric_app
    context = browser.new_context(viewport={"width": 360, "height": 560}, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(15_000)
    _join(base, page, _token(app, "rubric"))
    last = page.get_by_label("relevance", exact=True)
    last_id = last.get_attribute("id")
    # A browser that does not check min and max: the server refuses the value.
    page.evaluate("document.querySelector('.rubric-form').noValidate = true")
    for name, value in (("fluency", "1"), ("coherence", "2"), ("relevance", "9")):
        page.get_by_label(name, exact=True).fill(value)
    page.get_by_role("button", name="Next").click()
    expect(page.locator(f"#{last_id}-error")).to_contain_text("relevance")
    # The page opens at the refused field (its autofocus) and its message, not at the top.
    expect(last).to_be_focused()
    assert page.evaluate(IN_VIEW, last_id)
    assert page.evaluate(IN_VIEW, f"{last_id}-error")
    assert _n_ratings(app) == 0
    context.close()
