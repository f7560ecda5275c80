"""Accessibility in Debian's Chromium.

* axe-core on every page a rater or the lead sees (``PAGES``), at 1280 px and
  320 px, failing on serious or critical violations; at 320 px no page may
  scroll sideways. ``test_every_route_is_checked_or_excused`` fails when the
  app gains a route that is neither checked here nor excused in ``NOT_CHECKED``.
* A whole block rated with the keyboard alone at 320 x 568 px: two keystrokes
  per item, the focus on the next item's field after each swap, the item and
  its field in view together, "Item 4 of 15" in a live region and the page
  title following the position.
* The focus outline has at least 3:1 contrast against what is behind it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from sqlmodel import select
from werkzeug.exceptions import MethodNotAllowed, NotFound

from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import session_scope
from annotator.models import Block, Invite, Item, JudgeFailure, Scale, User
from annotator.study.studies import create_invites, create_lead, get_study
from annotator.study.studyfile import parse_study_file
from annotator.study.versions import update_study

from .axe import assert_no_serious_violations
from .conftest import ARTIFACTS, PNG_SIGNATURE, add_study, serve, wait_until
from .layout import assert_no_sideways_scroll
from .sample_studies import A11Y_ITEMS, A11Y_STUDY, CROWD_STUDY, SOLO_STUDY

LEAD_EMAIL = "lead@example.org"
LEAD_PASSWORD = "lead-password-1"
# The narrowest phone screen still common (iPhone SE, first generation).
PHONE = {"width": 320, "height": 568}
DESKTOP = {"width": 1280, "height": 900}

SHOTS = ARTIFACTS / "a11y"

# Every endpoint that renders a page, and the states of it the sweep checks.
PAGES: dict[str, str] = {
    "auth.login": "log in; log in with a wrong password",
    "auth.logout": "the warning before a rater without a password logs out",
    "rate.invite": "consent; consent sent without a choice; decline confirmation; used invite",
    "rate.come_back": "a return link that is not valid",
    "rate.declined": "after declining",
    "rate.demographics": "questionnaire; questionnaire with errors",
    "rate.dashboard": "the rater's blocks",
    "rate.account": "set a password; passwords that differ",
    "rate.block": "a block not open yet (its gap is not over)",
    "rate.item": "first item; item 4 after htmx swaps; a refused score",
    "rate.block_done": "block complete",
    "rate.thanks": "every block done, with completion code",
    "lead.index": "studies",
    "lead.study": "study page during collection; with a full dashboard",
    "lead.export": "the study page with an export error",
    "lead.report": "the page that offers to build the report",
    "lead.job_page": "a finished report job",
    "lead.job_file": "the downloaded report",
    "lead.invites": "invite links",
    "lead.raters": "raters, with a gap to lift and return links",
    "lead.study_versions": "a study's versions, the changed lines of one opened",
    "lead.judge_failures_page": "LLM judge failures, a long reply opened; an unknown scale",
    "lead.judge_start": "the form that starts a judge run; the form with an error",
    "lead.lift_rater_gap": "the confirmation before lifting a gap",
    "lead.rotate_rater_link": "the confirmation before replacing a return link",
    "lead.exclude_rater_view": "the confirmation before excluding a rater",
    "lead.include_rater_view": "the confirmation before including an excluded rater again",
    "lead.withdraw_rater_view": "the confirmation before withdrawing a rater",
    "rate.crowd_entry": "consent by a platform's entry link; a malformed id; a full study",
    "rate.crowd_end": "the end after declining, with the platform's return instruction",
    "errors.403": "a rater opens a lead page",
    "errors.404": "an unknown address",
}
NOT_CHECKED: dict[str, str] = {
    "static": "files, not pages",
    "auth.index": "only redirects (to the login page or the user's home)",
    "rate.start": "only redirects (to the block, the dashboard or the block-locked page)",
    "rate.pass_over_item": "a POST that only redirects (to the block's next place)",
    "lead.eligible_download": "a text file of platform ids, not a page",
    "lead.study_version_file": "a study file (TOML) as it was, not a page",
    "lead.report_start": "a POST that only redirects (to the report job's page)",
    "lead.export_start": "a POST that only redirects (to the export job's page)",
    "lead.job_cancel": "a POST that only redirects (to the job's page)",
    "lead.job_rerun": "a POST that only redirects (to the job's page)",
}


# A study of 14 items, one of which comes back (test-retest): 15 entries a block.
@pytest.fixture
def a11y_app(make_app, tmp_path):
    # An endpoint the judge form offers (nothing listens there: no run is started).
    endpoints = {"local": {"base_url": "http://127.0.0.1:9/v1"}}
    app = make_app(WTF_CSRF_ENABLED=True, CLOCK=None, JUDGE_ENDPOINTS=endpoints)
    add_study(app, A11Y_STUDY, A11Y_ITEMS, tmp_path)
    add_study(app, SOLO_STUDY, A11Y_ITEMS[:2], tmp_path)
    add_study(app, CROWD_STUDY, A11Y_ITEMS[:2], tmp_path)
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    with serve(app) as base:
        yield app, base


def _invites(app, slug: str, count: int) -> list[str]:
    with session_scope(app) as session:
        return [i.token for i in create_invites(session, get_study(session, slug), count)]


def _context(browser, viewport=DESKTOP, **options):
    context = browser.new_context(viewport=viewport, **options)
    context.set_default_timeout(15_000)
    return context


def _watch(page, errors: list[str]) -> None:
    page.on("pageerror", lambda exc: errors.append(str(exc)))


# ------------------------------------------------------------- the page sweep


class Sweep:
    """Runs axe-core on a page at both widths and records which endpoint it was."""

    def __init__(self, app):
        self.adapter = app.url_map.bind("127.0.0.1")
        self.checked: dict[str, list[str]] = {}

    def _endpoint(self, path: str, method: str) -> str | None:
        try:
            return self.adapter.match(path, method=method)[0]
        except (NotFound, MethodNotAllowed):
            return None

    def check(self, page, endpoint: str, what: str, *, method="GET", path=None) -> None:
        if endpoint.startswith("errors."):
            # The error template, whatever the address.
            code = endpoint.split(".")[1]
            assert page.locator("main p.muted").last.inner_text() == f"Error {code}."
        else:
            found = self._endpoint(path or urlsplit(page.url).path, method)
            assert found == endpoint, f"{what}: the page is {found}, not {endpoint}"
        size = page.viewport_size
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            assert_no_serious_violations(page, f"{what} ({endpoint})")
            if viewport is PHONE:
                assert_no_sideways_scroll(page, f"{what} ({endpoint})")
                # For a person to look at: test-artifacts/a11y/<page>-320px.png.
                name = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"{name}-320px.png"), full_page=True)
        page.set_viewport_size(size)
        self.checked.setdefault(endpoint, []).append(what)


def _log_in(page, base, username, password):
    page.goto(f"{base}/login")
    page.get_by_label("Email or rater code").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def _answer_questionnaire(page):
    page.get_by_label("Female", exact=True).check()
    page.get_by_label("Age in years").fill("41")
    page.get_by_role("button", name="Continue").click()


def _type_score(page, value: str, *, last: bool = False) -> None:
    """Type a score into the focused field and press Enter; wait for the swap.

    After the ``last`` item the block's end loads a new page: the caller waits for it.
    """
    # The page's scripts must be in before the key: a form that htmx has not yet
    # taken over is posted by the browser itself (the no-JavaScript path), a full
    # navigation this wait would not follow.
    wait_until(page, "typeof window.htmx !== 'undefined' && document.readyState === 'complete'")
    before = page.locator(".progress-text").inner_text()
    page.keyboard.type(value)
    page.keyboard.press("Enter")
    if last:
        return
    wait_until(
        page,
        "(before) => document.querySelector('.progress-text').textContent !== before"
        " && !document.querySelector('.htmx-request, .htmx-settling, .htmx-added')",
        arg=before,
    )


@pytest.mark.browser
def test_every_page_has_no_serious_axe_violation(a11y_app, browser, tmp_path):
    from playwright.sync_api import expect

    app, base = a11y_app
    sweep = Sweep(app)
    errors: list[str] = []
    main_token, decliner_token = _invites(app, "a11y", 2)
    (solo_token,) = _invites(app, "solo", 1)

    # ---- anonymous pages
    page = _context(browser).new_page()
    _watch(page, errors)
    page.goto(f"{base}/login")
    sweep.check(page, "auth.login", "log in")
    _log_in(page, base, LEAD_EMAIL, "not the password")
    expect(page.get_by_role("alert")).to_contain_text("wrong password")
    sweep.check(page, "auth.login", "log in, wrong password", method="POST")
    assert page.goto(f"{base}/no-such-page").status == 404
    sweep.check(page, "errors.404", "unknown address")
    assert page.goto(f"{base}/r/not-a-token").status == 404
    sweep.check(page, "rate.come_back", "return link not valid")

    # ---- declining
    page.goto(f"{base}/invite/{decliner_token}")
    page.get_by_role("button", name="I do not agree").click()
    expect(page.get_by_role("heading", name="Decline to take part?")).to_be_visible()
    sweep.check(page, "rate.invite", "decline confirmation", method="POST")
    page.get_by_role("button", name="Yes, I decline").click()
    sweep.check(page, "rate.declined", "declined")
    assert page.goto(f"{base}/invite/{decliner_token}").status == 410
    sweep.check(page, "rate.invite", "invite already used")

    # ---- consent and questionnaire
    page.goto(f"{base}/invite/{main_token}")
    expect(page.get_by_role("region", name="Information and consent")).to_contain_text(
        "short pairs of sentences"
    )
    sweep.check(page, "rate.invite", "consent")
    # Sent without either button (form.submit() carries no submitter).
    page.evaluate("document.querySelector('form.actions').submit()")
    expect(page.get_by_role("alert")).to_contain_text("Please press")
    sweep.check(page, "rate.invite", "consent sent without a choice", method="POST")
    page.get_by_role("button", name="I agree").click()
    expect(page.get_by_role("heading", name="A few questions about you")).to_be_visible()
    sweep.check(page, "rate.demographics", "questionnaire")
    page.evaluate("document.querySelector('main form').noValidate = true")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_text("Please check the")).to_be_visible()
    sweep.check(page, "rate.demographics", "questionnaire with errors", method="POST")
    _answer_questionnaire(page)
    expect(page.get_by_text("Block 1 of 3")).to_be_visible()
    sweep.check(page, "rate.dashboard", "rater's blocks")

    # ---- password page
    page.goto(f"{base}/rate/account")
    sweep.check(page, "rate.account", "set a password")
    page.get_by_label("Password (at least").fill("a-long-password-1")
    page.get_by_label("The same password again").fill("a-different-one-2")
    page.get_by_role("button", name="Save password").click()
    expect(page.get_by_role("alert")).to_be_visible()
    sweep.check(page, "rate.account", "passwords differ", method="POST")

    # ---- rating
    page.goto(f"{base}/rate/")
    page.get_by_role("button", name="Start").click()
    expect(page.locator(".progress-text")).to_have_text("1 / 15")
    sweep.check(page, "rate.item", "first item")
    for value in ("1", "2", "3"):
        _type_score(page, value)
    expect(page.locator(".progress-text")).to_have_text("4 / 15")
    assert page.url.endswith("/items/4")
    sweep.check(page, "rate.item", "item 4 after htmx swaps")
    # The server's refusal, as a browser that does not check min and max gets it.
    page.evaluate("document.querySelector('.score-form').noValidate = true")
    page.keyboard.type("77")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("outside the scale")
    sweep.check(page, "rate.item", "refused score")
    page.get_by_label("Score", exact=True).fill("")
    page.get_by_label("Score", exact=True).focus()
    for position in range(4, 16):
        _type_score(page, "4", last=position == 15)
    expect(page.get_by_role("heading", name="Block 1 of 3 complete")).to_be_visible()
    sweep.check(page, "rate.block_done", "block complete")
    with session_scope(app) as session:
        rater = session.exec(select(Invite).where(Invite.token == main_token)).one().user_id
        waiting = session.exec(
            select(Block).where(Block.rater_id == rater, Block.position == 2)
        ).one()
    assert page.goto(f"{base}/rate/blocks/{waiting.id}").status == 403
    expect(page.get_by_role("heading", name="Block 2 is not open yet")).to_be_visible()
    sweep.check(page, "rate.block", "block not open yet")
    assert page.goto(f"{base}/lead/").status == 403
    sweep.check(page, "errors.403", "a rater opens a lead page")
    page.locator("header").get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log out?")).to_be_visible()
    sweep.check(page, "auth.logout", "logout warning", method="POST")
    page.locator("main").get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()

    # ---- a rater who completes every block
    page.goto(f"{base}/invite/{solo_token}")
    page.get_by_role("button", name="I agree").click()
    page.get_by_role("button", name="Start").click()
    _type_score(page, "2")
    _type_score(page, "3", last=True)
    expect(page.get_by_text("A11Y-2026")).to_be_visible()
    sweep.check(page, "rate.thanks", "every block done")
    page.context.close()

    # ---- crowd entry: a malformed id, declining, consent, a full study
    page = _context(browser).new_page()
    _watch(page, errors)
    assert page.goto(f"{base}/s/crowd?PROLIFIC_PID=not%20an%20id").status == 400
    sweep.check(page, "rate.crowd_entry", "entry link with a malformed id")
    page.goto(f"{base}/s/crowd?PROLIFIC_PID=5f1a2b3c4d5e6f708192a3b0&STUDY_ID=s1&SESSION_ID=d1")
    page.get_by_role("button", name="I do not agree").click()
    # The end page sends the participant on to Prolific at once: that navigation is
    # cancelled (ERR_ABORTED keeps the page), so the page itself is what gets checked.
    page.route(re.compile(r"^https://app\.prolific\.com/"), lambda route: route.abort("aborted"))
    with page.expect_event("requestfailed"):
        page.get_by_role("button", name="Yes, I decline").click()
    expect(page.get_by_text("SCREENED")).to_be_visible()
    sweep.check(page, "rate.crowd_end", "crowd participant declined")
    page.goto(f"{base}/s/crowd?PROLIFIC_PID=5f1a2b3c4d5e6f708192a3b1&STUDY_ID=s1&SESSION_ID=d2")
    expect(page.get_by_role("region", name="Information and consent")).to_be_visible()
    sweep.check(page, "rate.crowd_entry", "consent by entry link")
    page.get_by_role("button", name="I agree").click()
    expect(page.get_by_role("heading", name="A few questions about you")).to_be_visible()
    page.context.close()
    page = _context(browser).new_page()
    _watch(page, errors)
    assert (
        page.goto(f"{base}/s/crowd?PROLIFIC_PID=5f1a2b3c4d5e6f708192a3b2&STUDY_ID=s1").status == 403
    )
    expect(page.get_by_role("heading", name="This study is full")).to_be_visible()
    sweep.check(page, "rate.crowd_entry", "study full")
    page.context.close()

    # ---- the lead
    with session_scope(app) as session:
        build_synthetic_study(session, SyntheticSpec(slug="full", n_items=12, n_raters=4, seed=3))
    page = _context(browser, accept_downloads=True).new_page()
    _watch(page, errors)
    _log_in(page, base, LEAD_EMAIL, LEAD_PASSWORD)
    expect(page.get_by_role("heading", name="Studies")).to_be_visible()
    sweep.check(page, "lead.index", "studies")
    page.goto(f"{base}/lead/studies/a11y")
    sweep.check(page, "lead.study", "study during collection")
    page.locator("#format").select_option("matrix")
    page.get_by_role("button", name="Download", exact=True).click()
    expect(page.locator("#export-error")).to_be_visible()
    sweep.check(page, "lead.export", "export error")
    with session_scope(app) as session:
        _update_twice(session, "solo")
    page.goto(f"{base}/lead/studies/solo")
    page.get_by_role("link", name="Versions and what changed").click()
    page.get_by_text("Lines changed in the study file").first.click()
    expect(page.locator("pre.diff").first).to_be_visible()
    sweep.check(page, "lead.study_versions", "study versions, a change opened")
    page.goto(f"{base}/lead/studies/a11y/invites")
    page.get_by_label("Number of new links").fill("3")
    page.get_by_role("button", name="Create links").click()
    expect(page.locator("ul.links li")).to_have_count(3)
    sweep.check(page, "lead.invites", "invite links")
    page.goto(f"{base}/lead/studies/a11y/raters")
    lift = page.get_by_role("button", name=re.compile(r"^Lift gap"))
    expect(lift).to_have_count(1)
    sweep.check(page, "lead.raters", "raters")
    lift.click()
    sweep.check(page, "lead.lift_rater_gap", "lift-gap confirmation", method="POST")
    page.get_by_role("link", name="Back to the raters").click()
    page.get_by_text("Show link").first.click()
    page.get_by_role("button", name=re.compile(r"^Replace link")).first.click()
    sweep.check(page, "lead.rotate_rater_link", "replace-link confirmation", method="POST")
    page.get_by_role("link", name="Back to the raters").click()
    page.get_by_text("Withdraw or exclude").first.click()
    page.get_by_label("Reason for excluding").first.fill("pilot rater")
    page.get_by_role("button", name=re.compile(r"^Exclude")).first.click()
    sweep.check(page, "lead.exclude_rater_view", "exclude confirmation", method="POST")
    page.get_by_role("button", name="Exclude the rater").click()
    page.get_by_role("button", name=re.compile(r"^Include again")).first.click()
    sweep.check(page, "lead.include_rater_view", "include confirmation", method="POST")
    page.get_by_role("link", name="Back to the raters").click()
    page.get_by_text("Withdraw or exclude").first.click()
    page.get_by_role("button", name=re.compile(r"^Withdraw")).first.click()
    sweep.check(page, "lead.withdraw_rater_view", "withdraw confirmation", method="POST")

    with session_scope(app) as session:
        _add_judge_failures(session, "full")
    page.goto(f"{base}/lead/studies/full")
    expect(page.locator("#dashboard").get_by_role("heading", name="Scale 0-5")).to_be_visible()
    expect(page.locator("table.judge-runs")).to_contain_text("judge-x")
    sweep.check(page, "lead.study", "study with a full dashboard")
    page.goto(f"{base}/lead/studies/full/report?runs=first")
    sweep.check(page, "lead.report", "the offer to build the report")
    page.goto(f"{base}/lead/studies/full")
    # This app runs jobs at once: the POST builds the report (on a busy machine that
    # takes longer than a click) and shows the finished job.
    with page.expect_navigation(timeout=120_000):
        page.get_by_role("button", name="Download report").first.click(timeout=120_000)
    sweep.check(page, "lead.job_page", "a finished report job")
    job_file = page.get_by_role("link", name="Download full-report.html").get_attribute("href")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download full-report.html").click()
    report = tmp_path / "report.html"
    download_info.value.save_as(report)
    page.goto(report.as_uri())
    sweep.check(page, "lead.job_file", "report", path=job_file)
    page.goto(f"{base}/lead/studies/full")
    page.get_by_role("link", name="All LLM judge failures").click()
    page.locator("table.judge-failures summary").first.click()
    expect(page.locator("pre.reply").first).to_be_visible()
    sweep.check(page, "lead.judge_failures_page", "LLM judge failures, a long reply opened")
    assert page.goto(f"{base}/lead/studies/full/judge-failures?scale=nope").status == 422
    expect(page.get_by_role("alert")).to_contain_text("Unknown scale")
    sweep.check(page, "lead.judge_failures_page", "LLM judge failures, an unknown scale")
    page.goto(f"{base}/lead/studies/full")
    page.get_by_role("link", name="Run an LLM judge").click()
    sweep.check(page, "lead.judge_start", "judge form")
    page.get_by_label("Model").fill("judge-y")
    for box in page.locator("fieldset input[type=checkbox]").all():
        box.uncheck()
    page.get_by_role("button", name="Start the judge").click()
    expect(page.get_by_role("alert")).to_contain_text("Scales: choose at least one scale.")
    sweep.check(page, "lead.judge_start", "judge form with an error", method="POST")
    page.context.close()

    assert errors == []
    assert set(sweep.checked) == set(PAGES), set(PAGES) ^ set(sweep.checked)


def _update_twice(session, slug: str) -> None:
    """Versions 2 and 3 of the solo study (a new consent, then a new completion code)."""
    study = get_study(session, slug)
    second = SOLO_STUDY.replace("ten short texts", "ten short texts, twice over")
    third = second.replace("A11Y-2026", "A11Y-2027")
    for text in (second, third):
        update_study(session, study, parse_study_file(text), source_toml=text, actor=None)


def _add_judge_failures(session, slug: str) -> None:
    """Two failures of a judge: a long reply of several lines, and no reply at all."""
    study = get_study(session, slug)
    item = session.exec(select(Item).where(Item.study_id == study.id)).first()
    scale = session.exec(select(Scale).where(Scale.study_id == study.id)).first()
    reply = "I cannot rate this one without more context about the task.\n" * 4
    for raw, error in ((reply, "the reply holds no number"), (None, "APIStatusError: 500")):
        session.add(
            JudgeFailure(
                item_id=item.id,
                scale_id=scale.id,
                model="judge-x",
                temperature=1.0,
                run="t1-1-0123456789ab",
                prompt_hash="0123456789ab" * 5 + "cdef",
                raw_reply=raw,
                error=error,
            )
        )


def test_every_route_is_checked_or_excused(app):
    """A new page must join the sweep above (or say here why it need not)."""
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    pages = {e for e in PAGES if not e.startswith("errors.")}
    assert not pages & set(NOT_CHECKED)
    assert endpoints - pages - set(NOT_CHECKED) == set(), "routes neither checked nor excused"
    assert (pages | set(NOT_CHECKED)) - endpoints == set(), "checked routes the app lacks"


# ------------------------------------------------------ keyboard-first rating

IN_VIEW = """() => {
    const text = document.querySelector('.item-text').getBoundingClientRect();
    const field = document.getElementById('score').getBoundingClientRect();
    return {textTop: text.top, fieldTop: field.top, fieldBottom: field.bottom,
            view: window.innerHeight, page: document.documentElement.scrollHeight};
}"""


@pytest.mark.browser
def test_a_block_by_keyboard_alone_on_a_phone(a11y_app, browser):
    from playwright.sync_api import expect

    app, base = a11y_app
    (token,) = _invites(app, "a11y", 1)
    page = _context(browser, viewport=PHONE).new_page()
    errors: list[str] = []
    _watch(page, errors)
    page.goto(f"{base}/invite/{token}")
    page.get_by_role("button", name="I agree").click()
    _answer_questionnaire(page)
    page.get_by_role("button", name="Start").click()

    progress = page.locator(".progress-text")
    expect(progress).to_have_text("1 / 15")
    # The block shows an item twice on purpose, and the instructions say so.
    expect(page.locator(".instructions")).to_contain_text("Some items come back")
    announcer = page.locator("#item-announcer")
    expect(announcer).to_have_attribute("role", "status")
    # The live region must be the same node throughout: one swapped in with
    # its text already set is not announced.
    page.evaluate("document.getElementById('item-announcer').__original = true")
    keystrokes = 0
    for position in range(1, 16):
        expect(progress).to_have_text(f"{position} / 15")
        expect(page.get_by_label("Score", exact=True)).to_be_focused()
        assert page.title() == f"Item {position} of 15 · Accessible study"
        if position > 1:
            expect(announcer).to_have_text(f"Item {position} of 15")
            assert page.evaluate("document.getElementById('item-announcer').__original")
        box = page.evaluate(IN_VIEW)
        # The page is taller than the screen, so being in view is not a given.
        assert box["page"] > box["view"], box
        assert box["textTop"] >= 0 and box["fieldBottom"] <= box["view"], (position, box)
        if position == 4:
            ARTIFACTS.mkdir(exist_ok=True)
            shot = ARTIFACTS / "rating-320px-item-4.png"
            page.screenshot(path=str(shot))
            assert shot.read_bytes().startswith(PNG_SIGNATURE)
        # Two keystrokes: the score, then Enter.
        page.keyboard.type(str(position % 6))
        page.keyboard.press("Enter")
        keystrokes += 2
        if position < 15:
            wait_until(
                page,
                "(p) => document.querySelector('.progress-text').textContent === p"
                " && !document.querySelector('.htmx-request, .htmx-settling, .htmx-added')",
                arg=f"{position + 1} / 15",
            )
    expect(page.get_by_role("heading", name="Block 1 of 3 complete")).to_be_visible()
    assert keystrokes == 30
    with session_scope(app) as session:
        rater = session.exec(select(Invite).where(Invite.token == token)).one().user_id
        block = session.exec(
            select(Block).where(Block.rater_id == rater, Block.position == 1)
        ).one()
        assert block.completed_at is not None
        assert session.get(User, rater).consented_at is not None
    assert errors == []


# ------------------------------------------------------------ focus contrast


def _rgb(css: str) -> tuple[float, float, float, float]:
    """``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` as numbers."""
    numbers = [float(n) for n in re.findall(r"[\d.]+", css)]
    return (*numbers[:3], numbers[3] if len(numbers) > 3 else 1.0)


def contrast_ratio(first: tuple, second: tuple) -> float:
    """WCAG 2.x contrast ratio of two sRGB colours given as 0-255 channels.

    (L1 + 0.05) / (L2 + 0.05) with L the relative luminance (WCAG 2.2, "relative
    luminance" and "contrast ratio" in its definitions). Written here rather than
    imported: it is the reference the CSS is judged by, kept apart from the app.
    """

    def luminance(rgb) -> float:
        linear = []
        for channel in rgb[:3]:
            c = channel / 255
            linear.append(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize(
    ("first", "second", "published"),
    [
        # WebAIM's contrast checker and WCAG's own examples.
        ((0, 0, 0), (255, 255, 255), 21.0),
        ((118, 118, 118), (255, 255, 255), 4.54),
        ((255, 255, 255), (255, 255, 255), 1.0),
        # The former focus colour #ffbf47 on white: the 1.6:1.
        ((255, 191, 71), (255, 255, 255), 1.64),
    ],
)
def test_contrast_ratio_matches_published_values(first, second, published):
    assert contrast_ratio(first, second) == pytest.approx(published, abs=0.01)


FOCUS_STYLE = """() => {
    const el = document.activeElement;
    const style = getComputedStyle(el);
    let behind = el.parentElement, background = 'rgba(0, 0, 0, 0)';
    for (; behind; behind = behind.parentElement) {
        background = getComputedStyle(behind).backgroundColor;
        if (!/rgba\\(.*, 0\\)$/.test(background) && background !== 'transparent') break;
    }
    if (!behind) background = 'rgb(255, 255, 255)';
    return {tag: el.tagName, text: (el.innerText || el.id || '').slice(0, 30),
            color: style.outlineColor, outlineStyle: style.outlineStyle,
            width: parseFloat(style.outlineWidth), offset: parseFloat(style.outlineOffset),
            background};
}"""


@pytest.mark.browser
def test_the_focus_outline_has_3_to_1_contrast(a11y_app, browser):
    app, base = a11y_app
    (token,) = _invites(app, "a11y", 1)
    page = _context(browser).new_page()
    page.goto(f"{base}/invite/{token}")
    page.get_by_role("button", name="I agree").click()
    _answer_questionnaire(page)
    page.get_by_role("button", name="Start").click()
    # Tab through the rating page: the header's link and button (on the grey
    # panel), the Score field, the slider, Next and the links below.
    page.locator("body").focus()
    seen = []
    for _ in range(8):
        page.keyboard.press("Tab")
        focus = page.evaluate(FOCUS_STYLE)
        if focus["tag"] == "BODY":
            continue
        seen.append(focus)
        assert focus["outlineStyle"] != "none" and focus["width"] >= 2, focus
        ratio = contrast_ratio(_rgb(focus["color"]), _rgb(focus["background"]))
        assert ratio >= 3, (ratio, focus)
    assert {f["tag"] for f in seen} >= {"A", "BUTTON", "INPUT"}, seen
    assert len({f["background"] for f in seen}) >= 2, "both the panel and the page were tried"


@pytest.mark.browser
def test_the_axe_check_fails_on_a_known_violation(browser):
    from .axe import assert_no_serious_violations as check

    page = browser.new_page()
    # The raters page's former Lift gap button: its name lacks its visible words.
    page.set_content(
        "<!doctype html><html lang=en><title>t</title><main><h1>t</h1><form>"
        "<button aria-label='Lift the gap for R1 (block 2)'>Lift gap…</button></form></main>"
    )
    with pytest.raises(AssertionError, match="label-content-name-mismatch") as failure:
        check(page)
    assert "Lift the gap for R1" in str(failure.value)
    page.set_content(
        "<!doctype html><html lang=en><title>t</title><main><h1>t</h1><form>"
        "<button>Lift gap…<span style='position:absolute;width:1px;height:1px;"
        "overflow:hidden;clip:rect(0 0 0 0)'> for R1 (block 2)</span></button></form></main>"
    )
    check(page)
    page.close()
